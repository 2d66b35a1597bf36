//! The descriptor features [`create_device`](super::create_device) queries beside the core
//! structs: the limits of inline uniform blocks (Vulkan 1.3), and
//! `dynamicRenderingLocalRead` (VK_KHR_dynamic_rendering_local_read), which input
//! attachments need.

use ash::vk;

/// The first validation layer whose headers know VK_KHR_dynamic_rendering_local_read.
pub(super) const LAYER_KNOWS_LOCAL_READ: u32 = vk::make_api_version(0, 1, 3, 283);

/// The limits of inline uniform blocks (`VkPhysicalDeviceVulkan13Properties`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InlineUniformBlockLimits {
    /// `maxInlineUniformBlockSize`: bytes of one block (at least 256 where supported).
    pub max_size: u32,
    /// `maxPerStageDescriptorInlineUniformBlocks`: blocks one stage may access.
    pub max_per_stage: u32,
    /// `maxDescriptorSetInlineUniformBlocks`: blocks in all the sets of a pipeline layout.
    pub max_per_layout: u32,
    /// `maxInlineUniformTotalSize`: bytes of all the blocks of a pipeline layout.
    pub max_total_size: u32,
}

/// The inline uniform block limits of `physical` (a Vulkan 1.3 device).
pub(super) fn inline_uniform_block_limits(
    ir: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> InlineUniformBlockLimits {
    let mut p13 = vk::PhysicalDeviceVulkan13Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p13);
    // SAFETY: the chain holds one local struct of the right sType (Vulkan 1.3).
    unsafe { ir.get_physical_device_properties2(physical, &mut p2) };
    InlineUniformBlockLimits {
        max_size: p13.max_inline_uniform_block_size,
        max_per_stage: p13.max_per_stage_descriptor_inline_uniform_blocks,
        max_per_layout: p13.max_descriptor_set_inline_uniform_blocks,
        max_total_size: p13.max_inline_uniform_total_size,
    }
}

/// `KILN-E107` for local read on a device without it.
#[cold]
pub(crate) fn local_read_missing(device: &str) -> crate::error::DeviceError {
    crate::error::DeviceError::MissingFeature {
        device: device.to_string(),
        what: "dynamicRenderingLocalRead (VK_KHR_dynamic_rendering_local_read, Vulkan 1.4), \
               which input attachments and local-read colour attachments need; end the \
               scope and sample the image in the next one instead"
            .into(),
    }
}

/// `maxDescriptorSetUpdateAfterBind*` and `maxPerStageDescriptorUpdateAfterBind*`
/// (VkPhysicalDeviceVulkan12Properties), the smaller of the two per type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateAfterBindLimits {
    /// Most descriptors per stage of this type in update-after-bind sets (`maxPerStageDescriptorUpdateAfterBind*`): Samplers.
    pub samplers: u32,
    /// Most descriptors per stage of this type in update-after-bind sets (`maxPerStageDescriptorUpdateAfterBind*`): Uniform buffers.
    pub uniform_buffers: u32,
    /// Most descriptors per stage of this type in update-after-bind sets (`maxPerStageDescriptorUpdateAfterBind*`): Storage buffers.
    pub storage_buffers: u32,
    /// Most descriptors per stage of this type in update-after-bind sets (`maxPerStageDescriptorUpdateAfterBind*`): Sampled images.
    pub sampled_images: u32,
    /// Most descriptors per stage of this type in update-after-bind sets (`maxPerStageDescriptorUpdateAfterBind*`): Storage images.
    pub storage_images: u32,
    /// Most descriptors per stage of this type in update-after-bind sets (`maxPerStageDescriptorUpdateAfterBind*`): Input attachments.
    pub input_attachments: u32,
}

impl UpdateAfterBindLimits {
    /// The limit for a descriptor type (0 when unknown).
    pub fn for_type(&self, ty: vk::DescriptorType) -> u32 {
        use vk::DescriptorType as T;
        match ty {
            T::SAMPLER => self.samplers,
            T::COMBINED_IMAGE_SAMPLER => self.samplers.min(self.sampled_images),
            T::SAMPLED_IMAGE | T::UNIFORM_TEXEL_BUFFER => self.sampled_images,
            T::STORAGE_IMAGE | T::STORAGE_TEXEL_BUFFER => self.storage_images,
            T::UNIFORM_BUFFER => self.uniform_buffers,
            T::STORAGE_BUFFER => self.storage_buffers,
            T::INPUT_ATTACHMENT => self.input_attachments,
            _ => 0,
        }
    }
}

/// The update-after-bind limits of `physical` (a Vulkan 1.2 device).
pub(super) fn update_after_bind_limits(
    ir: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> UpdateAfterBindLimits {
    let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p12);
    // SAFETY: the chain holds one local struct of the right sType.
    unsafe { ir.get_physical_device_properties2(physical, &mut p2) };
    UpdateAfterBindLimits {
        samplers: p12
            .max_descriptor_set_update_after_bind_samplers
            .min(p12.max_per_stage_descriptor_update_after_bind_samplers),
        uniform_buffers: p12
            .max_descriptor_set_update_after_bind_uniform_buffers
            .min(p12.max_per_stage_descriptor_update_after_bind_uniform_buffers),
        storage_buffers: p12
            .max_descriptor_set_update_after_bind_storage_buffers
            .min(p12.max_per_stage_descriptor_update_after_bind_storage_buffers),
        sampled_images: p12
            .max_descriptor_set_update_after_bind_sampled_images
            .min(p12.max_per_stage_descriptor_update_after_bind_sampled_images),
        storage_images: p12
            .max_descriptor_set_update_after_bind_storage_images
            .min(p12.max_per_stage_descriptor_update_after_bind_storage_images),
        input_attachments: p12
            .max_descriptor_set_update_after_bind_input_attachments
            .min(p12.max_per_stage_descriptor_update_after_bind_input_attachments),
    }
}
