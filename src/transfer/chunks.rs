//! Staged transfers between host slices and device buffers, at the speed of the bus rather
//! than of one thread's memcpy.
//!
//! A transfer of `len` bytes is split into chunks of the staging chunk size (`STAGING_CHUNK`
//! by default), staged through up to two staging buffers used in turn (`staging`): while
//! the DMA engine copies chunk `i` between one staging buffer and the device buffer, the
//! host fills (upload) or drains (readback) the other with chunk `i ± 1`. Each chunk's host
//! copy is split into stripes of [`STRIPE`] bytes that up to [`threads`] threads take in
//! order (the calling thread and `threads - 1` scoped threads, spawned once per transfer):
//! one thread's memcpy reaches 8–10 GB/s on a server host, a PCIe 5 x16 link carries about
//! 55: it takes several threads to keep the link busy. Every chunk's copy is one submission on the transfer's queue; the last thread to
//! finish a chunk's stripes submits it (upload) or the next chunk's copy into the buffer it
//! freed (readback). A thread that needs a staging buffer the GPU still copies from waits
//! for that copy's timeline value.
//!
//! **Bounds.** Staging memory is at most two chunks per transfer; short of memory the chunk
//! halves down to 1 MiB and one buffer is used (`slots_for`): the transfer slows down, it
//! does not fail. The host threads need no memory of their own.
//!
//! **Ordering.** The copies stamp the device buffer (written by an upload, read by a
//! readback), so later submissions on other queues that use it wait for them; the first
//! copy waits for the buffer's pending uses on other queues (`queue::submit`). The blocking
//! calls (`Buffer::upload`, `Buffer::read_into`) also make the first copy wait for every
//! submission made so far on every queue (`Batch::after_all`), as they promise.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use ash::vk;

use super::staging::{Dir, Lease, StagingCache, MIN_CHUNK};
use crate::device::{Buffer, ResourceStamps, Shared};
use crate::error::{Error, Result};
use crate::queue::record_and_submit;
use crate::queue::submit::{Batch, RecordOptions};

/// Bytes one thread copies at a time.
pub(super) const STRIPE: usize = 2 << 20;
/// Copies smaller than this run on the calling thread alone.
const PARALLEL_MIN: usize = 4 << 20;
/// The most host threads of one transfer.
const MAX_THREADS: usize = 16;

/// Host threads per transfer by default: `KILN_TRANSFER_THREADS`, else the machine's
/// parallelism up to 8 (a host's memory bandwidth saturates before that).
pub(super) fn default_threads() -> usize {
    static ENV: OnceLock<Option<usize>> = OnceLock::new();
    let env = ENV.get_or_init(|| {
        std::env::var("KILN_TRANSFER_THREADS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
    });
    env.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8)
    })
    .clamp(1, MAX_THREADS)
}

/// The device's host threads per transfer.
pub(super) fn threads(shared: &Shared) -> usize {
    shared.slot::<StagingCache>().map_or(1, |c| c.threads())
}

/// Copies `src` into `dst` (equal lengths) with up to `threads` threads, each a contiguous
/// part; small copies on the calling thread.
pub(crate) fn parallel_copy(dst: &mut [u8], src: &[u8], threads: usize) {
    let n = threads.min(src.len() / (PARALLEL_MIN / 2)).max(1);
    if n == 1 || dst.len() != src.len() {
        dst.copy_from_slice(src);
        return;
    }
    let part = src.len().div_ceil(n);
    std::thread::scope(|s| {
        let mut parts = dst.chunks_mut(part).zip(src.chunks(part));
        let first = parts.next();
        for (d, c) in parts {
            s.spawn(move || d.copy_from_slice(c));
        }
        if let Some((d, c)) = first {
            d.copy_from_slice(c);
        }
    });
}

/// Submits one copy `region` from `src` to `dst` on queue `queue` (not waited for): kiln's
/// own copies (staging, host buffers) are raw commands, so their `uses` are given;
/// `siblings` are the parts of the same split copy submitted before (`Batch::siblings`).
/// Returns the timeline value.
pub(super) fn submit_raw_copy(
    shared: &Arc<Shared>,
    queue: usize,
    label: &str,
    (src, dst, region): (vk::Buffer, vk::Buffer, vk::BufferCopy),
    uses: &[(&ResourceStamps, bool)],
    after_all: bool,
    siblings: &[(usize, u64)],
) -> Result<u64> {
    let raw = &shared.raw;
    // Not timed: the work (and the queries it would hold) is dropped once submitted.
    let options = RecordOptions {
        timed: false,
        ..RecordOptions::ONE_TIME
    };
    let batch = Batch {
        uses,
        after_all,
        siblings,
        ..Batch::commands(label, vk::CommandBuffer::null())
    };
    let ((), value, _work) = record_and_submit(shared, queue, options, batch, None, |r| {
        // SAFETY: the command buffer is recording. Both buffers belong to this device and
        // have TRANSFER usage; the callers checked the region against both. The submission
        // waits for the queue's previous value and for the other queues' pending uses of
        // `uses`; its closing barrier makes the writes visible to the host. Both buffers
        // outlive the copy: callers hold them until the submission completes (a kiln
        // buffer by a clone or borrow, a staging buffer by a lease, a host buffer by its
        // stamps, which its destruction waits for).
        unsafe { raw.cmd_copy_buffer(r.command_buffer(), src, dst, &[region]) };
        Ok(())
    })?;
    Ok(value)
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
fn slots_for(shared: &Arc<Shared>, dir: Dir, len: u64) -> Result<(Vec<Lease>, usize)> {
    let cache = shared.slot::<StagingCache>()?;
    let mut chunk = len.min(cache.chunk());
    let first = loop {
        match Lease::new(shared, dir, chunk) {
            Ok(l) => break l,
            Err(e) if out_of_memory(&e) && chunk > MIN_CHUNK => {
                chunk = (chunk / 2).max(MIN_CHUNK);
            }
            Err(e) => return Err(e),
        }
    };
    let mut slots = vec![first];
    if len > chunk {
        match Lease::new(shared, dir, chunk) {
            Ok(l) => slots.push(l),
            Err(e) if out_of_memory(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((slots, chunk as usize))
}

/// A pointer that worker threads share; each writes only its own disjoint range.
#[derive(Clone, Copy)]
struct SendPtr(*mut u8);
// SAFETY: the pointer is only dereferenced for ranges one thread owns at a time (stripes
// are disjoint and taken once each), while the memory it points to is alive (the leases
// and the caller's slice outlive the scoped threads).
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

/// Per chunk: stripes finished, the copy's timeline value (0: not submitted yet), whether
/// the copy is known complete and whether a thread is waiting for it.
struct State {
    done: Vec<usize>,
    submitted: Vec<u64>,
    complete: Vec<bool>,
    waiting: Vec<bool>,
    failed: Option<Error>,
}

/// A staged transfer split into chunks and stripes (see the module docs).
struct Plan<'x> {
    shared: &'x Arc<Shared>,
    queue: usize,
    dir: Dir,
    /// The device buffer and the byte offset in it.
    buffer: &'x Buffer,
    offset: u64,
    total: usize,
    chunk: usize,
    /// Chunks, stripes per chunk.
    n: usize,
    stripes: usize,
    leases: &'x [Lease],
    /// The start of each lease's mapping.
    bases: Vec<SendPtr>,
    /// The caller's bytes (the source of an upload, the destination of a readback).
    host: SendPtr,
    /// The first copy submitted waits for every submission made so far (blocking calls):
    /// cleared by that copy (chunks may be submitted out of order; each later copy waits
    /// for the queue's earlier values, so for the first one's waits too).
    after_all: AtomicBool,
    next: AtomicUsize,
    state: Mutex<State>,
    cond: Condvar,
}

impl<'x> Plan<'x> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        shared: &'x Arc<Shared>,
        queue: usize,
        dir: Dir,
        (buffer, offset): (&'x Buffer, u64),
        host: *mut u8,
        total: usize,
        (leases, chunk): (&'x mut [Lease], usize),
        after_all: bool,
    ) -> Result<Plan<'x>> {
        let n = total.div_ceil(chunk);
        let stripes = chunk.div_ceil(STRIPE);
        let mut bases = Vec::with_capacity(leases.len());
        for l in leases.iter_mut() {
            bases.push(SendPtr(l.mapped(chunk.min(total))?));
        }
        Ok(Plan {
            shared,
            queue,
            dir,
            buffer,
            offset,
            total,
            chunk,
            n,
            stripes,
            leases,
            bases,
            host: SendPtr(host),
            after_all: AtomicBool::new(after_all),
            next: AtomicUsize::new(0),
            state: Mutex::new(State {
                done: vec![0; n],
                submitted: vec![0; n],
                complete: vec![false; n],
                waiting: vec![false; n],
                failed: None,
            }),
            cond: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn len_of(&self, i: usize) -> usize {
        (self.total - i * self.chunk).min(self.chunk)
    }

    /// Submits chunk `i`'s copy (staging buffer `i % k` ↔ the device buffer) and records
    /// its value.
    fn submit(&self, i: usize) -> Result<()> {
        let k = self.leases.len();
        let len = self.len_of(i) as u64;
        let lease = &self.leases[i % k];
        let staging = lease.buf()?.raw();
        let at = self.offset + (i * self.chunk) as u64;
        let (copy, label, write) = match self.dir {
            Dir::Upload => {
                lease.flush(len)?;
                let region = vk::BufferCopy {
                    src_offset: 0,
                    dst_offset: at,
                    size: len,
                };
                (
                    (staging, self.buffer.raw(), region),
                    "kiln staged upload",
                    true,
                )
            }
            Dir::Readback => {
                let region = vk::BufferCopy {
                    src_offset: at,
                    dst_offset: 0,
                    size: len,
                };
                (
                    (self.buffer.raw(), staging, region),
                    "kiln staged readback",
                    false,
                )
            }
        };
        let uses = [(self.buffer.stamps(), write)];
        let after_all = self.after_all.swap(false, Ordering::AcqRel);
        let value = submit_raw_copy(self.shared, self.queue, label, copy, &uses, after_all, &[])?;
        self.lock().submitted[i] = value;
        self.cond.notify_all();
        Ok(())
    }

    /// Waits until chunk `i`'s copy was submitted and has completed; `false` once the
    /// transfer failed. One thread per chunk waits for the copy (polling the timeline:
    /// `Shared::poll_value`), the others for that thread's word: several threads blocked
    /// on one timeline at once slowed staged transfers to 2–6 GB/s on a driver that wakes
    /// every waiter per signal.
    fn copied(&self, i: usize) -> Result<bool> {
        let mut s = self.lock();
        loop {
            if s.failed.is_some() {
                return Ok(false);
            }
            if s.complete[i] {
                return Ok(true);
            }
            if s.submitted[i] != 0 && !s.waiting[i] {
                s.waiting[i] = true;
                let value = s.submitted[i];
                drop(s);
                let r = self
                    .shared
                    .poll_value(self.queue, value, self.shared.wait_timeout);
                let mut s = self.lock();
                s.waiting[i] = false;
                s.complete[i] = r.is_ok();
                drop(s);
                self.cond.notify_all();
                return r.map(|()| true);
            }
            s = self.cond.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn fail(&self, e: Error) {
        let mut s = self.lock();
        s.failed.get_or_insert(e);
        drop(s);
        self.cond.notify_all();
    }

    /// One thread's share: stripes in order until none is left or the transfer failed.
    fn work(&self) {
        let k = self.leases.len();
        loop {
            let u = self.next.fetch_add(1, Ordering::Relaxed);
            if u >= self.n * self.stripes {
                return;
            }
            let (i, j) = (u / self.stripes, u % self.stripes);
            if let Err(e) = self.stripe(i, j, k) {
                self.fail(e);
                return;
            }
            if self.lock().failed.is_some() {
                return;
            }
        }
    }

    /// Copies stripe `j` of chunk `i`; the thread that finishes the chunk submits the copy
    /// that comes next.
    fn stripe(&self, i: usize, j: usize, k: usize) -> Result<()> {
        // The staging buffer is free (upload: the copy of chunk i - k finished) or filled
        // (readback: chunk i's copy finished).
        let ready = match self.dir {
            Dir::Upload if i < k => None,
            Dir::Upload => Some(i - k),
            Dir::Readback => Some(i),
        };
        if let Some(c) = ready {
            if !self.copied(c)? {
                return Ok(());
            }
        }
        let len = self.len_of(i);
        let start = (j * STRIPE).min(len);
        let end = ((j + 1) * STRIPE).min(len);
        if self.dir == Dir::Readback && j == 0 {
            self.leases[i % k].invalidate(len as u64)?;
        }
        if start < end {
            let staging = self.bases[i % k].0;
            let host = self.host.0;
            let at = i * self.chunk + start;
            // SAFETY: stripe j of chunk i is `start..end` of the chunk, taken by this
            // thread alone; the staging mapping holds at least `len` bytes and the host
            // slice `total` bytes (checked at the plan's creation); no GPU copy uses the
            // staging range (waited above) and no other thread touches either range.
            unsafe {
                let (src, dst) = match self.dir {
                    Dir::Upload => (host.add(at) as *const u8, staging.add(start)),
                    Dir::Readback => (staging.add(start) as *const u8, host.add(at)),
                };
                std::ptr::copy_nonoverlapping(src, dst, end - start);
            }
        }
        let finished = {
            let mut s = self.lock();
            s.done[i] += 1;
            s.done[i] == self.stripes
        };
        if finished {
            match self.dir {
                Dir::Upload => self.submit(i)?,
                Dir::Readback if i + k < self.n => self.submit(i + k)?,
                Dir::Readback => {}
            }
        }
        Ok(())
    }

    /// Runs the stripes on up to `threads` threads (the caller's and scoped ones); then
    /// records each staging buffer's last copy in its lease. Returns the last copy's value.
    fn run(&self, threads: usize, leases_busy: &mut dyn FnMut(usize, u64)) -> Result<u64> {
        let units = self.n * self.stripes;
        let threads = threads.min(units).max(1);
        if threads == 1 {
            self.work();
        } else {
            std::thread::scope(|s| {
                for _ in 1..threads {
                    s.spawn(|| self.work());
                }
                self.work();
            });
        }
        let mut st = self.lock();
        let k = self.leases.len();
        for (i, &v) in st.submitted.iter().enumerate() {
            if v != 0 {
                leases_busy(i % k, v);
            }
        }
        if let Some(e) = st.failed.take() {
            return Err(e);
        }
        Ok(st.submitted.iter().copied().max().unwrap_or(0))
    }
}

/// The host threads of a transfer: 1 when the staging memory is not host-coherent (each
/// chunk's flush or invalidation then runs on one thread, in order).
fn threads_for(shared: &Shared, leases: &[Lease]) -> usize {
    let coherent = leases.iter().all(|l| l.buf().is_ok_and(|b| b.coherent()));
    if coherent {
        threads(shared)
    } else {
        1
    }
}

/// Copies `data` into `dst` at `offset` through staging memory on queue `queue`; returns
/// the last copy's value once every copy was submitted (the staging buffers go back to the
/// cache, pending until their copies finish). The caller checked the range.
pub(super) fn upload(
    shared: &Arc<Shared>,
    queue: usize,
    (dst, offset): (&Buffer, u64),
    data: &[u8],
    after_all: bool,
) -> Result<u64> {
    let (mut leases, chunk) = slots_for(shared, Dir::Upload, data.len() as u64)?;
    let threads = threads_for(shared, &leases);
    let mut busy = Vec::new();
    let result = {
        let plan = Plan::new(
            shared,
            queue,
            Dir::Upload,
            (dst, offset),
            data.as_ptr() as *mut u8,
            data.len(),
            (&mut leases, chunk),
            after_all,
        )?;
        plan.run(threads, &mut |slot, v| busy.push((slot, v)))
    };
    for (slot, v) in busy {
        if let Some(l) = leases.get_mut(slot) {
            if v > l.last_copy().1 {
                l.busy(queue, v);
            }
        }
    }
    result
}

/// A staged readback whose first copies were submitted: [`Drain::run`] waits for them,
/// copies the chunks out and submits the rest.
pub(super) struct Drain<'d> {
    shared: Arc<Shared>,
    queue: usize,
    src: Buffer,
    offset: u64,
    out: &'d mut [u8],
    leases: Vec<Lease>,
    chunk: usize,
    /// The values of the copies submitted so far (chunks `0..submitted.len()`).
    submitted: Vec<u64>,
}

impl Drain<'_> {
    /// The value of the last copy submitted so far and whether it is the transfer's last.
    pub(super) fn last(&self) -> (u64, bool) {
        let n = self.out.len().div_ceil(self.chunk);
        (
            self.submitted.last().copied().unwrap_or(0),
            self.submitted.len() >= n,
        )
    }

    pub(super) fn queue(&self) -> usize {
        self.queue
    }

    /// Copies every chunk into the caller's slice (submitting the copies not yet made),
    /// waiting for each; the staging buffers go back to the cache.
    pub(super) fn run(mut self) -> Result<()> {
        let total = self.out.len();
        let threads = threads_for(&self.shared, &self.leases);
        let mut busy = Vec::new();
        let result = {
            let plan = Plan::new(
                &self.shared,
                self.queue,
                Dir::Readback,
                (&self.src, self.offset),
                self.out.as_mut_ptr(),
                total,
                (&mut self.leases, self.chunk),
                false,
            )?;
            {
                let mut s = plan.lock();
                for (i, v) in self.submitted.iter().enumerate() {
                    s.submitted[i] = *v;
                }
            }
            plan.run(threads, &mut |slot, v| busy.push((slot, v)))
        };
        for (slot, v) in busy {
            if let Some(l) = self.leases.get_mut(slot) {
                if v > l.last_copy().1 {
                    l.busy(self.queue, v);
                }
            }
        }
        // Every copy was waited for by the thread that drained it.
        result.map(|_| ())
    }
}

/// Starts a staged readback of `out.len()` bytes of `src` from `offset` on queue `queue`:
/// submits the copies of the first chunks (one per staging buffer). The caller checked the
/// range.
pub(super) fn start_readback<'d>(
    shared: &Arc<Shared>,
    queue: usize,
    (src, offset): (&Buffer, u64),
    out: &'d mut [u8],
    after_all: bool,
) -> Result<Drain<'d>> {
    let (mut leases, chunk) = slots_for(shared, Dir::Readback, out.len() as u64)?;
    let n = out.len().div_ceil(chunk);
    let k = leases.len();
    let mut submitted = Vec::with_capacity(k);
    for (i, lease) in leases.iter_mut().enumerate().take(n) {
        let len = (out.len() - i * chunk).min(chunk) as u64;
        let region = vk::BufferCopy {
            src_offset: offset + (i * chunk) as u64,
            dst_offset: 0,
            size: len,
        };
        let copy = (src.raw(), lease.buf()?.raw(), region);
        let uses = [(src.stamps(), false)];
        let value = submit_raw_copy(
            shared,
            queue,
            "kiln staged readback",
            copy,
            &uses,
            after_all && i == 0,
            &[],
        )?;
        lease.busy(queue, value);
        submitted.push(value);
    }
    Ok(Drain {
        shared: shared.clone(),
        queue,
        src: src.clone(),
        offset,
        out,
        leases,
        chunk,
        submitted,
    })
}
