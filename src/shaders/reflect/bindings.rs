//! Descriptor bindings declared by a module: descriptor type, count and block layout of
//! each resource variable (Vulkan spec §15.1 "Descriptor Types", §15.6 "DescriptorSet and
//! Binding Assignment"; SPIR-V spec §2.16.1 for the Uniform/BufferBlock/StorageBuffer rules).

use std::collections::{BTreeMap, BTreeSet};

use ash::vk;
use rspirv::spirv::{Dim, StorageClass};

use super::tables::{self, Tables, Ty};
use super::{layout, BlockLayout, DescriptorBinding, ImageTy, UnsupportedBinding};
use crate::error::{Result, ShaderError};

/// The resource variables a module declares, by variable id.
#[derive(Default)]
pub(super) struct Declared {
    /// Descriptor variables.
    pub bindings: BTreeMap<u32, DescriptorBinding>,
    /// Resources of a type kiln has no descriptor type for (`statically_used` false here).
    pub unsupported: BTreeMap<u32, UnsupportedBinding>,
}

enum Described {
    Binding(DescriptorBinding),
    Unsupported(UnsupportedBinding),
}

/// Every resource variable declared in the module.
///
/// Variables are visited in declaration order, so the error for a module with several
/// bad variables always names the first one declared (issue 17: iterating the id-keyed
/// `HashMap` named a different variable from run to run).
pub(super) fn declared_bindings(t: &Tables) -> Result<Declared, ShaderError> {
    let mut out = Declared::default();
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
        match describe_binding(t, var, storage, pointee)? {
            Some(Described::Binding(b)) => {
                out.bindings.insert(var, b);
            }
            Some(Described::Unsupported(u)) => {
                out.unsupported.insert(var, u);
            }
            None => {}
        }
    }
    Ok(out)
}

fn describe_binding(
    t: &Tables,
    var: u32,
    storage: StorageClass,
    pointee: u32,
) -> Result<Option<Described>, ShaderError> {
    let d = t.deco(var).cloned().unwrap_or_default();
    let name = t.names.get(&var).filter(|n| !n.is_empty()).cloned();
    let Stripped {
        ty,
        count,
        runtime_array,
        count_spec_id,
    } = strip_arrays(t, pointee, || binding_label(&name, &d))?;
    if let (StorageClass::UniformConstant, Some(Ty::TensorArm)) = (storage, t.types.get(&ty)) {
        // Vulkan spec, "Shader Resource and Descriptor Type Correspondence": a storage tensor
        // (OpTypeTensorARM, UniformConstant) needs VK_DESCRIPTOR_TYPE_TENSOR_ARM, which
        // ash 0.38 does not have: refuse this resource alone, reflect the rest.
        return Ok(Some(Described::Unsupported(UnsupportedBinding {
            set: d.set.unwrap_or(0),
            binding: d.binding.unwrap_or(0),
            count: if runtime_array { 0 } else { count },
            name: name.or_else(|| t.names.get(&ty).cloned()),
            spirv_type: "OpTypeTensorARM",
            reason: "VK_ARM_tensors: ash 0.38, kiln's Vulkan bindings, has no \
                     VK_DESCRIPTOR_TYPE_TENSOR_ARM",
            statically_used: false,
        })));
    }
    let mut non_writable = d.non_writable;
    let mut non_readable = d.non_readable;
    let Some((descriptor_type, image, block)) = descriptor_type_of(t, storage, ty) else {
        // Not a descriptor Vulkan knows (e.g. an OpenGL-style loose uniform). A variable
        // without a Binding decoration is simply not reported; one with it is an error.
        if d.binding.is_some() {
            return Err(ShaderError::ReflectUnsupported {
                object: binding_label(&name, &d),
                detail: format!("{storage:?} variable of a type that is no Vulkan descriptor"),
            });
        }
        return Ok(None);
    };
    // A block whose every member is NonWritable (NonReadable) is as a whole.
    non_writable |= all_members(t, ty, |d| d.non_writable);
    non_readable |= all_members(t, ty, |d| d.non_readable);
    let block_name = block
        .as_ref()
        .and(t.names.get(&ty))
        .filter(|n| !n.is_empty())
        .cloned();
    let name = name.or_else(|| t.names.get(&ty).cloned());
    Ok(Some(Described::Binding(DescriptorBinding {
        set: d.set.unwrap_or(0),
        binding: d.binding.unwrap_or(0),
        descriptor_type,
        count: if runtime_array { 0 } else { count },
        runtime_array,
        count_spec_id,
        name,
        block_name,
        block,
        image,
        non_writable,
        non_readable,
        input_attachment_index: d.input_attachment_index,
    })))
}

/// A binding's type with its arrays stripped: the descriptor count is the product of all
/// dimensions (0 for a runtime array).
struct Stripped {
    ty: u32,
    count: u32,
    runtime_array: bool,
    /// The SpecId of a specialization-constant array length.
    count_spec_id: Option<u32>,
}

/// Strips the arrays of `pointee` (at most 16 deep). Errors: `KILN-E052`
/// `ReflectUnsupported` naming `label()`: deeper nesting, a length kiln cannot evaluate.
fn strip_arrays(
    t: &Tables,
    pointee: u32,
    label: impl Fn() -> String,
) -> Result<Stripped, ShaderError> {
    let mut s = Stripped {
        ty: pointee,
        count: 1,
        runtime_array: false,
        count_spec_id: None,
    };
    for _ in 0..16 {
        match t.types.get(&s.ty) {
            Some(Ty::Array { element, length }) => {
                let n = t
                    .eval_int(*length)
                    .ok_or_else(|| ShaderError::ReflectUnsupported {
                        object: label(),
                        detail: "array length is not an integer constant kiln can evaluate".into(),
                    })?;
                if let Some(sid) = t.deco(*length).and_then(|d| d.spec_id) {
                    s.count_spec_id = Some(sid);
                }
                s.count = s.count.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX));
                s.ty = *element;
            }
            Some(Ty::RuntimeArray { element }) => {
                s.runtime_array = true;
                s.ty = *element;
            }
            _ => return Ok(s),
        }
    }
    Err(ShaderError::ReflectUnsupported {
        object: label(),
        detail: "array nesting deeper than 16".into(),
    })
}

/// The descriptor type of a `storage` variable of (array-stripped) type `ty`, with its
/// image type and block layout where it has them; `None`: no Vulkan descriptor (Vulkan
/// spec, "Shader Resource and Descriptor Type Correspondence").
fn descriptor_type_of(
    t: &Tables,
    storage: StorageClass,
    ty: u32,
) -> Option<(vk::DescriptorType, Option<ImageTy>, Option<BlockLayout>)> {
    let mut image = None;
    let mut block = None;
    let buffer_block = t.deco(ty).is_some_and(|d| d.buffer_block);
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
        (StorageClass::Uniform, Some(Ty::Struct { .. })) if buffer_block => {
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
        _ => return None,
    };
    Some((descriptor_type, image, block))
}

/// Whether `ty` is a struct with members, each decorated so that `pred` holds.
fn all_members(t: &Tables, ty: u32, pred: impl Fn(&tables::Decos) -> bool) -> bool {
    match t.types.get(&ty) {
        Some(Ty::Struct { members }) => {
            !members.is_empty()
                && (0..members.len() as u32)
                    .all(|m| t.member_decos.get(&(ty, m)).is_some_and(&pred))
        }
        _ => false,
    }
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
/// uses and the others, one [`DescriptorBinding`] per (set, binding) where Vulkan allows
/// the aliases there to share one descriptor, sorted.
///
/// Several variables may share one (set, binding). The rules (Vulkan spec, Shader
/// Interfaces chapter, "DescriptorSet and Binding Assignment", its note on aliases, and the
/// "Shader Resource and Descriptor Type Correspondence" table):
/// - only statically used variables constrain the descriptor: "if any shader variable
///   identifying a resource is statically used ... the underlying descriptor bound at the
///   declared set and binding must support the declared type", and a variable of a type
///   the descriptor does not support may be declared as long as it is not statically used;
/// - variables of one descriptor type may all be statically used; the descriptor count
///   must be at least each array's length (VUID-VkComputePipelineCreateInfo-layout-07991,
///   VUID-VkGraphicsPipelineCreateInfo-layout-07991), so they merge into one binding of
///   the largest count (a runtime array wins);
/// - one COMBINED_IMAGE_SAMPLER descriptor serves OpTypeImage (Sampled = 1), OpTypeSampler
///   and OpTypeSampledImage variables at once, of any array lengths, so sampled images,
///   samplers and combined image samplers at one binding merge into one such binding
///   (DXC writes `Texture2D t : register(t1); SamplerState s : register(s1);`).
///
/// So, per (set, binding), the aliases fall into classes that one descriptor can serve
/// (image/sampler kinds together, every other type alone):
/// - used by the entry point: the classes of its statically used aliases count. Unused
///   aliases of those classes merge in (so every entry point of a module agrees on the
///   binding); unused aliases of other classes are dropped, listed nowhere (the shader
///   runs whatever they are). Two classes used at once leave two entries, and the
///   pipeline-level merge refuses the binding (`KILN-E051`): no descriptor serves both.
/// - not used by the entry point: one entry per class, in `unused`.
///
/// A merged binding takes its name, block, image and input-attachment index from the
/// alias that describes it best (in the image/sampler class an alias with an image; then
/// the one with the largest count; then the first), its count (and count spec id) from the
/// alias with the largest count, and is non-writable / non-readable only when every
/// merged alias is.
pub(super) fn split_by_use(
    all: &BTreeMap<u32, DescriptorBinding>,
    used: &BTreeSet<u32>,
) -> (Vec<DescriptorBinding>, Vec<DescriptorBinding>) {
    let mut groups: BTreeMap<(u32, u32), Vec<(bool, &DescriptorBinding)>> = BTreeMap::new();
    for (var, b) in all {
        let g = groups.entry((b.set, b.binding)).or_default();
        g.push((used.contains(var), b));
    }
    let (mut bindings, mut unused) = (Vec::new(), Vec::new());
    for vars in groups.into_values() {
        let used_classes: Vec<Class> = vars
            .iter()
            .filter(|(u, _)| *u)
            .map(|(_, b)| class(b.descriptor_type))
            .collect();
        if used_classes.is_empty() {
            let all: Vec<&DescriptorBinding> = vars.iter().map(|(_, b)| *b).collect();
            unused.extend(merge_by_class(&all));
        } else {
            // Aliases of a class no used alias has are unused bindings of their own
            // (listed as SPIRV-Cross lists them), not dropped.
            let (mut kept, mut rest) = (Vec::new(), Vec::new());
            for &(u, b) in &vars {
                if u || used_classes.contains(&class(b.descriptor_type)) {
                    kept.push(b);
                } else {
                    rest.push(b);
                }
            }
            bindings.extend(merge_by_class(&kept));
            unused.extend(merge_by_class(&rest));
        }
    }
    (bindings, unused)
}

/// Descriptor types one descriptor can serve together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// SAMPLER, SAMPLED_IMAGE, COMBINED_IMAGE_SAMPLER: one COMBINED_IMAGE_SAMPLER serves all.
    ImageSampler,
    /// Any other type: served only by a descriptor of that type.
    Only(vk::DescriptorType),
}

fn class(t: vk::DescriptorType) -> Class {
    match t {
        vk::DescriptorType::SAMPLER
        | vk::DescriptorType::SAMPLED_IMAGE
        | vk::DescriptorType::COMBINED_IMAGE_SAMPLER => Class::ImageSampler,
        other => Class::Only(other),
    }
}

/// One merged binding per class, classes in the order their first alias comes.
fn merge_by_class(vars: &[&DescriptorBinding]) -> Vec<DescriptorBinding> {
    let mut classes: Vec<Class> = Vec::new();
    for b in vars {
        let c = class(b.descriptor_type);
        if !classes.contains(&c) {
            classes.push(c);
        }
    }
    classes
        .into_iter()
        .filter_map(|c| {
            let members: Vec<&DescriptorBinding> = vars
                .iter()
                .copied()
                .filter(|b| class(b.descriptor_type) == c)
                .collect();
            merge_class(&members)
        })
        .collect()
}

/// Merges aliases of one class into one binding (see [`split_by_use`]); `None` for none.
fn merge_class(vars: &[&DescriptorBinding]) -> Option<DescriptorBinding> {
    // Descriptors an alias needs: a runtime array more than any fixed count.
    let need = |b: &DescriptorBinding| {
        if b.runtime_array {
            u64::MAX
        } else {
            u64::from(b.count)
        }
    };
    let mut widest = *vars.first()?;
    let mut base = widest;
    for &b in &vars[1..] {
        if need(b) > need(widest) {
            widest = b;
        }
        let better = (b.image.is_some(), need(b)) > (base.image.is_some(), need(base));
        if better {
            base = b;
        }
    }
    let mut out = base.clone();
    if vars
        .iter()
        .any(|b| b.descriptor_type != out.descriptor_type)
    {
        // Only the image/sampler class mixes types.
        out.descriptor_type = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
    }
    out.count = widest.count;
    out.runtime_array = widest.runtime_array;
    out.count_spec_id = widest.count_spec_id;
    out.non_writable = vars.iter().all(|b| b.non_writable);
    out.non_readable = vars.iter().all(|b| b.non_readable);
    Some(out)
}
