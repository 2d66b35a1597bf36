//! The reflected access of a pipeline's bindings: which stages read and write the memory
//! behind each binding of its layout ([`PipelineAccess`]), from the shaders' reflection
//! ([`DescriptorBinding::access`](crate::reflect::DescriptorBinding::access)). The
//! recorder's automatic barriers read it at every dispatch and draw.
//!
//! Each set's list is interned per device by content ([`SetAccess`], `SetAccessCache`):
//! pipelines whose shaders use a set number's bindings alike (specializations of one
//! shader, a vertex shader paired with several fragment shaders that use the same
//! set) share one list, so a recording's compiled uses of a bound set, keyed by the list
//! ([`PipelineAccess::key`]), serve every such pipeline.

use std::sync::Arc;

use ash::vk;

use super::layout::PipelineLayout;
use crate::device::{Interner, LayerSlot, Shared};
use crate::error::PipelineError;
use crate::shaders::{Access, EntryPoint, ImageTy};

/// How a pipeline's shaders use one binding of its layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Default)]
pub struct PipelineAccess {
    sets: Vec<Arc<SetAccess>>,
    /// [`key`](Self::key) of the first four sets (0: no such set), kept inline: a recorder
    /// copies them when it binds the pipeline and reads no list at a dispatch.
    first_keys: [usize; 4],
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

/// By content: the lists, not the addresses of their interned copies (equal on one device,
/// not across devices). `first_keys` and `image_sets` are derived from the lists.
impl PartialEq for PipelineAccess {
    fn eq(&self, other: &Self) -> bool {
        self.sets == other.sets && self.addresses == other.addresses
    }
}

impl Eq for PipelineAccess {}

impl std::fmt::Debug for PipelineAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineAccess")
            .field("sets", &self.sets)
            .field("addresses", &self.addresses)
            .finish()
    }
}

/// Whether set `set` is in `mask` ([`PipelineAccess::image_sets`]; every set from 63 on
/// is).
#[inline]
pub(crate) fn set_in_mask(mask: u64, set: usize) -> bool {
    set >= 63 || mask & (1 << set) != 0
}

/// How the entry points `stages` use binding `binding` (of type `descriptor_type`) of set
/// `set`: the union of their statically used accesses.
fn binding_access<'e>(
    set: u32,
    binding: u32,
    descriptor_type: vk::DescriptorType,
    stages: impl IntoIterator<Item = &'e EntryPoint>,
) -> BindingAccess {
    let mut out = BindingAccess {
        binding,
        descriptor_type,
        access: Access::NONE,
        stages: vk::PipelineStageFlags2::NONE,
        image: None,
    };
    for ep in stages {
        let used = ep
            .bindings
            .iter()
            .find(|r| r.set == set && r.binding == binding);
        if let Some(r) = used.filter(|r| r.access().any()) {
            out.access = out.access.union(r.access());
            out.stages |= pipeline_stage(ep.stage);
            out.image = out.image.or(r.image);
        }
    }
    out
}

/// One set number's binding accesses, interned per device by content (see the module
/// docs): pipelines that use a set alike hold the same `Arc`.
pub(crate) struct SetAccess {
    bindings: Vec<BindingAccess>,
    /// The interner that holds this list (it forgets it on drop). Not the device: a clone
    /// of a [`PipelineAccess`] is plain data and keeps no device alive.
    interner: Arc<SetAccessInterner>,
}

type SetAccessInterner = Interner<Vec<BindingAccess>, SetAccess>;

impl PartialEq for SetAccess {
    fn eq(&self, other: &Self) -> bool {
        self.bindings == other.bindings
    }
}

impl Eq for SetAccess {}

impl std::fmt::Debug for SetAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.bindings.fmt(f)
    }
}

impl Drop for SetAccess {
    fn drop(&mut self) {
        self.interner.forget(&self.bindings, self);
    }
}

/// The device-wide interner of set access lists (a layer slot): key = the full list.
#[derive(Default)]
pub(crate) struct SetAccessCache(Arc<SetAccessInterner>);

impl LayerSlot for SetAccessCache {
    fn teardown(&mut self, _: &Shared) {
        // A list that outlives the device (in a kept clone of a `PipelineAccess`) still
        // forgets itself in the interner it holds.
        self.0.clear();
    }
}

impl PipelineAccess {
    /// The access of every binding of `layout` by the entry points `stages` (the statically
    /// used bindings of each; a binding no entry point uses has [`Access::NONE`]), each
    /// set's list interned on the device `shared`. `addresses`: the shader stages whose
    /// modules declare PhysicalStorageBufferAddresses.
    ///
    /// Errors: `KILN-E113` the device has no access interner (a bug in kiln's device
    /// creation).
    pub(crate) fn new<'e>(
        shared: &Shared,
        layout: &PipelineLayout,
        stages: impl IntoIterator<Item = &'e EntryPoint> + Clone,
        addresses: vk::ShaderStageFlags,
    ) -> Result<PipelineAccess, PipelineError> {
        let cache = shared.slot::<SetAccessCache>()?;
        let mut sets = Vec::with_capacity(layout.set_layouts().len());
        for (set, l) in layout.set_layouts().iter().enumerate() {
            let bindings = l
                .desc()
                .bindings()
                .iter()
                .map(|b| binding_access(set as u32, b.binding, b.descriptor_type, stages.clone()))
                .collect::<Vec<BindingAccess>>();
            sets.push(cache.0.get_or_create(&bindings, || {
                Ok::<_, PipelineError>(Arc::new(SetAccess {
                    bindings: bindings.clone(),
                    interner: cache.0.clone(),
                }))
            })?);
        }
        let image_sets = sets.iter().enumerate().fold(0u64, |mask, (s, list)| {
            let images = list.bindings.iter().any(|b| b.image.is_some());
            mask | (u64::from(images) << s.min(63))
        });
        let mut first_keys = [0; 4];
        for (k, list) in first_keys.iter_mut().zip(&sets) {
            *k = Arc::as_ptr(list) as usize;
        }
        Ok(PipelineAccess {
            sets,
            first_keys,
            addresses: pipeline_stage(addresses),
            image_sets,
        })
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
        set_in_mask(self.image_sets, set)
    }

    /// Bit `s`: set `s` has a binding of an image the shaders use (bit 63: some set from 63
    /// on); what [`set_in_mask`] reads.
    #[inline]
    pub(crate) fn image_sets(&self) -> u64 {
        self.image_sets
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
            .bindings
            .iter()
            .find(|b| b.binding == binding)
            .copied()
    }

    /// The bindings of set `set` in the set layout's order (empty for no such set).
    #[inline]
    pub fn set(&self, set: usize) -> &[BindingAccess] {
        self.sets.get(set).map_or(&[], |s| s.bindings.as_slice())
    }

    /// An id of set `set`'s access list, for a recording's caches keyed by it: the address
    /// of the interned list (see the module docs), equal for pipelines that use the set
    /// alike and stable while any of them lives; 0 for every set past the last. The first
    /// four are read from [`first_keys`](Self::first_keys), without a chase into the lists
    /// (whose cache lines the driver's work between two commands evicts).
    #[inline]
    pub(crate) fn key(&self, set: usize) -> usize {
        match self.first_keys.get(set) {
            Some(&k) => k,
            None => self.sets.get(set).map_or(0, |s| Arc::as_ptr(s) as usize),
        }
    }

    /// [`key`](Self::key) of sets 0 to 3, by value (0: no such set).
    #[inline]
    pub(crate) fn first_keys(&self) -> [usize; 4] {
        self.first_keys
    }

    /// Some binding of some set is written.
    pub fn writes(&self) -> bool {
        self.sets
            .iter()
            .flat_map(|s| &s.bindings)
            .any(|b| b.access.write)
    }
}
