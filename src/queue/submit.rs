//! The one way work reaches a queue: [`record`] fills a command buffer through a
//! [`Recorder`], [`submit`] submits it and applies its [`RecordedWork`]. `Device::execute`,
//! `Device::submit`, reusable `Recording`s, staged transfers and the window presenter all
//! go through these two functions.
//!
//! Each submission signals the next value of its queue's timeline semaphore (Vulkan spec
//! §7.4.2) and waits (at all stages) for the value before its own: on one queue that is the
//! same memory dependency as a leading full barrier (earlier submissions' writes → this
//! one's accesses, §7.4.1–7.4.2), and the value is normally reached already; on the H200 it
//! measured ~1 µs cheaper per round trip than the barrier (BENCHMARKS.md, "round-trip
//! floors"). Command buffers that the host reads back from end with a barrier that makes
//! device writes visible to the host (§7.9: a wait alone does not).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;

use crate::commands::{RecordedWork, Recorder};
use crate::device::{Shared, EXECUTE_TIMEOUT};
use crate::error::{vk_err, vk_err_labeled, Error, Result};

/// How [`record`] begins and ends a command buffer.
#[derive(Clone, Copy)]
pub(crate) struct RecordOptions {
    /// `VkCommandBufferBeginInfo::flags` (`ONE_TIME_SUBMIT` unless the buffer is reused).
    pub flags: vk::CommandBufferUsageFlags,
    /// End with the device→host barrier (every submission whose results the host may read).
    pub host_barrier: bool,
}

impl RecordOptions {
    /// A one-off command buffer the host may read the results of.
    pub(crate) const ONE_TIME: RecordOptions = RecordOptions {
        flags: vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
        host_barrier: true,
    };
}

/// Begins `cb` (in the initial state), records `f` and ends it: an open rendering scope is
/// closed (a recording that left one open fails with `KILN-E283`), then the device→host
/// barrier if asked. On an error `cb` may be left recording: the caller resets or discards
/// it (nothing was submitted).
pub(crate) fn record<'a, R>(
    shared: &'a Shared,
    cb: vk::CommandBuffer,
    options: RecordOptions,
    f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
) -> Result<(R, RecordedWork<'a>)> {
    let d = &shared.raw;
    let begin = vk::CommandBufferBeginInfo::default().flags(options.flags);
    // SAFETY: `cb` is in the initial state (fresh, or reset after its last use).
    unsafe { d.begin_command_buffer(cb, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;
    let mut rec = Recorder::new(shared, cb);
    let result = f(&mut rec);
    // A command buffer must not end inside a rendering scope
    // (VUID-vkEndCommandBuffer-None-06281); leaving one open is the caller's error.
    let out = match (rec.close_rendering(), result) {
        (true, Ok(_)) => Err(Error::RenderingState {
            what: "the recording ended inside a rendering scope; call end_rendering",
        }),
        (_, out) => out,
    }?;
    if options.host_barrier {
        rec.host_barrier();
    }
    // SAFETY: `cb` is recording, outside any rendering scope.
    unsafe { d.end_command_buffer(cb) }.map_err(vk_err("vkEndCommandBuffer"))?;
    Ok((out, rec.into_work()))
}

/// Binary semaphores a batch may wait for, and signal, besides its queue's timeline.
pub(crate) const MAX_EXTRA: usize = 2;

/// One batch for [`submit`]: what it runs, and the presenter's extra synchronization.
#[derive(Clone, Copy)]
pub(crate) struct Batch<'s> {
    /// Reported if the device is lost.
    pub label: &'s str,
    /// The executable command buffer (none: the batch only waits and signals).
    pub command_buffer: Option<vk::CommandBuffer>,
    /// Binary semaphores to wait for, with the stages that wait (a swapchain acquire).
    pub wait: &'s [(vk::Semaphore, vk::PipelineStageFlags2)],
    /// Binary semaphores to signal once the batch completes (a present waits for it).
    pub signal: &'s [vk::Semaphore],
    /// Signalled once the batch completes (a frame's fence), or null.
    pub fence: vk::Fence,
}

impl<'s> Batch<'s> {
    /// A command buffer and nothing else.
    pub(crate) fn commands(label: &'s str, cb: vk::CommandBuffer) -> Batch<'s> {
        Batch {
            label,
            command_buffer: Some(cb),
            wait: &[],
            signal: &[],
            fence: vk::Fence::null(),
        }
    }
}

/// Submits `batch` to queue `queue`: it waits for the queue's previous timeline value (and
/// `batch.wait`), signals the next value (and `batch.signal`, `batch.fence`); then applies
/// `work`: every moved image's final layout is committed, every used set stamped with the
/// value. Returns the value.
///
/// Errors: `KILN-E105` device lost (naming `batch.label`), `KILN-E104` other failures; then
/// nothing was submitted and the command buffer is not pending.
pub(crate) fn submit(
    shared: &Shared,
    queue: usize,
    batch: &Batch<'_>,
    work: &RecordedWork<'_>,
) -> Result<u64> {
    let q = shared.queues.get(queue).ok_or_else(|| {
        vk_err("vkQueueSubmit2 (no such queue)")(vk::Result::ERROR_INITIALIZATION_FAILED)
    })?;
    if batch.wait.len() > MAX_EXTRA || batch.signal.len() > MAX_EXTRA {
        return Err(vk_err("vkQueueSubmit2 (too many binary semaphores)")(
            vk::Result::ERROR_INITIALIZATION_FAILED,
        ));
    }
    let value = {
        let guard = q.lock();
        let value = guard.next_value();
        let timeline = q.timeline();
        // Fixed arrays: a submission allocates nothing.
        let mut waits = [vk::SemaphoreSubmitInfo::default(); 1 + MAX_EXTRA];
        let mut signals = [vk::SemaphoreSubmitInfo::default(); 1 + MAX_EXTRA];
        waits[0] = waits[0]
            .semaphore(timeline)
            .value(value - 1)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS);
        signals[0] = signals[0]
            .semaphore(timeline)
            .value(value)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS);
        for (w, &(s, stages)) in waits[1..].iter_mut().zip(batch.wait) {
            *w = w.semaphore(s).stage_mask(stages);
        }
        for (w, &s) in signals[1..].iter_mut().zip(batch.signal) {
            *w = w
                .semaphore(s)
                .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS);
        }
        let waits = &waits[..1 + batch.wait.len()];
        let signals = &signals[..1 + batch.signal.len()];
        let cb = batch
            .command_buffer
            .map(|cb| vk::CommandBufferSubmitInfo::default().command_buffer(cb));
        let cbs = cb.as_slice();
        let info = vk::SubmitInfo2::default()
            .wait_semaphore_infos(waits)
            .command_buffer_infos(cbs)
            .signal_semaphore_infos(signals);
        // SAFETY: the queue is externally synchronized by its lock; the command buffer is
        // executable and not pending; timeline values increase strictly (assigned under the
        // lock); binary semaphores and the fence are in the states their owner (the
        // presenter) guarantees; locals outlive the call.
        unsafe { shared.raw.queue_submit2(guard.raw(), &[info], batch.fence) }
            .map_err(vk_err_labeled("vkQueueSubmit2", batch.label))?;
        guard.mark_submitted(value, batch.label);
        value
    };
    // Submitted: later recordings see the image layouts this one leaves behind, and a
    // write to a set it bound waits for it.
    work.commit_layouts();
    for u in &work.used_sets {
        u.fetch_max(value, Ordering::AcqRel);
    }
    Ok(value)
}

/// A submitted batch of commands. Waiting is explicit ([`wait`](Self::wait)); dropping an
/// unwaited submission waits for it, so retired objects are always collected.
#[must_use = "a submission runs asynchronously; wait() for its results"]
pub struct Submission {
    shared: Arc<Shared>,
    queue: usize,
    value: u64,
}

impl Submission {
    pub(crate) fn new(shared: Arc<Shared>, queue: usize, value: u64) -> Submission {
        Submission {
            shared,
            queue,
            value,
        }
    }

    /// The timeline value this submission signals.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// True once the GPU has finished it.
    pub fn is_done(&self) -> bool {
        self.value <= self.shared.completed_value(self.queue)
    }

    /// Blocks until the GPU has finished; device writes are then visible to host reads.
    ///
    /// Errors: `KILN-E105` device lost (with the submission label), `KILN-E108` timeout
    /// (after [`EXECUTE_TIMEOUT`]).
    pub fn wait(mut self) -> Result<()> {
        let r = self
            .shared
            .wait_value(self.queue, self.value, EXECUTE_TIMEOUT);
        // Value 0 is always complete: Drop has nothing left to wait for.
        self.value = 0;
        r
    }
}

impl Drop for Submission {
    fn drop(&mut self) {
        if self.value == 0 {
            return;
        }
        if let Err(e) = self
            .shared
            .wait_value(self.queue, self.value, EXECUTE_TIMEOUT)
        {
            log::error!("kiln: waiting for a dropped submission failed: {e}");
        }
    }
}
