//! A set's allocation from its layout's pools and its retirement: the common case takes a
//! freed set's slot (`pool::SetSlot`: handle, descriptor list reset to a new set's entries,
//! stamps) under one lock; new sets and every error are out of line.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

use ash::vk;

use super::{partially_bound, DescriptorSet, Held, HeldList};
use crate::descriptors::layout::{slots_of, SetLayout, SetLayoutBinding};
use crate::descriptors::pool::{DescriptorAllocator, SetSlot};
use crate::device::{QueueStamps, Shared};
use crate::error::{DescriptorError, DeviceError, Result};

/// [`Device::allocate_set_with_count`] without a `Device` handle (no reference-count
/// traffic on the hot path of `new_set`). `names`: the index of the set's binding names in
/// the layout's [`NameTable`](super::names::NameTable) (0: none).
#[inline]
pub(crate) fn allocate_set_in(
    shared: &Arc<Shared>,
    layout: &Arc<SetLayout>,
    set: u32,
    names: u32,
    variable_count: Option<u32>,
) -> Result<DescriptorSet, DescriptorError> {
    let mut pools = layout.pools.lock().unwrap_or_else(|p| p.into_inner());
    // The common case: a set of this layout freed earlier (a recycled layout, `pool`'s
    // module docs: no variable count, no push descriptors), its descriptor list reset at
    // retirement. No Vulkan call, no allocation.
    let fast = variable_count.is_none() && Arc::ptr_eq(&layout.shared, shared);
    let (spare, count) = match fast.then(|| pools.take_spare()).flatten() {
        Some(spare) => (spare, None),
        None => new_spare(shared, layout, set, variable_count, &mut pools)?,
    };
    drop(pools);
    Ok(DescriptorSet::from_spare(layout, set, names, spare, count))
}

/// [`allocate_set_in`] past its common case: the checks (and errors) of the layout and
/// the count, then a set from `pools` (the layout's, locked); returns it and the count of
/// the variable-count binding (`None`: no such binding).
#[inline(never)]
fn new_spare(
    shared: &Arc<Shared>,
    layout: &SetLayout,
    set: u32,
    variable_count: Option<u32>,
    pools: &mut DescriptorAllocator,
) -> Result<(Box<SetSlot>, Option<u32>), DescriptorError> {
    if !Arc::ptr_eq(&layout.shared, shared) {
        return Err(DescriptorError::Device(DeviceError::ForeignObject {
            object: format!("set layout {} (set {set})", layout.id()),
        }));
    }
    if layout
        .desc()
        .flags
        .contains(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
    {
        return Err(DescriptorError::PushDescriptor {
            pipeline: format!("set layout {}", layout.id()),
            set,
            detail: "a push-descriptor set has no descriptor set object \
                     (VUID-VkDescriptorSetAllocateInfo-pSetLayouts-00308); record its \
                     descriptors with Recorder::push_descriptor_set"
                .into(),
        });
    }
    let bindings = layout.desc().bindings();
    let variable = bindings.last().filter(|b| {
        b.flags
            .contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT)
    });
    let count = match (variable, variable_count) {
        (Some(b), Some(n)) if n > b.count => {
            return Err(DescriptorError::ArrayElementOutOfRange {
                set,
                binding: b.binding,
                count: b.count,
                element: n,
            })
        }
        (Some(_), Some(n)) => Some(n),
        (Some(b), None) => Some(b.count),
        (None, _) => None,
    };
    Ok((pools.allocate(shared, layout.raw(), count)?, count))
}

/// The entries of a new set binding after binding (`count`: the variable-count binding's,
/// the last), and the descriptors to write before it binds, into `held` and `unwritten`.
fn fill_held(
    bindings: &[SetLayoutBinding],
    count: Option<u32>,
    held: &mut Vec<Option<Held>>,
    unwritten: &mut u32,
) {
    let last = bindings.len().saturating_sub(1);
    for (i, b) in bindings.iter().enumerate() {
        let n = match count {
            Some(n) if i == last => n,
            _ => slots_of(b),
        };
        // A SAMPLER binding with immutable samplers needs no write.
        let filled =
            b.descriptor_type == vk::DescriptorType::SAMPLER && !b.immutable_samplers.is_empty();
        if !filled && !partially_bound(b) {
            *unwritten += n;
        }
        held.extend((0..n).map(|_| filled.then_some(Held::Immutable)));
    }
}

/// A new set's list (`count`: the variable-count binding's, `None`: no such binding),
/// made from `held`'s allocation where it fits; returns it and the descriptors to write
/// before the set binds.
#[inline(never)]
fn new_held(layout: &SetLayout, count: Option<u32>, held: HeldList) -> (HeldList, u32) {
    let bindings = layout.desc().bindings();
    let last = bindings.len().saturating_sub(1);
    let total = match count {
        Some(n) => layout.starts().get(last).copied().unwrap_or(0) as usize + n as usize,
        None => layout.descriptor_total() as usize,
    };
    let mut list = held.into_vec();
    list.clear();
    list.reserve_exact(total);
    let mut unwritten = 0u32;
    match (count, layout.fresh_set()) {
        // Maximum counts, no binding filled: every entry empty, the count known.
        (None, (fresh, false)) => {
            list.resize_with(total, || None);
            unwritten = fresh;
        }
        _ => fill_held(bindings, count, &mut list, &mut unwritten),
    }
    (list.into_boxed_slice(), unwritten)
}

/// Sets a retired set's list (at maximum counts) back to a new set's entries, releasing the
/// resources it refers to: every entry `None`, or `Held::Immutable` in SAMPLER bindings
/// that immutable samplers fill (as [`fill_held`] makes them). A spare set's list is taken
/// as it is ([`DescriptorSet::from_spare`]).
fn reset_held(layout: &SetLayout, held: &mut [Option<Held>]) {
    held.fill_with(|| None);
    if !layout.fresh_set().1 {
        return;
    }
    let starts = layout.starts();
    for (i, b) in layout.desc().bindings().iter().enumerate() {
        if b.descriptor_type == vk::DescriptorType::SAMPLER && !b.immutable_samplers.is_empty() {
            let start = starts[i] as usize;
            let end = starts.get(i + 1).map_or(held.len(), |&e| e as usize);
            if let Some(slots) = held.get_mut(start..end) {
                slots.fill_with(|| Some(Held::Immutable));
            }
        }
    }
}

impl DescriptorSet {
    /// A new set of `layout` in `slot` (its handle; `count`: the variable-count binding's,
    /// `None`: no such binding). A descriptor list reset at retirement (a new set's
    /// entries at the full length, [`Drop`]) is taken as it is.
    #[inline(always)]
    fn from_spare(
        layout: &Arc<SetLayout>,
        set: u32,
        names: u32,
        mut slot: Box<SetSlot>,
        count: Option<u32>,
    ) -> DescriptorSet {
        let unwritten = if count.is_none() && slot.held.len() == layout.descriptor_total() as usize
        {
            debug_assert!(slot
                .held
                .iter()
                .all(|h| matches!(h, None | Some(Held::Immutable))));
            layout.fresh_set().0
        } else {
            let (held, unwritten) = new_held(layout, count, std::mem::take(&mut slot.held));
            slot.held = held;
            unwritten
        };
        slot.uses = QueueStamps::default();
        DescriptorSet {
            layout: layout.clone(),
            raw: slot.raw,
            unwritten,
            slot: ManuallyDrop::new(slot),
            set,
            names,
            listed_by: AtomicU64::new(0),
            draw_entry: AtomicU32::new(u32::MAX),
            dispatch_entry: AtomicU32::new(u32::MAX),
        }
    }
}

impl Drop for DescriptorSet {
    fn drop(&mut self) {
        let layout = self.layout.clone();
        // SAFETY: `drop` runs once and nothing reads `self.slot` after this.
        let mut slot = unsafe { ManuallyDrop::take(&mut self.slot) };
        // The closure keeps the layout (and the resources the set refers to) alive until
        // every submission that may use the set has finished. The resources are released
        // before the pools' lock is taken; the slot goes back with the set.
        self.layout.shared.retire(move |s| {
            // Back to a new set's entries, as `from_spare` takes the list.
            reset_held(&layout, &mut slot.held);
            layout
                .pools
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .free(&s.raw, slot);
        });
    }
}
