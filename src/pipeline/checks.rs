//! Checks made before Vulkan sees a pipeline or layout, so that exceeding a device limit or
//! using a capability the device lacks is a coded error instead of a validation message or
//! a driver crash.
//!
//! - Shader capabilities vs enabled features (Vulkan spec appendix "Spirv Capabilities",
//!   VUID-VkShaderModuleCreateInfo-pCode-08740).
//! - `maxBoundDescriptorSets` (VUID-VkPipelineLayoutCreateInfo-setLayoutCount-00286),
//!   `maxPerStageDescriptor*` (…-descriptorType-03016 ff.) and `maxDescriptorSet*`
//!   (…-descriptorType-03028 ff.), ignoring update-after-bind bindings, which have their
//!   own limits (applied when runtime arrays are resolved).

use ash::vk;

use crate::descriptors::DescriptorSetLayoutDesc;
use crate::device::{Features, Shared};
use crate::error::{Error, Result};
use crate::shaders::ShaderModule;

/// Suffixes of SPIR-V capability names that come from extensions (capabilities promoted to
/// core Vulkan are printed by their unsuffixed names).
const EXTENSION_SUFFIXES: [&str; 10] = [
    "EXT", "KHR", "NV", "AMD", "INTEL", "GOOGLE", "ARM", "QCOM", "HUAWEI", "NVX",
];

/// The feature (by Vulkan name) a SPIR-V capability needs, if kiln knows it and the
/// device lacks it.
fn missing_for(cap: &str, f: &Features) -> Option<&'static str> {
    let (ok, name) = match cap {
        "Float64" => (f.shader_float64, "shaderFloat64"),
        "Int64" => (f.shader_int64, "shaderInt64"),
        "Int16" => (f.shader_int16, "shaderInt16"),
        "Float16" => (f.shader_float16, "shaderFloat16"),
        "Int8" => (f.shader_int8, "shaderInt8"),
        "StorageBuffer16BitAccess" | "StorageUniformBufferBlock16" => {
            (f.storage_buffer_16bit_access, "storageBuffer16BitAccess")
        }
        "StorageBuffer8BitAccess" => (f.storage_buffer_8bit_access, "storageBuffer8BitAccess"),
        "Geometry" => (f.geometry_shader, "geometryShader"),
        "Tessellation" => (f.tessellation_shader, "tessellationShader"),
        "StorageImageWriteWithoutFormat" => (
            f.shader_storage_image_write_without_format,
            "shaderStorageImageWriteWithoutFormat",
        ),
        "StorageImageReadWithoutFormat" => (
            f.shader_storage_image_read_without_format,
            "shaderStorageImageReadWithoutFormat",
        ),
        "RuntimeDescriptorArray" => (f.runtime_descriptor_array, "runtimeDescriptorArray"),
        "VulkanMemoryModel" => (f.vulkan_memory_model, "vulkanMemoryModel"),
        "PhysicalStorageBufferAddresses" => (f.buffer_device_address, "bufferDeviceAddress"),
        "RayQueryKHR" => (false, "rayQuery (VK_KHR_ray_query, not enabled by kiln)"),
        "RayTracingKHR" => (
            false,
            "rayTracingPipeline (VK_KHR_ray_tracing_pipeline, not enabled by kiln)",
        ),
        "MeshShadingEXT" | "MeshShadingNV" => (
            false,
            "meshShader (VK_EXT_mesh_shader, not enabled by kiln)",
        ),
        // Any other vendor- or extension-suffixed capability needs a device extension, and
        // kiln enables none beyond those above (VUID-VkShaderModuleCreateInfo-pCode-08740,
        // -08742).
        _ if EXTENSION_SUFFIXES.iter().any(|s| cap.ends_with(s)) => (
            false,
            "the device extension behind this capability (not enabled by kiln)",
        ),
        _ => (true, ""),
    };
    (!ok).then_some(name)
}

/// Checks that the device `shared` has every feature the module's capabilities need.
///
/// Errors: `KILN-E107` naming the capability, the feature and the device.
pub(crate) fn check_capabilities(shared: &Shared, module: &ShaderModule) -> Result<()> {
    for cap in &module.reflection().capabilities {
        if let Some(feature) = missing_for(cap, &shared.features) {
            return Err(Error::MissingFeature {
                device: shared.info.name.clone(),
                what: format!(
                    "feature {feature}, needed by SPIR-V capability {cap} of `{}`",
                    module.label()
                ),
            });
        }
    }
    Ok(())
}

/// Checks set count and per-stage / per-set descriptor counts against the limits of the
/// device `shared`.
///
/// Errors: `KILN-E057` naming the limit, the count and the stage or set.
pub(crate) fn check_descriptor_limits(
    shared: &Shared,
    sets: &[DescriptorSetLayoutDesc],
) -> Result<()> {
    let l = shared.limits();
    if sets.len() as u32 > l.max_bound_descriptor_sets {
        return Err(Error::LimitExceeded {
            what: "descriptor sets in the pipeline layout".into(),
            count: sets.len() as u64,
            limit: l.max_bound_descriptor_sets as u64,
            limit_name: "maxBoundDescriptorSets",
        });
    }
    use vk::DescriptorType as T;
    // (name, per-stage limit, per-set limit, types counted)
    let classes: [(&'static str, &'static str, u32, u32, &[T]); 6] = [
        (
            "samplers",
            "maxPerStageDescriptorSamplers / maxDescriptorSetSamplers",
            l.max_per_stage_descriptor_samplers,
            l.max_descriptor_set_samplers,
            &[T::SAMPLER, T::COMBINED_IMAGE_SAMPLER],
        ),
        (
            "uniform buffers",
            "maxPerStageDescriptorUniformBuffers / maxDescriptorSetUniformBuffers",
            l.max_per_stage_descriptor_uniform_buffers,
            l.max_descriptor_set_uniform_buffers,
            &[T::UNIFORM_BUFFER, T::UNIFORM_BUFFER_DYNAMIC],
        ),
        (
            "storage buffers",
            "maxPerStageDescriptorStorageBuffers / maxDescriptorSetStorageBuffers",
            l.max_per_stage_descriptor_storage_buffers,
            l.max_descriptor_set_storage_buffers,
            &[T::STORAGE_BUFFER, T::STORAGE_BUFFER_DYNAMIC],
        ),
        (
            "sampled images",
            "maxPerStageDescriptorSampledImages / maxDescriptorSetSampledImages",
            l.max_per_stage_descriptor_sampled_images,
            l.max_descriptor_set_sampled_images,
            &[
                T::SAMPLED_IMAGE,
                T::COMBINED_IMAGE_SAMPLER,
                T::UNIFORM_TEXEL_BUFFER,
            ],
        ),
        (
            "storage images",
            "maxPerStageDescriptorStorageImages / maxDescriptorSetStorageImages",
            l.max_per_stage_descriptor_storage_images,
            l.max_descriptor_set_storage_images,
            &[T::STORAGE_IMAGE, T::STORAGE_TEXEL_BUFFER],
        ),
        (
            "input attachments",
            "maxPerStageDescriptorInputAttachments / maxDescriptorSetInputAttachments",
            l.max_per_stage_descriptor_input_attachments,
            l.max_descriptor_set_input_attachments,
            &[T::INPUT_ATTACHMENT],
        ),
    ];
    let counted = |b: &crate::descriptors::SetLayoutBinding, types: &[T]| {
        types.contains(&b.descriptor_type)
            && !b
                .flags
                .contains(vk::DescriptorBindingFlags::UPDATE_AFTER_BIND)
    };
    let all_stages: vk::ShaderStageFlags = sets
        .iter()
        .flat_map(|s| s.bindings().iter().map(|b| b.stages))
        .fold(vk::ShaderStageFlags::empty(), |a, b| a | b);
    for (what, limit_name, per_stage, per_set, types) in classes {
        let total: u64 = sets
            .iter()
            .flat_map(|s| s.bindings())
            .filter(|b| counted(b, types))
            .map(|b| b.count as u64)
            .sum();
        if total > per_set as u64 {
            return Err(Error::LimitExceeded {
                what: format!("{what} in the pipeline layout"),
                count: total,
                limit: per_set as u64,
                limit_name,
            });
        }
        for bit in 0..32 {
            let stage = vk::ShaderStageFlags::from_raw(1 << bit);
            if !all_stages.contains(stage) {
                continue;
            }
            let n: u64 = sets
                .iter()
                .flat_map(|s| s.bindings())
                .filter(|b| b.stages.contains(stage) && counted(b, types))
                .map(|b| b.count as u64)
                .sum();
            if n > per_stage as u64 {
                return Err(Error::LimitExceeded {
                    what: format!("{what} visible to the {stage:?} stage"),
                    count: n,
                    limit: per_stage as u64,
                    limit_name,
                });
            }
        }
    }
    Ok(())
}
