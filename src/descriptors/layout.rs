//! Descriptor set layout descriptions and the device-wide content-keyed interner.
//!
//! Two set layouts are the same when, binding by binding, they agree on binding number,
//! descriptor type, descriptor count, stage flags, binding flags and immutable samplers,
//! and the layout create flags agree (Vulkan spec §14.2.2 "Pipeline Layouts",
//! "compatible for set N"). Bindings are kept sorted by number so declaration order never
//! matters. The interner maps the *full* description (never a hash alone) to one
//! `VkDescriptorSetLayout` and one small integer id; comparing ids is then an integer
//! compare on the hot path.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ash::vk;

use super::names::NameTable;
use super::pool::DescriptorAllocator;
use crate::device::{Features, Interner, LayerSlot, Sampler, SamplerDesc, Shared};
use crate::error::{vk_device_err, DescriptorError, DeviceError, Result};

/// One binding of a set layout (`VkDescriptorSetLayoutBinding` + binding flags).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct SetLayoutBinding {
    /// The binding number (`layout(binding = n)`).
    pub binding: u32,
    /// The descriptor type every descriptor of the binding has.
    pub descriptor_type: vk::DescriptorType,
    /// Descriptor count (for a variable-count binding: the maximum).
    pub count: u32,
    /// Stages that may access the binding.
    pub stages: vk::ShaderStageFlags,
    /// `VkDescriptorBindingFlags` (Vulkan 1.2 descriptor indexing).
    pub flags: vk::DescriptorBindingFlags,
    /// Immutable samplers by *description* (empty: none; else one per descriptor), for
    /// SAMPLER and COMBINED_IMAGE_SAMPLER bindings. Two layouts whose immutable samplers
    /// are described equally are equal, whichever `VkSampler` handles they end up with.
    pub immutable_samplers: Vec<SamplerDesc>,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `new` and these.
setters! { SetLayoutBinding {
    binding: u32,
    descriptor_type: vk::DescriptorType,
    count: u32,
    stages: vk::ShaderStageFlags,
    flags: vk::DescriptorBindingFlags,
    immutable_samplers: Vec<SamplerDesc>,
} }

impl SetLayoutBinding {
    /// Binding `binding` of `count` descriptors of `descriptor_type`, visible to `stages`,
    /// without binding flags or immutable samplers (set those with
    /// [`flags`](Self::flags) and [`immutable_samplers`](Self::immutable_samplers)).
    pub fn new(
        binding: u32,
        descriptor_type: vk::DescriptorType,
        count: u32,
        stages: vk::ShaderStageFlags,
    ) -> Self {
        SetLayoutBinding {
            binding,
            descriptor_type,
            count,
            stages,
            flags: vk::DescriptorBindingFlags::empty(),
            immutable_samplers: Vec::new(),
        }
    }
}

/// A descriptor set layout by content. Build with [`new`](Self::new) to get canonical
/// (sorted) order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DescriptorSetLayoutDesc {
    bindings: Vec<SetLayoutBinding>,
    /// `VkDescriptorSetLayoutCreateFlags` (e.g. UPDATE_AFTER_BIND_POOL).
    pub flags: vk::DescriptorSetLayoutCreateFlags,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { DescriptorSetLayoutDesc {
    flags: vk::DescriptorSetLayoutCreateFlags,
} }

impl DescriptorSetLayoutDesc {
    /// A description with bindings sorted by number (declaration order does not matter).
    pub fn new(
        mut bindings: Vec<SetLayoutBinding>,
        flags: vk::DescriptorSetLayoutCreateFlags,
    ) -> Self {
        bindings.sort();
        DescriptorSetLayoutDesc { bindings, flags }
    }

    /// Bindings, sorted by binding number.
    pub fn bindings(&self) -> &[SetLayoutBinding] {
        &self.bindings
    }

    /// The binding numbered `binding`, if any.
    pub fn binding(&self, binding: u32) -> Option<&SetLayoutBinding> {
        self.bindings
            .binary_search_by_key(&binding, |b| b.binding)
            .ok()
            .map(|i| &self.bindings[i])
    }

    /// A human-readable first difference between two descriptions, or `None` if equal.
    pub fn diff(&self, other: &Self) -> Option<String> {
        if self == other {
            return None;
        }
        if self.flags != other.flags {
            return Some(format!(
                "layout create flags differ: {:?} vs {:?}",
                self.flags, other.flags
            ));
        }
        let fmt = |b: Option<&SetLayoutBinding>| match b {
            Some(b) => format!(
                "{:?} x{} stages {:?} flags {:?}",
                b.descriptor_type, b.count, b.stages, b.flags
            ),
            None => "absent".to_string(),
        };
        let mut numbers: Vec<u32> = self
            .bindings
            .iter()
            .chain(other.bindings.iter())
            .map(|b| b.binding)
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        for n in numbers {
            let (a, b) = (self.binding(n), other.binding(n));
            if a != b {
                let only_stages = matches!((a, b), (Some(x), Some(y))
                    if x.descriptor_type == y.descriptor_type && x.count == y.count
                        && x.flags == y.flags);
                return Some(format!(
                    "binding {n}: set has {} but pipeline expects {}{}",
                    fmt(a),
                    fmt(b),
                    if only_stages {
                        " (only stage flags differ: widen visibility to share)"
                    } else {
                        ""
                    }
                ));
            }
        }
        Some("descriptions differ".into())
    }

    /// The two descriptions differ, and only in the stage flags of bindings both have:
    /// widening both to the union of their stages makes them one layout. Returns that
    /// union (`None` when they are equal or differ in anything else).
    pub fn only_stages_differ(&self, other: &Self) -> Option<vk::ShaderStageFlags> {
        if self == other || self.flags != other.flags || self.bindings.len() != other.bindings.len()
        {
            return None;
        }
        let mut union = vk::ShaderStageFlags::empty();
        for (a, b) in self.bindings.iter().zip(&other.bindings) {
            let same_but_stages = a.binding == b.binding
                && a.descriptor_type == b.descriptor_type
                && a.count == b.count
                && a.flags == b.flags
                && a.immutable_samplers == b.immutable_samplers;
            if !same_but_stages {
                return None;
            }
            union |= a.stages | b.stages;
        }
        Some(union)
    }

    /// Descriptor counts per type, for pool sizing (one set).
    pub fn pool_sizes(&self) -> Vec<vk::DescriptorPoolSize> {
        let mut out: Vec<vk::DescriptorPoolSize> = Vec::new();
        for b in &self.bindings {
            match out.iter_mut().find(|p| p.ty == b.descriptor_type) {
                Some(p) => p.descriptor_count += b.count,
                None => out.push(vk::DescriptorPoolSize {
                    ty: b.descriptor_type,
                    descriptor_count: b.count,
                }),
            }
        }
        out
    }
}

/// Entries a set keeps for binding `b` (see `SetLayout::starts`): one per descriptor, and
/// one for a whole inline uniform block (whose count is bytes).
#[inline]
pub(crate) fn slots_of(b: &SetLayoutBinding) -> u32 {
    if b.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK {
        1
    } else {
        b.count
    }
}

/// An interned `VkDescriptorSetLayout`. Equal descriptions share one object and one id while
/// any user holds it; it is destroyed when the last holder drops.
pub struct SetLayout {
    pub(crate) shared: Arc<Shared>,
    raw: vk::DescriptorSetLayout,
    id: u64,
    desc: DescriptorSetLayoutDesc,
    pub(crate) pools: Mutex<DescriptorAllocator>,
    /// Index of each binding's first descriptor among all the set's descriptors (layout
    /// order), and the total at maximum counts: a set keeps one flat list (an inline
    /// uniform block is one entry, `slots_of`).
    starts: Box<[u32]>,
    total: u32,
    /// A new set at maximum counts: its descriptors that must be written before it binds
    /// (outside PARTIALLY_BOUND bindings, not filled by immutable samplers), and whether
    /// a SAMPLER binding is filled by immutable samplers (`allocate_set_in`).
    fresh_unwritten: u32,
    immutable_filled: bool,
    /// Per binding (layout order), a whole-buffer write's checks precomputed
    /// (`DescriptorSet::write_buffers`).
    plans: Box<[BufferPlan]>,
    /// The update template of a write of every binding's element 0 with whole buffers, in
    /// layout order ([`buffers_template`](Self::buffers_template)), made at the first such
    /// write; `None` inside: the layout has none.
    template: OnceLock<Option<vk::DescriptorUpdateTemplate>>,
    /// The binding names of the pipelines using the layout; a set keeps an index.
    pub(crate) names: NameTable,
    /// Interned immutable samplers, kept alive as long as the layout.
    _samplers: Vec<Sampler>,
}

impl std::fmt::Debug for SetLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetLayout")
            .field("id", &self.id)
            .field("desc", &self.desc)
            .finish()
    }
}

impl SetLayout {
    /// Interning id: equal ids ⇔ equal descriptions (among live layouts of one device).
    #[inline]
    pub fn id(&self) -> u64 {
        self.id
    }
    #[inline]
    /// The raw handle (owned by this object; destroyed with it).
    pub fn raw(&self) -> vk::DescriptorSetLayout {
        self.raw
    }
    #[inline]
    /// The description the layout was created (and interned) from.
    pub fn desc(&self) -> &DescriptorSetLayoutDesc {
        &self.desc
    }
    /// Index of each binding's first descriptor in a set's flat descriptor list.
    #[inline]
    pub(crate) fn starts(&self) -> &[u32] {
        &self.starts
    }
    /// Descriptors in a set of this layout (variable-count binding at its maximum).
    #[inline]
    pub(crate) fn descriptor_total(&self) -> u32 {
        self.total
    }
    /// A new set at maximum counts: the descriptors to write before it binds, and whether
    /// a binding is filled by immutable samplers (see the fields).
    #[inline]
    pub(crate) fn fresh_set(&self) -> (u32, bool) {
        (self.fresh_unwritten, self.immutable_filled)
    }
    /// Per binding (layout order), what a whole-buffer write of element 0 is checked
    /// against ([`BufferPlan`]).
    #[inline]
    pub(crate) fn buffer_plans(&self) -> &[BufferPlan] {
        &self.plans
    }

    /// A `VkDescriptorUpdateTemplate` (Vulkan 1.1, §14.2.6) that writes element 0 of every
    /// binding, in layout order, from consecutive `VkDescriptorBufferInfo`s: what
    /// `write_buffers` of all bindings in order passes to
    /// `vkUpdateDescriptorSetWithTemplate` instead of one `VkWriteDescriptorSet` each.
    /// `None` where every binding is not a buffer binding of a fixed count (the plans say),
    /// for a push-descriptor layout, or where creating it failed (the writes then go
    /// through `vkUpdateDescriptorSets`).
    #[inline]
    pub(crate) fn buffers_template(&self) -> Option<vk::DescriptorUpdateTemplate> {
        *self.template.get_or_init(|| self.make_buffers_template())
    }

    fn make_buffers_template(&self) -> Option<vk::DescriptorUpdateTemplate> {
        let push = vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR;
        if self.plans.is_empty()
            || self.plans.iter().any(|p| p.usage.is_empty())
            || self.desc.flags.contains(push)
        {
            return None;
        }
        let size = std::mem::size_of::<vk::DescriptorBufferInfo>();
        let entries: Vec<vk::DescriptorUpdateTemplateEntry> = self
            .plans
            .iter()
            .enumerate()
            .map(|(i, p)| vk::DescriptorUpdateTemplateEntry {
                dst_binding: p.binding,
                dst_array_element: 0,
                descriptor_count: 1,
                descriptor_type: p.ty,
                offset: i * size,
                stride: size,
            })
            .collect();
        let info = vk::DescriptorUpdateTemplateCreateInfo::default()
            .descriptor_update_entries(&entries)
            .template_type(vk::DescriptorUpdateTemplateType::DESCRIPTOR_SET)
            .descriptor_set_layout(self.raw);
        // SAFETY: the layout is alive and of this device; each entry names a binding of
        // it with its own descriptor type, element 0 of a count of at least 1 (the plans);
        // `entries` outlives the call. Destroyed with the layout (`Drop`).
        unsafe {
            self.shared
                .raw
                .create_descriptor_update_template(&info, None)
        }
        .ok()
    }
}

/// What a write of a whole buffer to element 0 of one binding must satisfy, computed once
/// per layout from the binding and the device limits: the buffer has `usage` (the
/// binding's type needs it, VUID-VkWriteDescriptorSet-descriptorType-00330, -00331) and its
/// size is at most `max_range` (maxUniformBufferRange / maxStorageBufferRange, -00332,
/// -00333) and not 0. Offset 0 is aligned and element 0 exists (the binding has a fixed
/// count of at least 1), so these are all the checks of `check_buffer_write_in` for such a
/// write; a write that fails one goes through those checks (and their errors).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufferPlan {
    pub binding: u32,
    /// The binding's first entry in a set's flat list (`SetLayout::starts`).
    pub start: u32,
    pub ty: vk::DescriptorType,
    /// The buffer usage the binding needs; empty: no fast write (not a buffer binding, no
    /// descriptor, or a variable count).
    pub usage: vk::BufferUsageFlags,
    pub max_range: u64,
    /// A first write of the element makes one descriptor fewer to write before the set
    /// binds (the binding is not PARTIALLY_BOUND).
    pub counts: bool,
}

impl BufferPlan {
    fn of(b: &SetLayoutBinding, start: u32, limits: &vk::PhysicalDeviceLimits) -> BufferPlan {
        let usage = super::write::usage_for(b.descriptor_type);
        let fixed = b.count >= 1
            && !b
                .flags
                .contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT);
        let max_range = if usage == vk::BufferUsageFlags::UNIFORM_BUFFER {
            limits.max_uniform_buffer_range as u64
        } else {
            limits.max_storage_buffer_range as u64
        };
        let usage = if fixed {
            usage
        } else {
            vk::BufferUsageFlags::empty()
        };
        BufferPlan {
            binding: b.binding,
            start,
            ty: b.descriptor_type,
            usage,
            // 0 where there is no fast write: `admits` then refuses every size.
            max_range: if usage.is_empty() { 0 } else { max_range },
            counts: !b
                .flags
                .contains(vk::DescriptorBindingFlags::PARTIALLY_BOUND),
        }
    }

    /// Whether a whole-buffer write of `buffer` to element 0 of `binding` passes this
    /// plan (the plan of the binding at that index of the layout): the binding numbers
    /// agree, the buffer has the usage, its size is in `1..=max_range` (never for a
    /// binding with no fast write: its `max_range` is 0), the binding's first entry is
    /// within a set list of `len` entries, and the buffer is of the layout's `device`.
    #[inline(always)]
    pub(crate) fn admits(
        &self,
        binding: u32,
        buffer: &crate::device::Buffer,
        device: *const Shared,
        len: usize,
    ) -> bool {
        self.binding == binding
            && buffer.usage().contains(self.usage)
            && buffer.size().wrapping_sub(1) < self.max_range
            && (self.start as usize) < len
            && std::ptr::eq(Arc::as_ptr(buffer.shared()), device)
    }
}

impl Drop for SetLayout {
    fn drop(&mut self) {
        if let Ok(cache) = self.shared.slot::<SetLayoutCache>() {
            cache.0.forget(&self.desc, self);
        }
        let raw = self.raw;
        let template = self.template.get().copied().flatten();
        let mut pools = std::mem::replace(
            self.pools.get_mut().unwrap_or_else(|p| p.into_inner()),
            DescriptorAllocator::new(&DescriptorSetLayoutDesc::default()),
        );
        self.shared.retire(move |s| {
            pools.destroy(&s.raw);
            if let Some(t) = template {
                // SAFETY: made from this device; no write uses it any more (every set of
                // the layout is gone: each holds an Arc to it).
                unsafe { s.raw.destroy_descriptor_update_template(t, None) };
            }
            // SAFETY: no set of these pools is alive (each holds an Arc to this layout),
            // no pipeline layout using it is alive (they hold Arcs too), and retire runs
            // this after every submission that may use them finished.
            unsafe { s.raw.destroy_descriptor_set_layout(raw, None) };
        });
    }
}

/// Rejects what `vkCreateDescriptorSetLayout` may not be given on this device: duplicate
/// binding numbers (VUID-VkDescriptorSetLayoutCreateInfo-binding-00279), descriptor types
/// and layout create flags of extensions kiln does not enable, and binding flags whose
/// descriptor-indexing feature is off or that break the rules of
/// VUID-VkDescriptorSetLayoutBindingFlagsCreateInfo-* and
/// VUID-VkDescriptorSetLayoutCreateInfo-flags-03000.
///
/// A push-descriptor layout (`PUSH_DESCRIPTOR_KHR`) needs VK_KHR_push_descriptor, no
/// dynamic buffers (VUID-VkDescriptorSetLayoutCreateInfo-flags-00280), at most
/// `max_push` descriptors (-00281), and neither update-after-bind (-04590) nor a variable
/// count (VUID-VkDescriptorSetLayoutBindingFlagsCreateInfo-flags-03003); kiln pushes
/// uniform and storage buffers, images, samplers and texel buffers (`PushWrite`), so a
/// push layout holds nothing else (no input attachments, no inline uniform blocks).
fn validate(
    desc: &DescriptorSetLayoutDesc,
    f: &Features,
    max_push: u32,
) -> Result<(), DescriptorError> {
    use vk::DescriptorType as T;
    let err = |detail: String| Err(DescriptorError::InvalidSetLayout { detail });
    let push = vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR;
    let known_flags = vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL
        | if f.push_descriptor {
            push
        } else {
            vk::DescriptorSetLayoutCreateFlags::empty()
        };
    if !known_flags.contains(desc.flags) {
        return err(format!(
            "layout create flags {:?} need extensions kiln does not enable on this device",
            desc.flags
        ));
    }
    if desc.flags.contains(push) {
        validate_push(desc, max_push)?;
    }
    let last = desc.bindings.last().map(|b| b.binding);
    for (i, b) in desc.bindings.iter().enumerate() {
        let n = b.binding;
        if i > 0 && desc.bindings[i - 1].binding == n {
            return err(format!("binding {n} is declared twice"));
        }
        let acceleration =
            b.descriptor_type == T::ACCELERATION_STRUCTURE_KHR && f.acceleration_structure;
        if b.descriptor_type == T::INLINE_UNIFORM_BLOCK {
            validate_inline(b, f)?;
        } else if !acceleration
            && !(T::SAMPLER.as_raw()..=T::INPUT_ATTACHMENT.as_raw())
                .contains(&b.descriptor_type.as_raw())
        {
            return err(format!(
                "binding {n}: descriptor type {:?} needs an extension kiln does not enable",
                b.descriptor_type
            ));
        }
        validate_binding_flags(desc, b, f, last)?;
    }
    Ok(())
}

/// The rules of a push-descriptor layout (VUID-VkDescriptorSetLayoutCreateInfo-flags-00280,
/// -00281, -04590, -04591): at most `max_push` descriptors, not UPDATE_AFTER_BIND_POOL, no
/// dynamic buffers or variable count, only the types kiln's push writes take.
fn validate_push(desc: &DescriptorSetLayoutDesc, max_push: u32) -> Result<(), DescriptorError> {
    use vk::DescriptorBindingFlags as B;
    use vk::DescriptorType as T;
    let err = |detail: String| Err(DescriptorError::InvalidSetLayout { detail });
    let total: u64 = desc.bindings.iter().map(|b| b.count as u64).sum();
    if total > max_push as u64 {
        return err(format!(
            "a push-descriptor layout of {total} descriptors exceeds maxPushDescriptors \
             {max_push}; move bindings to a set of their own"
        ));
    }
    if desc
        .flags
        .contains(vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL)
    {
        return err("a push-descriptor layout cannot be UPDATE_AFTER_BIND_POOL".into());
    }
    for b in &desc.bindings {
        if matches!(
            b.descriptor_type,
            T::UNIFORM_BUFFER_DYNAMIC | T::STORAGE_BUFFER_DYNAMIC
        ) || b.flags.contains(B::VARIABLE_DESCRIPTOR_COUNT)
        {
            return err(format!(
                "binding {}: a push-descriptor layout cannot hold dynamic buffers or a \
                 variable descriptor count",
                b.binding
            ));
        }
        let pushable = matches!(
            b.descriptor_type,
            T::UNIFORM_BUFFER
                | T::STORAGE_BUFFER
                | T::SAMPLER
                | T::COMBINED_IMAGE_SAMPLER
                | T::SAMPLED_IMAGE
                | T::STORAGE_IMAGE
                | T::UNIFORM_TEXEL_BUFFER
                | T::STORAGE_TEXEL_BUFFER
        );
        if !pushable {
            return err(format!(
                "binding {}: kiln's push-descriptor sets hold buffers, images, samplers \
                 and texel buffers (Recorder::push_descriptor_set, PushWrite), not {:?}; \
                 put it in another set",
                b.binding, b.descriptor_type
            ));
        }
    }
    Ok(())
}

/// The rules of binding `b`'s flags (`last`: the highest binding number): those kiln knows,
/// each with its feature; a variable count only on the highest, non-dynamic binding;
/// UPDATE_AFTER_BIND only for the types the device supports it for, in an
/// UPDATE_AFTER_BIND_POOL layout.
fn validate_binding_flags(
    desc: &DescriptorSetLayoutDesc,
    b: &SetLayoutBinding,
    f: &Features,
    last: Option<u32>,
) -> Result<(), DescriptorError> {
    use vk::DescriptorBindingFlags as B;
    use vk::DescriptorType as T;
    let err = |detail: String| Err(DescriptorError::InvalidSetLayout { detail });
    let n = b.binding;
    let dynamic = matches!(
        b.descriptor_type,
        T::UNIFORM_BUFFER_DYNAMIC | T::STORAGE_BUFFER_DYNAMIC
    );
    let known = B::UPDATE_AFTER_BIND | B::PARTIALLY_BOUND | B::VARIABLE_DESCRIPTOR_COUNT;
    if !known.contains(b.flags) {
        return err(format!(
            "binding {n}: binding flags {:?} are not supported by kiln",
            b.flags
        ));
    }
    if b.flags.contains(B::PARTIALLY_BOUND) && !f.descriptor_binding_partially_bound {
        return err(format!(
            "binding {n}: PARTIALLY_BOUND needs descriptorBindingPartiallyBound, which the \
             device lacks"
        ));
    }
    if b.flags.contains(B::VARIABLE_DESCRIPTOR_COUNT) {
        if !f.descriptor_binding_variable_descriptor_count {
            return err(format!(
                "binding {n}: VARIABLE_DESCRIPTOR_COUNT needs \
                 descriptorBindingVariableDescriptorCount, which the device lacks"
            ));
        }
        if Some(n) != last || dynamic {
            return err(format!(
                "binding {n}: only the highest binding, and not a dynamic buffer, may be \
                 VARIABLE_DESCRIPTOR_COUNT"
            ));
        }
    }
    if b.flags.contains(B::UPDATE_AFTER_BIND) {
        let supported = match b.descriptor_type {
            T::STORAGE_BUFFER => f.update_after_bind_storage_buffer,
            T::UNIFORM_BUFFER => f.update_after_bind_uniform_buffer,
            T::SAMPLED_IMAGE | T::COMBINED_IMAGE_SAMPLER | T::SAMPLER => {
                f.update_after_bind_sampled_image
            }
            T::STORAGE_IMAGE => f.update_after_bind_storage_image,
            _ => false,
        };
        if !supported {
            return err(format!(
                "binding {n}: the device does not support UPDATE_AFTER_BIND for {:?}",
                b.descriptor_type
            ));
        }
        if !desc
            .flags
            .contains(vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL)
        {
            return err(format!(
                "binding {n} is UPDATE_AFTER_BIND but the layout lacks \
                 UPDATE_AFTER_BIND_POOL"
            ));
        }
    }
    Ok(())
}

/// The rules of an inline uniform block binding (the feature is checked by
/// `get_or_create`): its count, in bytes, a multiple of 4
/// (VUID-VkDescriptorSetLayoutBinding-descriptorType-02209) and at most
/// `maxInlineUniformBlockSize` (-08004), and no VARIABLE_DESCRIPTOR_COUNT
/// (VUID-VkDescriptorSetLayoutBindingFlagsCreateInfo-pBindingFlags-03015). Errors: `KILN-E209`.
fn validate_inline(b: &SetLayoutBinding, f: &Features) -> Result<(), DescriptorError> {
    let n = b.binding;
    let max = f.inline_uniform_block_limits.max_size;
    let detail = if b.count == 0 || !b.count.is_multiple_of(4) {
        format!(
            "binding {n}: an inline uniform block of {} bytes; its size must be a non-zero \
             multiple of 4",
            b.count
        )
    } else if b.count > max {
        format!(
            "binding {n}: an inline uniform block of {} bytes exceeds \
             maxInlineUniformBlockSize {max}; put the data in a uniform buffer",
            b.count
        )
    } else if b
        .flags
        .contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT)
    {
        format!("binding {n}: an inline uniform block cannot have a variable count")
    } else {
        return Ok(());
    };
    Err(DescriptorError::InvalidSetLayout { detail })
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The device-wide interner of set layouts, keyed by the full description (a layer slot).
#[derive(Default)]
pub(crate) struct SetLayoutCache(Interner<DescriptorSetLayoutDesc, SetLayout>);

impl SetLayoutCache {
    /// Number of live interned layouts.
    pub(crate) fn live(&self) -> usize {
        self.0.live()
    }
}

impl LayerSlot for SetLayoutCache {
    fn teardown(&mut self, _: &Shared) {
        // Layouts own their handles and are destroyed by their own Drop; by the time the
        // device drops none is alive (each holds an Arc<Shared>).
        self.0.clear();
    }
}

/// Returns the live layout for `desc` on the device `shared`, creating it if needed.
///
/// Errors: `KILN-E209` a description Vulkan would reject on this device, `KILN-E190` an
/// invalid immutable sampler, `KILN-E107` an inline uniform block without the
/// `inlineUniformBlock` feature.
pub(crate) fn get_or_create(
    shared: &Arc<Shared>,
    desc: &DescriptorSetLayoutDesc,
) -> Result<Arc<SetLayout>, DescriptorError> {
    let inline = vk::DescriptorType::INLINE_UNIFORM_BLOCK;
    if !shared.features.inline_uniform_block
        && desc.bindings.iter().any(|b| b.descriptor_type == inline)
    {
        return Err(DescriptorError::Device(DeviceError::MissingFeature {
            device: shared.info.name.clone(),
            what: "inlineUniformBlock (Vulkan 1.3, VK_EXT_inline_uniform_block), which an \
                   inline uniform block needs; keep the block a uniform buffer"
                .into(),
        }));
    }
    validate(desc, &shared.features, shared.compute.max_push_descriptors)?;
    shared
        .slot::<SetLayoutCache>()?
        .0
        .get_or_create(desc, || create(shared, desc))
}

/// Creates the `VkDescriptorSetLayout` for a validated description. Runs outside the
/// interner's lock: the immutable samplers are interned (their own lock) first.
fn create(
    shared: &Arc<Shared>,
    desc: &DescriptorSetLayoutDesc,
) -> Result<Arc<SetLayout>, DescriptorError> {
    // Immutable samplers: interned by description (their own interner, before any lock of
    // this one); handles per binding.
    let mut samplers = Vec::new();
    let mut handles: Vec<Vec<vk::Sampler>> = Vec::with_capacity(desc.bindings.len());
    for b in &desc.bindings {
        let mut h = Vec::with_capacity(b.immutable_samplers.len());
        for s in &b.immutable_samplers {
            let sampler = Sampler::get_or_create(shared, s)?;
            h.push(sampler.raw());
            samplers.push(sampler);
        }
        handles.push(h);
    }
    let vk_bindings: Vec<vk::DescriptorSetLayoutBinding> = desc
        .bindings
        .iter()
        .zip(&handles)
        .map(|(b, h)| {
            let mut v = vk::DescriptorSetLayoutBinding::default()
                .binding(b.binding)
                .descriptor_type(b.descriptor_type)
                .descriptor_count(b.count)
                .stage_flags(b.stages);
            if !h.is_empty() {
                // VUID-VkDescriptorSetLayoutBinding-descriptorType-00282: one per descriptor.
                v = v.immutable_samplers(h);
            }
            v
        })
        .collect();
    let flags: Vec<vk::DescriptorBindingFlags> = desc.bindings.iter().map(|b| b.flags).collect();
    let mut flags_info =
        vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
    let mut info = vk::DescriptorSetLayoutCreateInfo::default()
        .bindings(&vk_bindings)
        .flags(desc.flags);
    if flags.iter().any(|f| !f.is_empty()) {
        info = info.push_next(&mut flags_info);
    }
    // SAFETY: `info` points at locals alive for the call.
    let raw = unsafe { shared.raw.create_descriptor_set_layout(&info, None) }
        .map_err(vk_device_err("vkCreateDescriptorSetLayout"))?;
    let mut total = 0u32;
    let starts: Box<[u32]> = desc
        .bindings
        .iter()
        .map(|b| {
            let start = total;
            total = total.saturating_add(slots_of(b));
            start
        })
        .collect();
    let filled = |b: &SetLayoutBinding| {
        b.descriptor_type == vk::DescriptorType::SAMPLER && !b.immutable_samplers.is_empty()
    };
    let fresh_unwritten = desc
        .bindings
        .iter()
        .filter(|b| {
            !filled(b)
                && !b
                    .flags
                    .contains(vk::DescriptorBindingFlags::PARTIALLY_BOUND)
        })
        .fold(0u32, |n, b| n.saturating_add(slots_of(b)));
    let immutable_filled = desc.bindings.iter().any(filled);
    let plans = desc
        .bindings
        .iter()
        .zip(starts.iter())
        .map(|(b, &start)| BufferPlan::of(b, start, shared.limits()))
        .collect();
    Ok(Arc::new(SetLayout {
        shared: shared.clone(),
        raw,
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        desc: desc.clone(),
        pools: Mutex::new(DescriptorAllocator::new(desc)),
        starts,
        total,
        fresh_unwritten,
        immutable_filled,
        plans,
        template: OnceLock::new(),
        names: NameTable::default(),
        _samplers: samplers,
    }))
}
