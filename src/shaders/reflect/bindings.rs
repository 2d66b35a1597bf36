//! Descriptor bindings declared by a module: descriptor type, count and block layout of
//! each resource variable (Vulkan spec §15.1 "Descriptor Types", §15.6 "DescriptorSet and
//! Binding Assignment"; SPIR-V spec §2.16.1 for the Uniform/BufferBlock/StorageBuffer rules).

use std::collections::BTreeMap;

use ash::vk;
use rspirv::spirv::{Dim, StorageClass};

use super::tables::{self, Tables, Ty};
use super::{layout, DescriptorBinding};
use crate::error::{Error, Result};

/// Every descriptor variable declared in the module: variable id -> binding.
pub(super) fn declared_bindings(t: &Tables) -> Result<BTreeMap<u32, DescriptorBinding>> {
    let mut out = BTreeMap::new();
    for (&var, _) in t.globals.iter() {
        let Some((storage, pointee)) = t.variable_pointee(var) else {
            continue;
        };
        if !matches!(
            storage,
            StorageClass::UniformConstant | StorageClass::Uniform | StorageClass::StorageBuffer
        ) {
            continue;
        }
        if let Some(b) = describe_binding(t, var, storage, pointee)? {
            out.insert(var, b);
        }
    }
    Ok(out)
}

fn describe_binding(
    t: &Tables,
    var: u32,
    storage: StorageClass,
    pointee: u32,
) -> Result<Option<DescriptorBinding>> {
    let d = t.deco(var).cloned().unwrap_or_default();
    let name = t.names.get(&var).filter(|n| !n.is_empty()).cloned();
    // Strip arrays: the descriptor count is the product of all dimensions.
    let mut ty = pointee;
    let mut count: u32 = 1;
    let mut runtime_array = false;
    let mut count_spec_id = None;
    let mut depth = 0;
    loop {
        depth += 1;
        if depth > 16 {
            return Err(Error::ReflectUnsupported {
                object: binding_label(&name, &d),
                detail: "array nesting deeper than 16".into(),
            });
        }
        match t.types.get(&ty) {
            Some(Ty::Array { element, length }) => {
                let n = t
                    .eval_int(*length)
                    .ok_or_else(|| Error::ReflectUnsupported {
                        object: binding_label(&name, &d),
                        detail: "array length is not an integer constant kiln can evaluate".into(),
                    })?;
                if let Some(sid) = t.deco(*length).and_then(|d| d.spec_id) {
                    count_spec_id = Some(sid);
                }
                count = count.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX));
                ty = *element;
            }
            Some(Ty::RuntimeArray { element }) => {
                runtime_array = true;
                ty = *element;
            }
            _ => break,
        }
    }
    let mut image = None;
    let mut block = None;
    let mut non_writable = d.non_writable;
    let ty_deco = t.deco(ty).cloned().unwrap_or_default();
    let descriptor_type = match (storage, t.types.get(&ty)) {
        (StorageClass::UniformConstant, Some(Ty::Sampler)) => vk::DescriptorType::SAMPLER,
        (StorageClass::UniformConstant, Some(Ty::SampledImage { image: img })) => {
            image = match t.types.get(img) {
                Some(Ty::Image(i)) => Some(*i),
                _ => None,
            };
            if image.is_some_and(|i| i.dim == Dim::DimBuffer) {
                vk::DescriptorType::UNIFORM_TEXEL_BUFFER
            } else {
                vk::DescriptorType::COMBINED_IMAGE_SAMPLER
            }
        }
        (StorageClass::UniformConstant, Some(Ty::Image(i))) => {
            image = Some(*i);
            match (i.dim, i.sampled) {
                (Dim::DimSubpassData, _) => vk::DescriptorType::INPUT_ATTACHMENT,
                (Dim::DimBuffer, 2) => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
                (Dim::DimBuffer, _) => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
                (_, 2) => vk::DescriptorType::STORAGE_IMAGE,
                _ => vk::DescriptorType::SAMPLED_IMAGE,
            }
        }
        (StorageClass::UniformConstant, Some(Ty::AccelerationStructure)) => {
            vk::DescriptorType::ACCELERATION_STRUCTURE_KHR
        }
        (StorageClass::Uniform, Some(Ty::Struct { .. })) if ty_deco.buffer_block => {
            block = layout::block_layout(t, ty);
            vk::DescriptorType::STORAGE_BUFFER
        }
        (StorageClass::Uniform, Some(Ty::Struct { .. })) => {
            block = layout::block_layout(t, ty);
            vk::DescriptorType::UNIFORM_BUFFER
        }
        (StorageClass::StorageBuffer, Some(Ty::Struct { .. })) => {
            block = layout::block_layout(t, ty);
            vk::DescriptorType::STORAGE_BUFFER
        }
        _ => {
            // Not a descriptor Vulkan knows (e.g. an OpenGL-style loose uniform). A variable
            // without a Binding decoration is simply not reported; one with it is an error.
            if d.binding.is_some() {
                return Err(Error::ReflectUnsupported {
                    object: binding_label(&name, &d),
                    detail: format!("{storage:?} variable of a type that is no Vulkan descriptor"),
                });
            }
            return Ok(None);
        }
    };
    if let Some(Ty::Struct { members }) = t.types.get(&ty) {
        let all_nw = !members.is_empty()
            && (0..members.len() as u32)
                .all(|m| t.member_decos.get(&(ty, m)).is_some_and(|d| d.non_writable));
        non_writable |= all_nw;
    }
    let name = name.or_else(|| t.names.get(&ty).cloned());
    Ok(Some(DescriptorBinding {
        set: d.set.unwrap_or(0),
        binding: d.binding.unwrap_or(0),
        descriptor_type,
        count: if runtime_array { 0 } else { count },
        runtime_array,
        count_spec_id,
        name,
        block,
        image,
        non_writable,
        non_readable: d.non_readable,
        input_attachment_index: d.input_attachment_index,
    }))
}

fn binding_label(name: &Option<String>, d: &tables::Decos) -> String {
    format!(
        "{} (set {}, binding {})",
        name.as_deref().unwrap_or("<unnamed>"),
        d.set.unwrap_or(0),
        d.binding.map_or("-".to_string(), |b| b.to_string())
    )
}
