//! Reflection of a SPIR-V module, per entry point: what each entry point statically uses.
//!
//! Static use follows the call graph from the entry point's function (SPIR-V spec §2.2,
//! "static use"); the OpEntryPoint interface list is not relied on for descriptors, because
//! before SPIR-V 1.4 it lists only Input/Output variables.

mod layout;
mod tables;

use std::collections::BTreeMap;

use ash::vk;
use rspirv::dr::{Module, Operand};
use rspirv::spirv::{Dim, ExecutionMode, ExecutionModel, Op, StorageClass};

use crate::error::{Error, Result};
pub use layout::{BlockLayout, BlockMember};
pub use tables::ImageTy;
use tables::{Const, Tables, Ty};

/// A descriptor binding used by an entry point (Vulkan spec §15.1 "Descriptor Types").
#[derive(Clone, Debug, PartialEq)]
pub struct DescriptorBinding {
    /// DescriptorSet decoration (0 when absent, as Vulkan assumes).
    pub set: u32,
    /// Binding decoration.
    pub binding: u32,
    pub descriptor_type: vk::DescriptorType,
    /// Descriptor count: product of the array dimensions (1 for a non-array). For a runtime
    /// array this is 0 and [`runtime_array`](Self::runtime_array) is set.
    pub count: u32,
    /// The outermost array is `OpTypeRuntimeArray`: count known only at run time.
    pub runtime_array: bool,
    /// The array length is a specialization constant with this SpecId (`count` holds its
    /// default).
    pub count_spec_id: Option<u32>,
    /// OpName of the variable, or of its block type when the variable is unnamed.
    pub name: Option<String>,
    /// For uniform/storage buffers: the block's layout.
    pub block: Option<BlockLayout>,
    /// For images, texel buffers and input attachments: the image type.
    pub image: Option<ImageTy>,
    /// NonWritable on the variable or every block member.
    pub non_writable: bool,
    /// NonReadable on the variable.
    pub non_readable: bool,
    /// InputAttachmentIndex decoration.
    pub input_attachment_index: Option<u32>,
}

/// A push-constant block as one entry point uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct PushConstantBlock {
    /// Smallest member offset, bytes.
    pub offset: u32,
    /// End of the last member minus `offset`, bytes (not rounded up).
    pub size: u32,
    pub name: Option<String>,
    pub block: Option<BlockLayout>,
}

/// Scalar type of a specialization constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpecValue {
    Bool(bool),
    U32(u32),
    I32(i32),
    F32(f32),
    U64(u64),
    I64(i64),
    F64(f64),
    /// 8/16-bit types: raw bits.
    Other(u64),
}

impl SpecValue {
    /// Short type name: `bool`, `u32`, `i32`, `f32`, `u64`, `i64`, `f64`, `other`.
    pub fn type_name(&self) -> &'static str {
        match self {
            SpecValue::Bool(_) => "bool",
            SpecValue::U32(_) => "u32",
            SpecValue::I32(_) => "i32",
            SpecValue::F32(_) => "f32",
            SpecValue::U64(_) => "u64",
            SpecValue::I64(_) => "i64",
            SpecValue::F64(_) => "f64",
            SpecValue::Other(_) => "other",
        }
    }
}

/// A specialization constant (OpSpecConstant* with a SpecId decoration).
#[derive(Clone, Debug, PartialEq)]
pub struct SpecConstant {
    pub id: u32,
    pub name: Option<String>,
    pub default: SpecValue,
}

/// Workgroup size of a compute-like entry point, with the spec ids that may override it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkgroupSize {
    /// Size with every spec constant at its default.
    pub size: [u32; 3],
    /// SpecId of each dimension, when it comes from a specialization constant
    /// (`LocalSizeId` or the `WorkgroupSize` built-in).
    pub spec_ids: [Option<u32>; 3],
}

impl WorkgroupSize {
    /// The size with some spec constants given (`(spec id, value)` pairs).
    pub fn resolve(&self, spec: &[(u32, u32)]) -> [u32; 3] {
        let mut out = self.size;
        for (i, sid) in self.spec_ids.iter().enumerate() {
            if let Some(v) = sid.and_then(|s| spec.iter().find(|(id, _)| *id == s)) {
                out[i] = v.1;
            }
        }
        out
    }
}

/// A user-defined (non-built-in) stage input or output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceVariable {
    pub location: u32,
    pub component: u32,
    /// The Vulkan format matching the variable's scalar/vector type, or `UNDEFINED` for
    /// matrices/structs.
    pub format: vk::Format,
    pub name: Option<String>,
}

/// Everything reflected about one entry point.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryPoint {
    pub name: String,
    pub execution_model: ExecutionModel,
    /// The Vulkan stage this execution model runs in.
    pub stage: vk::ShaderStageFlags,
    /// Statically used descriptor bindings, sorted by (set, binding).
    pub bindings: Vec<DescriptorBinding>,
    /// Bindings declared in the module but not used by this entry point, sorted.
    pub unused_bindings: Vec<DescriptorBinding>,
    pub push_constants: Option<PushConstantBlock>,
    pub workgroup_size: Option<WorkgroupSize>,
    pub inputs: Vec<InterfaceVariable>,
    pub outputs: Vec<InterfaceVariable>,
    pub execution_modes: Vec<String>,
}

/// Everything reflected about a module.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleReflection {
    /// Header version word, e.g. 0x0001_0300 for 1.3.
    pub version: u32,
    /// Header generator word.
    pub generator: u32,
    pub capabilities: Vec<String>,
    pub extensions: Vec<String>,
    pub entry_points: Vec<EntryPoint>,
    /// Module-wide specialization constants, sorted by id.
    pub spec_constants: Vec<SpecConstant>,
}

impl ModuleReflection {
    /// The entry point called `name`, or an error listing those present.
    pub fn entry_point(&self, name: &str) -> Result<&EntryPoint> {
        self.entry_points
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| Error::EntryPointNotFound {
                name: name.to_string(),
                available: self
                    .entry_points
                    .iter()
                    .map(|e| format!("{} ({:?})", e.name, e.execution_model))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// Vulkan stage flags for an execution model (Vulkan spec §9.1 "Shader Modules" table).
pub fn stage_of(model: ExecutionModel) -> vk::ShaderStageFlags {
    use ExecutionModel as M;
    match model {
        M::Vertex => vk::ShaderStageFlags::VERTEX,
        M::TessellationControl => vk::ShaderStageFlags::TESSELLATION_CONTROL,
        M::TessellationEvaluation => vk::ShaderStageFlags::TESSELLATION_EVALUATION,
        M::Geometry => vk::ShaderStageFlags::GEOMETRY,
        M::Fragment => vk::ShaderStageFlags::FRAGMENT,
        M::GLCompute | M::Kernel => vk::ShaderStageFlags::COMPUTE,
        M::TaskNV | M::TaskEXT => vk::ShaderStageFlags::TASK_EXT,
        M::MeshNV | M::MeshEXT => vk::ShaderStageFlags::MESH_EXT,
        M::RayGenerationKHR => vk::ShaderStageFlags::RAYGEN_KHR,
        M::IntersectionKHR => vk::ShaderStageFlags::INTERSECTION_KHR,
        M::AnyHitKHR => vk::ShaderStageFlags::ANY_HIT_KHR,
        M::ClosestHitKHR => vk::ShaderStageFlags::CLOSEST_HIT_KHR,
        M::MissKHR => vk::ShaderStageFlags::MISS_KHR,
        M::CallableKHR => vk::ShaderStageFlags::CALLABLE_KHR,
    }
}

/// Parses (with rspirv) and reflects checked words. Call [`super::module::check_words`] first.
pub(crate) fn reflect_module(words: &[u32]) -> Result<ModuleReflection> {
    let module = parse(words)?;
    let t = Tables::build(&module);
    let header = module.header.as_ref();
    let mut capabilities = Vec::new();
    for c in &module.capabilities {
        if let Some(Operand::Capability(c)) = c.operands.first() {
            capabilities.push(format!("{c:?}"));
        }
    }
    let extensions = module
        .extensions
        .iter()
        .filter_map(|e| match e.operands.first() {
            Some(Operand::LiteralString(s)) => Some(s.clone()),
            _ => None,
        })
        .collect();
    let spec_constants = spec_constants(&t);
    let all_bindings = declared_bindings(&t)?;
    let mut entry_points = Vec::new();
    for ep in &module.entry_points {
        entry_points.push(reflect_entry(&module, &t, ep, &all_bindings)?);
    }
    // The header words come from the input: rspirv's loader replaces the generator word
    // with its own tool id, so `module.header` cannot be trusted for it.
    let _ = header;
    Ok(ModuleReflection {
        version: words.get(1).copied().unwrap_or(0),
        generator: words.get(2).copied().unwrap_or(0),
        capabilities,
        extensions,
        entry_points,
        spec_constants,
    })
}

fn parse(words: &[u32]) -> Result<Module> {
    // rspirv reports malformed streams as errors; a few internal asserts remain in its
    // parser, so a panic there is turned into a coded error rather than unwinding into
    // the caller (SPIR-V from files is untrusted input).
    let result = std::panic::catch_unwind(|| rspirv::dr::load_words(words));
    match result {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(Error::SpirvParse {
            detail: e.to_string(),
        }),
        Err(_) => Err(Error::SpirvParse {
            detail: "the SPIR-V parser rejected the module (internal assertion)".to_string(),
        }),
    }
}

fn spec_constants(t: &Tables) -> Vec<SpecConstant> {
    let mut out: Vec<SpecConstant> = t
        .spec_consts
        .iter()
        .filter_map(|&c| {
            let id = t.deco(c)?.spec_id?;
            let ty = t.types.get(t.const_types.get(&c)?)?;
            let default = match (t.consts.get(&c)?, ty) {
                (Const::Bool(b), _) => SpecValue::Bool(*b),
                (Const::Int(v), Ty::Int { width: 32, signed }) => {
                    if *signed {
                        SpecValue::I32(*v as u32 as i32)
                    } else {
                        SpecValue::U32(*v as u32)
                    }
                }
                (Const::Int(v), Ty::Int { width: 64, signed }) => {
                    if *signed {
                        SpecValue::I64(*v as i64)
                    } else {
                        SpecValue::U64(*v)
                    }
                }
                (Const::FloatBits(v), Ty::Float { width: 32 }) => {
                    SpecValue::F32(f32::from_bits(*v as u32))
                }
                (Const::FloatBits(v), Ty::Float { width: 64 }) => {
                    SpecValue::F64(f64::from_bits(*v))
                }
                (Const::Int(v) | Const::FloatBits(v), _) => SpecValue::Other(*v),
            };
            Some(SpecConstant {
                id,
                name: t.names.get(&c).cloned(),
                default,
            })
        })
        .collect();
    out.sort_by_key(|s| s.id);
    out
}

/// Every descriptor variable declared in the module: variable id -> binding.
fn declared_bindings(t: &Tables) -> Result<BTreeMap<u32, DescriptorBinding>> {
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

fn reflect_entry(
    module: &Module,
    t: &Tables,
    ep: &rspirv::dr::Instruction,
    all: &BTreeMap<u32, DescriptorBinding>,
) -> Result<EntryPoint> {
    let malformed = |what: &str| Error::SpirvMalformed {
        detail: format!("OpEntryPoint {what}"),
    };
    let (model, func, name, interface) = match ep.operands.as_slice() {
        [Operand::ExecutionModel(m), Operand::IdRef(f), Operand::LiteralString(n), rest @ ..] => {
            (*m, *f, n.clone(), rest)
        }
        _ => return Err(malformed("has malformed operands")),
    };
    let used = t.used_globals(func);
    let mut bindings = Vec::new();
    let mut unused_bindings = Vec::new();
    for (var, b) in all {
        if used.contains(var) {
            bindings.push(b.clone());
        } else {
            unused_bindings.push(b.clone());
        }
    }
    let key = |b: &DescriptorBinding| (b.set, b.binding);
    bindings.sort_by_key(key);
    unused_bindings.sort_by_key(key);

    let mut push_constants: Option<PushConstantBlock> = None;
    for var in &used {
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
                block,
            });
        }
    }

    let mut execution_modes = Vec::new();
    let mut workgroup_size = None;
    for em in &module.execution_modes {
        let [Operand::IdRef(target), Operand::ExecutionMode(mode), args @ ..] =
            em.operands.as_slice()
        else {
            continue;
        };
        if *target != func {
            continue;
        }
        execution_modes.push(format!("{mode:?}"));
        let ints: Vec<u32> = args
            .iter()
            .filter_map(|a| match a {
                Operand::LiteralBit32(v) | Operand::IdRef(v) => Some(*v),
                _ => None,
            })
            .collect();
        match (mode, em.class.opcode, ints.as_slice()) {
            (ExecutionMode::LocalSize, _, [x, y, z]) => {
                workgroup_size = Some(WorkgroupSize {
                    size: [*x, *y, *z],
                    spec_ids: [None; 3],
                });
            }
            (ExecutionMode::LocalSizeId, Op::ExecutionModeId, [x, y, z]) => {
                let ids = [*x, *y, *z];
                let mut size = [1u32; 3];
                let mut spec_ids = [None; 3];
                for i in 0..3 {
                    size[i] = t.eval_int(ids[i]).unwrap_or(1) as u32;
                    spec_ids[i] = t.deco(ids[i]).and_then(|d| d.spec_id);
                }
                workgroup_size = Some(WorkgroupSize { size, spec_ids });
            }
            _ => {}
        }
    }
    // The WorkgroupSize built-in overrides LocalSize (SPIR-V spec §3.21, BuiltIn WorkgroupSize).
    if stage_of(model) == vk::ShaderStageFlags::COMPUTE {
        for (cid, (_, parts)) in &t.const_ops {
            let is_wg = t
                .deco(*cid)
                .is_some_and(|d| d.builtin == Some(rspirv::spirv::BuiltIn::WorkgroupSize));
            if is_wg && parts.len() == 3 {
                let mut size = [1u32; 3];
                let mut spec_ids = [None; 3];
                for i in 0..3 {
                    size[i] = t.eval_int(parts[i]).unwrap_or(1) as u32;
                    spec_ids[i] = t.deco(parts[i]).and_then(|d| d.spec_id);
                }
                workgroup_size = Some(WorkgroupSize { size, spec_ids });
            }
        }
    }

    let (inputs, outputs) = interface_variables(t, interface);
    Ok(EntryPoint {
        name,
        execution_model: model,
        stage: stage_of(model),
        bindings,
        unused_bindings,
        push_constants,
        workgroup_size,
        inputs,
        outputs,
        execution_modes,
    })
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

/// The Vulkan format for a scalar or vector interface type.
fn format_of(t: &Tables, ty: u32) -> vk::Format {
    use vk::Format as F;
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
