//! Reusable staging memory for [`Buffer::upload`](crate::Buffer::upload) and
//! [`Buffer::read`](crate::Buffer::read) of memory the host cannot map.
//!
//! Each device keeps a small cache of mapped host-visible buffers, per direction: uploads
//! use `CpuToGpu` memory (gpu-allocator prefers DEVICE_LOCAL | HOST_VISIBLE, the BAR, then
//! plain host-coherent memory; on an H200 the BAR took a 256 MiB upload at 9.5 GB/s where
//! HOST_CACHED system memory gave 7.6), readbacks `GpuToCpu` memory (HOST_CACHED where the
//! device has it: reading uncached memory on the host is an order of magnitude slower). A transfer takes buffers out of the
//! cache for as long as the GPU may use them and puts them back once its copy has
//! completed, so two threads never share a staging buffer in flight. Creating a staging
//! buffer per call instead costs an allocation and first-touch page faults of a fresh
//! mapping every time, which dominated a repeated large transfer.
//!
//! A transfer of up to [`STAGING_CHUNK`] bytes goes through one staging buffer in one
//! copy. Larger ones go through two chunk-sized buffers in turn (the host fills or drains
//! one while the GPU copies the other), so the staging memory a transfer needs is bounded
//! whatever its size. The chunk is large on purpose: on an H200, splitting a 256 MiB
//! readback into 16–128 MiB chunks cost about 30% of its bandwidth (uploads 5–10%), serial
//! or overlapped alike, while one piece matched a hand-written raw-Vulkan copy. When
//! memory is short (kiln's heap budget or the driver refuses), the chunk halves down to
//! 1 MiB and a single buffer is used serially: the transfer slows down instead of failing.
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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::Allocation;
use gpu_allocator::MemoryLocation;

use super::submit::{self, Batch, RecordOptions};
use super::{ContextGuard, Contexts, Submission};
use crate::device::{allocate_bound, free_bound, LayerSlot, Queue, Shared};
use crate::error::{vk_err, Error, Result};

/// Transfers larger than this many bytes are split into chunks of this size, staged
/// through two buffers used in turn (see the module docs for why it is this large).
pub const STAGING_CHUNK: u64 = 256 << 20;
/// Smallest chunk when memory is short.
const MIN_CHUNK: u64 = 1 << 20;
/// Smallest staging buffer created (small transfers share one size class).
const MIN_STAGING: u64 = 64 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Upload,
    Readback,
}

impl Dir {
    fn location(self) -> MemoryLocation {
        match self {
            Dir::Upload => MemoryLocation::CpuToGpu,
            Dir::Readback => MemoryLocation::GpuToCpu,
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
    fn create(shared: &Shared, dir: Dir, size: u64) -> Result<StagingBuffer> {
        let usage = match dir {
            Dir::Upload => vk::BufferUsageFlags::TRANSFER_SRC,
            Dir::Readback => vk::BufferUsageFlags::TRANSFER_DST,
        };
        // Rounded to the non-coherent atom so flush/invalidate ranges stay inside the
        // allocation (VUID-VkMappedMemoryRange-size-01390) should the memory not be coherent.
        let atom = shared.limits().non_coherent_atom_size.max(1);
        let size = size.div_ceil(atom) * atom;
        let (raw, allocation, heap) =
            allocate_bound(shared, dir.label(), size, usage, dir.location(), atom)?;
        if allocation.mapped_ptr().is_none() {
            free_bound(shared, raw, allocation, heap, dir.label());
            return Err(Error::Vulkan {
                call: "vkMapMemory (staging memory is not host-visible)",
                result: vk::Result::ERROR_MEMORY_MAP_FAILED,
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

    fn coherent(&self) -> bool {
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
pub(crate) struct StagingCache {
    idle: Mutex<Vec<StagingBuffer>>,
    /// The chunk size ([`STAGING_CHUNK`]; tests lower it).
    chunk: AtomicU64,
    /// Tests and benchmarks: stage `GpuOnly` buffers even where their memory is mappable.
    force: AtomicBool,
}

impl Default for StagingCache {
    fn default() -> Self {
        StagingCache {
            idle: Mutex::default(),
            chunk: AtomicU64::new(STAGING_CHUNK),
            force: AtomicBool::new(false),
        }
    }
}

impl LayerSlot for StagingCache {
    fn teardown(&mut self, shared: &Shared) {
        // Idle on an idle device; leases cannot exist (each borrows a live device).
        self.trim(shared);
    }

    fn release_memory(&self, shared: &Shared) -> u64 {
        self.trim(shared)
    }
}

impl StagingCache {
    fn chunk(&self) -> u64 {
        self.chunk.load(Ordering::Relaxed)
    }

    pub(super) fn set_chunk(&self, bytes: u64) {
        self.chunk.store(bytes.max(MIN_STAGING), Ordering::Relaxed);
    }

    /// Whether `GpuOnly` buffers are staged even where the host maps their memory.
    pub(super) fn forced(&self) -> bool {
        self.force.load(Ordering::Relaxed)
    }

    pub(super) fn set_forced(&self, on: bool) {
        self.force.store(on, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<StagingBuffer>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The smallest idle buffer of `dir` holding at least `need` bytes, taken out.
    fn take(&self, dir: Dir, need: u64) -> Option<StagingBuffer> {
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

    /// Destroys every idle buffer; returns the bytes freed. Buffers in use by a transfer
    /// are not affected (they return to the cache, or are freed, when it ends).
    pub(super) fn trim(&self, shared: &Shared) -> u64 {
        let idle: Vec<StagingBuffer> = self.lock().drain(..).collect();
        let bytes = idle.iter().map(|b| b.size).sum();
        for b in idle {
            b.destroy(shared);
        }
        bytes
    }

    /// The idle buffers and their bytes.
    pub(super) fn usage(&self) -> StagingUsage {
        let idle = self.lock();
        StagingUsage {
            buffers: idle.len(),
            bytes: idle.iter().map(|b| b.size).sum(),
        }
    }
}

/// A staging buffer taken out of the cache. Dropped, it goes back to the cache, unless a
/// submission that may still use it was not waited for: then it is destroyed once every
/// submission made so far has finished (deferred destruction).
struct Lease<'s> {
    shared: &'s Shared,
    cache: &'s StagingCache,
    buf: Option<StagingBuffer>,
    /// A submission using the buffer was made and not (successfully) waited for.
    busy: bool,
}

impl<'s> Lease<'s> {
    fn new(shared: &'s Shared, cache: &'s StagingCache, dir: Dir, need: u64) -> Result<Self> {
        let buf = match cache.take(dir, need) {
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
                StagingBuffer::create(shared, dir, size)?
            }
        };
        Ok(Lease {
            shared,
            cache,
            buf: Some(buf),
            busy: false,
        })
    }

    fn buf(&self) -> Result<&StagingBuffer> {
        self.buf.as_ref().ok_or(LEASE_EMPTY)
    }

    /// Copies `data` to the start of the mapping (and flushes it if not host-coherent).
    fn write(&mut self, data: &[u8]) -> Result<()> {
        let buf = self.buf.as_mut().ok_or(LEASE_EMPTY)?;
        let dst = buf
            .allocation
            .mapped_slice_mut()
            .and_then(|m| m.get_mut(..data.len()))
            .ok_or(LEASE_EMPTY)?;
        dst.copy_from_slice(data);
        if !buf.coherent() {
            let range = buf.range(data.len() as u64, self.shared);
            // SAFETY: the range lies inside this buffer's mapped allocation (sizes rounded
            // to the atom at creation); no GPU access is pending (the lease is not busy).
            unsafe { self.shared.raw.flush_mapped_memory_ranges(&[range]) }
                .map_err(vk_err("vkFlushMappedMemoryRanges"))?;
        }
        Ok(())
    }

    /// Copies the start of the mapping into `out` (invalidating it first if the memory is
    /// not host-coherent). The copy that filled it must have been waited for.
    fn read(&self, out: &mut [u8]) -> Result<()> {
        let buf = self.buf()?;
        if !buf.coherent() {
            let range = buf.range(out.len() as u64, self.shared);
            // SAFETY: as in `write`; the submission that wrote the range has completed and
            // its final barrier made the writes available to the host.
            unsafe { self.shared.raw.invalidate_mapped_memory_ranges(&[range]) }
                .map_err(vk_err("vkInvalidateMappedMemoryRanges"))?;
        }
        let src = buf
            .allocation
            .mapped_slice()
            .and_then(|m| m.get(..out.len()))
            .ok_or(LEASE_EMPTY)?;
        out.copy_from_slice(src);
        Ok(())
    }
}

const LEASE_EMPTY: Error = Error::Vulkan {
    call: "kiln staging (mapping smaller than the transfer)",
    result: vk::Result::ERROR_UNKNOWN,
};

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let Some(buf) = self.buf.take() else { return };
        if self.busy {
            self.shared.retire(move |s| buf.destroy(s));
        } else {
            self.cache.put(self.shared, buf);
        }
    }
}

/// One chunk's copy between a staging buffer and `buffer`, submitted (not waited for).
fn submit_copy(
    shared: &Arc<Shared>,
    lease: &mut Lease<'_>,
    buffer: vk::Buffer,
    buffer_offset: u64,
    len: u64,
) -> Result<Submission> {
    let staging = lease.buf()?.raw;
    let (src, dst, label) = match lease.buf()?.dir {
        Dir::Upload => (staging, buffer, "kiln staged upload"),
        Dir::Readback => (buffer, staging, "kiln staged readback"),
    };
    let region = match lease.buf()?.dir {
        Dir::Upload => vk::BufferCopy {
            src_offset: 0,
            dst_offset: buffer_offset,
            size: len,
        },
        Dir::Readback => vk::BufferCopy {
            src_offset: buffer_offset,
            dst_offset: 0,
            size: len,
        },
    };
    let queue = Queue::MAIN;
    let ctx = ContextGuard::new(shared.slot::<Contexts>()?, shared, queue)?;
    let raw = &shared.raw;
    let ((), work) = submit::record(shared, ctx.cb(), RecordOptions::ONE_TIME, |r| {
        // SAFETY: the command buffer is recording. Both buffers belong to this device and
        // have TRANSFER usage; the caller checked the range against the kiln buffer and the
        // staging buffer holds at least `len` bytes. The submission's wait on the previous
        // timeline value orders the copy after earlier submissions, its closing barrier
        // makes the writes visible to the host. The kiln buffer is borrowed by the caller
        // until the submission is waited for (or retired after it), the staging buffer is
        // held by a busy lease.
        unsafe { raw.cmd_copy_buffer(r.raw(), src, dst, &[region]) };
        Ok(())
    })?;
    let value = submit::submit(shared, queue, &Batch::commands(label, ctx.cb()), &work)?;
    ctx.submitted(value);
    lease.busy = true;
    Ok(Submission::new(shared.clone(), queue, value))
}

type Slot<'s> = (Lease<'s>, Option<Submission>);

/// Waits for a slot's pending copy, if any; the lease is idle afterwards.
fn settle(slot: &mut Slot<'_>) -> Result<()> {
    if let Some(sub) = slot.1.take() {
        sub.wait()?;
    }
    slot.0.busy = false;
    Ok(())
}

fn out_of_memory(e: &Error) -> bool {
    matches!(
        e,
        Error::HeapExhausted { .. } | Error::Allocation { .. } | Error::OutOfMemory { .. }
    )
}

/// Staging buffers for a transfer of `len` bytes, and the chunk size: one buffer when `len`
/// fits in a chunk, else two used in turn. Short of memory, the chunk halves (down to
/// [`MIN_CHUNK`]) and one buffer is used serially.
fn slots_for<'s>(
    s: &'s Shared,
    cache: &'s StagingCache,
    dir: Dir,
    len: u64,
) -> Result<(Vec<Slot<'s>>, usize)> {
    let mut chunk = len.min(cache.chunk());
    let first = loop {
        match Lease::new(s, cache, dir, chunk) {
            Ok(l) => break l,
            Err(e) if out_of_memory(&e) && chunk > MIN_CHUNK => {
                chunk = (chunk / 2).max(MIN_CHUNK);
            }
            Err(e) => return Err(e),
        }
    };
    let mut slots = vec![(first, None)];
    if len > chunk {
        match Lease::new(s, cache, dir, chunk) {
            Ok(l) => slots.push((l, None)),
            Err(e) if out_of_memory(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((slots, chunk as usize))
}

/// Copies `data` into `dst` at `offset` through staging memory and waits for the copies.
/// The caller checked the range. Earlier submissions are ordered before the copies by
/// their submissions' wait on the previous timeline value: nothing to wait for first.
pub(crate) fn staged_upload(
    shared: &Arc<Shared>,
    dst: vk::Buffer,
    offset: u64,
    data: &[u8],
) -> Result<()> {
    let cache = shared.slot::<StagingCache>()?;
    let (mut slots, chunk) = slots_for(shared, cache, Dir::Upload, data.len() as u64)?;
    let k = slots.len();
    for (i, part) in data.chunks(chunk).enumerate() {
        let slot = &mut slots[i % k];
        // The copy `k` chunks back used this buffer: wait before overwriting it.
        settle(slot)?;
        slot.0.write(part)?;
        let at = offset + (i * chunk) as u64;
        slot.1 = Some(submit_copy(
            shared,
            &mut slot.0,
            dst,
            at,
            part.len() as u64,
        )?);
    }
    for slot in &mut slots {
        settle(slot)?;
    }
    Ok(())
}

/// Copies `out.len()` bytes of `src` from `offset` into `out` through staging memory. The
/// caller checked the range. The copies come after every earlier submission in queue order
/// (timeline wait), so they read what those wrote.
pub(crate) fn staged_readback(
    shared: &Arc<Shared>,
    src: vk::Buffer,
    offset: u64,
    out: &mut [u8],
) -> Result<()> {
    let cache = shared.slot::<StagingCache>()?;
    let total = out.len();
    let (mut slots, chunk) = slots_for(shared, cache, Dir::Readback, total as u64)?;
    let k = slots.len();
    let n = total.div_ceil(chunk);
    let len_of = |i: usize| (total - i * chunk).min(chunk) as u64;
    let at = |i: usize| offset + (i * chunk) as u64;
    // Up to `k` copies in flight: the GPU fills one buffer while the host drains another.
    for (i, slot) in slots.iter_mut().enumerate().take(n) {
        slot.1 = Some(submit_copy(shared, &mut slot.0, src, at(i), len_of(i))?);
    }
    for (i, part) in out.chunks_mut(chunk).enumerate() {
        let slot = &mut slots[i % k];
        settle(slot)?;
        slot.0.read(part)?;
        if i + k < n {
            slot.1 = Some(submit_copy(
                shared,
                &mut slot.0,
                src,
                at(i + k),
                len_of(i + k),
            )?);
        }
    }
    Ok(())
}
