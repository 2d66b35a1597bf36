//! The attachments of a rendering scope: their checks (before any Vulkan call) and their
//! `VkRenderingAttachmentInfo`s, multisample resolves included (Vulkan spec §8.1
//! "Render Pass Instances", `VkRenderingInfo` and `VkRenderingAttachmentInfo` valid usage).
//!
//! Every attachment of one scope is a one-mip, one-layer 2D image of this device with the
//! attachment usage, and all share one extent and one sample count. A multisampled colour
//! attachment may name a resolve target: a single-sampled colour image of its format and
//! extent, written at the end of the scope with the average of the samples (float formats)
//! or sample 0 (integer formats, VUID-VkRenderingAttachmentInfo-imageView-06129/-06130).

use ash::vk;

use super::render::{ColorAttachment, RenderingDesc};
use crate::device::{format_info, Image, NumClass};
use crate::error::{Error, Result};
use crate::pipeline::RenderingFormats;

fn usage_error(image: &Image, needed: vk::ImageUsageFlags, what: &'static str) -> Error {
    Error::ImageUsage {
        object: image.label().to_string(),
        needed,
        what,
    }
}

fn invalid(image: &Image, detail: String) -> Error {
    Error::InvalidImage {
        object: image.label().to_string(),
        detail,
    }
}

/// Every image `desc` names: colour attachments, their resolve targets, the depth.
pub(super) fn images<'d>(desc: &'d RenderingDesc<'_>) -> impl Iterator<Item = &'d Image> + 'd {
    desc.color
        .iter()
        .flat_map(|c| std::iter::once(c.image).chain(c.resolve))
        .chain(desc.depth.as_ref().map(|d| d.image))
}

/// One image as an attachment `what` of a scope of `extent`: a one-mip, one-layer 2D image
/// of that extent with `usage`.
fn check_shape(
    image: &Image,
    extent: vk::Extent2D,
    first: &Image,
    usage: vk::ImageUsageFlags,
    what: &'static str,
) -> Result<()> {
    if !image.usage().contains(usage) {
        return Err(usage_error(image, usage, what));
    }
    if image.view_type() != vk::ImageViewType::TYPE_2D || image.mip_levels() != 1 {
        return Err(invalid(
            image,
            format!(
                "{what} is a one-mip 2D image; this one is {:?} with {} mips",
                image.view_type(),
                image.mip_levels()
            ),
        ));
    }
    if image.extent() != extent {
        return Err(invalid(
            image,
            format!(
                "attachment is {}x{} but `{}` is {}x{}; attachments of one rendering scope \
                 share an extent",
                image.width(),
                image.height(),
                first.label(),
                extent.width,
                extent.height
            ),
        ));
    }
    Ok(())
}

/// Checks `desc`'s attachments (but their device); returns the scope's extent and
/// formats.
///
/// Errors: `KILN-E283` no attachment or more colour attachments than `max_colors`
/// (`maxColorAttachments`), `KILN-E182` an attachment without its usage or with
/// the wrong aspect, `KILN-E180` attachments of other extents or sample counts, one that is
/// not a one-mip 2D image, a resolve Vulkan rejects.
pub(super) fn check(
    desc: &RenderingDesc<'_>,
    max_colors: u32,
) -> Result<(vk::Extent2D, RenderingFormats)> {
    if desc.color.len() > max_colors as usize {
        // VUID-VkRenderingInfo-colorAttachmentCount-06106.
        return Err(Error::RenderingState {
            what: "more colour attachments than maxColorAttachments; split the scope",
        });
    }
    let first = desc
        .color
        .first()
        .map(|c| c.image)
        .or(desc.depth.as_ref().map(|d| d.image))
        .ok_or(Error::RenderingState {
            what: "begin_rendering without any attachment",
        })?;
    let extent = first.extent();
    let samples = first.samples();
    let mut formats = RenderingFormats {
        color: Vec::with_capacity(desc.color.len()),
        depth: None,
        samples,
    };
    let color_usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
    for c in desc.color {
        check_shape(c.image, extent, first, color_usage, "a colour attachment")?;
        if c.image.aspect() != vk::ImageAspectFlags::COLOR {
            return Err(usage_error(
                c.image,
                color_usage,
                "a colour attachment (this image has a depth format)",
            ));
        }
        check_resolve(c, extent)?;
        formats.color.push(c.image.format());
    }
    if let Some(d) = &desc.depth {
        let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
        if !d.image.aspect().contains(vk::ImageAspectFlags::DEPTH) {
            return Err(usage_error(
                d.image,
                usage,
                "a depth attachment (with a depth format)",
            ));
        }
        check_shape(d.image, extent, first, usage, "a depth attachment")?;
        formats.depth = Some(d.image.format());
    }
    let attachments = desc
        .color
        .iter()
        .map(|c| c.image)
        .chain(desc.depth.as_ref().map(|d| d.image));
    if let Some(other) = attachments.clone().find(|i| i.samples() != samples) {
        // VUID-VkRenderingInfo-multisampledRenderToSingleSampled-06857.
        return Err(invalid(
            other,
            format!(
                "attachment has {:?} but `{}` has {samples:?}; attachments of one rendering \
                 scope share a sample count",
                other.samples(),
                first.label()
            ),
        ));
    }
    // One image twice (two attachments, an attachment and a resolve target, two resolve
    // targets) would be written twice by one scope.
    let all: Vec<&Image> = images(desc).collect();
    for (i, a) in all.iter().enumerate() {
        if all[..i].iter().any(|b| b.raw() == a.raw()) {
            return Err(invalid(
                a,
                "the image is named twice in one rendering scope (as attachments or resolve \
                 targets); give each attachment and resolve target its own image"
                    .into(),
            ));
        }
    }
    Ok((extent, formats))
}

/// A colour attachment's resolve target, if any: the attachment is multisampled, the
/// target a single-sampled colour attachment of its format and extent.
fn check_resolve(c: &ColorAttachment<'_>, extent: vk::Extent2D) -> Result<()> {
    let Some(r) = c.resolve else {
        return Ok(());
    };
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
    check_shape(r, extent, c.image, usage, "a resolve target")?;
    let detail = if c.image.samples() == vk::SampleCountFlags::TYPE_1 {
        // VUID-VkRenderingAttachmentInfo-imageView-06861 (a resolve needs samples).
        format!(
            "`{}` has one sample: only a multisampled attachment is resolved",
            c.image.label()
        )
    } else if r.samples() != vk::SampleCountFlags::TYPE_1 {
        // VUID-VkRenderingAttachmentInfo-imageView-06864.
        format!("a resolve target has one sample, not {:?}", r.samples())
    } else if r.format() != c.image.format() {
        // VUID-VkRenderingAttachmentInfo-imageView-06865.
        format!(
            "a resolve target has its attachment's format {:?}, not {:?}",
            c.image.format(),
            r.format()
        )
    } else {
        return Ok(());
    };
    Err(invalid(r, detail))
}

/// The resolve mode of a multisampled attachment of `format`: the average for float
/// formats, sample 0 for integer ones (which cannot be averaged).
pub(super) fn resolve_mode(format: vk::Format) -> vk::ResolveModeFlags {
    match format_info(format).map(|i| i.class) {
        Some(NumClass::Float) => vk::ResolveModeFlags::AVERAGE,
        _ => vk::ResolveModeFlags::SAMPLE_ZERO,
    }
}
