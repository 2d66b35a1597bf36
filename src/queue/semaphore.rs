//! [`TimelineSemaphore`]: a timeline semaphore the application owns (Vulkan spec §7.4.2),
//! signalled from the host and waited for by submissions ([`Queue::submit_after`]).
//!
//! It is how work is held until the host says so — a test holding a queue still, a frame
//! waiting for data another thread produces — without the spec's limits on host-set events
//! (a `VkEvent` that a pending command buffer waits on must not be set from the host,
//! VUID-vkSetEvent-event-09543; timeline waits have no such rule and may be submitted before
//! their signal, §7.4.2 "wait-before-signal").
//!
//! Lifetime: dropping the semaphore destroys it once every submission made so far has
//! completed (`Shared::retire`). A submission that waits for a value nobody signals never
//! completes: signal every value waited for before waiting for the submission or dropping
//! the device (waits end with `KILN-E108` after the device's wait timeout).

use std::sync::Arc;
use std::time::Duration;

use ash::vk;

use super::{Queue, Submission};
use crate::commands::Recorder;
use crate::device::{create_timeline, Device, Shared};
use crate::error::{vk_device_err, Result, SubmissionError};

/// A timeline semaphore of one device: a `u64` counter that only grows. Made by
/// [`Device::timeline_semaphore`].
pub struct TimelineSemaphore {
    pub(super) shared: Arc<Shared>,
    pub(super) raw: vk::Semaphore,
    pub(super) label: String,
    /// The handle type it was created exportable as (`Device::exportable_timeline_semaphore`).
    pub(super) exportable: Option<crate::ExternalHandle>,
    /// The highest value a kiln submission was made to signal (`After::signal`): a signal
    /// must exceed every pending one too (VUID-VkSemaphoreSignalInfo-value-03259).
    pub(super) signalled: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for TimelineSemaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimelineSemaphore")
            .field("label", &self.label)
            .field("raw", &self.raw)
            .finish()
    }
}

impl Device {
    /// A timeline semaphore with counter `initial` (`vkCreateSemaphore` with
    /// `VkSemaphoreTypeCreateInfo`, §7.4.2), named `label` in validation messages.
    ///
    /// Errors: `KILN-E106` out of memory, `KILN-E104` other failures.
    pub fn timeline_semaphore(
        &self,
        label: &str,
        initial: u64,
    ) -> Result<TimelineSemaphore, SubmissionError> {
        let shared = &self.shared;
        let raw = create_timeline(&shared.raw, initial)?;
        shared.set_name(raw, label);
        Ok(TimelineSemaphore::wrap(shared, raw, label, None))
    }
}

impl TimelineSemaphore {
    /// Owns `raw`, a timeline semaphore of `shared`'s device.
    pub(super) fn wrap(
        shared: &Arc<Shared>,
        raw: vk::Semaphore,
        label: &str,
        exportable: Option<crate::ExternalHandle>,
    ) -> TimelineSemaphore {
        TimelineSemaphore {
            shared: shared.clone(),
            raw,
            label: label.to_string(),
            exportable,
            signalled: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        }
    }

    /// The value a new signal must exceed: the counter, or a greater value a pending kiln
    /// submission signals.
    pub(super) fn floor(&self) -> Result<u64, SubmissionError> {
        let pending = self.signalled.load(std::sync::atomic::Ordering::Acquire);
        Ok(self.value()?.max(pending))
    }

    /// The counter's current value (`vkGetSemaphoreCounterValue`).
    ///
    /// Errors: `KILN-E105` device lost, `KILN-E104` other failures.
    pub fn value(&self) -> Result<u64, SubmissionError> {
        // SAFETY: the semaphore is a live timeline semaphore of this device.
        unsafe { self.shared.raw.get_semaphore_counter_value(self.raw) }.map_err(|e| {
            self.shared
                .note_device_error(vk_device_err("vkGetSemaphoreCounterValue")(e))
                .into()
        })
    }

    /// Sets the counter to `value` from the host (`vkSignalSemaphore`): submissions waiting
    /// for it or less may run.
    ///
    /// Errors: `KILN-E130` `value` is not greater than the current value, or than a value
    /// a pending kiln submission signals (VUID-VkSemaphoreSignalInfo-value-03258, -03259),
    /// `KILN-E105` device lost, `KILN-E104`
    /// other failures.
    pub fn signal(&self, value: u64) -> Result<(), SubmissionError> {
        let current = self.floor()?;
        if value <= current {
            return Err(SubmissionError::TimelineValue {
                object: self.label.clone(),
                value,
                current,
            });
        }
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(self.raw)
            .value(value);
        // SAFETY: the semaphore is a live timeline semaphore of this device and `value` is
        // greater than its current value and every value a kiln submission signals (checked
        // above; a submission signalling a greater value made meanwhile by another thread,
        // or another API's signal of an imported payload, is the caller's to order).
        unsafe { self.shared.raw.signal_semaphore(&info) }.map_err(|e| {
            self.shared
                .note_device_error(vk_device_err("vkSignalSemaphore")(e))
                .into()
        })
    }

    /// Waits on the host until the counter reaches `value`; `Ok(false)` when `timeout`
    /// passed first (`vkWaitSemaphores`).
    ///
    /// Errors: `KILN-E105` device lost, `KILN-E104` other failures.
    pub fn wait(&self, value: u64, timeout: Duration) -> Result<bool, SubmissionError> {
        let semaphores = [self.raw];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: the semaphore is a live timeline semaphore of this device; the arrays
        // outlive the call.
        match unsafe { self.shared.raw.wait_semaphores(&info, ns) } {
            Ok(()) => Ok(true),
            Err(vk::Result::TIMEOUT) => Ok(false),
            Err(e) => Err(self
                .shared
                .note_device_error(vk_device_err("vkWaitSemaphores")(e))
                .into()),
        }
    }

    /// Waits on the host until the counter reaches `value`, at most `timeout`
    /// (`vkWaitSemaphores`); the coded form of [`wait`](Self::wait).
    ///
    /// Errors: `KILN-E132` `timeout` passed first (naming the semaphore, the value and the
    /// value it had), `KILN-E105` device lost, `KILN-E104` other failures.
    pub fn wait_for(&self, value: u64, timeout: Duration) -> Result<(), SubmissionError> {
        if self.wait(value, timeout)? {
            return Ok(());
        }
        Err(SubmissionError::TimelineTimeout {
            object: self.label.clone(),
            value,
            current: self.value()?,
            ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// The Vulkan handle, for raw submissions of the caller's own. kiln keeps ownership.
    pub fn raw(&self) -> vk::Semaphore {
        self.raw
    }

    /// The label it was created with.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether this semaphore belongs to the device of `shared`.
    pub(crate) fn is_of(&self, shared: &Arc<Shared>) -> bool {
        Arc::ptr_eq(&self.shared, shared)
    }
}

impl Drop for TimelineSemaphore {
    fn drop(&mut self) {
        let raw = self.raw;
        self.shared.retire(move |s| {
            // SAFETY: retired: every submission that could wait for it has completed.
            unsafe { s.raw.destroy_semaphore(raw, None) }
        });
    }
}

impl Queue {
    /// Like [`submit`](Self::submit), and the submission also waits on the GPU, before any
    /// of its commands, until each semaphore of `waits` reaches its value (§7.4.2). The value may be signalled after this call (wait-before-signal).
    ///
    /// A semaphore named twice is waited for once, at the larger value. The same as
    /// `self.after(&[]).timeline(s, v)…submit(f)` ([`Queue::after`]).
    ///
    /// Errors: `KILN-E109` a semaphore of another device, `KILN-E131` more than
    /// [`MAX_TIMELINE_WAITS`](crate::MAX_TIMELINE_WAITS) semaphores; then as
    /// [`submit`](Self::submit).
    pub fn submit_after<'a>(
        &'a self,
        waits: &[(&TimelineSemaphore, u64)],
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Submission> {
        Ok(self.submit_labeled_after("submit", waits, f)?.1)
    }

    /// [`submit_after`](Self::submit_after) with a label reported by timeouts and a lost
    /// device, and the closure's result returned beside the submission (as
    /// [`submit_labeled`](Self::submit_labeled)).
    ///
    /// Errors: as [`submit_after`](Self::submit_after).
    pub fn submit_labeled_after<'a, R>(
        &'a self,
        label: &str,
        waits: &[(&TimelineSemaphore, u64)],
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<(R, Submission)> {
        let mut after = self.after(&[]);
        for &(s, value) in waits {
            after = after.wait_for(s, value);
        }
        after.submit_labeled(label, f)
    }
}
