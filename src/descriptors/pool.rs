//! Growing descriptor pools, one chain per set layout.
//!
//! Each pool holds `sets_per_pool` sets of one layout (pool sizes = the layout's
//! per-type counts × sets). When a pool is full (`VK_ERROR_OUT_OF_POOL_MEMORY` or
//! `VK_ERROR_FRAGMENTED_POOL`, Vulkan spec §14.2.3) kiln creates a pool twice as large,
//! up to [`MAX_SETS_PER_POOL`]. Freed sets return to their pool; a layout without
//! PARTIALLY_BOUND or VARIABLE_DESCRIPTOR_COUNT bindings keeps them allocated instead and
//! hands them out again (no `vkAllocateDescriptorSets`/`vkFreeDescriptorSets` per set):
//! every descriptor of such a set must be written again before it binds (KILN-E207), so
//! no stale descriptor of its previous life is ever used.
//!
//! # Growth policy
//!
//! The decisions are pure data, [`PoolChain`], unit-tested without a device (like
//! `plan_queues`); [`DescriptorAllocator`] applies them with Vulkan calls:
//!
//! 1. A set is taken from the spare list when one is there (recycled layouts, no variable
//!    count).
//! 2. Otherwise the pools not marked full are tried newest first (the newest is the
//!    largest and least likely to be full); one that answers `OUT_OF_POOL_MEMORY` or
//!    `FRAGMENTED_POOL` is marked full.
//! 3. Then a new pool of the next size is created and tried; the sizes run
//!    [`FIRST_SETS_PER_POOL`], twice that, … up to [`MAX_SETS_PER_POOL`], then stay there.
//!    If even the new pool reports itself full (fragmentation, or a driver whose pool
//!    sizes are approximate: `VK_ERROR_OUT_OF_POOL_MEMORY` is allowed for any allocation,
//!    §14.2.3), one more ([`NEW_POOLS_PER_ALLOCATION`] in all); then the allocation fails
//!    with the last error.
//! 4. A freed set (not recycled) clears its pool's full mark: the pool is tried again.
//!
//! A pool of `sets` sets holds each descriptor type's per-set count × `sets` (at least 1
//! per listed type), and `inline bindings × sets` inline uniform block bindings.

use ash::vk;

use super::layout::DescriptorSetLayoutDesc;
use super::set::HeldList;
use crate::device::{FaultSite, QueueStamps, Shared};
use crate::error::{vk_device_err, DescriptorError, Result};

/// Sets in the first pool of a layout.
pub(crate) const FIRST_SETS_PER_POOL: u32 = 16;
/// Upper bound on sets per pool as pools grow.
pub(crate) const MAX_SETS_PER_POOL: u32 = 4096;
/// New pools one allocation may create before it fails.
pub(crate) const NEW_POOLS_PER_ALLOCATION: usize = 2;

/// The growth policy of one layout's pools, as plain data (module docs): each pool's live
/// sets and full mark, and the size of the next pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PoolChain {
    /// Per pool, in creation order.
    pools: Vec<PoolState>,
    next_sets: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PoolState {
    live: u32,
    full: bool,
}

impl Default for PoolChain {
    fn default() -> Self {
        PoolChain {
            pools: Vec::new(),
            next_sets: FIRST_SETS_PER_POOL,
        }
    }
}

impl PoolChain {
    /// The next pool to try below index `below` (start with `usize::MAX`): the newest not
    /// marked full.
    pub(crate) fn candidate_below(&self, below: usize) -> Option<usize> {
        (0..self.pools.len().min(below))
            .rev()
            .find(|&i| !self.pools[i].full)
    }

    /// The pools to try, newest first, skipping those marked full.
    #[cfg(test)]
    fn candidates(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut below = usize::MAX;
        while let Some(i) = self.candidate_below(below) {
            out.push(i);
            below = i;
        }
        out
    }

    /// Adds a pool of the next size; returns its index and its sets (the size after it
    /// doubles, up to [`MAX_SETS_PER_POOL`]).
    pub(crate) fn grow(&mut self) -> (usize, u32) {
        let sets = self.next_sets;
        self.pools.push(PoolState {
            live: 0,
            full: false,
        });
        self.next_sets = sets.saturating_mul(2).min(MAX_SETS_PER_POOL);
        (self.pools.len() - 1, sets)
    }

    /// The sets the next new pool holds.
    pub(crate) fn next_sets(&self) -> u32 {
        self.next_sets
    }

    /// Pool `i` gave out a set.
    pub(crate) fn allocated(&mut self, i: usize) {
        if let Some(p) = self.pools.get_mut(i) {
            p.live += 1;
        }
    }

    /// Pool `i` answered that it is full (`OUT_OF_POOL_MEMORY`, `FRAGMENTED_POOL`).
    pub(crate) fn mark_full(&mut self, i: usize) {
        if let Some(p) = self.pools.get_mut(i) {
            p.full = true;
        }
    }

    /// A set of pool `i` went back to it: it is tried again.
    pub(crate) fn freed(&mut self, i: usize) {
        if let Some(p) = self.pools.get_mut(i) {
            p.live = p.live.saturating_sub(1);
            p.full = false;
        }
    }

    /// Live sets of pool `i`.
    #[cfg(test)]
    fn live(&self, i: usize) -> u32 {
        self.pools.get(i).map_or(0, |p| p.live)
    }

    /// Forgets every pool (they were destroyed); the sizes start over.
    pub(crate) fn clear(&mut self) {
        *self = PoolChain::default();
    }
}

/// The pool sizes of a pool of `sets` sets of a layout whose sets each hold `per_set`:
/// each count × `sets`, saturating, at least 1.
pub(crate) fn scaled_sizes(
    per_set: &[vk::DescriptorPoolSize],
    sets: u32,
) -> Vec<vk::DescriptorPoolSize> {
    per_set
        .iter()
        .map(|s| vk::DescriptorPoolSize {
            ty: s.ty,
            descriptor_count: s.descriptor_count.saturating_mul(sets).max(1),
        })
        .collect()
}

/// A set's handle and what goes with it from one set to the next: a [`DescriptorSet`]'s
/// own state, in one allocation per `VkDescriptorSet`. A freed set of a recycled layout
/// (module docs) is kept with its slot, and the next set takes both: no Vulkan call and no
/// allocation per set.
///
/// [`DescriptorSet`]: super::DescriptorSet
pub(super) struct SetSlot {
    pub raw: vk::DescriptorSet,
    /// Index of its pool.
    pub pool: usize,
    /// The set's descriptor list: one entry per descriptor, binding after binding in the
    /// layout's (sorted) order (binding `i` starts at `layout.starts()[i]`). A spare slot's
    /// was reset at retirement (the resources it held released) to a new set's entries at
    /// the layout's full length, or has no entry (the new set fills it).
    pub held: HeldList,
    /// Per queue, the timeline value of the last submission that bound the set.
    pub uses: QueueStamps,
}

impl SetSlot {
    fn new(raw: vk::DescriptorSet, pool: usize) -> Box<SetSlot> {
        Box::new(SetSlot {
            raw,
            pool,
            held: HeldList::default(),
            uses: QueueStamps::default(),
        })
    }
}

pub(crate) struct DescriptorAllocator {
    sizes: Vec<vk::DescriptorPoolSize>,
    flags: vk::DescriptorPoolCreateFlags,
    /// The pools, parallel to `chain`'s.
    pools: Vec<vk::DescriptorPool>,
    chain: PoolChain,
    /// Freed sets kept for reuse, each with its slot (its descriptor list reset): no
    /// Vulkan call and no allocation per set. Only when `recycle`.
    // Boxed: each box is a set's own allocation, handed to the next set as it is.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<SetSlot>>,
    /// Every binding must be written before a set of this layout binds.
    recycle: bool,
    /// Inline uniform block bindings per set (their pool sizes count bytes).
    inline_bindings: u32,
}

impl DescriptorAllocator {
    /// Pools for sets of the layout `desc` (its per-set descriptor counts, its create
    /// flags, its bindings' flags and inline uniform blocks).
    pub(crate) fn new(desc: &DescriptorSetLayoutDesc) -> Self {
        let mut flags = vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET;
        if desc
            .flags
            .contains(vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL)
        {
            flags |= vk::DescriptorPoolCreateFlags::UPDATE_AFTER_BIND;
        }
        let partial = vk::DescriptorBindingFlags::PARTIALLY_BOUND
            | vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT;
        let bindings = desc.bindings();
        DescriptorAllocator {
            sizes: desc.pool_sizes(),
            flags,
            pools: Vec::new(),
            chain: PoolChain::default(),
            spare: Vec::new(),
            recycle: bindings.iter().all(|b| !b.flags.intersects(partial)),
            inline_bindings: bindings
                .iter()
                .filter(|b| b.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK)
                .count() as u32,
        }
    }

    /// Creates the next pool of the chain; returns its index.
    fn grow(&mut self, device: &ash::Device) -> Result<usize, DescriptorError> {
        let sets = self.chain.next_sets();
        let sizes = scaled_sizes(&self.sizes, sets);
        // VUID-VkDescriptorPoolCreateInfo-pNext: inline uniform blocks need their binding
        // count besides their bytes (the INLINE_UNIFORM_BLOCK pool size).
        let mut inline = vk::DescriptorPoolInlineUniformBlockCreateInfo::default()
            .max_inline_uniform_block_bindings(self.inline_bindings.saturating_mul(sets));
        let mut info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(sets)
            .pool_sizes(&sizes)
            .flags(self.flags);
        if self.inline_bindings > 0 {
            info = info.push_next(&mut inline);
        }
        // SAFETY: valid create info with locals alive for the call.
        let raw = unsafe { device.create_descriptor_pool(&info, None) }
            .map_err(vk_device_err("vkCreateDescriptorPool"))?;
        self.pools.push(raw);
        Ok(self.chain.grow().0)
    }

    /// A freed set kept for reuse, if one is (recycled layouts only; a set of no variable
    /// count).
    #[inline]
    pub(super) fn take_spare(&mut self) -> Option<Box<SetSlot>> {
        self.spare.pop()
    }

    /// Allocates one set: a spare one when there is one and `variable_count` is `None`,
    /// else a new one from the pools (in a new slot: its descriptor list has no entry).
    pub(super) fn allocate(
        &mut self,
        shared: &Shared,
        layout: vk::DescriptorSetLayout,
        variable_count: Option<u32>,
    ) -> Result<Box<SetSlot>, DescriptorError> {
        if variable_count.is_none() {
            if let Some(s) = self.spare.pop() {
                return Ok(s);
            }
        }
        let device = &shared.raw;
        let layouts = [layout];
        let counts = [variable_count.unwrap_or(0)];
        let try_pool = |raw: vk::DescriptorPool| {
            let mut var = vk::DescriptorSetVariableDescriptorCountAllocateInfo::default()
                .descriptor_counts(&counts);
            let mut info = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(raw)
                .set_layouts(&layouts);
            if variable_count.is_some() {
                info = info.push_next(&mut var);
            }
            shared.inject(FaultSite::AllocateDescriptorSets)?;
            // SAFETY: pool and layout belong to this device; access to the pool is
            // serialized by the allocator's mutex (Vulkan: externally synchronized).
            unsafe { device.allocate_descriptor_sets(&info) }
        };
        let mut below = usize::MAX;
        while let Some(i) = self.chain.candidate_below(below) {
            below = i;
            match try_pool(self.pools[i]) {
                Ok(v) => {
                    self.chain.allocated(i);
                    return Ok(SetSlot::new(v[0], i));
                }
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {
                    self.chain.mark_full(i);
                }
                Err(e) => return Err(vk_device_err("vkAllocateDescriptorSets")(e).into()),
            }
        }
        let mut last = vk::Result::ERROR_OUT_OF_POOL_MEMORY;
        for _ in 0..NEW_POOLS_PER_ALLOCATION {
            let i = self.grow(device)?;
            match try_pool(self.pools[i]) {
                Ok(v) => {
                    self.chain.allocated(i);
                    return Ok(SetSlot::new(v[0], i));
                }
                Err(
                    e @ (vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL),
                ) => {
                    self.chain.mark_full(i);
                    last = e;
                }
                Err(e) => return Err(vk_device_err("vkAllocateDescriptorSets")(e).into()),
            }
        }
        Err(vk_device_err("vkAllocateDescriptorSets")(last).into())
    }

    /// Returns a set to its pool (or keeps it for reuse, see the module docs). No pending
    /// submission may use it.
    /// `slot`: the set's, its descriptor list reset to a new set's entries (kept for a
    /// later set with the set).
    pub(super) fn free(&mut self, device: &ash::Device, slot: Box<SetSlot>) {
        let (set, pool) = (slot.raw, slot.pool);
        let Some(&raw) = self.pools.get(pool) else {
            return;
        };
        if self.recycle {
            self.spare.push(slot);
            return;
        }
        // SAFETY: the set came from this pool (created with FREE_DESCRIPTOR_SET) and no
        // pending command buffer uses it (kiln's execute waits).
        let _ = unsafe { device.free_descriptor_sets(raw, &[set]) };
        self.chain.freed(pool);
    }

    pub(crate) fn destroy(&mut self, device: &ash::Device) {
        // Spare sets are freed with their pools.
        self.spare.clear();
        for raw in self.pools.drain(..) {
            // SAFETY: called from the layout's Drop, when no set of these pools is alive.
            unsafe { device.destroy_descriptor_pool(raw, None) };
        }
        self.chain.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_double_up_to_the_cap() {
        let mut chain = PoolChain::default();
        let sizes: Vec<u32> = (0..12).map(|_| chain.grow().1).collect();
        assert_eq!(
            sizes,
            [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 4096, 4096, 4096]
        );
        chain.clear();
        assert_eq!(chain.grow(), (0, FIRST_SETS_PER_POOL));
    }

    #[test]
    fn newest_pools_first_and_full_ones_skipped() {
        let mut chain = PoolChain::default();
        assert_eq!(chain.candidates().len(), 0);
        for _ in 0..3 {
            chain.grow();
        }
        assert_eq!(chain.candidates(), [2, 1, 0]);
        chain.allocated(2);
        chain.allocated(2);
        chain.mark_full(2);
        chain.mark_full(0);
        assert_eq!(chain.candidates(), [1]);
        // A set freed to a full pool makes it a candidate again.
        chain.freed(2);
        assert_eq!(chain.live(2), 1);
        assert_eq!(chain.candidates(), [2, 1]);
        // Out of range indices change nothing; live never goes below 0.
        chain.freed(9);
        chain.freed(1);
        assert_eq!(chain.live(1), 0);
    }

    #[test]
    fn pool_sizes_scale_per_set_counts() {
        let per_set = [
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 3,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::INLINE_UNIFORM_BLOCK,
                descriptor_count: 0,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::SAMPLED_IMAGE,
                descriptor_count: u32::MAX / 2,
            },
        ];
        let sized = scaled_sizes(&per_set, 16);
        let counts: Vec<_> = sized.iter().map(|s| (s.ty, s.descriptor_count)).collect();
        assert_eq!(
            counts,
            [
                (vk::DescriptorType::STORAGE_BUFFER, 48),
                (vk::DescriptorType::INLINE_UNIFORM_BLOCK, 1),
                (vk::DescriptorType::SAMPLED_IMAGE, u32::MAX),
            ]
        );
    }
}
