//! Reusable staging memory for transfers between host slices and memory the host cannot
//! map ([`Buffer::upload`](crate::Buffer::upload), [`Buffer::read`](crate::Buffer::read),
//! [`Queue::upload`](crate::Queue::upload), [`Queue::read_into`](crate::Queue::read_into)).
//!
//! Each device keeps a small cache of mapped host-visible buffers, per direction. Both use
//! `GpuToCpu` memory by default (host-coherent system memory, HOST_CACHED where the device
//! has it): the DMA engines read and write it at bus speed (a PCIe 5 GPU's copy into such a
//! buffer runs near the link's rate), and the host fills and drains it with several threads
//! (`chunks`). Uploads can use `CpuToGpu` memory instead (gpu-allocator prefers
//! DEVICE_LOCAL | HOST_VISIBLE, the BAR, where the host's writes cross the bus themselves;
//! `Device::debug_set_upload_staging_bar`, for the benchmark's comparison).
//!
//! A transfer takes buffers out of the cache for as long as the GPU may use them. A lease
//! dropped while its last copy is still running puts the buffer on the cache's *pending*
//! list with that copy's queue and timeline value; the next `take` moves completed ones
//! back to idle, so two transfers never share a staging buffer in flight and a transfer
//! that returns before its copies finish (an asynchronous one) leaves nothing behind.
//! Creating a staging buffer per call instead costs an allocation and first-touch page
//! faults of a fresh mapping every time, which dominated a repeated large transfer.
//!
//! A transfer of up to the chunk size ([`STAGING_CHUNK`] by default) goes through one
//! staging buffer; larger ones through two chunk-sized buffers in turn (the host fills or
//! drains one while the GPU copies the other), so the staging memory a transfer needs is
//! bounded whatever its size. When memory is short (kiln's heap budget or the driver
//! refuses), the chunk halves down to 1 MiB and a single buffer is used serially: the
//! transfer slows down instead of failing.
//!
//! The cache keeps at most two chunks' worth of idle bytes per direction (the largest
//! buffers); [`Device::release_staging_memory`](crate::Device::release_staging_memory)
//! frees it all, and a buffer allocation that fails for lack of memory frees it and retries
//! once (the slot's `release_memory` hook).
//!
//! The cache is a layer slot of the device (see `device::slots`), so it holds raw handles
//! and gpu-allocator allocations (never a [`Buffer`](crate::Buffer), which would keep the
//! device alive: a reference cycle). It is destroyed in the device teardown, after the
//! device is idle and before the allocator and the `VkDevice`.

#[cfg(feature = "unstable-hooks")]
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::Allocation;
use gpu_allocator::MemoryLocation;

use crate::device::{allocate_bound, free_bound, LayerSlot, Shared};
use crate::error::{vk_err, Error, Result};

/// Transfers larger than this many bytes are split into chunks of this size, staged
/// through two buffers used in turn: the host fills (or drains) one chunk while the DMA
/// engine copies the other, so a transfer takes about the longer of the two instead of
/// their sum. `chunks` measures the choice (`kiln bench`'s chunk sweep).
pub const STAGING_CHUNK: u64 = 32 << 20;
/// Smallest chunk when memory is short.
pub(super) const MIN_CHUNK: u64 = 1 << 20;
/// Smallest staging buffer created (small transfers share one size class).
const MIN_STAGING: u64 = 64 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Upload,
    Readback,
}

impl Dir {
    fn location(self, bar: bool) -> MemoryLocation {
        match self {
            Dir::Upload if bar => MemoryLocation::CpuToGpu,
            _ => MemoryLocation::GpuToCpu,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Dir::Upload => "kiln staging upload",
            Dir::Readback => "kiln staging readback",
        }
    }
}

/// A mapped host-visible buffer owned by the cache or by a [`Lease`].
pub(crate) struct StagingBuffer {
    raw: vk::Buffer,
    allocation: Allocation,
    heap: (usize, u64),
    size: u64,
    dir: Dir,
}

impl StagingBuffer {
    fn create(shared: &Shared, dir: Dir, size: u64, bar: bool) -> Result<StagingBuffer> {
        let usage = match dir {
            Dir::Upload => vk::BufferUsageFlags::TRANSFER_SRC,
            Dir::Readback => vk::BufferUsageFlags::TRANSFER_DST,
        };
        // Rounded to the non-coherent atom so flush/invalidate ranges stay inside the
        // allocation (VUID-VkMappedMemoryRange-size-01390) should the memory not be coherent.
        let atom = shared.limits().non_coherent_atom_size.max(1);
        let size = size.div_ceil(atom) * atom;
        let (raw, allocation, heap) =
            allocate_bound(shared, dir.label(), size, usage, dir.location(bar), atom)?;
        if allocation.mapped_ptr().is_none() {
            free_bound(shared, raw, allocation, heap, dir.label());
            return Err(Error::Internal {
                what: "staging memory came back from the allocator unmapped",
            });
        }
        Ok(StagingBuffer {
            raw,
            allocation,
            heap,
            size,
            dir,
        })
    }

    /// Destroys the buffer and frees its memory; no submission may still use it.
    fn destroy(self, shared: &Shared) {
        free_bound(
            shared,
            self.raw,
            self.allocation,
            self.heap,
            self.dir.label(),
        );
    }

    pub(super) fn raw(&self) -> vk::Buffer {
        self.raw
    }

    pub(super) fn coherent(&self) -> bool {
        self.allocation
            .memory_properties()
            .contains(vk::MemoryPropertyFlags::HOST_COHERENT)
    }

    fn range(&self, len: u64, shared: &Shared) -> vk::MappedMemoryRange<'static> {
        let atom = shared.limits().non_coherent_atom_size.max(1);
        // SAFETY: the memory handle is only named in the range, not used beyond it.
        let memory = unsafe { self.allocation.memory() };
        vk::MappedMemoryRange::default()
            .memory(memory)
            .offset(self.allocation.offset())
            .size((len.div_ceil(atom) * atom).min(self.size))
    }
}

/// What [`Device::staging_usage`](crate::Device::staging_usage) returns: the idle staging
/// buffers a device holds for reuse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StagingUsage {
    /// Idle staging buffers.
    pub buffers: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// Idle staging buffers of one device (a layer slot).
///
/// The chunk size, the host threads, forced staging and BAR staging are the tests' and the
/// bench's knobs: with feature `unstable-hooks` they are atomics that the hidden
/// `Device::debug_*` hooks change, else plain values fixed at device creation.
pub(crate) struct StagingCache {
    idle: Mutex<Vec<StagingBuffer>>,
    /// Buffers whose last copy `(queue, value)` may still run.
    pending: Mutex<Vec<(usize, u64, StagingBuffer)>>,
    /// Host threads that copy into and out of staging memory (`chunks::threads`).
    #[cfg(not(feature = "unstable-hooks"))]
    threads: usize,
    #[cfg(feature = "unstable-hooks")]
    knobs: Knobs,
}

/// The knobs the hooks change (feature `unstable-hooks`).
#[cfg(feature = "unstable-hooks")]
struct Knobs {
    /// The chunk size ([`STAGING_CHUNK`]; tests lower it).
    chunk: std::sync::atomic::AtomicU64,
    /// Stage `GpuOnly` buffers even where their memory is mappable.
    force: std::sync::atomic::AtomicBool,
    /// Upload staging in `CpuToGpu` memory (the BAR) instead of system memory.
    bar: std::sync::atomic::AtomicBool,
    /// Host threads that copy into and out of staging memory (`chunks::threads`).
    threads: std::sync::atomic::AtomicUsize,
}

impl Default for StagingCache {
    fn default() -> Self {
        StagingCache {
            idle: Mutex::default(),
            pending: Mutex::default(),
            #[cfg(not(feature = "unstable-hooks"))]
            threads: super::chunks::default_threads(),
            #[cfg(feature = "unstable-hooks")]
            knobs: Knobs {
                chunk: STAGING_CHUNK.into(),
                force: false.into(),
                bar: false.into(),
                threads: super::chunks::default_threads().into(),
            },
        }
    }
}

impl LayerSlot for StagingCache {
    fn teardown(&mut self, shared: &Shared) {
        // The device is idle: every pending copy completed. Leases cannot exist (each
        // holds the device).
        let pending: Vec<_> = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .collect();
        for (_, _, b) in pending {
            b.destroy(shared);
        }
        self.trim(shared);
    }

    fn release_memory(&self, shared: &Shared) -> u64 {
        self.trim(shared)
    }
}

impl StagingCache {
    /// The chunk size: [`STAGING_CHUNK`] unless a hook changed it.
    pub(super) fn chunk(&self) -> u64 {
        #[cfg(feature = "unstable-hooks")]
        return self.knobs.chunk.load(Ordering::Relaxed);
        #[cfg(not(feature = "unstable-hooks"))]
        STAGING_CHUNK
    }

    pub(super) fn threads(&self) -> usize {
        #[cfg(feature = "unstable-hooks")]
        return self.knobs.threads.load(Ordering::Relaxed);
        #[cfg(not(feature = "unstable-hooks"))]
        self.threads
    }

    /// Whether upload staging takes `CpuToGpu` memory (the BAR): only when a hook says so.
    fn bar(&self) -> bool {
        #[cfg(feature = "unstable-hooks")]
        return self.knobs.bar.load(Ordering::Relaxed);
        #[cfg(not(feature = "unstable-hooks"))]
        false
    }

    /// Sets the host threads per transfer (0: the default).
    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn set_threads(&self, n: usize) {
        let n = if n == 0 {
            super::chunks::default_threads()
        } else {
            n.min(64)
        };
        self.knobs.threads.store(n, Ordering::Relaxed);
    }

    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn set_bar(&self, on: bool) {
        self.knobs.bar.store(on, Ordering::Relaxed);
    }

    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn set_chunk(&self, bytes: u64) {
        self.knobs
            .chunk
            .store(bytes.max(MIN_STAGING), Ordering::Relaxed);
    }

    /// Whether `GpuOnly` buffers are staged even where the host maps their memory: only
    /// when a hook says so.
    pub(super) fn forced(&self) -> bool {
        #[cfg(feature = "unstable-hooks")]
        return self.knobs.force.load(Ordering::Relaxed);
        #[cfg(not(feature = "unstable-hooks"))]
        false
    }

    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn set_forced(&self, on: bool) {
        self.knobs.force.store(on, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<StagingBuffer>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The smallest idle buffer of `dir` holding at least `need` bytes, taken out (after
    /// moving the pending buffers whose copies completed to idle).
    fn take(&self, shared: &Shared, dir: Dir, need: u64) -> Option<StagingBuffer> {
        self.settle(shared);
        let mut idle = self.lock();
        let best = idle
            .iter()
            .enumerate()
            .filter(|(_, b)| b.dir == dir && b.size >= need)
            .min_by_key(|(_, b)| b.size)
            .map(|(i, _)| i)?;
        Some(idle.swap_remove(best))
    }

    /// Puts an idle buffer back; evicts the smallest of its direction while the direction
    /// holds more than two chunks' worth of bytes.
    fn put(&self, shared: &Shared, buf: StagingBuffer) {
        let dir = buf.dir;
        let cap = 2 * self.chunk();
        let mut evicted = Vec::new();
        {
            let mut idle = self.lock();
            idle.push(buf);
            loop {
                let held: u64 = idle.iter().filter(|b| b.dir == dir).map(|b| b.size).sum();
                if held <= cap {
                    break;
                }
                let smallest = idle
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.dir == dir)
                    .min_by_key(|(_, b)| b.size)
                    .map(|(i, _)| i);
                match smallest {
                    Some(i) => evicted.push(idle.swap_remove(i)),
                    None => break,
                }
            }
        }
        for b in evicted {
            b.destroy(shared);
        }
    }

    /// Puts a buffer whose last copy is value `value` of queue `queue` on the pending list.
    fn put_pending(&self, shared: &Shared, queue: usize, value: u64, buf: StagingBuffer) {
        if value <= shared.completed_value(queue) {
            self.put(shared, buf);
            return;
        }
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((queue, value, buf));
    }

    /// Moves pending buffers whose copies completed to idle.
    fn settle(&self, shared: &Shared) {
        let done: Vec<StagingBuffer> = {
            let mut p = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            if p.is_empty() {
                return;
            }
            let (done, keep): (Vec<_>, Vec<_>) = p
                .drain(..)
                .partition(|(q, v, _)| *v <= shared.completed_value(*q));
            *p = keep;
            done.into_iter().map(|(_, _, b)| b).collect()
        };
        for b in done {
            self.put(shared, b);
        }
    }

    /// Destroys every idle buffer (and pending one whose copy completed); returns the bytes
    /// freed. Buffers in use by a transfer are not affected (they return to the cache when
    /// it ends).
    pub(crate) fn trim(&self, shared: &Shared) -> u64 {
        self.settle(shared);
        let idle: Vec<StagingBuffer> = self.lock().drain(..).collect();
        let bytes = idle.iter().map(|b| b.size).sum();
        for b in idle {
            b.destroy(shared);
        }
        bytes
    }

    /// The idle buffers and their bytes (pending ones whose copies completed count as idle).
    pub(crate) fn usage(&self, shared: &Shared) -> StagingUsage {
        self.settle(shared);
        let idle = self.lock();
        StagingUsage {
            buffers: idle.len(),
            bytes: idle.iter().map(|b| b.size).sum(),
        }
    }
}

/// A staging buffer taken out of the cache. Dropped, it goes back to the cache: idle, or
/// pending until the last copy that uses it completes ([`busy`](Self::busy)).
pub(super) struct Lease {
    shared: Arc<Shared>,
    buf: Option<StagingBuffer>,
    /// `(queue, value)` of the last copy submitted with the buffer (0: none).
    busy: (usize, u64),
}

impl Lease {
    /// A buffer of `dir` of at least `need` bytes (at most the chunk size when `need` is).
    pub(super) fn new(shared: &Arc<Shared>, dir: Dir, need: u64) -> Result<Self> {
        let cache = shared.slot::<StagingCache>()?;
        let buf = match cache.take(shared, dir, need) {
            Some(b) => b,
            None => {
                // Power-of-two size classes (reuse across sizes), at most the chunk.
                let chunk = cache.chunk();
                let size = need.max(MIN_STAGING).next_power_of_two();
                let size = if size > chunk && need <= chunk {
                    chunk
                } else {
                    size.max(need)
                };
                let bar = cache.bar();
                StagingBuffer::create(shared, dir, size, bar)?
            }
        };
        Ok(Lease {
            shared: shared.clone(),
            buf: Some(buf),
            busy: (0, 0),
        })
    }

    pub(super) fn buf(&self) -> Result<&StagingBuffer> {
        self.buf.as_ref().ok_or(LEASE_EMPTY)
    }

    /// Records that copy `value` of queue `queue` uses the buffer.
    pub(super) fn busy(&mut self, queue: usize, value: u64) {
        self.busy = (queue, value);
    }

    /// The last copy that used the buffer, `(queue, value)` (value 0: none).
    pub(super) fn last_copy(&self) -> (usize, u64) {
        self.busy
    }

    /// The start of the mapping, for the copies of `chunks` (at least `len` bytes).
    pub(super) fn mapped(&mut self, len: usize) -> Result<*mut u8> {
        let buf = self.buf.as_mut().ok_or(LEASE_EMPTY)?;
        let m = buf.allocation.mapped_slice_mut().ok_or(LEASE_EMPTY)?;
        if m.len() < len {
            return Err(LEASE_EMPTY);
        }
        Ok(m.as_mut_ptr())
    }

    /// Makes host writes of the first `len` bytes visible to the device (non-coherent
    /// memory only).
    pub(super) fn flush(&self, len: u64) -> Result<()> {
        let buf = self.buf()?;
        if !buf.coherent() {
            let range = buf.range(len, &self.shared);
            // SAFETY: the range lies inside this buffer's mapped allocation (sizes rounded
            // to the atom at creation); no GPU access to it is pending (its last copy was
            // waited for before the host wrote it).
            unsafe { self.shared.raw.flush_mapped_memory_ranges(&[range]) }
                .map_err(vk_err("vkFlushMappedMemoryRanges"))?;
        }
        Ok(())
    }

    /// Makes device writes of the first `len` bytes visible to the host (non-coherent
    /// memory only). The copy that wrote them must have been waited for.
    pub(super) fn invalidate(&self, len: u64) -> Result<()> {
        let buf = self.buf()?;
        if !buf.coherent() {
            let range = buf.range(len, &self.shared);
            // SAFETY: as in `flush`; the submission that wrote the range has completed and
            // its final barrier made the writes available to the host.
            unsafe { self.shared.raw.invalidate_mapped_memory_ranges(&[range]) }
                .map_err(vk_err("vkInvalidateMappedMemoryRanges"))?;
        }
        Ok(())
    }
}

const LEASE_EMPTY: Error = Error::Internal {
    what: "a staging lease's mapping is smaller than its transfer",
};

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(buf) = self.buf.take() else { return };
        let Ok(cache) = self.shared.slot::<StagingCache>() else {
            // No cache (cannot happen on a device made by `Device::with_desc`): destroyed
            // once every submission made so far has finished.
            self.shared.retire(move |s| buf.destroy(s));
            return;
        };
        let (queue, value) = self.busy;
        cache.put_pending(&self.shared, queue, value, buf);
    }
}
