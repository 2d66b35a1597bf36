//! Descriptor bindings declared by a module: descriptor type, count and block layout of
//! each resource variable (Vulkan spec §15.1 "Descriptor Types", §15.6 "DescriptorSet and
//! Binding Assignment"; SPIR-V spec §2.16.1 for the Uniform/BufferBlock/StorageBuffer rules).

use std::collections::{BTreeMap, BTreeSet};

use ash::vk;
use rspirv::spirv::{Dim, StorageClass};

use super::tables::{self, Tables, Ty};
use super::{layout, DescriptorBinding};
use crate::error::{Error, Result};

/// Every descriptor variable declared in the module: variable id -> binding.
///
/// Variables are visited in declaration order, so the error for a module with several
/// bad variables always names the first one declared (issue 17: iterating the id-keyed
/// `HashMap` named a different variable from run to run).
pub(super) fn declared_bindings(t: &Tables) -> Result<BTreeMap<u32, DescriptorBinding>> {
    let mut out = BTreeMap::new();
    for &var in &t.global_order {
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

/// Splits the module's descriptor variables into the bindings an entry point statically
/// uses and the others, one [`DescriptorBinding`] per (set, binding), sorted.
///
/// Several variables may share one (set, binding) (Vulkan spec, Shader Interfaces chapter, "DescriptorSet and
/// Binding Assignment" and the "Shader Resource and Descriptor Type Correspondence" table):
/// - a sampled image (OpTypeImage, Sampled = 1) and a sampler at one binding are both
///   served by one COMBINED_IMAGE_SAMPLER descriptor (DXC writes this for `Texture2D t :
///   register(t1); SamplerState s : register(s1);`), so they merge into one such binding,
///   described by the image variable (an image array with a single sampler merges into a
///   combined array of the image's count);
/// - aliases of the same descriptor type and count merge into one (the first declared);
/// - anything else stays as separate entries, so the pipeline-level merge reports the
///   conflict (`KILN-E051`).
///
/// A (set, binding) is used when any of its variables is.
pub(super) fn split_by_use(
    all: &BTreeMap<u32, DescriptorBinding>,
    used: &BTreeSet<u32>,
) -> (Vec<DescriptorBinding>, Vec<DescriptorBinding>) {
    let mut groups: BTreeMap<(u32, u32), (bool, Vec<&DescriptorBinding>)> = BTreeMap::new();
    for (var, b) in all {
        let g = groups.entry((b.set, b.binding)).or_default();
        g.0 |= used.contains(var);
        g.1.push(b);
    }
    let (mut bindings, mut unused) = (Vec::new(), Vec::new());
    for (is_used, vars) in groups.into_values() {
        let out = if is_used { &mut bindings } else { &mut unused };
        out.extend(merge_aliases(&vars));
    }
    (bindings, unused)
}

fn merge_aliases(vars: &[&DescriptorBinding]) -> Vec<DescriptorBinding> {
    if let [only] = vars {
        return vec![(*only).clone()];
    }
    let is = |t: vk::DescriptorType| move |b: &&&DescriptorBinding| b.descriptor_type == t;
    let image = vars.iter().find(is(vk::DescriptorType::SAMPLED_IMAGE));
    let sampler = vars.iter().find(is(vk::DescriptorType::SAMPLER));
    // Every alias has the image's array shape, or is a single sampler: DXC's
    // `Texture2D t[] : register(t1); SamplerState s : register(s1);` reads element 0's
    // sampler of a COMBINED_IMAGE_SAMPLER array (the SaschaWillems descriptorindexing HLSL).
    let rest_compatible = image.is_some_and(|img| {
        vars.iter().all(|b| {
            let kind_ok = matches!(
                b.descriptor_type,
                vk::DescriptorType::SAMPLED_IMAGE
                    | vk::DescriptorType::SAMPLER
                    | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
            );
            let same_shape = b.count == img.count && b.runtime_array == img.runtime_array;
            let single_sampler = b.descriptor_type == vk::DescriptorType::SAMPLER
                && b.count == 1
                && !b.runtime_array;
            kind_ok && (same_shape || single_sampler)
        })
    });
    if let (Some(image), Some(_), true) = (image, sampler, rest_compatible) {
        let mut b = (**image).clone();
        b.descriptor_type = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
        return vec![b];
    }
    let mut out: Vec<DescriptorBinding> = Vec::new();
    for b in vars {
        let same = out.iter().any(|o| {
            o.descriptor_type == b.descriptor_type
                && o.count == b.count
                && o.runtime_array == b.runtime_array
        });
        if !same {
            out.push((*b).clone());
        }
    }
    out
}
