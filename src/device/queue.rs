//! Queues as handles: each [`Queue`] is one `VkQueue` with its family, the lock that
//! externally synchronizes it (Vulkan spec §3.6 "Threading Behavior"), its timeline
//! semaphore and the counters of the values handed out and known complete.
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
//! The device has one queue today (index [`Queue::MAIN`]: compute, and graphics where the
//! device has it); the list is a `Vec` so that dedicated transfer or async-compute queues
//! can join it, each with its own timeline.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use ash::vk;

use crate::error::{vk_err, vk_err_labeled, vk_wait_err, Error, Result};

/// Default time a wait polls the timeline (`vkGetSemaphoreCounterValue`) before blocking
/// in `vkWaitSemaphores`, on devices that are not the CPU itself.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(200);

/// How long kiln's own waits (`Device::execute`, `Submission::wait`, host access to memory
/// a submission may use, descriptor-set rewrites) last before `KILN-E108`.
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One `VkQueue` of the device and its timeline.
pub(crate) struct Queue {
    raw: Mutex<vk::Queue>,
    /// Queue family index.
    pub family: u32,
    timeline: vk::Semaphore,
    /// Last value handed to a submission.
    submitted: AtomicU64,
    /// Highest value known complete (cache of the timeline's counter).
    completed: AtomicU64,
    /// Label of the last submission, for device-lost reports.
    last_label: Mutex<String>,
    /// Polling budget of waits (see the module docs).
    spin: Duration,
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
    /// The device's one queue today (see the module docs).
    pub(crate) const MAIN: usize = 0;

    /// Queue `index` of `family` of a device with timeline semaphores enabled.
    pub(crate) fn create(
        device: &ash::Device,
        family: u32,
        index: u32,
        spin: Duration,
    ) -> Result<Queue> {
        let mut ty = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
        // SAFETY: timeline semaphores are enabled on this device (checked at creation).
        let timeline =
            unsafe { device.create_semaphore(&info, None) }.map_err(vk_err("vkCreateSemaphore"))?;
        // SAFETY: the device was created with queue `index` of `family`.
        let raw = unsafe { device.get_device_queue(family, index) };
        Ok(Queue {
            raw: Mutex::new(raw),
            family,
            timeline,
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            last_label: Mutex::new(String::new()),
            spin,
        })
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
    pub(crate) fn error(&self, call: &'static str, timeout: Duration, e: vk::Result) -> Error {
        vk_wait_err(call, timeout, &self.last_label())(e)
    }

    /// Blocks until `value` has completed (or the timeout passes). The caller collects
    /// retired objects afterwards.
    pub(crate) fn wait_value(
        &self,
        device: &ash::Device,
        value: u64,
        timeout: Duration,
    ) -> Result<()> {
        if value <= self.completed_value(device) {
            return Ok(());
        }
        // Fast path: a short GPU job finishes sooner than a blocking wait's wake-up
        // (interrupt + scheduler), so poll the counter for a bounded time first.
        if !self.spin.is_zero() {
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
                        let label = self.last_label();
                        return Err(vk_err_labeled("vkGetSemaphoreCounterValue", &label)(e));
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
            Err(e) => Err(self.error("vkWaitSemaphores", timeout, e)),
        }
    }
}
