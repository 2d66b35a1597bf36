//! `VkPhysicalDeviceShaderBfloat16FeaturesKHR`, which ash's headers predate.

use ash::vk;

/// `VkPhysicalDeviceShaderBfloat16FeaturesKHR` (VK_KHR_shader_bfloat16), laid out as the
/// Vulkan headers declare it; ash's headers predate it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(super) struct Bfloat16Features {
    pub(super) s_type: vk::StructureType,
    pub(super) p_next: *mut std::ffi::c_void,
    pub(super) shader_bfloat16_type: vk::Bool32,
    pub(super) shader_bfloat16_dot_product: vk::Bool32,
    pub(super) shader_bfloat16_cooperative_matrix: vk::Bool32,
}

impl Default for Bfloat16Features {
    fn default() -> Self {
        Bfloat16Features {
            // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR
            s_type: vk::StructureType::from_raw(1_000_141_000),
            p_next: std::ptr::null_mut(),
            shader_bfloat16_type: vk::FALSE,
            shader_bfloat16_dot_product: vk::FALSE,
            shader_bfloat16_cooperative_matrix: vk::FALSE,
        }
    }
}

// SAFETY: the struct starts with sType and pNext like every Vulkan input/output struct and
// extends both chains per the VK_KHR_shader_bfloat16 spec.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for Bfloat16Features {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for Bfloat16Features {}
