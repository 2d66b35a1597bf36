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

use ash::vk;

use super::layout::DescriptorSetLayoutDesc;
use crate::device::{FaultSite, Shared};
use crate::error::{vk_err, Result};

/// Sets in the first pool of a layout.
pub(crate) const FIRST_SETS_PER_POOL: u32 = 16;
/// Upper bound on sets per pool as pools grow.
pub(crate) const MAX_SETS_PER_POOL: u32 = 4096;

pub(crate) struct DescriptorAllocator {
    sizes: Vec<vk::DescriptorPoolSize>,
    flags: vk::DescriptorPoolCreateFlags,
    pools: Vec<PoolEntry>,
    next_sets: u32,
    /// Freed sets kept for reuse: (set, pool index). Only when `recycle`.
    spare: Vec<(vk::DescriptorSet, usize)>,
    /// Every binding must be written before a set of this layout binds.
    recycle: bool,
    /// Inline uniform block bindings per set (their pool sizes count bytes).
    inline_bindings: u32,
}

struct PoolEntry {
    raw: vk::DescriptorPool,
    live: u32,
    full: bool,
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
            next_sets: FIRST_SETS_PER_POOL,
            spare: Vec::new(),
            recycle: bindings.iter().all(|b| !b.flags.intersects(partial)),
            inline_bindings: bindings
                .iter()
                .filter(|b| b.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK)
                .count() as u32,
        }
    }

    fn grow(&mut self, device: &ash::Device) -> Result<usize> {
        let sets = self.next_sets;
        let sizes: Vec<vk::DescriptorPoolSize> = self
            .sizes
            .iter()
            .map(|s| vk::DescriptorPoolSize {
                ty: s.ty,
                descriptor_count: s.descriptor_count.saturating_mul(sets).max(1),
            })
            .collect();
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
            .map_err(vk_err("vkCreateDescriptorPool"))?;
        self.pools.push(PoolEntry {
            raw,
            live: 0,
            full: false,
        });
        self.next_sets = (sets * 2).min(MAX_SETS_PER_POOL);
        Ok(self.pools.len() - 1)
    }

    /// Allocates one set; returns (set, pool index).
    pub(crate) fn allocate(
        &mut self,
        shared: &Shared,
        layout: vk::DescriptorSetLayout,
        variable_count: Option<u32>,
    ) -> Result<(vk::DescriptorSet, usize)> {
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
        // Newest pools first: they are the largest and least likely to be full.
        for i in (0..self.pools.len()).rev() {
            if self.pools[i].full {
                continue;
            }
            match try_pool(self.pools[i].raw) {
                Ok(v) => {
                    self.pools[i].live += 1;
                    return Ok((v[0], i));
                }
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {
                    self.pools[i].full = true;
                }
                Err(e) => return Err(vk_err("vkAllocateDescriptorSets")(e)),
            }
        }
        // A new pool; if even that one reports itself full (fragmentation, or a driver
        // whose pool sizes are approximate: VK_ERROR_OUT_OF_POOL_MEMORY is allowed for any
        // allocation, Vulkan spec §14.2.3), one more, twice as large.
        let mut last = vk::Result::ERROR_OUT_OF_POOL_MEMORY;
        for _ in 0..2 {
            let i = self.grow(device)?;
            match try_pool(self.pools[i].raw) {
                Ok(v) => {
                    self.pools[i].live += 1;
                    return Ok((v[0], i));
                }
                Err(
                    e @ (vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL),
                ) => {
                    self.pools[i].full = true;
                    last = e;
                }
                Err(e) => return Err(vk_err("vkAllocateDescriptorSets")(e)),
            }
        }
        Err(vk_err("vkAllocateDescriptorSets")(last))
    }

    /// Returns a set to its pool (or keeps it for reuse, see the module docs). No pending
    /// submission may use it.
    pub(crate) fn free(&mut self, device: &ash::Device, set: vk::DescriptorSet, pool: usize) {
        let Some(p) = self.pools.get_mut(pool) else {
            return;
        };
        if self.recycle {
            self.spare.push((set, pool));
            return;
        }
        // SAFETY: the set came from this pool (created with FREE_DESCRIPTOR_SET) and no
        // pending command buffer uses it (kiln's execute waits).
        let _ = unsafe { device.free_descriptor_sets(p.raw, &[set]) };
        p.live = p.live.saturating_sub(1);
        p.full = false;
    }

    pub(crate) fn destroy(&mut self, device: &ash::Device) {
        // Spare sets are freed with their pools.
        self.spare.clear();
        for p in self.pools.drain(..) {
            // SAFETY: called from the layout's Drop, when no set of these pools is alive.
            unsafe { device.destroy_descriptor_pool(p.raw, None) };
        }
    }
}
