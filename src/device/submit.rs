//! Submission: record, submit, track completion on a timeline semaphore, and destroy
//! retired objects only after every submission that could use them has finished.
//!
//! Each submission gets the next value of the device's timeline semaphore (Vulkan spec
//! §7.4.2 "Semaphore Signaling"). Objects dropped by the user are *retired*: tagged with the
//! last submitted value and destroyed once the timeline reaches it (deferred destruction,
//! the shape of Granite's `PerFrame::begin`). Every submission waits (at all stages) for
//! the timeline value before its own: on one queue that is the same memory dependency as a
//! leading full barrier (earlier submissions' writes → this one's accesses, §7.4.1–7.4.2),
//! and the value is normally reached already; on the H200 it measured ~1 µs cheaper per
//! round trip than the barrier (BENCHMARKS.md, "round-trip floors"). Without timeline
//! semaphores the command buffer starts with that full barrier instead. Every command
//! buffer ends with a barrier that makes device writes visible to the host (§7.9: a wait
//! alone does not make device writes visible to host reads).
//!
//! Waiting polls the timeline counter for up to `KILN_SPIN_US` microseconds (default
//! [`DEFAULT_SPIN`] on GPUs, 0 on CPU devices) before blocking in `vkWaitSemaphores`: a
//! short job then returns as soon as it is done instead of after the blocking wait's
//! wake-up latency, at the price of up to that much CPU time per wait.
//!
//! Without timeline-semaphore support, [`Device::submit`] waits before returning (each
//! submission is complete when it returns), which keeps the same guarantees.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ash::vk;

use super::{Device, Shared};
use crate::commands::Recorder;
use crate::error::{vk_err, Error, Result};

pub(crate) struct Context {
    pub pool: vk::CommandPool,
    pub cb: vk::CommandBuffer,
    pub fence: vk::Fence,
}

type Garbage = Box<dyn FnOnce(&Shared) + Send>;

/// Submission tracker: timeline, contexts in flight, retired objects.
#[derive(Default)]
pub(crate) struct Tracker {
    pub timeline: vk::Semaphore,
    /// Last value handed to a submission.
    submitted: AtomicU64,
    /// Highest value known complete (cache of the timeline's counter).
    completed: AtomicU64,
    free: Mutex<Vec<Context>>,
    pending: Mutex<VecDeque<(u64, Context)>>,
    graveyard: Mutex<Vec<(u64, Garbage)>>,
    /// Label of the last submission, for device-lost reports.
    pub last_label: Mutex<String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Tracker {
    pub fn create(device: &ash::Device, timeline: bool) -> Result<Tracker> {
        let mut t = Tracker::default();
        if timeline {
            let mut ty = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
            // SAFETY: timeline semaphores are enabled on this device (Features).
            t.timeline = unsafe { device.create_semaphore(&info, None) }
                .map_err(vk_err("vkCreateSemaphore"))?;
        }
        Ok(t)
    }

    /// Destroys everything left; the device must be idle.
    pub fn destroy(&self, shared: &Shared) {
        let d = &shared.raw;
        let mut all: Vec<Context> = lock(&self.free).drain(..).collect();
        all.extend(lock(&self.pending).drain(..).map(|(_, c)| c));
        for c in all {
            // SAFETY: the device is idle (Shared::drop waits) so no context is in use.
            unsafe {
                d.destroy_fence(c.fence, None);
                d.destroy_command_pool(c.pool, None);
            }
        }
        let garbage: Vec<(u64, Garbage)> = lock(&self.graveyard).drain(..).collect();
        for (_, g) in garbage {
            g(shared);
        }
        if self.timeline != vk::Semaphore::null() {
            // SAFETY: no submission is pending on an idle device.
            unsafe { d.destroy_semaphore(self.timeline, None) };
        }
    }
}

impl Shared {
    /// Destroys an object now if no submission can still use it, else after the last
    /// submitted value completes. `f` must not capture an `Arc<Shared>` unless that
    /// reference is meant to keep the device alive until collection.
    pub(crate) fn retire(&self, f: impl FnOnce(&Shared) + Send + 'static) {
        let tag = self.tracker.submitted.load(Ordering::Acquire);
        if tag <= self.completed_value() {
            f(self);
        } else {
            lock(&self.tracker.graveyard).push((tag, Box::new(f)));
            // The submission may have finished, and its waiter collected, between the check
            // above and the push: nobody else would collect this object then (and one that
            // holds an `Arc<Shared>` would keep the device alive forever).
            if tag <= self.completed_value() {
                self.collect();
            }
        }
    }

    /// Waits for every submission made so far: host access to mapped memory must not race
    /// a submission that may read or write it (Vulkan spec §11.2.2 "Host Access to Device
    /// Memory Objects"; the submission's final barrier makes its writes visible).
    pub(crate) fn wait_all_submitted(&self) -> Result<()> {
        let last = self.tracker.submitted.load(Ordering::Acquire);
        if last > self.completed_value() {
            self.wait_value(last, EXECUTE_TIMEOUT)?;
        }
        Ok(())
    }

    /// Highest submission value known complete (queries the timeline when behind).
    pub(crate) fn completed_value(&self) -> u64 {
        let t = &self.tracker;
        let cached = t.completed.load(Ordering::Acquire);
        if cached >= t.submitted.load(Ordering::Acquire) || t.timeline == vk::Semaphore::null() {
            return cached;
        }
        // SAFETY: the timeline semaphore belongs to this device.
        match unsafe { self.raw.get_semaphore_counter_value(t.timeline) } {
            Ok(v) => {
                t.completed.fetch_max(v, Ordering::AcqRel);
                v.max(cached)
            }
            Err(_) => cached,
        }
    }

    /// Recycles finished contexts and destroys retired objects whose submissions finished.
    pub(crate) fn collect(&self) {
        let done = self.completed_value();
        // One context at a time (no allocation on the round-trip path).
        loop {
            let c = {
                let mut p = lock(&self.tracker.pending);
                match p.front() {
                    Some((v, _)) if *v <= done => p.pop_front().map(|(_, c)| c),
                    _ => None,
                }
            };
            let Some(c) = c else { break };
            self.reset_and_free(c);
        }
        let ready: Vec<Garbage> = {
            let mut g = lock(&self.tracker.graveyard);
            if !g.iter().any(|(v, _)| *v <= done) {
                return;
            }
            let (ready, keep): (Vec<_>, Vec<_>) = g.drain(..).partition(|(v, _)| *v <= done);
            *g = keep;
            ready.into_iter().map(|(_, f)| f).collect()
        };
        for f in ready {
            f(self);
        }
    }

    /// Blocks until submission `value` has completed (or the timeout passes).
    pub(crate) fn wait_value(&self, value: u64, timeout: Duration) -> Result<()> {
        if value <= self.completed_value() {
            self.collect();
            return Ok(());
        }
        // Fast path: a short GPU job finishes sooner than a blocking wait's wake-up
        // (interrupt + scheduler), so poll the counter for a bounded time first.
        let spin = spin_budget(&self.properties);
        if !spin.is_zero() {
            let start = Instant::now();
            loop {
                // SAFETY: the timeline semaphore belongs to this device.
                match unsafe { self.raw.get_semaphore_counter_value(self.tracker.timeline) } {
                    Ok(v) if v >= value => {
                        self.tracker.completed.fetch_max(v, Ordering::AcqRel);
                        self.collect();
                        return Ok(());
                    }
                    Ok(_) => {}
                    Err(e) => return Err(vk_err("vkGetSemaphoreCounterValue")(e)),
                }
                if start.elapsed() >= spin {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        let sems = [self.tracker.timeline];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        // SAFETY: the semaphore belongs to this device; locals outlive the call.
        let r = unsafe { self.raw.wait_semaphores(&info, timeout.as_nanos() as u64) };
        match r {
            Ok(()) => {
                self.tracker.completed.fetch_max(value, Ordering::AcqRel);
                self.collect();
                Ok(())
            }
            Err(vk::Result::TIMEOUT) => Err(Error::Timeout {
                call: "vkWaitSemaphores",
                ms: timeout.as_millis() as u64,
            }),
            Err(vk::Result::ERROR_DEVICE_LOST) => Err(Error::DeviceLost {
                call: "vkWaitSemaphores",
                label: lock(&self.tracker.last_label).clone(),
            }),
            Err(e) => Err(vk_err("vkWaitSemaphores")(e)),
        }
    }

    /// For a submission made outside [`Device::submit_labeled`] (the presenter's frames),
    /// under the queue lock: the timeline semaphore and the value the submission waits for
    /// (the previous one) and signals, or `None` without timeline semaphores. Call
    /// [`mark_submitted`](Self::mark_submitted) with the value once the submit succeeded.
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) fn next_timeline_value(&self) -> Option<(vk::Semaphore, u64)> {
        let t = &self.tracker;
        (t.timeline != vk::Semaphore::null())
            .then(|| (t.timeline, t.submitted.load(Ordering::Acquire) + 1))
    }

    /// Records that the submission signalling `value` was made (under the queue lock).
    pub(crate) fn mark_submitted(&self, value: u64, label: &str) {
        self.tracker.submitted.store(value, Ordering::Release);
        let mut l = lock(&self.tracker.last_label);
        l.clear();
        l.push_str(label);
    }

    /// Recycles a context whose last submission signals `last` (0: never submitted): its
    /// pool is reset and it goes back to the free list once that value completes.
    pub(crate) fn recycle(&self, last: u64, ctx: Context) {
        if last <= self.completed_value() {
            self.reset_and_free(ctx);
            return;
        }
        // Pending: `collect` resets it once `last` completes; the queue stays sorted.
        let mut p = lock(&self.tracker.pending);
        let at = p.partition_point(|(v, _)| *v <= last);
        p.insert(at, (last, ctx));
    }

    /// Returns a context whose command buffer is not pending (never submitted, completed,
    /// or still recording) to the free list, reset. If the reset fails the context is
    /// destroyed instead of leaking its pool and fence.
    fn reset_and_free(&self, ctx: Context) {
        // SAFETY: the caller guarantees the command buffer is not pending; its pool was
        // created with RESET_COMMAND_BUFFER.
        let reset = unsafe {
            self.raw
                .reset_command_buffer(ctx.cb, vk::CommandBufferResetFlags::empty())
        };
        if reset.is_ok() {
            lock(&self.tracker.free).push(ctx);
        } else {
            // SAFETY: nothing of the context is pending (as above).
            unsafe {
                self.raw.destroy_fence(ctx.fence, None);
                self.raw.destroy_command_pool(ctx.pool, None);
            }
        }
    }

    pub(crate) fn take_context(&self) -> Result<Context> {
        if let Some(c) = lock(&self.tracker.free).pop() {
            return Ok(c);
        }
        self.collect();
        if let Some(c) = lock(&self.tracker.free).pop() {
            return Ok(c);
        }
        let d = &self.raw;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(self.queue_family)
            // One command buffer per pool, reset on its own after each use: on the H200
            // vkResetCommandBuffer measured ~0.6 µs cheaper per round trip than
            // vkResetCommandPool (BENCHMARKS.md, round-trip floors).
            .flags(
                vk::CommandPoolCreateFlags::TRANSIENT
                    | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER,
            );
        // SAFETY: valid create info for this device's queue family.
        let pool =
            unsafe { d.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: `pool` was just created on this device.
        let cb = match unsafe { d.allocate_command_buffers(&alloc) } {
            Ok(v) => v[0],
            Err(e) => {
                // SAFETY: the pool has no command buffers in use.
                unsafe { d.destroy_command_pool(pool, None) };
                return Err(vk_err("vkAllocateCommandBuffers")(e));
            }
        };
        // SAFETY: plain create.
        let fence = match unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) } {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: `cb` was never submitted.
                unsafe { d.destroy_command_pool(pool, None) };
                return Err(vk_err("vkCreateFence")(e));
            }
        };
        Ok(Context { pool, cb, fence })
    }
}

/// Default time a wait polls the timeline (`vkGetSemaphoreCounterValue`) before blocking
/// in `vkWaitSemaphores`, on devices that are not the CPU itself.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(200);

/// The polling budget: `KILN_SPIN_US` (microseconds; 0 disables) or [`DEFAULT_SPIN`]; 0 on
/// CPU devices (lavapipe), where polling would steal the core that runs the shader.
pub(crate) fn spin_budget(props: &vk::PhysicalDeviceProperties) -> Duration {
    static ENV: OnceLock<Option<u64>> = OnceLock::new();
    let env = ENV.get_or_init(|| {
        std::env::var("KILN_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse().ok())
    });
    match env {
        Some(us) => Duration::from_micros(*us),
        None if props.device_type == vk::PhysicalDeviceType::CPU => Duration::ZERO,
        None => DEFAULT_SPIN,
    }
}

/// How long waits in [`Device::execute`] and [`Submission::wait`] last before `KILN-E108`.
pub const EXECUTE_TIMEOUT: Duration = Duration::from_secs(120);

/// Returns a recording context to the free list when the user's recording closure unwinds.
struct UnwindGuard<'s> {
    shared: &'s Shared,
    ctx: Option<Context>,
}

impl UnwindGuard<'_> {
    fn disarm(mut self) {
        self.ctx = None;
    }
}

impl Drop for UnwindGuard<'_> {
    fn drop(&mut self) {
        let Some(ctx) = self.ctx.take() else { return };
        // Never submitted: the reset moves it from the recording to the initial state.
        self.shared.reset_and_free(ctx);
    }
}

/// A submitted batch of commands. Waiting is explicit ([`wait`](Self::wait)); dropping an
/// unwaited submission waits for it, so retired objects are always collected.
#[must_use = "a submission runs asynchronously; wait() for its results"]
pub struct Submission {
    shared: Arc<Shared>,
    value: u64,
}

impl Submission {
    pub(crate) fn new(shared: Arc<Shared>, value: u64) -> Submission {
        Submission { shared, value }
    }

    /// The timeline value this submission signals.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// True once the GPU has finished it.
    pub fn is_done(&self) -> bool {
        self.value <= self.shared.completed_value()
    }

    /// Blocks until the GPU has finished; device writes are then visible to host reads.
    ///
    /// Errors: `KILN-E105` device lost (with the submission label), `KILN-E108` timeout.
    pub fn wait(mut self) -> Result<()> {
        let r = self.shared.wait_value(self.value, EXECUTE_TIMEOUT);
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
        if let Err(e) = self.shared.wait_value(self.value, EXECUTE_TIMEOUT) {
            log::error!("kiln: waiting for a dropped submission failed: {e}");
        }
    }
}

impl Device {
    /// Records commands with `f`, submits them and waits until the GPU has finished; device
    /// writes are then visible to host reads of mapped memory.
    ///
    /// Errors: whatever `f` returns (nothing is submitted then), `KILN-E105` device lost,
    /// `KILN-E108` the GPU did not finish within [`EXECUTE_TIMEOUT`].
    pub fn execute<'a, R>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<R> {
        let (out, sub) = self.submit_labeled("execute", f)?;
        sub.wait()?;
        Ok(out)
    }

    /// Records commands with `f` and submits them without waiting. Everything the
    /// recording used stays alive until the submission finishes, even if dropped now
    /// (deferred destruction); descriptor sets it bound are not rewritten before then
    /// (a write waits).
    pub fn submit<'a>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Submission> {
        Ok(self.submit_labeled("submit", f)?.1)
    }

    /// Like [`submit`](Self::submit), with a label reported if the device is lost, and the
    /// closure's result returned beside the submission.
    pub fn submit_labeled<'a, R>(
        &'a self,
        label: &str,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<(R, Submission)> {
        let s = &*self.shared;
        let ctx = s.take_context()?;
        let (out, mut rec) = s.record(&ctx, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT, f)?;
        let value = match s.submit_cb(&ctx, label) {
            Ok(v) => v,
            Err(e) => {
                // The submission failed, so the buffer is not pending.
                s.reset_and_free(ctx);
                return Err(e);
            }
        };
        lock(&s.tracker.pending).push_back((value, ctx));
        // Submitted: later submissions see the image layouts this one leaves behind.
        rec.commit_layouts();
        for u in rec.into_used_sets() {
            u.fetch_max(value, Ordering::AcqRel);
        }
        Ok((
            out,
            Submission {
                shared: self.shared.clone(),
                value,
            },
        ))
    }
}

impl Shared {
    /// Begins `ctx`'s command buffer with `flags`, records `f` and ends it (with the final
    /// device→host barrier). On any error nothing stays recorded and `ctx` is back on the
    /// free list.
    pub(crate) fn record<'a, 'r, R>(
        &'a self,
        ctx: &Context,
        flags: vk::CommandBufferUsageFlags,
        f: impl for<'x> FnOnce(&mut Recorder<'a, 'x>) -> Result<R>,
    ) -> Result<(R, Recorder<'a, 'r>)> {
        let d = &self.raw;
        // The buffer was never submitted: the reset discards what was recorded.
        let discard = |e: Error| {
            self.reset_and_free(Context { ..*ctx });
            e
        };
        let begin = vk::CommandBufferBeginInfo::default().flags(flags);
        // SAFETY: `cb` is in the initial state (fresh, or reset after its last use).
        if let Err(e) = unsafe { d.begin_command_buffer(ctx.cb, &begin) } {
            return Err(discard(vk_err("vkBeginCommandBuffer")(e)));
        }
        let mut rec = Recorder::new(self, ctx.cb);
        if self.tracker.timeline == vk::Semaphore::null() {
            // With a timeline, the submission's wait on the previous value orders it instead.
            rec.full_barrier();
        }
        // If `f` panics, the context goes back to the free list (else its command pool,
        // buffer and fence leak: VUID-vkDestroyDevice-device-00378 at teardown).
        let unwind = UnwindGuard {
            shared: self,
            ctx: Some(Context { ..*ctx }),
        };
        let result = f(&mut rec);
        unwind.disarm();
        // An open rendering scope is closed (its command buffer must not end inside one,
        // VUID-vkEndCommandBuffer-None-06281); leaving it open is the caller's error.
        let result = match (rec.close_rendering(), result) {
            (true, Ok(_)) => Err(Error::RenderingState {
                what: "the recording ended inside a rendering scope; call end_rendering",
            }),
            (_, out) => out,
        };
        let out = match result.and_then(|v| match rec.take_deferred() {
            Some(e) => Err(e),
            None => Ok(v),
        }) {
            Ok(v) => v,
            Err(e) => return Err(discard(e)),
        };
        rec.host_barrier();
        // SAFETY: `cb` is recording.
        if let Err(e) = unsafe { d.end_command_buffer(ctx.cb) } {
            return Err(discard(vk_err("vkEndCommandBuffer")(e)));
        }
        Ok((out, rec))
    }

    /// Submits `ctx`'s executable command buffer: it waits for the previous timeline value
    /// and signals the next, which it returns. Without timeline semaphores it waits for the
    /// context's fence before returning (the submission is complete then).
    pub(crate) fn submit_cb(&self, ctx: &Context, label: &str) -> Result<u64> {
        let d = &self.raw;
        let queue = lock(&self.queue);
        let value = self.tracker.submitted.load(Ordering::Acquire) + 1;
        let cbs = [ctx.cb];
        let sems = [self.tracker.timeline];
        let (values, previous) = ([value], [value - 1]);
        let stages = [vk::PipelineStageFlags::ALL_COMMANDS];
        let mut timeline = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&previous)
            .signal_semaphore_values(&values);
        let mut submit = vk::SubmitInfo::default().command_buffers(&cbs);
        let has_timeline = self.tracker.timeline != vk::Semaphore::null();
        let fence = if has_timeline {
            submit = submit
                .wait_semaphores(&sems)
                .wait_dst_stage_mask(&stages)
                .signal_semaphores(&sems)
                .push_next(&mut timeline);
            vk::Fence::null()
        } else {
            ctx.fence
        };
        // SAFETY: the queue is externally synchronized by its mutex; `cb` is executable and
        // not pending; values increase strictly because they are assigned under the queue
        // lock.
        if let Err(e) = unsafe { d.queue_submit(*queue, &[submit], fence) } {
            return Err(match e {
                vk::Result::ERROR_DEVICE_LOST => Error::DeviceLost {
                    call: "vkQueueSubmit",
                    label: label.to_string(),
                },
                e => vk_err("vkQueueSubmit")(e),
            });
        }
        self.mark_submitted(value, label);
        if !has_timeline {
            // No timeline: complete the submission before returning.
            // SAFETY: the fence was just submitted with this batch.
            let r = unsafe {
                d.wait_for_fences(&[ctx.fence], true, EXECUTE_TIMEOUT.as_nanos() as u64)
                    .and_then(|_| d.reset_fences(&[ctx.fence]))
            };
            if let Err(e) = r {
                return Err(vk_err("vkWaitForFences")(e));
            }
            self.tracker.completed.store(value, Ordering::Release);
        }
        Ok(value)
    }
}
