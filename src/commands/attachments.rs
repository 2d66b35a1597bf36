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
use crate::device::{format_info, Image, ImageView, NumClass};
use crate::error::{MemoryError, RecordingError, Result};
use crate::pipeline::RenderingFormats;

fn usage_error(image: &Image, needed: vk::ImageUsageFlags, what: &'static str) -> RecordingError {
    MemoryError::ImageUsage {
        object: image.label().to_string(),
        needed,
        what,
    }
    .into()
}

fn invalid(image: &Image, detail: String) -> RecordingError {
    MemoryError::InvalidImage {
        object: image.label().to_string(),
        detail,
    }
    .into()
}

/// Every image `desc` names: colour attachments, their resolve targets, the depth.
pub(super) fn images<'d>(desc: &'d RenderingDesc<'_>) -> impl Iterator<Item = &'d Image> + 'd {
    desc.color
        .iter()
        .flat_map(|c| std::iter::once(c.image).chain(c.resolve))
        .chain(desc.depth.as_ref().map(|d| d.image))
}

/// The extent an attachment renders: its view's (one mip of one layer) or its image's.
fn attachment_extent(image: &Image, view: Option<&ImageView>) -> vk::Extent2D {
    view.map_or(image.extent(), ImageView::extent)
}

/// One image (through `view`, if given) as an attachment `what` of a scope of `extent`:
/// a one-mip, one-layer 2D image or view of that extent with `usage`.
fn check_shape(
    image: &Image,
    view: Option<&ImageView>,
    extent: vk::Extent2D,
    first: &Image,
    usage: vk::ImageUsageFlags,
    what: &'static str,
) -> Result<(), RecordingError> {
    if !image.usage().contains(usage) {
        return Err(usage_error(image, usage, what));
    }
    let (view_type, mips, layers) = match view {
        Some(v) if !std::ptr::eq(v.image(), image) && v.image().raw() != image.raw() => {
            return Err(invalid(
                image,
                format!(
                    "{what}'s view is of `{}`, not of this image",
                    v.image().label()
                ),
            ))
        }
        Some(v) => (
            v.desc().view_type,
            v.desc().level_count,
            v.desc().layer_count,
        ),
        None => (image.view_type(), image.mip_levels(), image.array_layers()),
    };
    if view_type != vk::ImageViewType::TYPE_2D || mips != 1 || layers != 1 {
        return Err(invalid(
            image,
            format!(
                "{what} is a one-mip, one-layer 2D image or view; this one is {view_type:?} \
                 with {mips} mips and {layers} layers (render into one mip and layer through \
                 image.view_of(&ImageViewDesc::layer(layer, mip)))"
            ),
        ));
    }
    let own = attachment_extent(image, view);
    if own != extent {
        return Err(invalid(
            image,
            format!(
                "attachment is {}x{} but `{}` is {}x{}; attachments of one rendering scope \
                 share an extent",
                own.width,
                own.height,
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
) -> Result<(vk::Extent2D, RenderingFormats), RecordingError> {
    if desc.color.len() > max_colors as usize {
        // VUID-VkRenderingInfo-colorAttachmentCount-06106.
        return Err(RecordingError::RenderingState {
            what: "more colour attachments than maxColorAttachments; split the scope",
        });
    }
    let first = desc
        .color
        .first()
        .map(|c| c.image)
        .or(desc.depth.as_ref().map(|d| d.image))
        .ok_or(RecordingError::RenderingState {
            what: "begin_rendering without any attachment",
        })?;
    let extent = desc
        .color
        .first()
        .map(|c| attachment_extent(c.image, c.view))
        .or(desc
            .depth
            .as_ref()
            .map(|d| attachment_extent(d.image, d.view)))
        .unwrap_or_default();
    let samples = first.samples();
    let mut formats = RenderingFormats {
        color: Vec::with_capacity(desc.color.len()),
        depth: None,
        samples,
    };
    let color_usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
    for c in desc.color {
        check_shape(
            c.image,
            c.view,
            extent,
            first,
            color_usage,
            "a colour attachment",
        )?;
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
        check_shape(d.image, d.view, extent, first, usage, "a depth attachment")?;
        formats.depth = Some(d.image.format());
    }
    check_samples(desc, first, samples)?;
    check_distinct(desc)?;
    Ok((extent, formats))
}

/// Every attachment of `desc` has `first`'s sample count `samples`
/// (VUID-VkRenderingInfo-multisampledRenderToSingleSampled-06857). Errors: `KILN-E180`.
fn check_samples(
    desc: &RenderingDesc<'_>,
    first: &Image,
    samples: vk::SampleCountFlags,
) -> Result<(), RecordingError> {
    let mut attachments = desc
        .color
        .iter()
        .map(|c| c.image)
        .chain(desc.depth.as_ref().map(|d| d.image));
    if let Some(other) = attachments.find(|i| i.samples() != samples) {
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
    Ok(())
}

/// No image (or view of it) is named twice in `desc`. Errors: `KILN-E180`.
fn check_distinct(desc: &RenderingDesc<'_>) -> Result<(), RecordingError> {
    // One image (or one view of it) twice (two attachments, an attachment and a resolve
    // target, two resolve targets) would be written twice by one scope.
    use ash::vk::Handle;
    let key = |i: &Image, v: Option<&ImageView>| (i.raw().as_raw(), v.map(|v| v.raw().as_raw()));
    let all: Vec<(&Image, (u64, Option<u64>))> = desc
        .color
        .iter()
        .flat_map(|c| {
            std::iter::once((c.image, key(c.image, c.view)))
                .chain(c.resolve.map(|r| (r, key(r, None))))
        })
        .chain(desc.depth.as_ref().map(|d| (d.image, key(d.image, d.view))))
        .collect();
    for (i, (a, k)) in all.iter().enumerate() {
        if all[..i].iter().any(|(_, other)| other == k) {
            return Err(invalid(
                a,
                "the image is named twice in one rendering scope (as attachments or resolve \
                 targets); give each attachment and resolve target its own image or view"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// A colour attachment's resolve target, if any: the attachment is multisampled, the
/// target a single-sampled colour attachment of its format and extent.
fn check_resolve(c: &ColorAttachment<'_>, extent: vk::Extent2D) -> Result<(), RecordingError> {
    let Some(r) = c.resolve else {
        return Ok(());
    };
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
    check_shape(r, None, extent, c.image, usage, "a resolve target")?;
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
