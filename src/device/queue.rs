//! Queues as handles: each [`Queue`] is one kiln queue: a `VkQueue` with its family, the
//! lock that externally synchronizes it (Vulkan spec §3.6 "Threading Behavior"), its
//! timeline semaphore and the counters of the values handed out and known complete.
//!
//! Every submission to a queue signals the next value of that queue's timeline (§7.4.2
//! "Semaphore Signaling"); values are assigned under the queue's lock, so they increase
//! strictly in submission order. The submission layer (`queue`) makes submissions; this
//! layer only hands out values ([`QueueGuard::next_value`]), records them
//! ([`QueueGuard::mark_submitted`]) and waits for them ([`Queue::wait_value`]).
//!
//! Waiting polls the timeline counter for up to `KILN_SPIN_US` microseconds (default
//! [`DEFAULT_SPIN`] on GPUs, 0 on CPU devices) before blocking in `vkWaitSemaphores`: a
//! short job then returns as soon as it is done instead of after the blocking wait's
//! wake-up latency, at the price of up to that much CPU time per wait.
//!
//! # Resources used on several queues
//!
//! Each buffer, image and host buffer keeps [`ResourceStamps`]: per kiln queue, the value
//! of the last submission that used it and of the last that wrote it. A submission on queue
//! `q` that reads a resource waits (on the GPU, a timeline wait) for the last write of every
//! other queue; one that writes waits for the last use. The submission layer derives the
//! uses and stamps them (see `queue::submit`). Resources are created with
//! `VK_SHARING_MODE_CONCURRENT` over every family kiln's queues use (`families::Sharing`).
//!
//! Which queues a device gets, and what each supports: `families`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use ash::vk;

use super::families::{PlannedQueue, QueueSource};
use crate::error::{vk_device_err, vk_err_labeled, vk_wait_err, DeviceError, Result};

/// The most kiln queues a device has (main + async compute + transfer, each with its own
/// timeline); per-resource stamps are fixed arrays of this length.
pub const MAX_QUEUES: usize = 8;

/// How the name of a kiln queue's own `VkQueue` starts; the kiln queue index follows.
pub(crate) const QUEUE_NAME: &str = "kiln queue ";

/// Per kiln queue, a timeline value (0: none).
#[derive(Debug, Default)]
pub(crate) struct QueueStamps([AtomicU64; MAX_QUEUES]);

impl QueueStamps {
    /// The value stamped for `queue` (0: none).
    #[inline]
    pub(crate) fn get(&self, queue: usize) -> u64 {
        self.0.get(queue).map_or(0, |v| v.load(Ordering::Acquire))
    }

    /// Raises `queue`'s value to `value`.
    #[inline]
    pub(crate) fn stamp(&self, queue: usize, value: u64) {
        if let Some(v) = self.0.get(queue) {
            v.fetch_max(value, Ordering::AcqRel);
        }
    }

    /// `(queue, value)` of every queue with a value.
    pub(crate) fn values(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.0
            .iter()
            .enumerate()
            .map(|(q, v)| (q, v.load(Ordering::Acquire)))
            .filter(|(_, v)| *v > 0)
    }
}

/// What submissions did with one resource, per kiln queue (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ResourceStamps {
    /// The last submission that read or wrote it.
    pub used: QueueStamps,
    /// The last submission that wrote it.
    pub written: QueueStamps,
}

impl ResourceStamps {
    /// Raises `waits[p]`, for every queue `p` other than `queue`, to the value a submission
    /// on `queue` must wait for before it reads the resource (`write` false: the last write
    /// of `p`) or writes it (the last use of `p`).
    #[inline]
    pub(crate) fn add_waits(&self, queue: usize, write: bool, waits: &mut [u64; MAX_QUEUES]) {
        let from = if write { &self.used } else { &self.written };
        for (p, w) in waits.iter_mut().enumerate() {
            if p != queue {
                *w = (*w).max(from.get(p));
            }
        }
    }

    /// Records that the submission `value` of `queue` uses the resource (and writes it).
    #[inline]
    pub(crate) fn record(&self, queue: usize, value: u64, write: bool) {
        self.used.stamp(queue, value);
        if write {
            self.written.stamp(queue, value);
        }
    }
}

/// Default time a wait polls the timeline (`vkGetSemaphoreCounterValue`) before blocking
/// in `vkWaitSemaphores`, on devices that are not the CPU itself.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(200);

/// How long kiln's own waits (`Device::execute`, `Submission::wait`, host access to memory
/// a submission may use, descriptor-set rewrites) last before `KILN-E108`, unless
/// `DeviceDesc::wait_timeout` or `KILN_WAIT_TIMEOUT_MS` says otherwise.
pub const EXECUTE_TIMEOUT: Duration = Duration::from_secs(120);

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

/// A timeline semaphore of `device` with counter `initial` (§7.4.2): each kiln queue's,
/// and the application's (`TimelineSemaphore`).
///
/// Errors: `KILN-E106` out of memory, `KILN-E104` other failures.
pub(crate) fn create_timeline(
    device: &ash::Device,
    initial: u64,
) -> Result<vk::Semaphore, DeviceError> {
    let mut ty = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(vk::SemaphoreType::TIMELINE)
        .initial_value(initial);
    let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
    // SAFETY: a plain create on a live device with timeline semaphores enabled (every kiln
    // device: `Shared::create` refuses a device without them); `ty` outlives the call.
    unsafe { device.create_semaphore(&info, None) }.map_err(vk_device_err("vkCreateSemaphore"))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One kiln queue: a `VkQueue` (shared with the main queue when emulated) and its timeline.
pub(crate) struct Queue {
    /// The `VkQueue` and its lock (one lock per `VkQueue`: emulated queues share the main
    /// queue's).
    raw: Arc<Mutex<vk::Queue>>,
    /// Queue family index.
    pub family: u32,
    /// What the queue is, for [`QueueInfo`].
    pub planned: PlannedQueue,
    timeline: vk::Semaphore,
    /// Last value handed to a submission.
    submitted: AtomicU64,
    /// Highest value known complete (cache of the timeline's counter).
    completed: AtomicU64,
    /// Label of the last submission, for device-lost reports.
    last_label: Mutex<String>,
    /// Polling budget of waits (see the module docs).
    spin: Duration,
    /// Every wait for a value blocks in `vkWaitSemaphores`, even for a value already
    /// reached and without polling first: the validation layer (1.4) reads the shader
    /// printf and GPU-AV output of a submission when the host waits for it there, not when
    /// a counter read sees it complete.
    layer_waits: bool,
    /// With validation on: per other kiln queue, the highest of its timeline values this
    /// queue's submissions have waited for (`SubmitContext`'s ordering facts).
    waited: QueueStamps,
    /// A `vkQueueSubmit2` on this queue failed: the layer's submit index of this queue may
    /// no longer be its timeline value minus one.
    submit_failed: AtomicBool,
}

/// The queue's lock, held for a submission: the raw queue may be used, values handed out.
pub(crate) struct QueueGuard<'q> {
    queue: &'q Queue,
    raw: MutexGuard<'q, vk::Queue>,
}

impl QueueGuard<'_> {
    /// The raw queue (externally synchronized by this guard).
    pub(crate) fn raw(&self) -> vk::Queue {
        *self.raw
    }

    /// The value the next submission signals (it waits for the one before).
    pub(crate) fn next_value(&self) -> u64 {
        self.queue.submitted.load(Ordering::Acquire) + 1
    }

    /// Records that the submission signalling `value` was made.
    pub(crate) fn mark_submitted(&self, value: u64, label: &str) {
        self.queue.submitted.store(value, Ordering::Release);
        let mut l = lock(&self.queue.last_label);
        l.clear();
        l.push_str(label);
    }
}

impl Queue {
    /// The main queue's index (every device has it).
    pub(crate) const MAIN: usize = 0;

    /// The kiln queue `planned` of a device with timeline semaphores enabled: its own
    /// `VkQueue` (index `planned.queue_index` of `planned.family`), or, when emulated,
    /// `main`'s.
    pub(crate) fn create(
        device: &ash::Device,
        planned: PlannedQueue,
        main: Option<&Queue>,
        spin: Duration,
        layer_waits: bool,
    ) -> Result<Queue> {
        let timeline = create_timeline(device, 0)?;
        let raw = match (planned.source, main) {
            (QueueSource::Emulated, Some(m)) => m.raw.clone(),
            // SAFETY: the device was created with queue `queue_index` of `family` (the
            // plan's create list covers every dedicated queue).
            _ => Arc::new(Mutex::new(unsafe {
                device.get_device_queue(planned.family, planned.queue_index)
            })),
        };
        Ok(Queue {
            raw,
            family: planned.family,
            planned,
            timeline,
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            last_label: Mutex::new(String::new()),
            spin,
            layer_waits,
            waited: QueueStamps::default(),
            submit_failed: AtomicBool::new(false),
        })
    }

    /// Records (validation on) that a submission on this queue waits for `value` of kiln
    /// queue `other`'s timeline.
    pub(crate) fn note_waited(&self, other: usize, value: u64) {
        self.waited.stamp(other, value);
    }

    /// The highest value of kiln queue `other`'s timeline this queue has waited for
    /// ([`note_waited`](Self::note_waited)).
    pub(crate) fn waited_for(&self, other: usize) -> u64 {
        self.waited.get(other)
    }

    /// The highest value of this queue's timeline the host has seen complete (no call).
    pub(crate) fn seen_complete(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    /// Records that a `vkQueueSubmit2` call on this queue failed.
    pub(crate) fn note_submit_failed(&self) {
        self.submit_failed.store(true, Ordering::Release);
    }

    /// Whether the validation layer's submit index on this queue's `VkQueue` is its
    /// timeline value minus one: the `VkQueue` is this queue's alone and no submission on
    /// it failed. (Every `vkQueueSubmit2` kiln makes signals the queue's next value.)
    pub(crate) fn layer_index_is_value(&self, all: &[Queue]) -> bool {
        !self.submit_failed.load(Ordering::Acquire)
            && all.iter().filter(|q| q.same_vk_queue(self)).count() == 1
    }

    /// The name kiln gives the `VkQueue` of kiln queue `index` (validation messages print
    /// it; `instance::ordered_note` reads the index back from it), or a name listing the
    /// kiln queues that share one `VkQueue`.
    pub(crate) fn debug_name(index: usize, all: &[Queue]) -> String {
        let Some(me) = all.get(index) else {
            return String::new();
        };
        let sharing: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(_, q)| q.same_vk_queue(me))
            .map(|(i, q)| format!("{i} {:?}", q.planned.kind))
            .collect();
        if sharing.len() == 1 {
            format!("{QUEUE_NAME}{index} ({:?})", me.planned.kind)
        } else {
            format!("kiln queues {} (one VkQueue)", sharing.join(" + "))
        }
    }

    /// The raw `VkQueue` (for naming; submissions go through [`lock`](Self::lock)).
    pub(crate) fn raw_handle(&self) -> vk::Queue {
        *lock(&self.raw)
    }

    /// Whether `self` and `other` submit to the same `VkQueue` (one lock).
    pub(crate) fn same_vk_queue(&self, other: &Queue) -> bool {
        Arc::ptr_eq(&self.raw, &other.raw)
    }

    /// The queue family's capabilities.
    pub(crate) fn flags(&self) -> vk::QueueFlags {
        self.planned.flags
    }

    /// Destroys the timeline; the device must be idle.
    pub(crate) fn destroy(&self, device: &ash::Device) {
        // SAFETY: no submission is pending on an idle device; called once, at teardown.
        unsafe { device.destroy_semaphore(self.timeline, None) };
    }

    /// Takes the queue's lock (for a submission or a present).
    pub(crate) fn lock(&self) -> QueueGuard<'_> {
        QueueGuard {
            queue: self,
            raw: lock(&self.raw),
        }
    }

    /// The timeline semaphore every submission to this queue signals.
    pub(crate) fn timeline(&self) -> vk::Semaphore {
        self.timeline
    }

    /// Last value handed to a submission.
    pub(crate) fn submitted(&self) -> u64 {
        self.submitted.load(Ordering::Acquire)
    }

    /// The label of the last submission.
    pub(crate) fn last_label(&self) -> String {
        lock(&self.last_label).clone()
    }

    /// Highest value known complete (queries the timeline when behind).
    /// Whether every wait blocks in `vkWaitSemaphores` (see the field).
    pub(crate) fn layer_waits(&self) -> bool {
        self.layer_waits
    }

    pub(crate) fn completed_value(&self, device: &ash::Device) -> u64 {
        let cached = self.completed.load(Ordering::Acquire);
        if cached >= self.submitted() {
            return cached;
        }
        // SAFETY: the timeline semaphore belongs to this device.
        match unsafe { device.get_semaphore_counter_value(self.timeline) } {
            Ok(v) => {
                self.completed.fetch_max(v, Ordering::AcqRel);
                v.max(cached)
            }
            Err(_) => cached,
        }
    }

    /// The error of a failed wait or submission of `call`: a lost device names the label of
    /// the last submission, a timeout the time waited.
    pub(crate) fn error(
        &self,
        call: &'static str,
        timeout: Duration,
        e: vk::Result,
    ) -> DeviceError {
        vk_wait_err(call, timeout, &self.last_label())(e)
    }

    /// Waits for `value` by polling the timeline counter (yielding the thread between
    /// polls) for as long as `timeout`, never blocking in `vkWaitSemaphores`; on CPU
    /// devices (no polling budget, see the module docs) it is [`wait_value`](Self::wait_value).
    /// For staged transfers, whose host threads wait for copies of a fraction of a
    /// millisecond each: a GPU driver measured the chunk sizes and thread counts at which
    /// those threads blocked in `vkWaitSemaphores` at 2–6 GB/s instead of 20–30.
    pub(crate) fn poll_value(
        &self,
        device: &ash::Device,
        value: u64,
        timeout: Duration,
    ) -> Result<(), DeviceError> {
        if self.spin.is_zero() {
            return self.wait_value(device, value, timeout, "");
        }
        let start = Instant::now();
        let mut polls = 0u32;
        loop {
            if value <= self.completed.load(Ordering::Acquire) {
                return Ok(());
            }
            // SAFETY: the timeline semaphore belongs to this device.
            match unsafe { device.get_semaphore_counter_value(self.timeline) } {
                Ok(v) if v >= value => {
                    self.completed.fetch_max(v, Ordering::AcqRel);
                    return Ok(());
                }
                Ok(_) => {}
                Err(e) => {
                    let label = self.last_label();
                    return Err(vk_err_labeled("vkGetSemaphoreCounterValue", &label)(e));
                }
            }
            polls = polls.wrapping_add(1);
            if polls.is_multiple_of(64) && start.elapsed() >= timeout {
                return Err(self.error("vkGetSemaphoreCounterValue", timeout, vk::Result::TIMEOUT));
            }
            if start.elapsed() < self.spin {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// The error of a failed wait for the submission labelled `label` (empty: unknown, then
    /// a lost device names the last submission).
    pub(crate) fn wait_error(&self, timeout: Duration, label: &str, e: vk::Result) -> DeviceError {
        if label.is_empty() {
            self.error("vkWaitSemaphores", timeout, e)
        } else {
            vk_wait_err("vkWaitSemaphores", timeout, label)(e)
        }
    }

    /// Blocks until `value` has completed (or the timeout passes). The caller collects
    /// retired objects afterwards.
    pub(crate) fn wait_value(
        &self,
        device: &ash::Device,
        value: u64,
        timeout: Duration,
        label: &str,
    ) -> Result<(), DeviceError> {
        if !self.layer_waits && value <= self.completed_value(device) {
            return Ok(());
        }
        // Fast path: a short GPU job finishes sooner than a blocking wait's wake-up
        // (interrupt + scheduler), so poll the counter for a bounded time first.
        if !self.spin.is_zero() && !self.layer_waits {
            let start = Instant::now();
            loop {
                // SAFETY: the timeline semaphore belongs to this device.
                match unsafe { device.get_semaphore_counter_value(self.timeline) } {
                    Ok(v) if v >= value => {
                        self.completed.fetch_max(v, Ordering::AcqRel);
                        return Ok(());
                    }
                    Ok(_) => {}
                    Err(e) => {
                        let last = self.last_label();
                        let label = if label.is_empty() { &last } else { label };
                        return Err(vk_err_labeled("vkGetSemaphoreCounterValue", label)(e));
                    }
                }
                if start.elapsed() >= self.spin {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        let sems = [self.timeline];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        // SAFETY: the semaphore belongs to this device; locals outlive the call.
        match unsafe { device.wait_semaphores(&info, timeout.as_nanos() as u64) } {
            Ok(()) => {
                self.completed.fetch_max(value, Ordering::AcqRel);
                Ok(())
            }
            Err(e) => Err(self.wait_error(timeout, label, e)),
        }
    }
}
