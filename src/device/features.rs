//! Which device features kiln enables, and the logical device's creation.
//!
//! kiln enables every core feature the device reports (Vulkan 1.0–1.3 feature structs),
//! except those that cost speed everywhere (`robustBufferAccess`, `robustImageAccess`) or
//! exist for tooling (`bufferDeviceAddressCaptureReplay`, `…MultiDevice`). Extensions:
//! `VK_KHR_swapchain` when present and the instance has surface extensions (windowing);
//! `VK_EXT_external_memory_host` when present (importing host memory).

use std::ffi::CStr;

use ash::vk;

use super::instance::Instance;
use super::DeviceInfo;
use crate::error::{vk_err, Result};

/// Device features that kiln enabled (each true only when the device supports it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    pub timeline_semaphore: bool,
    pub synchronization2: bool,
    pub dynamic_rendering: bool,
    pub buffer_device_address: bool,
    pub descriptor_indexing: bool,
    pub runtime_descriptor_array: bool,
    pub descriptor_binding_partially_bound: bool,
    pub descriptor_binding_variable_descriptor_count: bool,
    /// UPDATE_AFTER_BIND support per descriptor type family.
    pub update_after_bind_storage_buffer: bool,
    pub update_after_bind_uniform_buffer: bool,
    pub update_after_bind_sampled_image: bool,
    pub update_after_bind_storage_image: bool,
    pub shader_float64: bool,
    pub shader_int64: bool,
    pub shader_int16: bool,
    pub shader_float16: bool,
    pub shader_int8: bool,
    pub storage_buffer_16bit_access: bool,
    pub storage_buffer_8bit_access: bool,
    pub scalar_block_layout: bool,
    pub vulkan_memory_model: bool,
    pub geometry_shader: bool,
    pub tessellation_shader: bool,
    pub shader_storage_image_write_without_format: bool,
    pub shader_storage_image_read_without_format: bool,
    pub vertex_pipeline_stores_and_atomics: bool,
    pub fragment_stores_and_atomics: bool,
    pub sampler_anisotropy: bool,
    pub swapchain: bool,
    /// `VK_EXT_external_memory_host`: host memory can be imported
    /// ([`Device::import_host_memory`](crate::Device::import_host_memory)).
    pub external_memory_host: bool,
    /// `hostQueryReset` (Vulkan 1.2): query pools are reset on the host, so kiln's GPU timing
    /// reuses its query pools.
    pub host_query_reset: bool,
    /// `VK_KHR_calibrated_timestamps` or `VK_EXT_calibrated_timestamps` is enabled: GPU
    /// timestamps are placed on the CPU clock by reading both clocks at once.
    pub calibrated_timestamps: bool,
    /// Update-after-bind descriptor limits (Vulkan 1.2 descriptor indexing properties);
    /// zero when descriptor indexing is unsupported.
    pub update_after_bind_limits: UpdateAfterBindLimits,
}

/// `maxDescriptorSetUpdateAfterBind*` and `maxPerStageDescriptorUpdateAfterBind*`
/// (VkPhysicalDeviceVulkan12Properties), the smaller of the two per type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateAfterBindLimits {
    pub samplers: u32,
    pub uniform_buffers: u32,
    pub storage_buffers: u32,
    pub sampled_images: u32,
    pub storage_images: u32,
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

fn b(v: vk::Bool32) -> bool {
    v == vk::TRUE
}

pub(crate) fn create_device(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    queues: &[(u32, u32)],
    info: &DeviceInfo,
) -> Result<(ash::Device, Features)> {
    let ir = &instance.raw;
    let v12 = info.used_api_version >= vk::API_VERSION_1_2;
    let v13 = info.used_api_version >= vk::API_VERSION_1_3;
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut f10 = {
        let mut f2 = vk::PhysicalDeviceFeatures2::default();
        if v12 {
            f2 = f2.push_next(&mut f11).push_next(&mut f12);
        }
        if v13 {
            f2 = f2.push_next(&mut f13);
        }
        // SAFETY: the chain holds only locals alive for the call, each of the right sType.
        unsafe { ir.get_physical_device_features2(physical, &mut f2) };
        f2.features
    };
    f11.p_next = std::ptr::null_mut();
    f12.p_next = std::ptr::null_mut();
    f13.p_next = std::ptr::null_mut();
    f10.robust_buffer_access = vk::FALSE;
    f13.robust_image_access = vk::FALSE;
    f12.buffer_device_address_capture_replay = vk::FALSE;
    f12.buffer_device_address_multi_device = vk::FALSE;

    // SAFETY: plain query.
    let exts = unsafe { ir.enumerate_device_extension_properties(physical) }
        .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?;
    let has = |n: &CStr| {
        exts.iter()
            .any(|e| e.extension_name_as_c_str().is_ok_and(|x| x == n))
    };
    let mut ext_names = Vec::new();
    let swapchain = instance.surface && has(ash::khr::swapchain::NAME);
    if swapchain {
        ext_names.push(ash::khr::swapchain::NAME.as_ptr());
    }
    let external_memory_host = has(ash::ext::external_memory_host::NAME);
    if external_memory_host {
        ext_names.push(ash::ext::external_memory_host::NAME.as_ptr());
    }
    // The KHR extension where present, else the EXT one (same functions).
    let calibrated_timestamps = if has(ash::khr::calibrated_timestamps::NAME) {
        ext_names.push(ash::khr::calibrated_timestamps::NAME.as_ptr());
        true
    } else if has(ash::ext::calibrated_timestamps::NAME) {
        ext_names.push(ash::ext::calibrated_timestamps::NAME.as_ptr());
        true
    } else {
        false
    };

    let features = Features {
        timeline_semaphore: v12 && b(f12.timeline_semaphore),
        synchronization2: v13 && b(f13.synchronization2),
        dynamic_rendering: v13 && b(f13.dynamic_rendering),
        buffer_device_address: v12 && b(f12.buffer_device_address),
        descriptor_indexing: v12 && b(f12.descriptor_indexing),
        runtime_descriptor_array: v12 && b(f12.runtime_descriptor_array),
        descriptor_binding_partially_bound: v12 && b(f12.descriptor_binding_partially_bound),
        descriptor_binding_variable_descriptor_count: v12
            && b(f12.descriptor_binding_variable_descriptor_count),
        update_after_bind_storage_buffer: v12
            && b(f12.descriptor_binding_storage_buffer_update_after_bind),
        update_after_bind_uniform_buffer: v12
            && b(f12.descriptor_binding_uniform_buffer_update_after_bind),
        update_after_bind_sampled_image: v12
            && b(f12.descriptor_binding_sampled_image_update_after_bind),
        update_after_bind_storage_image: v12
            && b(f12.descriptor_binding_storage_image_update_after_bind),
        shader_float64: b(f10.shader_float64),
        shader_int64: b(f10.shader_int64),
        shader_int16: b(f10.shader_int16),
        shader_float16: v12 && b(f12.shader_float16),
        shader_int8: v12 && b(f12.shader_int8),
        storage_buffer_16bit_access: v12 && b(f11.storage_buffer16_bit_access),
        storage_buffer_8bit_access: v12 && b(f12.storage_buffer8_bit_access),
        scalar_block_layout: v12 && b(f12.scalar_block_layout),
        vulkan_memory_model: v12 && b(f12.vulkan_memory_model),
        geometry_shader: b(f10.geometry_shader),
        tessellation_shader: b(f10.tessellation_shader),
        shader_storage_image_write_without_format: b(f10.shader_storage_image_write_without_format),
        shader_storage_image_read_without_format: b(f10.shader_storage_image_read_without_format),
        vertex_pipeline_stores_and_atomics: b(f10.vertex_pipeline_stores_and_atomics),
        fragment_stores_and_atomics: b(f10.fragment_stores_and_atomics),
        sampler_anisotropy: b(f10.sampler_anisotropy),
        swapchain,
        external_memory_host,
        host_query_reset: v12 && b(f12.host_query_reset),
        calibrated_timestamps,
        update_after_bind_limits: if v12 {
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
        } else {
            UpdateAfterBindLimits::default()
        },
    };

    // One priority per queue, all equal (at most MAX_QUEUES queues per family).
    let priorities = [1.0f32; super::MAX_QUEUES];
    let queue_infos: Vec<_> = queues
        .iter()
        .map(|&(family, n)| {
            vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&priorities[..(n as usize).clamp(1, super::MAX_QUEUES)])
        })
        .collect();
    let mut info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_infos)
        .enabled_extension_names(&ext_names)
        .enabled_features(&f10);
    if v12 {
        info = info.push_next(&mut f11).push_next(&mut f12);
    }
    if v13 {
        info = info.push_next(&mut f13);
    }
    // SAFETY: every pointer in `info` refers to locals alive for this call; the features
    // enabled are a subset of those the device reported.
    let raw =
        unsafe { ir.create_device(physical, &info, None) }.map_err(vk_err("vkCreateDevice"))?;
    Ok((raw, features))
}
