//! Checks made before Vulkan sees a pipeline or layout, so that exceeding a device limit or
//! using a capability the device lacks is a coded error instead of a validation message or
//! a driver crash.
//!
//! - Shader capabilities vs enabled features (Vulkan spec appendix "Spirv Capabilities",
//!   VUID-VkShaderModuleCreateInfo-pCode-08740): the table lives in the device layer
//!   (`device/capabilities.rs`); this is the pipeline's entry to it. Then the scopes of the
//!   module's cooperative matrices (workgroup scope needs VK_NV_cooperative_matrix2).
//! - Specialization (issue 30, [`check_specialization`]): the module as the pipeline's
//!   specialization constants make it (`shaders/reflect/specialize.rs`): no array length
//!   below 1 (VUID-VkPipelineShaderStageCreateInfo-pSpecializationInfo-06719), the shared
//!   memory of a compute entry point within `maxComputeSharedMemorySize`
//!   (VUID-RuntimeSpirv-Workgroup-06530); the workgroup size it gives is checked by the
//!   compute pipeline (`KILN-E054`, `KILN-E256`), and pipelines derive their layouts from
//!   the entry points as specialized (descriptor counts from specialization constants).
//! - `maxBoundDescriptorSets` (VUID-VkPipelineLayoutCreateInfo-setLayoutCount-00286),
//!   `maxPerStageDescriptor*` (…-descriptorType-03016 ff.) and `maxDescriptorSet*`
//!   (…-descriptorType-03028 ff.), ignoring update-after-bind bindings, which have their
//!   own limits (applied when runtime arrays are resolved).

use ash::vk;

use crate::descriptors::DescriptorSetLayoutDesc;
use crate::device::Shared;
use crate::error::{PipelineError, Result, ShaderError};
use crate::shaders::reflect::{specialize, Specialized};
use crate::shaders::{ShaderModule, SpecValue};

/// Evaluates entry point `entry` of `module` with the specialization `spec` (defaults for
/// the constants it does not give) and checks what only that reveals, for a pipeline
/// `label`: every array length at least 1 and, for a compute entry point (`stage`), the
/// Workgroup storage within `maxComputeSharedMemorySize`. Returns the evaluation (its
/// workgroup size is for the caller's limit checks).
///
/// Errors: `KILN-E064` an array length below 1, `KILN-E065` too much shared memory, each
/// naming the specialization constants and their values.
pub(crate) fn check_specialization(
    shared: &Shared,
    label: &str,
    module: &ShaderModule,
    (entry, stage): (&str, vk::ShaderStageFlags),
    spec: &[(u32, SpecValue)],
) -> Result<Specialized, PipelineError> {
    let s = specialize(module.words(), entry, spec)?;
    let constants = |c: &[String]| match c {
        [] => "no specialization constant".to_string(),
        c => c.join(", "),
    };
    if let Some(bad) = s.bad_arrays.first() {
        return Err(ShaderError::SpecializedArrayLength {
            entry: label.to_string(),
            array: bad.array,
            length: bad.length.to_string(),
            constants: constants(&bad.constants),
        }
        .into());
    }
    let limit = shared.limits().max_compute_shared_memory_size;
    if stage == vk::ShaderStageFlags::COMPUTE && s.shared_bytes > u64::from(limit) {
        return Err(ShaderError::SharedMemoryTooLarge {
            entry: label.to_string(),
            device: shared.info.name.clone(),
            bytes: s.shared_bytes,
            limit,
            variables: s.shared_variables.join(", "),
        }
        .into());
    }
    Ok(s)
}

/// Checks that the device `shared` has every feature, extension and property that the
/// module's capabilities need, for an entry point of `stage` (the table in
/// `device/capabilities.rs`), then the scopes of its cooperative matrices.
///
/// Errors: `KILN-E107` naming the capability, the feature and the device, `KILN-E110` a
/// capability kiln does not know, `KILN-E111` an OpenCL-only capability, `KILN-E112` a
/// cooperative-matrix scope the device does not allow (workgroup scope without
/// VK_NV_cooperative_matrix2).
pub(crate) fn check_capabilities(
    shared: &Shared,
    module: &ShaderModule,
    stage: vk::ShaderStageFlags,
) -> Result<(), PipelineError> {
    shared.check_capabilities(
        module.label(),
        &module.reflection().extensions,
        module.reflection().capabilities.iter().map(String::as_str),
        stage,
    )?;
    shared.check_cooperative_matrix_scopes(
        module.label(),
        &module.reflection().cooperative_matrix_scopes,
    )?;
    Ok(())
}

/// Checks set count and per-stage / per-set descriptor counts against the limits of the
/// device `shared`.
///
/// Errors: `KILN-E057` naming the limit, the count and the stage or set.
pub(crate) fn check_descriptor_limits(
    shared: &Shared,
    sets: &[DescriptorSetLayoutDesc],
) -> Result<(), PipelineError> {
    let l = shared.limits();
    if sets.len() as u32 > l.max_bound_descriptor_sets {
        return Err(ShaderError::LimitExceeded {
            what: "descriptor sets in the pipeline layout".into(),
            count: sets.len() as u64,
            limit: l.max_bound_descriptor_sets as u64,
            limit_name: "maxBoundDescriptorSets",
        }
        .into());
    }
    check_inline_limits(shared, sets)?;
    use vk::DescriptorType as T;
    let classes = descriptor_classes(shared);
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
            return Err(ShaderError::LimitExceeded {
                what: format!("{what} in the pipeline layout"),
                count: total,
                limit: per_set as u64,
                limit_name,
            }
            .into());
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
                return Err(ShaderError::LimitExceeded {
                    what: format!("{what} visible to the {stage:?} stage"),
                    count: n,
                    limit: per_stage as u64,
                    limit_name,
                }
                .into());
            }
        }
    }
    Ok(())
}

/// A class of descriptors with its limits: (name, the limits' names, per-stage limit,
/// per-set limit, the types counted).
type LimitClass = (
    &'static str,
    &'static str,
    u32,
    u32,
    &'static [vk::DescriptorType],
);

/// The descriptor classes of the device `shared` and their limits (Vulkan spec §47.1,
/// `maxPerStageDescriptor*` and `maxDescriptorSet*`).
fn descriptor_classes(shared: &Shared) -> [LimitClass; 7] {
    use vk::DescriptorType as T;
    let l = shared.limits();
    let accel = &shared.features.acceleration_structure_limits;
    [
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
        (
            "acceleration structures",
            "maxPerStageDescriptorAccelerationStructures / maxDescriptorSetAccelerationStructures",
            accel.max_per_stage_descriptor_acceleration_structures,
            accel.max_descriptor_set_acceleration_structures,
            &[T::ACCELERATION_STRUCTURE_KHR],
        ),
    ]
}

/// Checks the inline uniform blocks of a pipeline layout: blocks per stage
/// (`maxPerStageDescriptorInlineUniformBlocks`), per layout
/// (`maxDescriptorSetInlineUniformBlocks`) and their bytes (`maxInlineUniformTotalSize`),
/// VUID-VkPipelineLayoutCreateInfo-descriptorType-02214, -02216, -06531.
///
/// Errors: `KILN-E057`.
fn check_inline_limits(
    shared: &Shared,
    sets: &[DescriptorSetLayoutDesc],
) -> Result<(), PipelineError> {
    let blocks = || {
        sets.iter()
            .flat_map(|s| s.bindings())
            .filter(|b| b.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK)
    };
    if blocks().next().is_none() {
        return Ok(());
    }
    let l = shared.features.inline_uniform_block_limits;
    let exceeded = |what: String, count: u64, limit: u32, limit_name| {
        Err(ShaderError::LimitExceeded {
            what,
            count,
            limit: limit as u64,
            limit_name,
        }
        .into())
    };
    let count = blocks().count() as u64;
    if count > l.max_per_layout as u64 {
        let what = "inline uniform blocks in the pipeline layout".to_string();
        return exceeded(
            what,
            count,
            l.max_per_layout,
            "maxDescriptorSetInlineUniformBlocks",
        );
    }
    let bytes: u64 = blocks().map(|b| b.count as u64).sum();
    if bytes > l.max_total_size as u64 {
        let what = "bytes of inline uniform blocks in the pipeline layout".to_string();
        return exceeded(what, bytes, l.max_total_size, "maxInlineUniformTotalSize");
    }
    for bit in 0..32 {
        let stage = vk::ShaderStageFlags::from_raw(1 << bit);
        let n = blocks().filter(|b| b.stages.contains(stage)).count() as u64;
        if n > l.max_per_stage as u64 {
            let what = format!("inline uniform blocks visible to the {stage:?} stage");
            let name = "maxPerStageDescriptorInlineUniformBlocks";
            return exceeded(what, n, l.max_per_stage, name);
        }
    }
    Ok(())
}
