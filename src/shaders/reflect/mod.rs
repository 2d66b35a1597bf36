//! Reflection of a SPIR-V module, per entry point: what each entry point statically uses.
//!
//! Static use follows the call graph from the entry point's function (SPIR-V spec §2.2,
//! "static use"); the OpEntryPoint interface list is not relied on for descriptors, because
//! before SPIR-V 1.4 it lists only Input/Output variables.

mod bindings;
mod entry;
mod eval;
mod forward;
mod layout;
mod specialize;
mod specop;
mod tables;

pub(crate) use specialize::{specialize, Specialized};

use ash::vk;
use rspirv::spirv::ExecutionModel;

use crate::error::{Result, ShaderError};
pub use layout::{BlockLayout, BlockMember, MemberType, ScalarType};
pub use tables::ImageTy;
use tables::{Const, Tables, Ty};

/// A descriptor binding used by an entry point (Vulkan spec §15.1 "Descriptor Types").
#[derive(Clone, Debug, PartialEq)]
pub struct DescriptorBinding {
    /// DescriptorSet decoration (0 when absent, as Vulkan assumes).
    pub set: u32,
    /// Binding decoration.
    pub binding: u32,
    /// The Vulkan descriptor type the variable needs.
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
    /// OpName of the variable's (array-stripped) type when it is a block and has a name:
    /// `Scene` in `uniform Scene { .. } scene;` (where `name` is `scene`). Descriptor sets
    /// accept both names ([`crate::DescriptorSet::binding_of`]).
    pub block_name: Option<String>,
    /// For uniform/storage buffers: the block's layout.
    pub block: Option<BlockLayout>,
    /// For images, texel buffers and input attachments: the image type.
    pub image: Option<ImageTy>,
    /// NonWritable on the variable or every block member.
    pub non_writable: bool,
    /// NonReadable on the variable or every block member.
    pub non_readable: bool,
    /// InputAttachmentIndex decoration.
    pub input_attachment_index: Option<u32>,
}

/// How an entry point may access the memory behind one binding: what
/// [`DescriptorBinding::access`] derives from its descriptor type and its NonWritable /
/// NonReadable decorations. kiln's automatic barriers order only what this says (a read
/// waits for earlier writes, a write for earlier reads and writes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Access {
    /// The shader may read the resource.
    pub read: bool,
    /// The shader may write the resource.
    pub write: bool,
}

impl Access {
    /// Neither read nor written (a sampler; a storage resource decorated both NonWritable
    /// and NonReadable).
    pub const NONE: Access = Access {
        read: false,
        write: false,
    };
    /// Read only.
    pub const READ: Access = Access {
        read: true,
        write: false,
    };
    /// Written only (`writeonly` in GLSL: NonReadable).
    pub const WRITE: Access = Access {
        read: false,
        write: true,
    };
    /// Read and written.
    pub const READ_WRITE: Access = Access {
        read: true,
        write: true,
    };

    /// Read or written.
    #[inline]
    pub fn any(self) -> bool {
        self.read | self.write
    }

    /// What either access does.
    #[inline]
    pub fn union(self, other: Access) -> Access {
        Access {
            read: self.read | other.read,
            write: self.write | other.write,
        }
    }
}

impl DescriptorBinding {
    /// How the entry point may access the binding's memory (Vulkan spec §15.1 "Descriptor
    /// Types", SPIR-V spec §3.20 NonWritable / NonReadable):
    /// - uniform buffers, uniform texel buffers, sampled images, combined image samplers,
    ///   input attachments and acceleration structures are read only
    ///   ([`Access::READ`]); samplers access no memory ([`Access::NONE`]);
    /// - storage buffers, storage images and storage texel buffers are read unless
    ///   NonReadable (GLSL `writeonly`) and written unless NonWritable (GLSL `readonly`),
    ///   each on the variable or on every member of its block.
    pub fn access(&self) -> Access {
        use vk::DescriptorType as T;
        match self.descriptor_type {
            T::SAMPLER => Access::NONE,
            T::STORAGE_BUFFER
            | T::STORAGE_BUFFER_DYNAMIC
            | T::STORAGE_IMAGE
            | T::STORAGE_TEXEL_BUFFER => Access {
                read: !self.non_readable,
                write: !self.non_writable,
            },
            _ => Access::READ,
        }
    }
}

/// A resource that kiln reflects but has no Vulkan descriptor type for (issue 17): today an
/// `OpTypeTensorARM` (VK_ARM_tensors), whose VK_DESCRIPTOR_TYPE_TENSOR_ARM ash 0.38 lacks.
///
/// It is in neither binding list of its entry point, so in no layout kiln derives;
/// [`ModuleReflection::entry_point`], through which every kiln pipeline and layout is
/// built, refuses an entry point that statically uses one (`KILN-E061`). Entry points
/// that do not use it, and the rest of the module, reflect as usual.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedBinding {
    /// DescriptorSet decoration (0 when absent).
    pub set: u32,
    /// Binding decoration.
    pub binding: u32,
    /// Descriptor count, as [`DescriptorBinding::count`] (0 for a runtime array).
    pub count: u32,
    /// OpName of the variable, or of its type when the variable is unnamed.
    pub name: Option<String>,
    /// The SPIR-V type, e.g. `"OpTypeTensorARM"`.
    pub spirv_type: &'static str,
    /// Why kiln has no descriptor type for it.
    pub reason: &'static str,
    /// Whether the entry point this is listed in statically uses it.
    pub statically_used: bool,
}

impl UnsupportedBinding {
    /// `KILN-E061` for entry point `entry` using this resource.
    pub fn error(&self, entry: &str) -> ShaderError {
        ShaderError::DescriptorTypeUnsupported {
            entry: entry.to_string(),
            object: format!(
                "{} (set {}, binding {})",
                self.name.as_deref().unwrap_or("<unnamed>"),
                self.set,
                self.binding
            ),
            ty: self.spirv_type.to_string(),
            detail: self.reason.to_string(),
        }
    }
}

/// A push-constant block as one entry point uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct PushConstantBlock {
    /// Smallest member offset, bytes.
    pub offset: u32,
    /// End of the last member minus `offset`, bytes (not rounded up).
    pub size: u32,
    /// OpName of the push-constant variable (or of its block type).
    pub name: Option<String>,
    /// OpName of the block type (`Params` in `uniform Params { .. } params;`), if kept.
    pub block_name: Option<String>,
    /// The block's member layout (offsets, sizes, types).
    pub block: Option<BlockLayout>,
}

/// Scalar type of a specialization constant.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SpecValue {
    /// `bool` (32 bits in the specialization data).
    Bool(bool),
    /// `uint`.
    U32(u32),
    /// `int`.
    I32(i32),
    /// `float`.
    F32(f32),
    /// `uint64_t`.
    U64(u64),
    /// `int64_t`.
    I64(i64),
    /// `double`.
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
    /// The SpecId decoration (`layout(constant_id = n)`).
    pub id: u32,
    /// OpName of the constant, if the module kept names.
    pub name: Option<String>,
    /// The value the module gives it (used when the pipeline does not).
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
    /// Location decoration.
    pub location: u32,
    /// Component decoration (0 when absent).
    pub component: u32,
    /// The Vulkan format matching the variable's scalar/vector type, or `UNDEFINED` for
    /// matrices/structs.
    pub format: vk::Format,
    /// OpName of the variable, if the module kept names.
    pub name: Option<String>,
}

/// Everything reflected about one entry point.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryPoint {
    /// The entry point's name (`main`).
    pub name: String,
    /// The SPIR-V execution model (GLCompute, Vertex, Fragment, ...).
    pub execution_model: ExecutionModel,
    /// The Vulkan stage this execution model runs in.
    pub stage: vk::ShaderStageFlags,
    /// Statically used descriptor bindings, sorted by (set, binding): those whose variable
    /// is referenced by any function reachable from the entry point through
    /// OpFunctionCall (loads, stores, access chains, OpArrayLength, passing as a call
    /// argument). Aliases (variables sharing a (set, binding)) are merged as Vulkan allows:
    /// aliases of one descriptor type are one entry with the largest count; sampled
    /// images, samplers and combined image samplers are one COMBINED_IMAGE_SAMPLER entry
    /// with the largest count; an alias that is not statically used and of a type no used
    /// alias can share a descriptor with is dropped. Used aliases of types no one
    /// descriptor serves stay separate entries, so the pipeline-level merge reports
    /// `KILN-E051`. The rules, with their spec sections, are on `bindings::split_by_use`.
    pub bindings: Vec<DescriptorBinding>,
    /// Bindings declared in the module but not used by this entry point, sorted, merged
    /// like [`bindings`](Self::bindings) (one entry per class of types that can share a
    /// descriptor). An alias dropped from a used binding is in neither list. Apart from
    /// those, SPIRV-Reflect's module-wide list is the union of both lists over all entry
    /// points.
    pub unused_bindings: Vec<DescriptorBinding>,
    /// Resources of a type kiln has no descriptor type for (`OpTypeTensorARM`), declared in
    /// the module, sorted by (set, binding); `statically_used` says which this entry point
    /// uses. See [`UnsupportedBinding`].
    pub unsupported_bindings: Vec<UnsupportedBinding>,
    /// The push-constant block the entry point statically uses, if any.
    pub push_constants: Option<PushConstantBlock>,
    /// The workgroup size, for compute, task and mesh entry points.
    pub workgroup_size: Option<WorkgroupSize>,
    /// User-defined stage inputs, sorted by location.
    pub inputs: Vec<InterfaceVariable>,
    /// User-defined stage outputs, sorted by location.
    pub outputs: Vec<InterfaceVariable>,
    /// OpExecutionMode names (`LocalSize`, `OriginUpperLeft`, ...).
    pub execution_modes: Vec<String>,
}

/// Everything reflected about a module.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleReflection {
    /// Header version word, e.g. 0x0001_0300 for 1.3.
    pub version: u32,
    /// Header generator word.
    pub generator: u32,
    /// OpCapability names the module declares (`Shader`, `Float64`, ...).
    pub capabilities: Vec<String>,
    /// OpExtension names (`SPV_KHR_...`).
    pub extensions: Vec<String>,
    /// Every entry point, in module order.
    pub entry_points: Vec<EntryPoint>,
    /// Module-wide specialization constants, sorted by id, one per SpecId.
    pub spec_constants: Vec<SpecConstant>,
    /// The scopes of the module's cooperative-matrix types (OpTypeCooperativeMatrixKHR),
    /// sorted, each once: `SUBGROUP` for VK_KHR_cooperative_matrix, `WORKGROUP` for
    /// VK_NV_cooperative_matrix2's workgroup-scope matrices. A scope given by a spec
    /// constant is listed at its default value.
    pub cooperative_matrix_scopes: Vec<vk::ScopeKHR>,
}

impl ModuleReflection {
    /// The entry point called `name`, to build a pipeline or layout from.
    ///
    /// Errors: `KILN-E050` no entry point of that name (the message lists those present);
    /// `KILN-E061` it statically uses a resource kiln has no descriptor type for (see
    /// [`UnsupportedBinding`]; the one with the lowest (set, binding) is named). Its
    /// reflection is still in [`entry_points`](Self::entry_points).
    pub fn entry_point(&self, name: &str) -> Result<&EntryPoint, ShaderError> {
        let ep = self
            .entry_points
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| ShaderError::EntryPointNotFound {
                name: name.to_string(),
                available: self
                    .entry_points
                    .iter()
                    .map(|e| format!("{} ({:?})", e.name, e.execution_model))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        match ep.unsupported_bindings.iter().find(|u| u.statically_used) {
            Some(u) => Err(u.error(name)),
            None => Ok(ep),
        }
    }
}

/// Vulkan stage flags for an execution model (Vulkan spec §9.1 "Shader Modules" table).
pub(crate) fn stage_of(model: ExecutionModel) -> vk::ShaderStageFlags {
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

/// Parses (with rspirv's binary parser) and reflects checked words. Call
/// `check_words` first: it rejects the inputs rspirv's parser would
/// panic on.
pub(crate) fn reflect_module(words: &[u32]) -> Result<ModuleReflection, ShaderError> {
    let mut t = Tables::parse(words)?;
    let spec_constants = spec_constants(&t);
    let declared = bindings::declared_bindings(&t)?;
    let entry_instructions = std::mem::take(&mut t.entry_points);
    let mut entry_points = Vec::with_capacity(entry_instructions.len());
    for ep in &entry_instructions {
        entry_points.push(entry::reflect_entry(&t, ep, &declared)?);
    }
    let mut cooperative_matrix_scopes: Vec<vk::ScopeKHR> = t
        .cooperative_matrix_scope_ids
        .iter()
        .filter_map(|id| match t.consts.get(id) {
            Some(tables::Const::Int(v)) => Some(vk::ScopeKHR::from_raw(*v as i32)),
            _ => None,
        })
        .collect();
    cooperative_matrix_scopes.sort_by_key(|s| s.as_raw());
    cooperative_matrix_scopes.dedup();
    Ok(ModuleReflection {
        version: t.version,
        generator: t.generator,
        capabilities: std::mem::take(&mut t.capabilities),
        extensions: std::mem::take(&mut t.extensions),
        entry_points,
        spec_constants,
        cooperative_matrix_scopes,
    })
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
    // glslang declares a second OpSpecConstant with the same SpecId for a workgroup size
    // (`local_size_x_id`): one specialization constant, listed once (a named one first).
    out.sort_by_key(|s| (s.id, s.name.is_none()));
    out.dedup_by_key(|s| s.id);
    out
}
