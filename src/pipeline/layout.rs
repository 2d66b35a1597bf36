//! Pipeline-layout descriptions derived from reflection, and their interner.
//!
//! [`PipelineLayoutDesc::from_stages`] takes the union of every stage's bindings keyed by
//! (set, binding): stage flags are OR-ed where several stages use a binding; a different
//! descriptor type or count for one (set, binding) is an error naming both entry points.
//! Push constants get one range per stage (VUID-VkPipelineLayoutCreateInfo-pPushConstantRanges-00292).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use super::bindless::resolve_layout;
use super::checks::check_descriptor_limits;
use crate::descriptors::{DescriptorSetLayoutDesc, SetLayout, SetLayoutBinding};
use crate::device::{Interner, LayerSlot, Shared};
use crate::error::{vk_device_err, DescriptorError, PipelineError, Result, ShaderError};
use crate::shaders::{DescriptorBinding, EntryPoint, ShaderModule};

/// Set numbers at or above this are rejected (`KILN-E052`) before any per-set storage is
/// made: a corrupt DescriptorSet decoration must not allocate billions of empty sets.
const MAX_SETS: u32 = 64;

/// Stage visibility policy for one set (see [`PipelineLayoutDesc::with_visibility`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Visibility {
    /// Exactly the stages that statically use each binding (the default).
    Exact,
    /// The used stages plus these.
    Stages(vk::ShaderStageFlags),
    /// The used stages plus every graphics stage.
    AllGraphics,
    /// `VK_SHADER_STAGE_ALL`.
    All,
}

/// One push-constant range of a pipeline layout, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PushConstantRange {
    /// Stages that read the range.
    pub stages: vk::ShaderStageFlags,
    /// First byte of the range.
    pub offset: u32,
    /// Bytes in the range (a multiple of 4).
    pub size: u32,
}

/// A pipeline layout by content: set layouts indexed by set number (holes are empty
/// layouts) plus push-constant ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PipelineLayoutDesc {
    /// Set layouts by set number (an unused number in between is an empty set).
    pub sets: Vec<DescriptorSetLayoutDesc>,
    /// Push-constant ranges, one per stage (or group of stages) that reads push constants.
    pub push_constant_ranges: Vec<PushConstantRange>,
    /// (set, binding) of runtime descriptor arrays, resolved to a count on creation
    /// (see the `bindless` module of `pipeline`).
    pub runtime_arrays: Vec<(u32, u32)>,
    /// User-set maximum descriptor count per runtime array (default
    /// [`DEFAULT_BINDLESS_MAX`](crate::DEFAULT_BINDLESS_MAX), clamped to the device limits).
    pub bindless_max: BTreeMap<(u32, u32), u32>,
    /// Reflected binding names per set (not part of the layout's identity).
    pub names: Vec<BTreeMap<String, u32>>,
    /// Reflected byte size of each (set, binding) that is one uniform block (not an
    /// array): what [`with_inline_uniform_block`](Self::with_inline_uniform_block) sizes
    /// the inline block by. Not part of the layout's identity.
    pub uniform_block_sizes: BTreeMap<(u32, u32), u32>,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { PipelineLayoutDesc {
    sets: Vec<DescriptorSetLayoutDesc>,
    push_constant_ranges: Vec<PushConstantRange>,
    runtime_arrays: Vec<(u32, u32)>,
    bindless_max: BTreeMap<(u32, u32), u32>,
    names: Vec<BTreeMap<String, u32>>,
    uniform_block_sizes: BTreeMap<(u32, u32), u32>,
} }

struct Slot {
    first_entry: String,
    binding: DescriptorBinding,
    stages: vk::ShaderStageFlags,
}

fn describe(b: &DescriptorBinding) -> String {
    if b.runtime_array {
        format!("{:?}[runtime]", b.descriptor_type)
    } else {
        format!("{:?} x{}", b.descriptor_type, b.count)
    }
}

impl PipelineLayoutDesc {
    /// The layout for one pipeline made of these (module, entry point) stages.
    ///
    /// Errors: `KILN-E050` entry point missing, `KILN-E051` conflicting declarations,
    /// `KILN-E052` a set number of 64 or more or a push-constant range past 4 GiB.
    pub fn from_stages(stages: &[(&ShaderModule, &str)]) -> Result<Self, PipelineError> {
        let mut eps = Vec::with_capacity(stages.len());
        for (m, name) in stages {
            let ep = m.reflection().entry_point(name)?;
            eps.push((format!("{} in {}", ep.name, m.label()), ep));
        }
        let refs: Vec<(&str, &EntryPoint)> = eps.iter().map(|(l, e)| (l.as_str(), *e)).collect();
        Self::from_entry_points(&refs)
    }

    /// Like [`from_stages`](Self::from_stages), from reflected entry points with labels.
    pub fn from_entry_points(stages: &[(&str, &EntryPoint)]) -> Result<Self, PipelineError> {
        let mut slots: BTreeMap<(u32, u32), Slot> = BTreeMap::new();
        let mut push: BTreeMap<u32, PushConstantRange> = BTreeMap::new();
        for (label, ep) in stages {
            for b in &ep.bindings {
                if b.set >= MAX_SETS {
                    return Err(ShaderError::ReflectUnsupported {
                        object: format!("set {} binding {} of `{label}`", b.set, b.binding),
                        detail: format!(
                            "set numbers must be below {MAX_SETS} (maxBoundDescriptorSets is at \
                             most 32 on known devices); the module is corrupt or needs renumbering"
                        ),
                    }
                    .into());
                }
                match slots.get_mut(&(b.set, b.binding)) {
                    Some(slot) => {
                        let a = &slot.binding;
                        if a.descriptor_type != b.descriptor_type
                            || a.count != b.count
                            || a.runtime_array != b.runtime_array
                        {
                            return Err(ShaderError::BindingConflict {
                                set: b.set,
                                binding: b.binding,
                                first: slot.first_entry.clone(),
                                first_desc: describe(a),
                                second: label.to_string(),
                                second_desc: describe(b),
                            }
                            .into());
                        }
                        slot.stages |= ep.stage;
                    }
                    None => {
                        slots.insert(
                            (b.set, b.binding),
                            Slot {
                                first_entry: label.to_string(),
                                binding: b.clone(),
                                stages: ep.stage,
                            },
                        );
                    }
                }
            }
            add_push_range(&mut push, label, ep)?;
        }
        let set_count = slots.keys().map(|(s, _)| s + 1).max().unwrap_or(0) as usize;
        let mut per_set: Vec<Vec<SetLayoutBinding>> = vec![Vec::new(); set_count];
        let mut names: Vec<BTreeMap<String, u32>> = vec![BTreeMap::new(); set_count];
        let mut runtime_arrays = Vec::new();
        let mut uniform_block_sizes = BTreeMap::new();
        for ((set, binding), slot) in &slots {
            if slot.binding.runtime_array {
                runtime_arrays.push((*set, *binding));
            }
            let b = &slot.binding;
            if let (vk::DescriptorType::UNIFORM_BUFFER, 1, Some(block)) =
                (b.descriptor_type, b.count, &b.block)
            {
                uniform_block_sizes.insert((*set, *binding), block.size);
            }
            per_set[*set as usize].push(SetLayoutBinding {
                binding: *binding,
                descriptor_type: slot.binding.descriptor_type,
                count: slot.binding.count,
                stages: slot.stages,
                flags: vk::DescriptorBindingFlags::empty(),
                immutable_samplers: Vec::new(),
            });
            if let Some(n) = &slot.binding.name {
                names[*set as usize].insert(n.clone(), *binding);
            }
        }
        // Block names second: an instance name of another binding wins over a block name.
        for ((set, binding), slot) in &slots {
            if let Some(n) = &slot.binding.block_name {
                names[*set as usize].entry(n.clone()).or_insert(*binding);
            }
        }
        Ok(PipelineLayoutDesc {
            sets: per_set
                .into_iter()
                .map(|b| {
                    DescriptorSetLayoutDesc::new(b, vk::DescriptorSetLayoutCreateFlags::empty())
                })
                .collect(),
            push_constant_ranges: push.into_values().collect(),
            runtime_arrays,
            bindless_max: BTreeMap::new(),
            names,
            uniform_block_sizes,
        })
    }

    /// Widens the stage flags of every binding of set `set` (never narrows them), so that
    /// pipelines of different stages can share one set layout — e.g. a "scene" set used by
    /// a graphics and a compute pipeline. Set layouts that differ only in stage flags are
    /// different layouts (Vulkan spec §14.2.2), so sharing needs equal visibility.
    pub fn with_visibility(mut self, set: u32, visibility: Visibility) -> Self {
        let Some(s) = self.sets.get_mut(set as usize) else {
            return self;
        };
        let mut bindings = s.bindings().to_vec();
        for b in &mut bindings {
            b.stages = match visibility {
                Visibility::Exact => b.stages,
                Visibility::Stages(extra) => b.stages | extra,
                Visibility::AllGraphics => b.stages | vk::ShaderStageFlags::ALL_GRAPHICS,
                Visibility::All => vk::ShaderStageFlags::ALL,
            };
        }
        *s = DescriptorSetLayoutDesc::new(bindings, s.flags);
        self
    }

    /// Makes the SAMPLER or COMBINED_IMAGE_SAMPLER binding at (set, binding) use `sampler`
    /// as an immutable sampler for every descriptor (Vulkan spec §14.2.1,
    /// `pImmutableSamplers`). Layouts compare immutable samplers by description.
    ///
    /// Errors: `KILN-E200` no such binding or not a sampler binding.
    pub fn with_immutable_sampler(
        mut self,
        set: u32,
        binding: u32,
        sampler: crate::device::SamplerDesc,
    ) -> Result<Self, PipelineError> {
        let not_found = |available: Vec<u32>| DescriptorError::NoSuchBinding {
            set,
            binding,
            available,
        };
        let Some(s) = self.sets.get_mut(set as usize) else {
            return Err(not_found(Vec::new()).into());
        };
        let mut bindings = s.bindings().to_vec();
        let samplers: Vec<u32> = bindings
            .iter()
            .filter(|b| {
                matches!(
                    b.descriptor_type,
                    vk::DescriptorType::SAMPLER | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                )
            })
            .map(|b| b.binding)
            .collect();
        let Some(b) = bindings
            .iter_mut()
            .find(|b| b.binding == binding && samplers.contains(&b.binding))
        else {
            return Err(not_found(samplers).into());
        };
        b.immutable_samplers = vec![sampler; b.count as usize];
        *s = DescriptorSetLayoutDesc::new(bindings, s.flags);
        Ok(self)
    }

    /// Makes the uniform block at (set, binding) an inline uniform block
    /// (`VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK`, Vulkan 1.3 / VK_EXT_inline_uniform_block,
    /// Vulkan spec §14.1.16): its bytes live in the descriptor set, written with
    /// [`DescriptorSet::write_inline_uniform_block`](crate::DescriptorSet::write_inline_uniform_block),
    /// with no buffer. SPIR-V has no inline block of its own (GLSL and HLSL declare an
    /// ordinary `uniform` block / `cbuffer`; the layout decides,
    /// VUID-VkComputePipelineCreateInfo-layout-07990 accepts either), so kiln makes one
    /// only when asked here. The binding's descriptor count becomes the block's reflected
    /// byte size rounded up to 4 (VUID-VkDescriptorSetLayoutBinding-descriptorType-02209).
    /// Pass the layout as the `layout` of
    /// [`ComputePipelineDesc`](crate::ComputePipelineDesc) or a graphics pipeline.
    /// Creating the layout checks the device: `KILN-E107` without the `inlineUniformBlock`
    /// feature, `KILN-E209` a block larger than `maxInlineUniformBlockSize`, `KILN-E057`
    /// more blocks than `maxPerStageDescriptorInlineUniformBlocks` /
    /// `maxDescriptorSetInlineUniformBlocks` or bytes than `maxInlineUniformTotalSize`.
    ///
    /// Errors: `KILN-E200` (set, binding) is not one uniform block of the reflected
    /// layout (the error lists the bindings that are).
    pub fn with_inline_uniform_block(
        mut self,
        set: u32,
        binding: u32,
    ) -> Result<Self, PipelineError> {
        let blocks: Vec<u32> = self
            .uniform_block_sizes
            .keys()
            .filter(|(s, _)| *s == set)
            .map(|(_, b)| *b)
            .collect();
        let size = self.uniform_block_sizes.get(&(set, binding)).copied();
        let s = self.sets.get_mut(set as usize);
        let (Some(size), Some(s)) = (size, s) else {
            return Err(DescriptorError::NoSuchBinding {
                set,
                binding,
                available: blocks,
            }
            .into());
        };
        let mut bindings = s.bindings().to_vec();
        for b in bindings.iter_mut().filter(|b| b.binding == binding) {
            if b.descriptor_type == vk::DescriptorType::UNIFORM_BUFFER {
                b.descriptor_type = vk::DescriptorType::INLINE_UNIFORM_BLOCK;
                b.count = size.max(1).next_multiple_of(4);
            }
        }
        *s = DescriptorSetLayoutDesc::new(bindings, s.flags);
        Ok(self)
    }

    /// Makes set `set` a push-descriptor set (`PUSH_DESCRIPTOR_KHR`, VK_KHR_push_descriptor):
    /// its buffers are given at record time with
    /// [`Recorder::push_descriptor_set`](crate::Recorder::push_descriptor_set), with no pool
    /// and no set object. One set per layout at most; `set` must exist (else unchanged, and
    /// [`ComputePipelineDesc::push_descriptor_set`](crate::ComputePipelineDesc::push_descriptor_set)
    /// reports it). Checked when the layout is created: `KILN-E209` a binding a push
    /// layout cannot hold or the device without the extension, `KILN-E210` two push sets.
    pub fn with_push_descriptor(mut self, set: u32) -> Self {
        if let Some(s) = self.sets.get_mut(set as usize) {
            *s = DescriptorSetLayoutDesc::new(
                s.bindings().to_vec(),
                s.flags | vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR,
            );
        }
        self
    }

    /// The push-descriptor set of this layout, if one is.
    pub fn push_descriptor_set(&self) -> Option<u32> {
        self.sets
            .iter()
            .position(|s| {
                s.flags
                    .contains(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            })
            .map(|i| i as u32)
    }

    /// Sets the maximum descriptor count of the runtime array at (set, binding).
    pub fn with_bindless_max(mut self, set: u32, binding: u32, max: u32) -> Self {
        self.bindless_max.insert((set, binding), max);
        self
    }

    /// Per set: (descriptor type, total count) for one set's pool.
    pub fn pool_sizes(&self) -> Vec<(u32, Vec<vk::DescriptorPoolSize>)> {
        self.sets
            .iter()
            .enumerate()
            .map(|(i, s)| (i as u32, s.pool_sizes()))
            .collect()
    }
}

/// An interned `VkPipelineLayout`.
pub struct PipelineLayout {
    shared: Arc<Shared>,
    raw: vk::PipelineLayout,
    id: u64,
    set_layouts: Vec<Arc<SetLayout>>,
    push_constant_ranges: Vec<PushConstantRange>,
    key: PipelineLayoutKey,
}

impl std::fmt::Debug for PipelineLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineLayout")
            .field("id", &self.id)
            .field("set_layouts", &self.set_layouts)
            .field("push_constant_ranges", &self.push_constant_ranges)
            .finish()
    }
}

impl PipelineLayout {
    #[inline]
    /// The interned id: equal ids are equal layouts (and one `VkPipelineLayout`).
    pub fn id(&self) -> u64 {
        self.id
    }
    #[inline]
    /// The raw handle (owned by this object; destroyed with it).
    pub fn raw(&self) -> vk::PipelineLayout {
        self.raw
    }
    /// Interned set layouts, indexed by set number.
    #[inline]
    pub fn set_layouts(&self) -> &[Arc<SetLayout>] {
        &self.set_layouts
    }
    /// The push-descriptor set of this layout (VK_KHR_push_descriptor), if one is.
    pub fn push_descriptor_set(&self) -> Option<u32> {
        self.set_layouts
            .iter()
            .position(|s| {
                s.desc()
                    .flags
                    .contains(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            })
            .map(|i| i as u32)
    }
    #[inline]
    /// The push-constant ranges of the layout.
    pub fn push_constant_ranges(&self) -> &[PushConstantRange] {
        &self.push_constant_ranges
    }

    /// Whether this layout was made by the device whose shared state is `shared`.
    #[inline]
    pub(crate) fn belongs_to(&self, shared: &Shared) -> bool {
        std::ptr::eq(&*self.shared, shared)
    }
}

impl Drop for PipelineLayout {
    fn drop(&mut self) {
        if let Ok(cache) = self.shared.slot::<PipelineLayoutCache>() {
            cache.0.forget(&self.key, self);
        }
        let raw = self.raw;
        // SAFETY: no pipeline using this layout is alive (pipelines hold an Arc to it);
        // retire runs this after every submission that may use it finished.
        self.shared
            .retire(move |s| unsafe { s.raw.destroy_pipeline_layout(raw, None) });
    }
}

pub(crate) type PipelineLayoutKey = (Vec<u64>, Vec<PushConstantRange>);

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The device-wide interner of pipeline layouts (a layer slot): key = (set-layout ids, push
/// ranges). Set layouts are interned by full description, so equal ids are equal
/// descriptions; a key's ids stay valid while its layout lives (it holds its set layouts).
#[derive(Default)]
pub(crate) struct PipelineLayoutCache(Interner<PipelineLayoutKey, PipelineLayout>);

impl LayerSlot for PipelineLayoutCache {
    fn teardown(&mut self, _: &Shared) {
        // Layouts are destroyed by their own Drop; none is alive at device teardown.
        self.0.clear();
    }
}

impl PipelineLayout {
    /// The interned pipeline layout for `desc` on the device `shared` (see
    /// [`Device::pipeline_layout`](crate::Device::pipeline_layout)).
    pub(crate) fn get_or_create(
        shared: &Arc<Shared>,
        desc: &PipelineLayoutDesc,
    ) -> Result<Arc<Self>, PipelineError> {
        let limit = shared.limits().max_push_constants_size;
        let mut seen = vk::ShaderStageFlags::empty();
        for r in &desc.push_constant_ranges {
            let end = r.offset.checked_add(r.size);
            if end.is_none_or(|e| e > limit) {
                return Err(ShaderError::PushConstantsTooLarge {
                    size: end.unwrap_or(u32::MAX),
                    limit,
                }
                .into());
            }
            let bad =
                |detail: String| Err(ShaderError::InvalidPushConstantRanges { detail }.into());
            if r.size == 0 || !r.offset.is_multiple_of(4) || !r.size.is_multiple_of(4) {
                return bad(format!(
                    "[{}, +{}) of {:?}: offset and size must be multiples of 4 and size above 0",
                    r.offset, r.size, r.stages
                ));
            }
            if r.stages.is_empty() || seen.intersects(r.stages) {
                return bad(format!(
                    "[{}, +{}): stage flags {:?} are empty or already in another range (one \
                     range per stage)",
                    r.offset, r.size, r.stages
                ));
            }
            seen |= r.stages;
        }
        let push = vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR;
        let push_sets: Vec<usize> = (0..desc.sets.len())
            .filter(|&i| desc.sets[i].flags.contains(push))
            .collect();
        if let [_, second, ..] = push_sets[..] {
            return Err(DescriptorError::PushDescriptor {
                pipeline: "pipeline layout".into(),
                set: second as u32,
                detail: format!(
                    "sets {push_sets:?} are all push-descriptor sets, but a pipeline layout may \
                     have one (VUID-VkPipelineLayoutCreateInfo-pSetLayouts-00293)"
                ),
            }
            .into());
        }
        let sets = resolve_layout(shared, &desc.sets, &desc.runtime_arrays, &desc.bindless_max)?;
        check_descriptor_limits(shared, &sets)?;
        let mut set_layouts = Vec::with_capacity(sets.len());
        for s in &sets {
            set_layouts.push(crate::descriptors::set_layout(shared, s)?);
        }
        let key: PipelineLayoutKey = (
            set_layouts.iter().map(|l| l.id()).collect(),
            desc.push_constant_ranges.clone(),
        );
        shared
            .slot::<PipelineLayoutCache>()?
            .0
            .get_or_create(&key, || {
                let raw_sets: Vec<vk::DescriptorSetLayout> =
                    set_layouts.iter().map(|l| l.raw()).collect();
                let ranges: Vec<vk::PushConstantRange> = desc
                    .push_constant_ranges
                    .iter()
                    .map(|r| vk::PushConstantRange {
                        stage_flags: r.stages,
                        offset: r.offset,
                        size: r.size,
                    })
                    .collect();
                let info = vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&raw_sets)
                    .push_constant_ranges(&ranges);
                // SAFETY: the set layouts are alive (held in `set_layouts`); locals outlive the
                // call.
                let raw = unsafe { shared.raw.create_pipeline_layout(&info, None) }
                    .map_err(vk_device_err("vkCreatePipelineLayout"))?;
                Ok(Arc::new(PipelineLayout {
                    shared: shared.clone(),
                    raw,
                    id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                    set_layouts,
                    push_constant_ranges: desc.push_constant_ranges.clone(),
                    key: key.clone(),
                }))
            })
    }
}

/// Merges the push-constant block of entry point `ep` (of `label`) into `push` (one range
/// per stage, widened to 4-byte boundaries). Errors: `KILN-E052` a block whose end does not
/// fit in 32 bits.
fn add_push_range(
    push: &mut BTreeMap<u32, PushConstantRange>,
    label: &str,
    ep: &EntryPoint,
) -> Result<(), PipelineError> {
    if let Some(pc) = &ep.push_constants {
        if pc.size > 0 {
            let start = pc.offset & !3;
            let end = pc
                .offset
                .checked_add(pc.size)
                .and_then(|e| e.checked_add(3))
                .map(|e| e & !3)
                .ok_or_else(|| ShaderError::ReflectUnsupported {
                    object: format!("push constants of `{label}`"),
                    detail: format!(
                        "offset {} + size {} does not fit in 32 bits",
                        pc.offset, pc.size
                    ),
                })?;
            let key = ep.stage.as_raw();
            let r = push.entry(key).or_insert(PushConstantRange {
                stages: ep.stage,
                offset: start,
                size: end - start,
            });
            let lo = r.offset.min(start);
            let hi = (r.offset + r.size).max(end);
            r.offset = lo;
            r.size = hi - lo;
        }
    }
    Ok(())
}
