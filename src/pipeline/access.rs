//! The reflected access of a pipeline's bindings: which stages read and write the memory
//! behind each binding of its layout ([`PipelineAccess`]), from the shaders' reflection
//! ([`DescriptorBinding::access`](crate::reflect::DescriptorBinding::access)). The
//! recorder's automatic barriers read it at every dispatch and draw.

use ash::vk;

use super::layout::PipelineLayout;
use crate::shaders::{Access, EntryPoint, ImageTy};

/// How a pipeline's shaders use one binding of its layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindingAccess {
    /// The binding number.
    pub binding: u32,
    /// The layout's descriptor type.
    pub descriptor_type: vk::DescriptorType,
    /// Read and written by any of the stages below ([`Access::NONE`]: no stage uses it
    /// statically, or a sampler).
    pub access: Access,
    /// The shader stages that use it, as synchronization2 stages (`COMPUTE_SHADER`,
    /// `VERTEX_SHADER`, `FRAGMENT_SHADER`, ...); empty when unused.
    pub stages: vk::PipelineStageFlags2,
    /// For an image, texel buffer or input attachment a stage uses: its reflected
    /// `OpTypeImage` (dimensionality, arrayed, multisampled), which the image written to
    /// the binding must match.
    pub image: Option<ImageTy>,
}

/// The access of every binding of a pipeline's layout, per set number, in the set layout's
/// binding order (what [`ComputePipeline::access`](crate::ComputePipeline::access) and
/// [`GraphicsPipeline::access`](crate::GraphicsPipeline::access) return).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineAccess {
    sets: Vec<Vec<BindingAccess>>,
    /// The stages whose shaders may read and write memory through buffer device addresses
    /// (capability PhysicalStorageBufferAddresses): no binding names what they access.
    addresses: vk::PipelineStageFlags2,
    /// Bit `s`: a binding of set `s` (below 64) is an image the shaders use (the views a
    /// recorder checks against the shader's image type at a draw or dispatch).
    image_sets: u64,
}

/// Whether a module declares the capability of buffer device addresses.
pub(crate) fn uses_addresses(capabilities: &[String]) -> bool {
    capabilities
        .iter()
        .any(|c| c == "PhysicalStorageBufferAddresses")
}

/// The synchronization2 stage of shader stage `stage`.
fn pipeline_stage(stage: vk::ShaderStageFlags) -> vk::PipelineStageFlags2 {
    use vk::PipelineStageFlags2 as S;
    use vk::ShaderStageFlags as F;
    [
        (F::COMPUTE, S::COMPUTE_SHADER),
        (F::VERTEX, S::VERTEX_SHADER),
        (F::FRAGMENT, S::FRAGMENT_SHADER),
        (F::GEOMETRY, S::GEOMETRY_SHADER),
        (F::TESSELLATION_CONTROL, S::TESSELLATION_CONTROL_SHADER),
        (
            F::TESSELLATION_EVALUATION,
            S::TESSELLATION_EVALUATION_SHADER,
        ),
        (F::TASK_EXT, S::TASK_SHADER_EXT),
        (F::MESH_EXT, S::MESH_SHADER_EXT),
    ]
    .into_iter()
    .filter(|(f, _)| stage.intersects(*f))
    .fold(S::NONE, |acc, (_, s)| acc | s)
}

impl PipelineAccess {
    /// The access of every binding of `layout` by the entry points `stages` (the statically
    /// used bindings of each; a binding no entry point uses has [`Access::NONE`]).
    /// `addresses`: the shader stages whose modules declare PhysicalStorageBufferAddresses.
    pub(crate) fn new<'e>(
        layout: &PipelineLayout,
        stages: impl IntoIterator<Item = &'e EntryPoint> + Clone,
        addresses: vk::ShaderStageFlags,
    ) -> PipelineAccess {
        let sets = layout
            .set_layouts()
            .iter()
            .enumerate()
            .map(|(set, l)| {
                l.desc()
                    .bindings()
                    .iter()
                    .map(|b| {
                        let mut out = BindingAccess {
                            binding: b.binding,
                            descriptor_type: b.descriptor_type,
                            access: Access::NONE,
                            stages: vk::PipelineStageFlags2::NONE,
                            image: None,
                        };
                        for ep in stages.clone() {
                            let used = ep
                                .bindings
                                .iter()
                                .find(|r| r.set == set as u32 && r.binding == b.binding);
                            if let Some(r) = used.filter(|r| r.access().any()) {
                                out.access = out.access.union(r.access());
                                out.stages |= pipeline_stage(ep.stage);
                                out.image = out.image.or(r.image);
                            }
                        }
                        out
                    })
                    .collect()
            })
            .collect::<Vec<Vec<BindingAccess>>>();
        let image_sets = sets.iter().enumerate().fold(0u64, |mask, (s, bindings)| {
            let images = bindings.iter().any(|b| b.image.is_some());
            mask | (u64::from(images) << s.min(63))
        });
        PipelineAccess {
            sets,
            addresses: pipeline_stage(addresses),
            image_sets,
        }
    }

    /// The stages that may access memory through buffer device addresses (empty: none).
    /// kiln orders such accesses like reads and writes of every buffer with
    /// SHADER_DEVICE_ADDRESS usage.
    pub fn device_address_stages(&self) -> vk::PipelineStageFlags2 {
        self.addresses
    }

    /// Whether set `set` has a binding of an image the shaders use (a set of buffers only
    /// needs no view check when it is bound).
    #[inline]
    pub(crate) fn set_has_images(&self, set: usize) -> bool {
        set >= 63 || self.image_sets & (1 << set) != 0
    }

    /// Whether any set has a binding of an image the shaders use (a pipeline without one
    /// needs no view check of its bound sets).
    #[inline]
    pub(crate) fn has_images(&self) -> bool {
        self.image_sets != 0
    }

    /// The access of `binding` of set `set` (`None`: no such binding in the layout).
    pub fn binding(&self, set: u32, binding: u32) -> Option<BindingAccess> {
        self.sets
            .get(set as usize)?
            .iter()
            .find(|b| b.binding == binding)
            .copied()
    }

    /// The bindings of set `set` in the set layout's order (empty for no such set).
    #[inline]
    pub fn set(&self, set: usize) -> &[BindingAccess] {
        self.sets.get(set).map_or(&[], |s| s.as_slice())
    }

    /// An id of set `set`'s access list, for a recording's caches keyed by it: the address
    /// of the list's entry, computed without reading it (no chase into the lists, whose
    /// cache lines the driver's work between two commands evicts). Distinct per pipeline
    /// and set, and stable, while the pipeline lives; 0 for every set past the last.
    #[inline]
    pub(crate) fn key(&self, set: usize) -> usize {
        if set < self.sets.len() {
            self.sets.as_ptr().wrapping_add(set) as usize
        } else {
            0
        }
    }

    /// Some binding of some set is written.
    pub fn writes(&self) -> bool {
        self.sets.iter().flatten().any(|b| b.access.write)
    }
}
