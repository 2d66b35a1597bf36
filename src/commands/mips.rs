//! Mip generation on the GPU: [`Recorder::generate_mips`] fills every level of an image
//! from level 0 with linear blits, each level from the one above (Vulkan spec §20.5
//! "Image Copies with Scaling", `vkCmdBlitImage`).
//!
//! The command goes through `Recorder::record` as one transfer that reads and writes the
//! whole image in TRANSFER_DST_OPTIMAL: the barrier before it orders whatever wrote level 0
//! (an upload, a render, a dispatch). Inside, level `l - 1` moves to TRANSFER_SRC_OPTIMAL
//! for its blit into level `l` and back to TRANSFER_DST_OPTIMAL with the next level's
//! barrier (one `vkCmdPipelineBarrier2` per level), so the image ends, as kiln tracks it,
//! with every level in TRANSFER_DST_OPTIMAL; a later sampling moves it on.

use ash::vk;

use super::command::{Command, ImageAccess};
use super::hazards::Use;
use super::Recorder;
use crate::device::{Image, Subresources};
use crate::error::{MemoryError, RecordingError, Result};

use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

/// The format features linear blits need of both images.
const BLIT_FEATURES: vk::FormatFeatureFlags = vk::FormatFeatureFlags::from_raw(
    vk::FormatFeatureFlags::BLIT_SRC.as_raw()
        | vk::FormatFeatureFlags::BLIT_DST.as_raw()
        | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR.as_raw(),
);

/// The offsets spanning mip `level` of `image`.
fn level_box(image: &Image, level: u32) -> [vk::Offset3D; 2] {
    let (w, h, d) = image.level_extent(level);
    // Extents are at most maxImageDimension* (≤ i32::MAX on every device).
    let i = |x: u32| i32::try_from(x).unwrap_or(i32::MAX);
    [
        vk::Offset3D::default(),
        vk::Offset3D {
            x: i(w),
            y: i(h),
            z: i(d),
        },
    ]
}

/// The barrier of `level` of every layer from `old` (after `src`) to `new` (before `dst`).
fn level_barrier(
    image: &Image,
    level: u32,
    (old, src_stage, src_access): (vk::ImageLayout, S, A),
    (new, dst_stage, dst_access): (vk::ImageLayout, S, A),
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image.raw())
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: image.aspect(),
            base_mip_level: level,
            level_count: 1,
            base_array_layer: 0,
            layer_count: image.array_layers(),
        })
}

impl Recorder<'_, '_> {
    /// Fills mip levels 1.. of every layer of `image` from level 0 (see the module docs):
    /// each level is a linear-filtered blit of the one above, its extent halved (at least
    /// 1). The image ends in TRANSFER_DST_OPTIMAL. An image with one level records nothing.
    ///
    /// Errors: `KILN-E183` the format lacks BLIT_SRC, BLIT_DST or
    /// SAMPLED_IMAGE_FILTER_LINEAR (optimal tiling; integer and depth formats mostly do),
    /// `KILN-E180` a depth/stencil image, `KILN-E120` a queue without graphics (blits are
    /// graphics-queue commands), `KILN-E283` inside a rendering scope, `KILN-E109` an image
    /// of another device.
    #[track_caller]
    pub fn generate_mips(&mut self, image: &Image) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        if image.mip_levels() == 1 {
            // Nothing to record, but a call that could not be recorded is still an error.
            self.own_image(image)?;
            return self.outside_rendering(
                "generate_mips inside a rendering scope; call end_rendering first",
            );
        }
        if image.aspect() != vk::ImageAspectFlags::COLOR {
            return Err(MemoryError::InvalidImage {
                object: image.label().to_string(),
                detail: "mips are generated for colour images; a depth/stencil image's \
                         levels are rendered or copied"
                    .into(),
            }
            .into());
        }
        if !self.caps.queue_flags.contains(vk::QueueFlags::GRAPHICS) {
            return Err(self.unsupported("generate_mips (blits)", vk::QueueFlags::GRAPHICS));
        }
        // SAFETY: plain query on this device's physical device.
        let found = unsafe {
            self.shared
                .instance
                .raw
                .get_physical_device_format_properties(self.shared.physical, image.format())
        }
        .optimal_tiling_features;
        if !found.contains(BLIT_FEATURES) {
            return Err(MemoryError::FormatFeature {
                object: format!("image `{}`", image.label()),
                format: image.format(),
                needed: BLIT_FEATURES,
                found: found & BLIT_FEATURES,
                what: "generate_mips (linear blits; generate integer, depth or compressed mips elsewhere, as a KTX2 file carries them, and upload each level)",
            }.into());
        }
        let images = [ImageAccess {
            image,
            range: Subresources::all(),
            layout: vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            use_: Use {
                stage: S::ALL_TRANSFER,
                read: A::TRANSFER_READ,
                write: A::TRANSFER_WRITE,
            },
        }];
        let what = "generate_mips inside a rendering scope; call end_rendering first";
        self.record(Command::transfer(what, &[], &images), |raw, cb| {
            record_blits(raw, cb, image)
        })
    }
}

/// The per-level barriers and blits of `generate_mips` (the whole image is in
/// TRANSFER_DST_OPTIMAL, ordered after earlier writes).
fn record_blits(raw: &ash::Device, cb: vk::CommandBuffer, image: &Image) {
    let dst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
    let src = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
    let written = (dst, S::ALL_TRANSFER, A::TRANSFER_WRITE);
    let to_read = (src, S::BLIT, A::TRANSFER_READ);
    let layers = |level| vk::ImageSubresourceLayers {
        aspect_mask: image.aspect(),
        mip_level: level,
        base_array_layer: 0,
        layer_count: image.array_layers(),
    };
    for level in 1..image.mip_levels() {
        let mut barriers = vec![level_barrier(image, level - 1, written, to_read)];
        if level >= 2 {
            // The level read by the previous blit goes back, ordered after that read.
            barriers.push(level_barrier(
                image,
                level - 2,
                (src, S::BLIT, A::NONE),
                (dst, S::BLIT, A::NONE),
            ));
        }
        let dep = vk::DependencyInfo::default().image_memory_barriers(&barriers);
        let region = [vk::ImageBlit2::default()
            .src_subresource(layers(level - 1))
            .src_offsets(level_box(image, level - 1))
            .dst_subresource(layers(level))
            .dst_offsets(level_box(image, level))];
        let blit = vk::BlitImageInfo2::default()
            .src_image(image.raw())
            .src_image_layout(src)
            .dst_image(image.raw())
            .dst_image_layout(dst)
            .regions(&region)
            .filter(vk::Filter::LINEAR);
        // SAFETY: `cb` is recording outside a rendering scope on a graphics queue; level
        // `level - 1` is in TRANSFER_SRC_OPTIMAL after the barrier, `level` in
        // TRANSFER_DST_OPTIMAL; the format has BLIT_SRC, BLIT_DST and linear filtering
        // (checked); the regions lie inside the levels; the image is kept alive by the
        // recording (`record`'s transition).
        unsafe {
            raw.cmd_pipeline_barrier2(cb, &dep);
            raw.cmd_blit_image2(cb, &blit);
        }
    }
    let last = image.mip_levels() - 1;
    let back = [level_barrier(
        image,
        last - 1,
        (src, S::BLIT, A::NONE),
        (dst, S::ALL_TRANSFER, A::NONE),
    )];
    // SAFETY: as above; level `last - 1` was read by the last blit and is in
    // TRANSFER_SRC_OPTIMAL.
    unsafe {
        raw.cmd_pipeline_barrier2(
            cb,
            &vk::DependencyInfo::default().image_memory_barriers(&back),
        )
    };
}
