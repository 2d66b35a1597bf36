//! Explicit dependencies: work on a queue ordered after submissions the caller names
//! ([`Queue::after`]) and after application timeline values ([`After::timeline`]), beside
//! the waits kiln derives from the resources a submission uses (`queue::submit`).
//!
//! What a dependency means: the later submission waits on the GPU, at all stages and
//! before any of its commands, for the earlier submission's queue timeline to reach that
//! submission's value (Vulkan spec §7.4.2 "Semaphore Waiting"). That is a full execution
//! and memory dependency (§7.4.1: the signal's first synchronization scope is every
//! command of the earlier batch, its memory writes made available; the wait's second
//! scope every command of the later batch, with the writes made visible), so raw commands
//! (`Recorder::raw`), which name no resource and get no derived wait, are ordered too.
//! It is CUDA's `cudaStreamWaitEvent` with the event recorded at the end of the earlier
//! submission.
//!
//! Merging: derived waits and explicit ones go through one array, per kiln queue the
//! highest value to wait for ([`merge_explicit`]); a queue's timeline is waited for once
//! (the larger value orders everything the smaller does: the timeline only grows, and each
//! submission on a queue waits for its predecessor). A dependency on a submission of the
//! submitting queue itself is already met (each submission waits for its queue's previous
//! value) and adds no wait. Application timeline semaphores named twice are waited for
//! once, at the larger value ([`merge_timeline`]).
//!
//! Cycles: a dependency names a [`Submission`], which exists only once it was submitted,
//! so every dependency points back in time and a cycle cannot be written. (A wait on an
//! application timeline value nobody signals never completes; host waits on it end with
//! `KILN-E108` after the device's wait timeout.)

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;

use super::device::{submit_after_on, Deps};
use super::{Queue, Submission, TimelineSemaphore, MAX_TIMELINE_WAITS};
use crate::commands::Recorder;
use crate::device::{Shared, MAX_QUEUES};
use crate::error::{Error, Result};

/// Work for one queue, ordered after earlier submissions and timeline values. Made by
/// [`Queue::after`]; submitted by [`submit`](Self::submit),
/// [`submit_labeled`](Self::submit_labeled) or [`execute`](Self::execute).
///
/// A bad dependency (a submission or semaphore of another device, too many semaphores) is
/// reported by the call that submits, before anything is recorded.
#[must_use = "nothing is submitted until submit, submit_labeled or execute"]
pub struct After<'q> {
    queue: &'q Queue,
    /// Per kiln queue, the highest value of its timeline to wait for (0: none).
    submissions: [u64; MAX_QUEUES],
    /// Application timeline semaphores and their values, each semaphore once.
    timelines: Vec<(vk::Semaphore, u64)>,
    /// Application timeline semaphores to signal (each once), borrowed until submitted.
    signals: Vec<(&'q TimelineSemaphore, u64)>,
    /// The first bad dependency named, reported when submitting.
    error: Option<Error>,
}

impl std::fmt::Debug for After<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("After")
            .field("queue", &self.queue.index)
            .field("submissions", &self.submissions)
            .field("timelines", &self.timelines)
            .field("signals", &self.signals.len())
            .finish()
    }
}

impl Queue {
    /// Work on this queue that the GPU runs only after every submission of `submissions`
    /// has completed, on whichever queue of this device it was made (see the module docs
    /// of `queue::after`): a full memory dependency, raw commands included. Chain
    /// [`After::after`] and [`After::timeline`] for more, then
    /// [`submit`](After::submit).
    ///
    /// ```ignore
    /// let fill = compute.submit(|r| r.fill_buffer(&x, 7))?;
    /// let copy = transfer.after(&[&fill]).submit(|r| r.copy_buffer(&x, &y))?;
    /// ```
    ///
    /// Errors (when submitting): `KILN-E109` a submission of another device; then as
    /// [`submit`](Self::submit).
    pub fn after(&self, submissions: &[&Submission]) -> After<'_> {
        After {
            queue: self,
            submissions: [0; MAX_QUEUES],
            timelines: Vec::new(),
            signals: Vec::new(),
            error: None,
        }
        .after(submissions)
    }
}

impl<'q> After<'q> {
    /// Also after each submission of `submissions`.
    pub fn after(mut self, submissions: &[&Submission]) -> Self {
        for s in submissions {
            if !s.is_of(&self.queue.shared) {
                self.fail(Error::ForeignObject {
                    object: format!("submission `{}`", s.label()),
                });
                continue;
            }
            if let Some(v) = self.submissions.get_mut(s.queue_index()) {
                *v = (*v).max(s.value());
            }
        }
        self
    }

    /// Also after `semaphore` reaches `value` (wait-before-signal allowed, §7.4.2).
    ///
    /// Errors (when submitting): `KILN-E109` a semaphore of another device, `KILN-E131`
    /// more than [`MAX_TIMELINE_WAITS`] distinct semaphores.
    pub fn timeline(self, semaphore: &'q TimelineSemaphore, value: u64) -> Self {
        self.wait_for(semaphore, value)
    }

    /// [`timeline`](Self::timeline) without tying the borrow to the builder: for
    /// `Queue::submit_labeled_after`, which submits while its caller's borrow is alive.
    pub(super) fn wait_for(mut self, semaphore: &TimelineSemaphore, value: u64) -> Self {
        if !semaphore.is_of(&self.queue.shared) {
            self.fail(Error::ForeignObject {
                object: format!("timeline semaphore `{}`", semaphore.label()),
            });
        } else {
            merge_timeline(&mut self.timelines, semaphore.raw(), value);
        }
        self
    }

    /// Also signals `semaphore` to `value` once the work completes (on the GPU, after all of
    /// it: §7.4.1, the signal's first scope is every command of the batch). How CUDA, or
    /// another kiln device that imported the semaphore, waits for kiln's work.
    ///
    /// Errors (when submitting): `KILN-E109` a semaphore of another device; `KILN-E130`
    /// `value` not greater than the semaphore's value or a value a pending kiln submission
    /// signals (VUID-VkSemaphoreSubmitInfo-semaphore-03882 and the spec's rule that a
    /// timeline only grows); `KILN-E133` more than [`MAX_TIMELINE_WAITS`] semaphores to
    /// signal.
    pub fn signal(mut self, semaphore: &'q TimelineSemaphore, value: u64) -> Self {
        if !semaphore.is_of(&self.queue.shared) {
            self.fail(Error::ForeignObject {
                object: format!("timeline semaphore `{}`", semaphore.label()),
            });
            return self;
        }
        match self
            .signals
            .iter_mut()
            .find(|(s, _)| s.raw() == semaphore.raw())
        {
            Some((_, v)) => *v = (*v).max(value),
            None => self.signals.push((semaphore, value)),
        }
        self
    }

    /// Refuses a signal that would not make its semaphore grow.
    fn check_signals(&self) -> Result<()> {
        if self.signals.len() > MAX_TIMELINE_WAITS {
            return Err(Error::TooManySignals {
                count: self.signals.len(),
                max: MAX_TIMELINE_WAITS,
            });
        }
        for &(s, value) in &self.signals {
            let current = s.floor()?;
            if value <= current {
                return Err(Error::TimelineValue {
                    object: s.label().to_string(),
                    value,
                    current,
                });
            }
        }
        Ok(())
    }

    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Records commands with `f` and submits them without waiting, after the dependencies
    /// (and the waits kiln derives). See [`Queue::submit`].
    ///
    /// Errors: `KILN-E109`, `KILN-E131` (see [`Queue::after`], [`timeline`](Self::timeline));
    /// then as [`Queue::submit`].
    pub fn submit(
        self,
        f: impl for<'r> FnOnce(&mut Recorder<'q, 'r>) -> Result<()>,
    ) -> Result<Submission> {
        Ok(self.submit_labeled("submit", f)?.1)
    }

    /// [`submit`](Self::submit) with a label (reported by timeouts and a lost device) and
    /// the closure's result returned beside the submission.
    ///
    /// Errors: as [`submit`](Self::submit).
    pub fn submit_labeled<R>(
        self,
        label: &str,
        f: impl for<'r> FnOnce(&mut Recorder<'q, 'r>) -> Result<R>,
    ) -> Result<(R, Submission)> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.timelines.len() > MAX_TIMELINE_WAITS {
            return Err(Error::TooManyWaits {
                label: label.to_string(),
                count: self.timelines.len(),
                max: MAX_TIMELINE_WAITS,
            });
        }
        self.check_signals()?;
        let shared: &'q Arc<Shared> = &self.queue.shared;
        let signals: Vec<(vk::Semaphore, u64)> =
            self.signals.iter().map(|(s, v)| (s.raw(), *v)).collect();
        let deps = Deps {
            timeline_wait: &self.timelines,
            timeline_signal: &signals,
            explicit: &self.submissions,
        };
        let out = submit_after_on(shared, self.queue.index, label.to_string(), &deps, f)?;
        for &(s, value) in &self.signals {
            s.signalled.fetch_max(value, Ordering::AcqRel);
        }
        Ok(out)
    }

    /// [`submit`](Self::submit), then waits until the GPU has finished it (see
    /// [`Queue::execute`]).
    ///
    /// Errors: as [`submit`](Self::submit); `KILN-E105`, `KILN-E108`, `KILN-E121` from the
    /// wait.
    pub fn execute<R>(
        self,
        f: impl for<'r> FnOnce(&mut Recorder<'q, 'r>) -> Result<R>,
    ) -> Result<R> {
        let (out, sub) = self.submit_labeled("execute", f)?;
        sub.wait()?;
        Ok(out)
    }
}

/// Raises `after[p]`, for every kiln queue `p` other than `queue`, to the explicit
/// dependency `explicit[p]`: the derived and the explicit waits on one queue's timeline
/// become one wait, for the larger value. `queue`'s own entry stays: each submission
/// already waits for its queue's previous value, which is at least any value a
/// submission of that queue made so far.
pub(crate) fn merge_explicit(
    queue: usize,
    after: &mut [u64; MAX_QUEUES],
    explicit: &[u64; MAX_QUEUES],
) {
    for (p, (a, &e)) in after.iter_mut().zip(explicit).enumerate() {
        if p != queue {
            *a = (*a).max(e);
        }
    }
}

/// Adds the wait for `semaphore` to reach `value` to `waits`, or raises the value of the
/// wait already there for it: one wait per semaphore.
pub(crate) fn merge_timeline(
    waits: &mut Vec<(vk::Semaphore, u64)>,
    semaphore: vk::Semaphore,
    value: u64,
) {
    match waits.iter_mut().find(|(s, _)| *s == semaphore) {
        Some((_, v)) => *v = (*v).max(value),
        None => waits.push((semaphore, value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    #[test]
    fn explicit_and_derived_waits_on_one_queue_become_one_wait_for_the_larger_value() {
        // Submitting on queue 0; derived: queue 1 at 5, queue 2 at 3.
        let mut after = [0u64; MAX_QUEUES];
        after[1] = 5;
        after[2] = 3;
        let mut explicit = [0u64; MAX_QUEUES];
        explicit[0] = 9; // own queue: already ordered by the wait on the previous value
        explicit[1] = 4; // below the derived value: the derived wait covers it
        explicit[2] = 7; // above: one wait, for 7
        explicit[3] = 2; // a queue with no derived wait
        merge_explicit(0, &mut after, &explicit);
        let mut want = [0u64; MAX_QUEUES];
        want[1] = 5;
        want[2] = 7;
        want[3] = 2;
        assert_eq!(after, want);
        // Nothing explicit changes nothing.
        let before = after;
        merge_explicit(0, &mut after, &[0; MAX_QUEUES]);
        assert_eq!(after, before);
        // Merging twice is merging once (idempotent, no duplicate waits to count).
        merge_explicit(0, &mut after, &explicit);
        assert_eq!(after, want);
        // On another queue the own-queue rule applies to that queue.
        let mut on_two = [0u64; MAX_QUEUES];
        merge_explicit(2, &mut on_two, &explicit);
        let mut want = explicit;
        want[2] = 0;
        assert_eq!(on_two, want);
    }

    #[test]
    fn a_semaphore_named_twice_is_waited_for_once_at_the_larger_value() {
        let (a, b) = (vk::Semaphore::from_raw(1), vk::Semaphore::from_raw(2));
        let mut waits = Vec::new();
        merge_timeline(&mut waits, a, 3);
        merge_timeline(&mut waits, b, 1);
        merge_timeline(&mut waits, a, 2);
        merge_timeline(&mut waits, a, 8);
        assert_eq!(waits, vec![(a, 8), (b, 1)]);
    }
}
