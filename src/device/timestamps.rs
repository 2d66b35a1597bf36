//! Timestamp queries for GPU timing: per kiln queue, whether its family writes timestamps
//! (`timestampValidBits`, Vulkan spec §18.5 "Timestamp Queries") and a free list of reused
//! `VkQueryPool`s of [`QUERIES_PER_POOL`] timestamps each; the device's timestamp period;
//! and the calibrated clocks (`VK_KHR_calibrated_timestamps` / `VK_EXT_calibrated_timestamps`).
//!
//! **Reuse.** A recording that writes timestamps takes a [`QueryLease`] and grows it a pool
//! at a time ([`Shared::grow_lease`]: a pool from the queue's free list, or a new one),
//! each pool reset on the host (`vkResetQueryPool`, `hostQueryReset`) before it is handed
//! out: a new pool when created, a used one when its lease returns it to the free list
//! (so the recording that grows a lease resets nothing). The lease goes back to the free
//! list when dropped, which the submission layer does only once the GPU is done with the
//! queries (a submission's lease is dropped after its wait; a reusable recording's with the
//! last submission that shares it; a presented frame's when its slot's fence is waited,
//! `window/slot.rs`). Pools are never
//! destroyed before the device: at teardown every pool ever created is destroyed, so none
//! leaks however many submissions were timed.
//!
//! **Results** are read without `VK_QUERY_RESULT_WAIT_BIT` once the timeline says the
//! submission completed, so reading never stalls a queue; each value is masked to the
//! family's valid bits and differences are taken modulo that width.
//!
//! **Clocks.** With calibrated timestamps, [`Shared::gpu_clock`] reads the device clock
//! (`VK_TIME_DOMAIN_DEVICE`) between two `Instant::now()`s and pairs the reading with
//! their midpoint (the layer's `maxDeviation` bounds the device reading; the bracket bounds
//! the host side). Without the extension (`None`) the submission layer falls back to
//! pairing a submission's last GPU timestamp with the host time its wait saw it complete
//! (an upper bound: GPU events may then look later than they were, by the wait's latency).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ash::vk;

use super::instance::Instance;
use super::{Queue, Shared};
use crate::error::{vk_device_err, DeviceError, Result};

/// Timestamps per query pool.
pub(crate) const QUERIES_PER_POOL: u32 = 64;

type FreeList = Arc<Mutex<Vec<vk::QueryPool>>>;

/// The calibrated-timestamps functions of the extension enabled.
enum Calibration {
    Khr(ash::khr::calibrated_timestamps::Device),
    Ext(ash::ext::calibrated_timestamps::Device),
}

/// Per device: what each queue can time and the pools kept for reuse.
pub(crate) struct Timestamps {
    /// Per kiln queue: `timestampValidBits` of its family (0: no timestamps).
    valid_bits: Vec<u32>,
    /// Per kiln queue: pools that are reset-ready (no submission uses them).
    free: Vec<FreeList>,
    /// Every pool created, destroyed at teardown.
    all: Mutex<Vec<vk::QueryPool>>,
    /// Nanoseconds per timestamp tick (`timestampPeriod`).
    pub period_ns: f64,
    host_reset: bool,
    calibration: Option<Calibration>,
    /// Pools created so far (for tests: reuse keeps it flat).
    created: AtomicU32,
}

impl Timestamps {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        instance: &Instance,
        device: &ash::Device,
        physical: vk::PhysicalDevice,
        properties: &vk::PhysicalDeviceProperties,
        families: &[vk::QueueFamilyProperties],
        queues: &[Queue],
        host_reset: bool,
        calibrated: bool,
    ) -> Timestamps {
        let calibration = calibrated.then(|| {
            // SAFETY: plain query of the device's extensions.
            // The same choice as device creation (`features.rs`): EXT where present.
            let ext = unsafe { instance.raw.enumerate_device_extension_properties(physical) }
                .is_ok_and(|v| {
                    v.iter().any(|e| {
                        e.extension_name_as_c_str()
                            .is_ok_and(|n| n == ash::ext::calibrated_timestamps::NAME)
                    })
                });
            let _loader = super::loader::shared();
            if ext {
                Calibration::Ext(ash::ext::calibrated_timestamps::Device::new(
                    &instance.raw,
                    device,
                ))
            } else {
                Calibration::Khr(ash::khr::calibrated_timestamps::Device::new(
                    &instance.raw,
                    device,
                ))
            }
        });
        Timestamps {
            valid_bits: queues
                .iter()
                .map(|q| {
                    families
                        .get(q.family as usize)
                        .map_or(0, |f| f.timestamp_valid_bits)
                })
                .collect(),
            free: queues.iter().map(|_| FreeList::default()).collect(),
            all: Mutex::new(Vec::new()),
            period_ns: f64::from(properties.limits.timestamp_period),
            host_reset,
            calibration,
            created: AtomicU32::new(0),
        }
    }

    /// Destroys every pool; the device is idle and no lease is alive.
    pub(crate) fn destroy(&self, device: &ash::Device) {
        let mut all = self.all.lock().unwrap_or_else(|p| p.into_inner());
        for pool in all.drain(..) {
            // SAFETY: the device is idle (teardown) and no lease uses the pool.
            unsafe { device.destroy_query_pool(pool, None) };
        }
    }

    /// Mask of the valid bits of queue `queue`'s timestamps.
    pub(crate) fn mask(&self, queue: usize) -> u64 {
        match self.valid_bits.get(queue).copied().unwrap_or(0) {
            0 => 0,
            b if b >= 64 => u64::MAX,
            b => (1u64 << b) - 1,
        }
    }
}

/// Query pools lent to one recording (and the submissions of it): back to the queue's free
/// list when dropped. Query `i` is query `i % QUERIES_PER_POOL` of pool
/// `i / QUERIES_PER_POOL`.
pub(crate) struct QueryLease {
    pub pools: Vec<vk::QueryPool>,
    /// The kiln queue the pools are for.
    pub queue: usize,
    free: FreeList,
    /// The device and its `vkResetQueryPool`, to reset the pools when they go back to the
    /// free list (plain handles: the device outlives every lease, see `destroy`).
    device: vk::Device,
    reset: vk::PFN_vkResetQueryPool,
}

impl QueryLease {
    /// The pool and index of query `i` (`None` past the lease's pools).
    #[inline]
    pub(crate) fn query(&self, i: u32) -> Option<(vk::QueryPool, u32)> {
        self.pools
            .get((i / QUERIES_PER_POOL) as usize)
            .map(|p| (*p, i % QUERIES_PER_POOL))
    }
}

impl Drop for QueryLease {
    fn drop(&mut self) {
        for &pool in &self.pools {
            // SAFETY: `reset` is the device's vkResetQueryPool and the device is alive
            // (leases drop before it); hostQueryReset is enabled (`query_lease`); the GPU is
            // done with the lease's queries (the submission layer drops a lease only then,
            // and a lease never submitted was never used by the GPU), and the pool is this
            // lease's alone until it is on the free list.
            unsafe { (self.reset)(self.device, pool, 0, QUERIES_PER_POOL) };
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        free.append(&mut self.pools);
    }
}

impl Shared {
    /// An empty lease of queue `queue`'s pools.
    ///
    /// Errors: `KILN-E122` the queue's family writes no timestamps, or the device lacks
    /// `hostQueryReset`.
    pub(crate) fn query_lease(&self, queue: usize) -> Result<QueryLease, DeviceError> {
        let t = &self.timestamps;
        let unsupported = |what| DeviceError::TimestampsUnsupported {
            device: self.info.name.clone(),
            family: self.queues.get(queue).map_or(0, |q| q.family),
            what,
        };
        if t.mask(queue) == 0 {
            return Err(unsupported("its timestampValidBits is 0"));
        }
        if !t.host_reset {
            return Err(unsupported(
                "the device lacks hostQueryReset (Vulkan 1.2), which kiln's reused query pools need",
            ));
        }
        let free = t.free.get(queue).cloned().unwrap_or_default();
        Ok(QueryLease {
            pools: Vec::new(),
            queue,
            free,
            device: self.raw.handle(),
            reset: self.raw.fp_v1_2().reset_query_pool,
        })
    }

    /// Adds one reset pool to `lease` (a pool on the free list was reset when it went
    /// there). Errors: `KILN-E106`/`KILN-E104` creating a pool.
    pub(crate) fn grow_lease(&self, lease: &mut QueryLease) -> Result<(), DeviceError> {
        let reused = lease.free.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let pool = match reused {
            Some(p) => p,
            None => {
                let info = vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(QUERIES_PER_POOL);
                // SAFETY: a plain create on this device.
                let p = unsafe { self.raw.create_query_pool(&info, None) }
                    .map_err(vk_device_err("vkCreateQueryPool"))?;
                self.timestamps
                    .all
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(p);
                self.timestamps.created.fetch_add(1, Ordering::Relaxed);
                self.set_name(p, "kiln timestamps");
                // SAFETY: hostQueryReset is enabled (checked by `query_lease`); the pool is
                // new, used by no command buffer.
                unsafe { self.raw.reset_query_pool(p, 0, QUERIES_PER_POOL) };
                p
            }
        };
        lease.pools.push(pool);
        Ok(())
    }

    /// Resets every query of `lease` on the host (before a reusable recording is
    /// submitted again: its previous submission completed).
    pub(crate) fn reset_lease(&self, lease: &QueryLease) {
        for &pool in &lease.pools {
            // SAFETY: as in `grow_lease`: the lease's submissions completed.
            unsafe { self.raw.reset_query_pool(pool, 0, QUERIES_PER_POOL) };
        }
    }

    /// The first `count` timestamps of `lease`, masked to the valid bits, or `None` if one
    /// is not available yet (never waits).
    pub(crate) fn read_lease(
        &self,
        lease: &QueryLease,
        count: u32,
    ) -> Result<Option<Vec<u64>>, DeviceError> {
        let mask = self.timestamps.mask(lease.queue);
        let mut out = vec![0u64; count as usize];
        for (i, chunk) in out.chunks_mut(QUERIES_PER_POOL as usize).enumerate() {
            let Some(&pool) = lease.pools.get(i) else {
                return Ok(None);
            };
            // SAFETY: the queries were reset and written by a submission of this device;
            // `chunk` has room for `chunk.len()` 64-bit results.
            let r = unsafe {
                self.raw
                    .get_query_pool_results(pool, 0, chunk, vk::QueryResultFlags::TYPE_64)
            };
            match r {
                Ok(()) => {}
                Err(vk::Result::NOT_READY) => return Ok(None),
                Err(e) => {
                    return Err(self.note_device_error(vk_device_err("vkGetQueryPoolResults")(e)))
                }
            }
        }
        for v in &mut out {
            *v &= mask;
        }
        Ok(Some(out))
    }

    /// `(device ticks, host instant)` read together (calibrated timestamps), or `None`
    /// without the extension (see the module docs).
    pub(crate) fn gpu_clock(&self) -> Option<(u64, Instant)> {
        let info =
            [vk::CalibratedTimestampInfoKHR::default().time_domain(vk::TimeDomainKHR::DEVICE)];
        let before = Instant::now();
        // SAFETY: the extension is enabled; the device domain is always calibrateable.
        let r = unsafe {
            match self.timestamps.calibration.as_ref()? {
                Calibration::Khr(f) => f.get_calibrated_timestamps(&info),
                Calibration::Ext(f) => f.get_calibrated_timestamps(&info),
            }
        };
        let after = Instant::now();
        let (ticks, _deviation) = r.ok()?;
        let mid = before + (after - before) / 2;
        Some((ticks.first().copied()?, mid))
    }

    /// Query pools created so far (unstable, for tests).
    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn query_pools_created(&self) -> u32 {
        self.timestamps.created.load(Ordering::Relaxed)
    }
}
