//! The one way work reaches a queue: [`record`] fills a command buffer through a
//! [`Recorder`], [`submit`] submits it and applies its [`RecordedWork`]. `Device::execute`,
//! `Device::submit`, reusable `Recording`s, staged transfers and the window presenter all
//! go through these two functions.
//!
//! Each submission signals the next value of its queue's timeline semaphore (Vulkan spec
//! §7.4.2) and waits (at all stages) for the value before its own: on one queue that is the
//! same memory dependency as a leading full barrier (earlier submissions' writes → this
//! one's accesses, §7.4.1–7.4.2), and the value is normally reached already, so it
//! costs less than the barrier (~1 µs per round trip measured on a GPU driver). Command buffers that the host reads back from end with a barrier that makes
//! device writes visible to the host (§7.9: a wait alone does not).
//!
//! # Work on several queues
//!
//! Submissions on different queues are ordered only where they depend on each other. A
//! submission's *uses* are the resources its work names: every buffer and image of the
//! descriptor sets it binds (written when the binding is a storage buffer, storage image
//! or storage texel buffer and, with automatic barriers, a command of the recording wrote
//! it: the reflected access of its binding; read otherwise), the buffers its copies and
//! fills keep (written; with automatic barriers only those the recording wrote, so a
//! copy's source is read) and the images it transitions (read and written), and what kiln's own transfers add
//! ([`Batch::uses`]). Each resource carries per-queue stamps (`device::ResourceStamps`):
//! the last submission of each queue that used it and that wrote it. A submission on queue
//! `q` waits on queue `p`'s timeline for the largest value among its uses' stamps of `p`:
//! the last write for a read, the last use for a write (RAW, WAR and WAW hazards; reads
//! after reads do not wait). The waits are semaphore waits at all stages (§7.4.2), so the
//! dependency is a full memory dependency; they are made for values already complete too
//! (a host wait does not make one queue's writes visible to another queue's accesses).
//! Deriving the waits, submitting and stamping happen under the device's `cross_queue`
//! lock (devices with more than one kiln queue), so two submissions on two queues that use
//! one resource are ordered whichever thread gets there first. On a device with one queue
//! nothing of this runs: queue order already orders everything.
//!
//! Raw commands (`Recorder::raw`) name no resource: work that uses a buffer only through
//! them is not ordered against other queues (use a kiln copy, or one queue).

use std::borrow::Cow;
use std::ffi::CString;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use ash::vk;

use super::plan::{cross_queue_after, SubmitPlan, MAX_SIGNALS, MAX_WAITS};
use super::profilers::Profilers;
use super::timing::{self, GpuTimings};
use super::trace::Trace;
use crate::commands::{RecordedWork, Recorder, TimedWork};
use crate::device::{
    set_caller, FaultSite, QueueGuard, QueueOrder, ResourceStamps, Shared, SubmitContext,
    MAX_QUEUES,
};
use crate::error::{vk_err, vk_err_labeled, DeviceError, Error, Result, SubmissionError};

/// How [`record`] begins and ends a command buffer.
#[derive(Clone, Copy)]
pub(crate) struct RecordOptions {
    /// `VkCommandBufferBeginInfo::flags` (`ONE_TIME_SUBMIT` unless the buffer is reused).
    pub flags: vk::CommandBufferUsageFlags,
    /// End with the device→host barrier (every submission whose results the host may read).
    pub host_barrier: bool,
    /// Whole-submission timestamps when the device times submissions (`DeviceDesc::timing`):
    /// only for command buffers whose queries a `Submission` or `Recording` keeps until they
    /// completed (scopes are timed either way).
    pub timed: bool,
}

impl RecordOptions {
    /// A one-off command buffer the host may read the results of.
    pub(crate) const ONE_TIME: RecordOptions = RecordOptions {
        flags: vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
        host_barrier: true,
        timed: true,
    };
}

/// Begins `cb` (in the initial state, from a pool of queue `queue`'s family), records `f`
/// and ends it: an open rendering scope is
/// closed (a recording that left one open fails with `KILN-E283`), then the device→host
/// barrier if asked, then the submission's last timestamp when it is timed (the device
/// times every submission, or `f` opened scopes; a scope left open is `KILN-E123`). On an
/// error `cb` may be left recording: the caller resets or discards it (nothing was
/// submitted).
pub(crate) fn record<'a, R>(
    shared: &'a Shared,
    queue: usize,
    cb: vk::CommandBuffer,
    options: RecordOptions,
    f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
) -> Result<(R, RecordedWork<'a>)> {
    let d = &shared.raw;
    let flags = shared
        .queues
        .get(queue)
        .map_or(vk::QueueFlags::empty(), |q| q.flags());
    let begin = vk::CommandBufferBeginInfo::default().flags(options.flags);
    // SAFETY: `cb` is in the initial state (fresh, or reset after its last use).
    unsafe { d.begin_command_buffer(cb, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;
    let reusable = !options
        .flags
        .contains(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    let mut rec = Recorder::new(shared, cb, queue, flags, reusable);
    rec.begin_crumbs();
    if options.timed && shared.timing.load(Ordering::Relaxed) {
        rec.time_submission()?;
    }
    let result = f(&mut rec);
    // Messages raised from here on are not raised by one of the user's commands.
    set_caller(None);
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
    let timed = rec.finish_timing()?;
    let crumbs = rec.end_crumbs();
    // SAFETY: `cb` is recording, outside any rendering scope.
    unsafe { d.end_command_buffer(cb) }.map_err(vk_err("vkEndCommandBuffer"))?;
    let mut work = rec.into_work(timed);
    work.crumbs = crumbs;
    Ok((out, work))
}

/// Names `cb` with the label of the submission it is recorded for (labels on: validation,
/// or `KILN_LABELS=1`), before recording, so record-time messages name it too.
pub(crate) fn name_command_buffer(shared: &Shared, cb: vk::CommandBuffer, label: &str) {
    if shared.labels {
        shared.set_name(cb, label);
    }
}

/// Binary semaphores a batch may wait for, and signal, besides its queue's timeline.
pub(crate) const MAX_EXTRA: usize = 2;

/// The most application timeline semaphores one submission waits for
/// (`Queue::submit_after`).
pub const MAX_TIMELINE_WAITS: usize = 4;

/// No explicit dependencies (`Batch::explicit`).
pub(crate) const NO_EXPLICIT: [u64; MAX_QUEUES] = [0; MAX_QUEUES];

/// One batch for [`submit`]: what it runs, and the presenter's extra synchronization.
#[derive(Clone, Copy)]
pub(crate) struct Batch<'s> {
    /// Reported if the device is lost.
    pub label: &'s str,
    /// The executable command buffer (none: the batch only waits and signals).
    pub command_buffer: Option<vk::CommandBuffer>,
    /// Binary semaphores to wait for, with the stages that wait (a swapchain acquire).
    pub wait: &'s [(vk::Semaphore, vk::PipelineStageFlags2)],
    /// Timeline semaphores of the application to wait for, each until its value, at all
    /// stages (`Queue::submit_after`; at most [`MAX_TIMELINE_WAITS`]).
    pub timeline_wait: &'s [(vk::Semaphore, u64)],
    /// Binary semaphores to signal once the batch completes (a present waits for it).
    pub signal: &'s [vk::Semaphore],
    /// Timeline semaphores of the application to signal once the batch completes, each to
    /// its value (`After::signal`; at most [`MAX_TIMELINE_WAITS`]).
    pub timeline_signal: &'s [(vk::Semaphore, u64)],
    /// Signalled once the batch completes (a frame's fence), or null.
    pub fence: vk::Fence,
    /// Resources the batch uses besides those its work names (kiln's own copies, which
    /// are raw commands): the stamps, and whether the batch writes the resource.
    pub uses: &'s [(&'s ResourceStamps, bool)],
    /// Also wait for every submission made so far on every other queue (the blocking
    /// transfers' promise: every earlier submission is ordered before them).
    pub after_all: bool,
    /// The other parts of one split copy submitted before this one (`(kiln queue, value)`;
    /// `device::TransferSplit`): where a use's stamp on such a queue is that part's value,
    /// this batch waits for the value before it instead (everything on that queue before
    /// the copy), so the parts of one copy do not wait for each other.
    pub siblings: &'s [(usize, u64)],
    /// Submissions the caller ordered this batch after (`Queue::after`): per kiln queue,
    /// the highest value to wait for (0: none), merged with the derived waits
    /// (`after::merge_explicit`), so each queue's timeline is waited for once.
    pub explicit: &'s [u64; MAX_QUEUES],
}

impl<'s> Batch<'s> {
    /// A command buffer and nothing else.
    pub(crate) fn commands(label: &'s str, cb: vk::CommandBuffer) -> Batch<'s> {
        Batch {
            label,
            command_buffer: Some(cb),
            wait: &[],
            timeline_wait: &[],
            signal: &[],
            timeline_signal: &[],
            fence: vk::Fence::null(),
            uses: &[],
            after_all: false,
            siblings: &[],
            explicit: &NO_EXPLICIT,
        }
    }
}

/// Calls `f` with every use of `work` and `extra` (see the module docs).
fn for_each_use(
    work: &RecordedWork<'_>,
    extra: &[(&ResourceStamps, bool)],
    mut f: impl FnMut(&ResourceStamps, bool),
) {
    use ash::vk::Handle;
    // With automatic barriers the recording knows what it really wrote (the reflected
    // access of each binding, a copy's source read only): the rest is only read.
    let wrote = |raw: u64| work.written.as_ref().is_none_or(|w| w.contains(&raw));
    for set in &work.used_sets {
        set.for_each_resource(|stamps, write, raw| f(stamps, write && wrote(raw)));
    }
    for b in &work.kept {
        f(b.stamps(), wrote(b.raw().as_raw()));
    }
    for b in &work.read {
        f(b.stamps(), false);
    }
    for u in &work.images {
        f(u.image.stamps(), true);
    }
    for (stamps, write) in extra {
        f(stamps, *write);
    }
}

/// Submits `batch` to queue `queue`: it waits for the queue's previous timeline value,
/// `batch.wait` and the values of other queues its uses depend on (module docs), signals
/// the next value (and `batch.signal`, `batch.fence`); then applies `work`: every moved
/// image's final layout is committed, every used set and resource stamped with the value.
/// Returns the value.
///
/// The waits and signals are planned from plain data first ([`cross_queue_after`],
/// [`SubmitPlan::new`], both pure and unit-tested), then applied: one `vkQueueSubmit2`
/// ([`submit_planned`]) and the stamps ([`apply_submitted`]).
///
/// Errors: `KILN-E105` device lost (naming `batch.label`; also when it was lost earlier,
/// then nothing is tried), `KILN-E106` out of memory, `KILN-E104` other failures; then
/// nothing was submitted, the command buffer is not pending, `batch.fence` is not
/// signalled and no image layout or stamp changed.
pub(crate) fn submit(
    shared: &Shared,
    queue: usize,
    batch: &Batch<'_>,
    work: &RecordedWork<'_>,
) -> Result<u64, SubmissionError> {
    let q = shared.queues.get(queue).ok_or(DeviceError::Internal {
        what: "a submission to a kiln queue the device does not have",
    })?;
    check_batch(batch)?;
    shared.check_lost("vkQueueSubmit2")?;
    let multi = shared.queues.len() > 1;
    let guard = q.lock();
    // Queue lock, then the cross-queue lock: the one order kiln takes them in.
    let order = multi.then(|| shared.cross_queue.lock().unwrap_or_else(|p| p.into_inner()));
    let value = guard.next_value();
    // Values of other queues to wait for (0: none).
    let after = if multi {
        let submitted: [u64; MAX_QUEUES] =
            std::array::from_fn(|p| shared.queues.get(p).map_or(0, |o| o.submitted()));
        let mut use_waits = [0u64; MAX_QUEUES];
        for_each_use(work, batch.uses, |stamps, write| {
            stamps.add_waits(queue, write, &mut use_waits)
        });
        cross_queue_after(queue, batch, &submitted, &use_waits)
    } else {
        [0; MAX_QUEUES]
    };
    let timelines: [vk::Semaphore; MAX_QUEUES] = std::array::from_fn(|p| {
        shared
            .queues
            .get(p)
            .map_or(vk::Semaphore::null(), |o| o.timeline())
    });
    let plan = SubmitPlan::new(
        &timelines[..shared.queues.len()],
        queue,
        value,
        batch,
        &after,
    );
    if plan.cross > 0 {
        shared
            .cross_queue_waits
            .fetch_add(plan.cross as u64, Ordering::Relaxed);
    }
    submit_planned(shared, queue, &guard, batch, work, &plan, &after)?;
    guard.mark_submitted(value, batch.label);
    apply_submitted(shared, queue, value, batch, work);
    drop(order);
    drop(guard);
    Ok(value)
}

/// The limits on a batch's semaphores (`MAX_EXTRA` binary ones each way, a coding error of
/// kiln's; `MAX_TIMELINE_WAITS` application timelines each way, `KILN-E131`
/// `TooManyWaits`), checked before any lock or Vulkan call.
fn check_batch(batch: &Batch<'_>) -> Result<(), SubmissionError> {
    if batch.wait.len() > MAX_EXTRA || batch.signal.len() > MAX_EXTRA {
        return Err(DeviceError::Internal {
            what: "a submission with more binary semaphores than kiln's batches hold",
        }
        .into());
    }
    if batch.timeline_wait.len() > MAX_TIMELINE_WAITS
        || batch.timeline_signal.len() > MAX_TIMELINE_WAITS
    {
        return Err(SubmissionError::TooManyWaits {
            label: batch.label.to_string(),
            count: batch.timeline_wait.len().max(batch.timeline_signal.len()),
            max: MAX_TIMELINE_WAITS,
        });
    }
    Ok(())
}

/// The `vkQueueSubmit2` of `plan` on `queue` (locked by `guard`), between the queue's
/// debug label (labels on), the validation context of the submission (validation on) and
/// the fault injector. On failure the error is noted (device lost) and returned; nothing
/// was submitted.
#[allow(clippy::too_many_arguments)]
fn submit_planned(
    shared: &Shared,
    queue: usize,
    guard: &QueueGuard<'_>,
    batch: &Batch<'_>,
    work: &RecordedWork<'_>,
    plan: &SubmitPlan,
    after: &[u64; MAX_QUEUES],
) -> Result<(), SubmissionError> {
    let q = &shared.queues[queue];
    let mut waits = [vk::SemaphoreSubmitInfo::default(); MAX_WAITS];
    for (w, op) in waits.iter_mut().zip(plan.waits()) {
        *w = op.info();
    }
    let mut signals = [vk::SemaphoreSubmitInfo::default(); MAX_SIGNALS];
    for (s, op) in signals.iter_mut().zip(plan.signals()) {
        *s = op.info();
    }
    let cb = batch
        .command_buffer
        .map(|cb| vk::CommandBufferSubmitInfo::default().command_buffer(cb));
    let cbs = cb.as_slice();
    let info = vk::SubmitInfo2::default()
        .wait_semaphore_infos(&waits[..plan.n_waits])
        .command_buffer_infos(cbs)
        .signal_semaphore_infos(&signals[..plan.n_signals]);
    // Debug labels (validation on, or KILN_LABELS=1): the submission's label on the queue
    // (its command buffer was named with it before recording, `name_command_buffer`), so
    // the layer's messages and capture tools name it.
    let labels = shared.label_fns();
    if let Some(du) = labels {
        let name = CString::new(batch.label).unwrap_or_default();
        let label = vk::DebugUtilsLabelEXT::default().label_name(&name);
        // SAFETY: the queue is externally synchronized by its lock; `name` outlives the call.
        unsafe { du.queue_begin_debug_utils_label(guard.raw(), &label) };
    }
    let context = shared.instance.validation.then(|| {
        let order = queue_order(shared, queue, plan.value, after);
        SubmitContext::enter(batch.label, &work.pipelines, &work.raw_calls, Some(order))
    });
    if let Some(crumbs) = &work.crumbs {
        shared.submitting_crumbs(queue, batch.label, crumbs);
    }
    // A fault injected here fails the call as the driver would (the test-only injector).
    let submitted = shared.inject(FaultSite::QueueSubmit).and_then(|()| {
        // SAFETY: the queue is externally synchronized by its lock; the command buffer is
        // executable and not pending; timeline values increase strictly (assigned under the
        // lock); every value waited for on another queue's timeline was submitted already
        // (a stamp is stored only after its submission), so no wait precedes its signal;
        // binary semaphores and the fence are in the states their owner (the presenter)
        // guarantees; locals outlive the call.
        let r = unsafe { shared.raw.queue_submit2(guard.raw(), &[info], batch.fence) };
        if r.is_err() {
            q.note_submit_failed();
        }
        r
    });
    drop(context);
    if let Some(du) = labels {
        // SAFETY: closes the label region opened above, under the same lock.
        unsafe { du.queue_end_debug_utils_label(guard.raw()) };
    }
    submitted.map_err(|e| {
        shared
            .note_device_error(timing::with_description(
                vk_err_labeled("vkQueueSubmit2", batch.label)(e),
                batch.label,
                work.timed.as_deref(),
            ))
            .into()
    })
}

/// What the layer's submit-time messages can check submission `value` of `queue` against
/// (validation on), noting the cross-queue waits `after` on the queue.
fn queue_order(shared: &Shared, queue: usize, value: u64, after: &[u64; MAX_QUEUES]) -> QueueOrder {
    let q = &shared.queues[queue];
    let mut order = QueueOrder {
        queue,
        after: [0; MAX_QUEUES],
        exact: [false; MAX_QUEUES],
    };
    for (p, other) in shared.queues.iter().enumerate().take(MAX_QUEUES) {
        if after[p] > 0 {
            q.note_waited(p, after[p]);
        }
        // Another queue's work is also before this submission when the host saw it
        // complete before submitting (§7.4: a host wait, then the submission).
        order.after[p] = if p == queue {
            value - 1
        } else {
            q.waited_for(p).max(other.seen_complete())
        };
        order.exact[p] = other.layer_index_is_value(&shared.queues);
    }
    order
}

/// After a successful submission of `value` on `queue`: later recordings see the image
/// layouts this one leaves behind, a write to a set it bound waits for it, and (several
/// queues) later submissions on other queues that use what it uses wait for it. Called
/// under the locks, so that layouts and stamps of two queues' submissions are applied in
/// the order they were submitted.
fn apply_submitted(
    shared: &Shared,
    queue: usize,
    value: u64,
    batch: &Batch<'_>,
    work: &RecordedWork<'_>,
) {
    work.commit_layouts();
    for set in &work.used_sets {
        set.uses().stamp(queue, value);
    }
    // Also with one queue: host access to a mapped buffer waits for the stamps of the
    // submissions that use it (`Shared::wait_host_access`), not for every submission.
    for_each_use(work, batch.uses, |stamps, write| {
        stamps.record(queue, value, write)
    });
    if work.opaque {
        shared.opaque.stamp(queue, value);
    }
}

/// A submitted batch of commands. Waiting is explicit ([`wait`](Self::wait),
/// [`wait_timed`](Self::wait_timed)); dropping an unwaited submission waits for it, so
/// retired objects are always collected.
///
/// A wait that times out (`DeviceDesc::wait_timeout`, `KILN_WAIT_TIMEOUT_MS`) or finds the
/// device lost names the submission's label and its scopes. With
/// `DeviceDesc::validation_fail` (`KILN_VALIDATION_FAIL=1`) a wait also fails with
/// `KILN-E121` when the validation layer reported errors since the submission started
/// recording (on a device used by several threads at once, errors of another thread's
/// submission made meanwhile count too).
#[must_use = "a submission runs asynchronously; wait() for its results"]
pub struct Submission {
    shared: Arc<Shared>,
    queue: usize,
    value: u64,
    label: Cow<'static, str>,
    /// The validation errors counted before it was recorded (`timing::error_mark`).
    errors_from: u32,
    /// Its timestamps and the recording generation it was submitted with.
    timed: Option<(Arc<TimedWork>, u64)>,
}

impl Submission {
    pub(crate) fn new(
        shared: Arc<Shared>,
        queue: usize,
        value: u64,
        label: Cow<'static, str>,
        errors_from: u32,
        timed: Option<&Arc<TimedWork>>,
    ) -> Submission {
        let timed = timed.map(|t| (t.clone(), t.generation.load(Ordering::Acquire)));
        Submission {
            shared,
            queue,
            value,
            label,
            errors_from,
            timed,
        }
    }

    /// The timeline value this submission signals.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// The kiln queue it was submitted on.
    pub(crate) fn queue_index(&self) -> usize {
        self.queue
    }

    /// Whether it was made on the device of `shared`.
    pub(crate) fn is_of(&self, shared: &Arc<Shared>) -> bool {
        Arc::ptr_eq(&self.shared, shared)
    }

    /// The label it was submitted with (`"execute"`, `"submit"`, `"recording"`, or the
    /// label given to `submit_labeled`).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// True once the GPU has finished it.
    pub fn is_done(&self) -> bool {
        self.value <= self.shared.completed_value(self.queue)
    }

    /// Its GPU timings if the GPU has finished it (`Ok(None)` while it runs); never waits
    /// or stalls the queue.
    ///
    /// Errors: `KILN-E124` the submission was not timed (no scope and
    /// `DeviceDesc::timing` off) or a later submission of the same `Recording` reset its
    /// queries; `KILN-E104` reading the queries failed.
    pub fn gpu_timings(&self) -> Result<Option<GpuTimings>, SubmissionError> {
        let Some((timed, generation)) = &self.timed else {
            return Err(self.untimed());
        };
        if self.value != 0 && !self.is_done() {
            return Ok(None);
        }
        timing::read(
            &self.shared,
            timed,
            *generation,
            &self.label,
            Instant::now(),
        )
    }

    fn untimed(&self) -> SubmissionError {
        SubmissionError::TimingsUnavailable {
            label: self.label.to_string(),
            why: "it was not timed; open a scope (Recorder::scope) or turn on \
                  DeviceDesc::timing / KILN_TIMING=1",
        }
    }

    /// Blocks until the GPU has finished; device writes are then visible to host reads.
    ///
    /// Errors: `KILN-E105` device lost, `KILN-E108` timeout (after the device's wait
    /// timeout, `DeviceDesc::wait_timeout`), both naming the label and scopes;
    /// `KILN-E121` validation errors (with `DeviceDesc::validation_fail`).
    pub fn wait(mut self) -> Result<(), SubmissionError> {
        let r = self.wait_inner();
        self.keep_queries_if_pending();
        // Value 0 is always complete: Drop has nothing left to wait for.
        self.value = 0;
        r
    }

    /// [`wait`](Self::wait), then the submission's GPU timings.
    ///
    /// Errors: those of `wait`; `KILN-E124` the submission was not timed (or its queries
    /// were reset by a later submission of its `Recording`).
    pub fn wait_timed(mut self) -> Result<GpuTimings, SubmissionError> {
        let r = self.wait_inner();
        self.keep_queries_if_pending();
        self.value = 0;
        r?;
        let Some((timed, generation)) = &self.timed else {
            return Err(self.untimed());
        };
        match timing::read(
            &self.shared,
            timed,
            *generation,
            &self.label,
            Instant::now(),
        )? {
            Some(t) => Ok(t),
            None => Err(SubmissionError::TimingsUnavailable {
                label: self.label.to_string(),
                why: "its queries are not available although it completed",
            }),
        }
    }

    /// After a failed wait: if the GPU may still write the queries, they must not go back
    /// to the free list (a reset would race the writes); the pool is then never reused and
    /// is destroyed with the device.
    fn keep_queries_if_pending(&mut self) {
        if !self.is_done() {
            if let Some((t, _)) = self.timed.take() {
                std::mem::forget(t);
            }
        }
    }

    /// Blocks until the GPU has finished it or `timeout` passed, keeping the submission (to
    /// wait again, or to order later work after it, `Queue::after`); device writes are
    /// then visible to host reads. CUDA's `cudaEventSynchronize` with a deadline.
    ///
    /// Errors: `KILN-E108` not finished within `timeout` (naming the label and scopes; the
    /// submission is still pending and may be waited for again), `KILN-E105` device lost,
    /// `KILN-E121` validation errors (with `DeviceDesc::validation_fail`).
    pub fn wait_for(&self, timeout: std::time::Duration) -> Result<(), SubmissionError> {
        self.wait_within(timeout)
    }

    fn wait_inner(&self) -> Result<(), SubmissionError> {
        self.wait_within(self.shared.wait_timeout)
    }

    fn wait_within(&self, timeout: std::time::Duration) -> Result<(), SubmissionError> {
        let timed = self.timed.as_ref().map(|(t, _)| &**t);
        let trace = self.shared.slot::<Trace>().ok().filter(|t| t.on());
        let span = trace.and_then(|t| t.span("wait"));
        let _t = tracing::trace_span!("kiln.wait", label = &*self.label).entered();
        self.shared
            .wait_value_for(self.queue, self.value, timeout, &self.label)
            .map_err(|e| timing::with_description(e, &self.label, timed))?;
        if let Some(span) = span {
            span.end(&self.label);
        }
        let zones = (self.shared.slot::<Profilers>().ok()).filter(|p| p.on());
        if trace.is_some() || zones.is_some() {
            if let Some((t, generation)) = &self.timed {
                if let Ok(Some(timings)) =
                    timing::read(&self.shared, t, *generation, &self.label, Instant::now())
                {
                    if let Some(trace) = trace {
                        trace.gpu(self.queue, &timings);
                    }
                    if let Some(zones) = zones {
                        zones.submission(self.queue, &timings);
                    }
                }
            }
        }
        timing::check_validation(&self.shared, self.errors_from, &self.label, timed)
    }
}

impl Drop for Submission {
    fn drop(&mut self) {
        if self.value == 0 {
            return;
        }
        if let Err(e) = self.shared.wait_value_for(
            self.queue,
            self.value,
            self.shared.wait_timeout,
            &self.label,
        ) {
            log::error!("kiln: waiting for a dropped submission failed: {e}");
            self.keep_queries_if_pending();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    #[test]
    fn batch_limits_are_checked() {
        let mut batch = Batch::commands("b", vk::CommandBuffer::null());
        assert!(check_batch(&batch).is_ok());
        let waits = [(vk::Semaphore::from_raw(1), 1); MAX_TIMELINE_WAITS + 1];
        batch.timeline_wait = &waits;
        match check_batch(&batch) {
            Err(SubmissionError::TooManyWaits { count, max, .. }) => {
                assert_eq!((count, max), (MAX_TIMELINE_WAITS + 1, MAX_TIMELINE_WAITS))
            }
            other => panic!("expected TooManyWaits, got {other:?}"),
        }
    }
}
