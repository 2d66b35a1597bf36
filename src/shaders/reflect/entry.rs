//! One entry point: the bindings it statically uses, its push-constant block, workgroup
//! size, execution modes and stage interface.

use ash::vk;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{BuiltIn, ExecutionMode, ExecutionModel, StorageClass};

use super::tables::{Tables, Ty};
use super::{
    bindings, layout, stage_of, EntryPoint, InterfaceVariable, PushConstantBlock,
    UnsupportedBinding, WorkgroupSize,
};
use crate::error::{Result, ShaderError};

pub(super) fn reflect_entry(
    t: &Tables,
    ep: &Instruction,
    declared: &bindings::Declared,
) -> Result<EntryPoint, ShaderError> {
    let malformed = |what: &str| ShaderError::SpirvMalformed {
        detail: format!("OpEntryPoint {what}"),
    };
    let (model, func, name, interface) = match ep.operands.as_slice() {
        [Operand::ExecutionModel(m), Operand::IdRef(f), Operand::LiteralString(n), rest @ ..] => {
            (*m, *f, n.clone(), rest)
        }
        _ => return Err(malformed("has malformed operands")),
    };
    let used = t.used_globals(func);
    let (bindings, unused_bindings) = bindings::split_by_use(&declared.bindings, &used);
    let mut unsupported_bindings: Vec<UnsupportedBinding> = declared
        .unsupported
        .iter()
        .map(|(var, u)| UnsupportedBinding {
            statically_used: used.contains(var),
            ..u.clone()
        })
        .collect();
    unsupported_bindings
        .sort_by(|a, b| (a.set, a.binding, &a.name).cmp(&(b.set, b.binding, &b.name)));

    let mut push_constants: Option<PushConstantBlock> = None;
    for var in t.global_order.iter().filter(|v| used.contains(v)) {
        if let Some((StorageClass::PushConstant, pointee)) = t.variable_pointee(*var) {
            let block = layout::block_layout(t, pointee);
            let (offset, end) = match &block {
                Some(b) if !b.members.is_empty() => {
                    let lo = b.members.iter().map(|m| m.offset).min().unwrap_or(0);
                    (lo, b.size.max(lo))
                }
                _ => (0, 0),
            };
            push_constants = Some(PushConstantBlock {
                offset,
                size: end - offset,
                name: t
                    .names
                    .get(var)
                    .filter(|n| !n.is_empty())
                    .or_else(|| t.names.get(&pointee))
                    .cloned(),
                block_name: t.names.get(&pointee).filter(|n| !n.is_empty()).cloned(),
                block,
            });
        }
    }

    let mut execution_modes = Vec::new();
    for em in &t.execution_modes {
        if let [Operand::IdRef(target), Operand::ExecutionMode(mode), ..] = em.operands.as_slice() {
            if *target == func {
                execution_modes.push(format!("{mode:?}"));
            }
        }
    }
    for (target, mode) in &t.unknown_execution_modes {
        if *target == func {
            execution_modes.push(match ExecutionMode::from_u32(*mode) {
                Some(m) => format!("{m:?}"),
                None => format!("ExecutionMode({mode})"),
            });
        }
    }
    let workgroup_size = workgroup_size(t, func, model).map(|(w, _)| w);

    let (inputs, outputs) = interface_variables(t, interface);
    Ok(EntryPoint {
        name,
        execution_model: model,
        stage: stage_of(model),
        bindings,
        unused_bindings,
        unsupported_bindings,
        push_constants,
        workgroup_size,
        inputs,
        outputs,
        execution_modes,
    })
}

/// The workgroup size of entry point `func` of `model` (LocalSize, LocalSizeId, and the
/// WorkgroupSize built-in, which overrides both for compute: SPIR-V spec §3.21, BuiltIn
/// WorkgroupSize), with the ids of the constants that give it (none for LocalSize).
pub(super) fn workgroup_size(
    t: &Tables,
    func: u32,
    model: ExecutionModel,
) -> Option<(WorkgroupSize, Vec<u32>)> {
    let from_ids = |ids: [u32; 3]| {
        let mut size = [1u32; 3];
        let mut spec_ids = [None; 3];
        for i in 0..3 {
            size[i] = t.eval_int(ids[i]).unwrap_or(1) as u32;
            spec_ids[i] = t.deco(ids[i]).and_then(|d| d.spec_id);
        }
        (WorkgroupSize { size, spec_ids }, ids.to_vec())
    };
    let mut found = None;
    for em in &t.execution_modes {
        let [Operand::IdRef(target), Operand::ExecutionMode(mode), args @ ..] =
            em.operands.as_slice()
        else {
            continue;
        };
        if *target != func {
            continue;
        }
        let ints: Vec<u32> = args
            .iter()
            .filter_map(|a| match a {
                Operand::LiteralBit32(v) | Operand::IdRef(v) => Some(*v),
                _ => None,
            })
            .collect();
        match (mode, ints.as_slice()) {
            (ExecutionMode::LocalSize, [x, y, z]) => {
                let size = WorkgroupSize {
                    size: [*x, *y, *z],
                    spec_ids: [None; 3],
                };
                found = Some((size, Vec::new()));
            }
            (ExecutionMode::LocalSizeId, [x, y, z]) => found = Some(from_ids([*x, *y, *z])),
            _ => {}
        }
    }
    if stage_of(model) == vk::ShaderStageFlags::COMPUTE {
        for (cid, parts) in &t.composites {
            let is_wg = t
                .deco(*cid)
                .is_some_and(|d| d.builtin == Some(BuiltIn::WorkgroupSize));
            if let (true, [x, y, z]) = (is_wg, parts.as_slice()) {
                let (size, mut ids) = from_ids([*x, *y, *z]);
                ids.push(*cid);
                found = Some((size, ids));
            }
        }
    }
    found
}

fn interface_variables(
    t: &Tables,
    interface: &[Operand],
) -> (Vec<InterfaceVariable>, Vec<InterfaceVariable>) {
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for op in interface {
        let Operand::IdRef(var) = op else { continue };
        let Some((storage, pointee)) = t.variable_pointee(*var) else {
            continue;
        };
        let d = t.deco(*var).cloned().unwrap_or_default();
        let Some(location) = d.location else { continue };
        if d.builtin.is_some() {
            continue;
        }
        let v = InterfaceVariable {
            location,
            component: d.component.unwrap_or(0),
            format: format_of(t, pointee),
            name: t.names.get(var).cloned(),
        };
        match storage {
            StorageClass::Input => inputs.push(v),
            StorageClass::Output => outputs.push(v),
            _ => {}
        }
    }
    inputs.sort_by_key(|v| (v.location, v.component));
    outputs.sort_by_key(|v| (v.location, v.component));
    (inputs, outputs)
}

/// The Vulkan format for a scalar or vector interface type; arrays (per-vertex inputs of
/// tessellation/geometry stages, arrayed outputs) give their element's format.
fn format_of(t: &Tables, ty: u32) -> vk::Format {
    use vk::Format as F;
    let mut ty = ty;
    for _ in 0..4 {
        match t.types.get(&ty) {
            Some(Ty::Array { element, .. } | Ty::RuntimeArray { element }) => ty = *element,
            _ => break,
        }
    }
    let (scalar, n) = match t.types.get(&ty) {
        Some(Ty::Vector { component, count }) => (t.types.get(component), *count),
        other => (other, 1),
    };
    let table: [F; 4] = match scalar {
        Some(Ty::Float { width: 32 }) => [
            F::R32_SFLOAT,
            F::R32G32_SFLOAT,
            F::R32G32B32_SFLOAT,
            F::R32G32B32A32_SFLOAT,
        ],
        Some(Ty::Int {
            width: 32,
            signed: true,
        }) => [
            F::R32_SINT,
            F::R32G32_SINT,
            F::R32G32B32_SINT,
            F::R32G32B32A32_SINT,
        ],
        Some(Ty::Int {
            width: 32,
            signed: false,
        }) => [
            F::R32_UINT,
            F::R32G32_UINT,
            F::R32G32B32_UINT,
            F::R32G32B32A32_UINT,
        ],
        Some(Ty::Float { width: 64 }) => [
            F::R64_SFLOAT,
            F::R64G64_SFLOAT,
            F::R64G64B64_SFLOAT,
            F::R64G64B64A64_SFLOAT,
        ],
        Some(Ty::Int {
            width: 64,
            signed: true,
        }) => [
            F::R64_SINT,
            F::R64G64_SINT,
            F::R64G64B64_SINT,
            F::R64G64B64A64_SINT,
        ],
        Some(Ty::Int {
            width: 64,
            signed: false,
        }) => [
            F::R64_UINT,
            F::R64G64_UINT,
            F::R64G64B64_UINT,
            F::R64G64B64A64_UINT,
        ],
        Some(Ty::Int {
            width: 16,
            signed: true,
        }) => [
            F::R16_SINT,
            F::R16G16_SINT,
            F::R16G16B16_SINT,
            F::R16G16B16A16_SINT,
        ],
        Some(Ty::Int {
            width: 16,
            signed: false,
        }) => [
            F::R16_UINT,
            F::R16G16_UINT,
            F::R16G16B16_UINT,
            F::R16G16B16A16_UINT,
        ],
        Some(Ty::Float { width: 16 }) => [
            F::R16_SFLOAT,
            F::R16G16_SFLOAT,
            F::R16G16B16_SFLOAT,
            F::R16G16B16A16_SFLOAT,
        ],
        _ => return F::UNDEFINED,
    };
    match n {
        1..=4 => table[n as usize - 1],
        _ => F::UNDEFINED,
    }
}
