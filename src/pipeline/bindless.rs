//! Runtime ("bindless") descriptor arrays: resolved against the device when a pipeline
//! layout is created.
//!
//! A runtime array binding becomes `PARTIALLY_BOUND` (+ `VARIABLE_DESCRIPTOR_COUNT` when it
//! is the set's highest binding, VUID-VkDescriptorSetLayoutBindingFlagsCreateInfo-pBindingFlags-03004)
//! (+ `UPDATE_AFTER_BIND` when the device supports it for that descriptor type, with the
//! layout flag `UPDATE_AFTER_BIND_POOL`, VUID-VkDescriptorSetLayoutCreateInfo-flags-03000).
//! Its descriptor count is the user's maximum (`PipelineLayoutDesc::with_bindless_max`) or
//! [`DEFAULT_BINDLESS_MAX`], clamped to the device's limit for the type (the
//! update-after-bind limits when update-after-bind is used, else
//! `maxPerStageDescriptor*` minus the set's other descriptors of that type).

use ash::vk;

use std::collections::BTreeMap;

use crate::descriptors::DescriptorSetLayoutDesc;
use crate::device::Shared;
use crate::error::{DeviceError, PipelineError, Result};

fn uab_supported(f: &crate::device::Features, ty: vk::DescriptorType) -> bool {
    use vk::DescriptorType as T;
    match ty {
        T::STORAGE_BUFFER => f.update_after_bind_storage_buffer,
        T::UNIFORM_BUFFER => f.update_after_bind_uniform_buffer,
        T::SAMPLED_IMAGE | T::COMBINED_IMAGE_SAMPLER | T::SAMPLER => {
            f.update_after_bind_sampled_image
        }
        T::STORAGE_IMAGE => f.update_after_bind_storage_image,
        _ => false,
    }
}

fn per_stage_limit(l: &vk::PhysicalDeviceLimits, ty: vk::DescriptorType) -> u32 {
    use vk::DescriptorType as T;
    match ty {
        T::SAMPLER => l.max_per_stage_descriptor_samplers,
        T::COMBINED_IMAGE_SAMPLER => l
            .max_per_stage_descriptor_samplers
            .min(l.max_per_stage_descriptor_sampled_images),
        T::SAMPLED_IMAGE | T::UNIFORM_TEXEL_BUFFER => l.max_per_stage_descriptor_sampled_images,
        T::STORAGE_IMAGE | T::STORAGE_TEXEL_BUFFER => l.max_per_stage_descriptor_storage_images,
        T::UNIFORM_BUFFER => l.max_per_stage_descriptor_uniform_buffers,
        T::STORAGE_BUFFER => l.max_per_stage_descriptor_storage_buffers,
        T::INPUT_ATTACHMENT => l.max_per_stage_descriptor_input_attachments,
        _ => 1,
    }
}

/// Default maximum descriptor count of a runtime (bindless) descriptor array, clamped to
/// the device's limits when the layout is created.
pub const DEFAULT_BINDLESS_MAX: u32 = 4096;

/// The set-layout descriptions kiln creates for a pipeline layout's `sets` on the device
/// `shared`: the runtime arrays at (set, binding) get their count (`bindless_max` or
/// [`DEFAULT_BINDLESS_MAX`]) and binding flags (see the module docs).
///
/// Errors: `KILN-E107` when the device lacks descriptor indexing
/// (`runtimeDescriptorArray`, `descriptorBindingPartiallyBound`).
pub(crate) fn resolve_layout(
    shared: &Shared,
    sets: &[DescriptorSetLayoutDesc],
    runtime_arrays: &[(u32, u32)],
    bindless_max: &BTreeMap<(u32, u32), u32>,
) -> Result<Vec<DescriptorSetLayoutDesc>, PipelineError> {
    let f = &shared.features;
    let mut sets = sets.to_vec();
    for &(set, binding) in runtime_arrays {
        if !(f.descriptor_indexing
            && f.runtime_descriptor_array
            && f.descriptor_binding_partially_bound)
        {
            return Err(DeviceError::MissingFeature {
                device: shared.info.name.clone(),
                what: format!(
                    "descriptor indexing (runtimeDescriptorArray, \
                         descriptorBindingPartiallyBound), needed by the runtime array at set \
                         {set} binding {binding}"
                ),
            }
            .into());
        }
        let Some(s) = sets.get_mut(set as usize) else {
            continue;
        };
        let last = s.bindings().last().map(|b| b.binding) == Some(binding);
        let mut bindings = s.bindings().to_vec();
        let others = |ty: vk::DescriptorType| -> u32 {
            bindings
                .iter()
                .filter(|b| b.binding != binding && b.descriptor_type == ty)
                .map(|b| b.count)
                .sum()
        };
        let Some(ty) = bindings
            .iter()
            .find(|b| b.binding == binding)
            .map(|b| b.descriptor_type)
        else {
            continue;
        };
        let uab = uab_supported(f, ty);
        let limit = if uab {
            f.update_after_bind_limits.for_type(ty)
        } else {
            per_stage_limit(shared.limits(), ty)
        }
        .saturating_sub(others(ty))
        .max(1);
        let wanted = bindless_max
            .get(&(set, binding))
            .copied()
            .unwrap_or(DEFAULT_BINDLESS_MAX);
        let mut flags = s.flags;
        if let Some(b) = bindings.iter_mut().find(|b| b.binding == binding) {
            b.count = wanted.min(limit).max(1);
            if let Some(s) = b.immutable_samplers.first().copied() {
                b.immutable_samplers = vec![s; b.count as usize];
            }
            b.flags |= vk::DescriptorBindingFlags::PARTIALLY_BOUND;
            if last && f.descriptor_binding_variable_descriptor_count {
                b.flags |= vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT;
            }
            if uab {
                b.flags |= vk::DescriptorBindingFlags::UPDATE_AFTER_BIND;
                flags |= vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL;
            }
        }
        *s = DescriptorSetLayoutDesc::new(bindings, flags);
    }
    Ok(sets)
}
