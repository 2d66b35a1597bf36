//! Importing an image shared by fd (`device::external::image`): the import, then the
//! acquire from `VK_QUEUE_FAMILY_EXTERNAL` in the layout the exporter left it in (Vulkan
//! spec §7.7.4 "Queue Family Ownership Transfer", §12.4: a transition from `UNDEFINED`
//! may discard the texels), recorded and waited for here, where submissions exist.

use std::os::fd::BorrowedFd;

use ash::vk;

use crate::device::{
    import_image_memory, layout_usage_ok, Device, ExternalMemory, Image, ImageDesc, SubresourceMap,
};
use crate::error::{Error, Result};

impl Device {
    /// An image of `desc` (the exporter's description: an opaque-fd image must be created
    /// with the same parameters) bound to the memory behind `fd`, described by `memory`
    /// ([`Image::export_memory`] of a device on the same physical device). `layout` is the
    /// layout its texels are in: the exporter's [`Image::layout`] after its last use
    /// finished, `UNDEFINED` if they do not matter. kiln acquires the image from
    /// `VK_QUEUE_FAMILY_EXTERNAL` in that layout (one submission on the main queue, waited
    /// for), so its first transition keeps them. `fd` stays the caller's: kiln imports a
    /// duplicate. The two images alias: order their uses with semaphores or host waits.
    ///
    /// Errors: `KILN-E180` `layout` `PREINITIALIZED` (kiln's images are optimally tiled),
    /// a layout the image's usage does not allow (an attachment layout without that
    /// attachment usage, a transfer or shader-read layout without its usage, a present or
    /// unknown layout), or `desc` invalid; `KILN-E163` the device cannot import images of `memory.handle`
    /// (as [`exportable_image`](Self::exportable_image)); `KILN-E164` `memory`'s size or
    /// type does not fit an image of `desc`; `KILN-E165` `fd` is not memory this device can
    /// import; `KILN-E154`, `KILN-E106`, `KILN-E104`; `KILN-E105`/`KILN-E108` the acquire's
    /// wait.
    pub fn import_image(
        &self,
        desc: &ImageDesc<'_>,
        fd: BorrowedFd<'_>,
        memory: &ExternalMemory,
        layout: vk::ImageLayout,
    ) -> Result<Image> {
        if layout == vk::ImageLayout::PREINITIALIZED {
            return Err(Error::InvalidImage {
                object: desc.label.to_string(),
                detail: "an imported image's layout cannot be PREINITIALIZED (kiln's images \
                         are optimally tiled); pass the exporter's Image::layout"
                    .into(),
            });
        }
        let image = import_image_memory(self, desc, fd, memory)?;
        if layout_usage_ok(layout, image.usage()) != Some(true) {
            return Err(Error::InvalidImage {
                object: desc.label.to_string(),
                detail: format!(
                    "an imported image cannot be in {layout:?}: its usage ({:?}) does not \
                     allow that layout (VUID-VkImageMemoryBarrier2-oldLayout-01208…01213); \
                     pass the exporter's Image::layout",
                    image.usage()
                ),
            });
        }
        if layout != vk::ImageLayout::UNDEFINED {
            self.acquire_external(&image, layout)?;
        }
        Ok(image)
    }

    /// The acquire barrier of `image` from the external queue family, `layout` kept.
    fn acquire_external(&self, image: &Image, layout: vk::ImageLayout) -> Result<()> {
        let shared = &self.shared;
        // A concurrent image names no family of its own (VUID-VkImageMemoryBarrier2-image-04071).
        let dst = if shared.sharing.mode() == vk::SharingMode::CONCURRENT {
            vk::QUEUE_FAMILY_IGNORED
        } else {
            shared
                .queues
                .first()
                .map_or(vk::QUEUE_FAMILY_IGNORED, |q| q.family)
        };
        let barrier = vk::ImageMemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::NONE)
            .src_access_mask(vk::AccessFlags2::NONE)
            .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            .dst_access_mask(vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE)
            .old_layout(layout)
            .new_layout(layout)
            .src_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL)
            .dst_queue_family_index(dst)
            .image(image.raw())
            .subresource_range(image.vk_range(image.subresources()));
        let barriers = [barrier];
        let dep = vk::DependencyInfo::default().image_memory_barriers(&barriers);
        self.execute(|r| {
            // SAFETY: one acquire barrier of an image this function holds until the
            // execution finished (`execute` waits); no kiln command of the recording uses
            // the image, whose layout kiln records as `layout` only afterwards.
            unsafe {
                let cb = r.raw();
                shared.raw.cmd_pipeline_barrier2(cb, &dep);
            }
            Ok(())
        })?;
        image.set_layouts(&SubresourceMap::new(
            image.mip_levels(),
            image.array_layers(),
            layout,
        ));
        Ok(())
    }
}
