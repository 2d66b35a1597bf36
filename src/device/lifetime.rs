//! Object lifetime: deferred destruction of objects that submissions may still use.
//!
//! Every kiln object holds the device's shared state, so the `VkDevice` outlives them all.
//! An object dropped by the user is *retired*: tagged with the last value submitted to each
//! queue and destroyed once every queue's timeline has reached its tag (the shape of
//! Granite's `PerFrame::begin`). Retired objects are collected after every wait that moves
//! a completed value forward, when an object is retired after its tag already completed,
//! and at device teardown (after `vkDeviceWaitIdle`).

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::{Queue, QueueStamps, ResourceStamps, Shared};
use crate::error::{DeviceError, Result};

type Garbage = Box<dyn FnOnce(&Shared) + Send>;

/// Retired objects with the per-queue values they wait for.
#[derive(Default)]
pub(crate) struct Graveyard {
    entries: Mutex<Vec<(Box<[u64]>, Garbage)>>,
    /// Held while retired objects are destroyed and while a command buffer is reset
    /// ([`Shared::exclusive_invalidation`]).
    invalidation: Mutex<()>,
}

thread_local! {
    /// The device (its `Shared`'s address) whose invalidation lock this thread holds, 0 if
    /// none: a destroy that resets a command buffer (a dropped `Recording`) re-enters.
    static HOLDING: Cell<usize> = const { Cell::new(0) };
}

impl Graveyard {
    fn lock(&self) -> MutexGuard<'_, Vec<(Box<[u64]>, Garbage)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs every entry (device teardown: the device is idle).
    pub(super) fn destroy_all(&self, shared: &Shared) {
        let all: Vec<_> = self.lock().drain(..).collect();
        for (_, g) in all {
            g(shared);
        }
    }
}

impl Shared {
    /// Runs `f` while no other thread of this device destroys retired objects or resets a
    /// command buffer. Destroying an object and resetting a command buffer that recorded
    /// it are both valid at any time once the command buffer's submission has completed
    /// (Vulkan spec §6.1 "Command Buffer Lifecycle": the destroy makes it *invalid*, the
    /// reset *initial*), but the Khronos validation layer updates its command-buffer state
    /// for the two without a common lock: a destroy on one thread racing a reset on
    /// another can leave the re-recorded command buffer marked invalid, and its next
    /// submission is then reported as `UNASSIGNED-CoreValidation-DrawState-InvalidCommandBuffer`
    /// / VUID-vkQueueSubmit-pCommandBuffers-00070 (seen with layer 1.3.239 in kiln's
    /// `threads` test; KhronosGroup/Vulkan-ValidationLayers#8074, open). kiln serializes
    /// them: an uncontended lock around work that is rare and cheap. Re-entrant on one
    /// thread.
    pub(crate) fn exclusive_invalidation<R>(&self, f: impl FnOnce() -> R) -> R {
        let me = self as *const Shared as usize;
        if HOLDING.with(Cell::get) == me {
            return f();
        }
        let _guard = self
            .graveyard
            .invalidation
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        /// Restores the thread's previous holding on the way out (also on a panic).
        struct Restore(usize);
        impl Drop for Restore {
            fn drop(&mut self) {
                HOLDING.with(|h| h.set(self.0));
            }
        }
        let _restore = Restore(HOLDING.with(|h| h.replace(me)));
        f()
    }

    /// Whether every queue has completed the values in `tag` (one per queue).
    fn reached(&self, tag: &[u64]) -> bool {
        self.queues
            .iter()
            .zip(tag)
            .all(|(q, &v)| v <= q.completed_value(&self.raw))
    }

    /// Destroys an object now if no submission can still use it, else once every
    /// submission made so far has completed. `f` must not capture an `Arc<Shared>` unless
    /// that reference is meant to keep the device alive until collection.
    pub(crate) fn retire(&self, f: impl FnOnce(&Shared) + Send + 'static) {
        let idle = self
            .queues
            .iter()
            .all(|q| q.submitted() <= q.completed_value(&self.raw));
        if idle {
            self.exclusive_invalidation(|| f(self));
            return;
        }
        let tag: Box<[u64]> = self.queues.iter().map(Queue::submitted).collect();
        let ready = {
            let mut g = self.graveyard.lock();
            g.push((tag, Box::new(f)));
            // The submissions may have finished, and their waiters collected, between the
            // check above and the push: nobody else would collect this object then (and
            // one that holds an `Arc<Shared>` would keep the device alive forever). A
            // collection after the push sees the entry: checking under the lock suffices.
            g.last().is_some_and(|(tag, _)| self.reached(tag))
        };
        if ready {
            self.collect();
        }
    }

    /// Destroys retired objects whose submissions have finished.
    pub(crate) fn collect(&self) {
        let ready: Vec<Garbage> = {
            let mut g = self.graveyard.lock();
            if g.is_empty() {
                return;
            }
            let done: Vec<u64> = self
                .queues
                .iter()
                .map(|q| q.completed_value(&self.raw))
                .collect();
            let reached = |tag: &[u64]| tag.iter().zip(&done).all(|(t, d)| t <= d);
            if !g.iter().any(|(tag, _)| reached(tag)) {
                return;
            }
            let (ready, keep): (Vec<_>, Vec<_>) = g.drain(..).partition(|(tag, _)| reached(tag));
            *g = keep;
            ready.into_iter().map(|(_, f)| f).collect()
        };
        self.exclusive_invalidation(|| {
            for f in ready {
                f(self);
            }
        });
    }

    /// Highest value known complete on queue `queue`.
    pub(crate) fn completed_value(&self, queue: usize) -> u64 {
        self.queues
            .get(queue)
            .map_or(u64::MAX, |q| q.completed_value(&self.raw))
    }

    /// Blocks until value `value` of queue `queue` has completed (or the timeout passes),
    /// then collects retired objects.
    ///
    /// Errors: `KILN-E105` device lost (naming the last submission; also when it was lost
    /// earlier), `KILN-E108` timeout (naming the time waited), `KILN-E106` out of memory.
    pub(crate) fn wait_value(
        &self,
        queue: usize,
        value: u64,
        timeout: Duration,
    ) -> Result<(), DeviceError> {
        self.wait_value_for(queue, value, timeout, "")
    }

    /// [`wait_value`](Self::wait_value) for the submission `label` describes (its label and
    /// scopes), which a timeout or a device loss names.
    pub(crate) fn wait_value_for(
        &self,
        queue: usize,
        value: u64,
        timeout: Duration,
        label: &str,
    ) -> Result<(), DeviceError> {
        if let Some(q) = self.queues.get(queue) {
            if q.layer_waits() || value > q.completed_value(&self.raw) {
                self.check_lost("vkWaitSemaphores")?;
                self.inject(super::FaultSite::Wait)
                    .map_err(|e| q.wait_error(timeout, label, e))
                    .and_then(|()| q.wait_value(&self.raw, value, timeout, label))
                    .map_err(|e| self.note_device_error(e))?;
            }
        }
        self.collect();
        Ok(())
    }

    /// Like [`wait_value`](Self::wait_value), polling the timeline instead of blocking
    /// (`device::Queue::poll_value`): for the host threads of staged transfers.
    ///
    /// Errors: as [`wait_value`](Self::wait_value).
    pub(crate) fn poll_value(&self, queue: usize, value: u64, timeout: Duration) -> Result<()> {
        if let Some(q) = self.queues.get(queue) {
            if value > q.completed_value(&self.raw) {
                self.check_lost("vkWaitSemaphores")?;
                self.inject(super::FaultSite::Wait)
                    .map_err(|e| q.wait_error(timeout, "", e))
                    .and_then(|()| q.poll_value(&self.raw, value, timeout))
                    .map_err(|e| self.note_device_error(e))?;
            }
        }
        self.collect();
        Ok(())
    }

    /// Blocks until every queue's value in `stamps` has completed (host access to memory
    /// that those submissions use), then collects retired objects.
    ///
    /// Errors: `KILN-E105` device lost, `KILN-E108` timeout (after the device's wait
    /// timeout, `DeviceDesc::wait_timeout`).
    pub(crate) fn wait_stamps(&self, stamps: &QueueStamps) -> Result<(), DeviceError> {
        for (queue, value) in stamps.values() {
            if value > self.completed_value(queue) {
                self.wait_value(queue, value, self.wait_timeout)?;
            }
        }
        Ok(())
    }

    /// Waits until host access to a mapped buffer with `stamps` cannot race the GPU
    /// (Vulkan spec §11.2.2 "Host Access to Device Memory Objects"): for the last
    /// submission of each queue that wrote it (a host read: `write` false) or used it (a
    /// host write), and for the last one whose resources kiln cannot see (raw commands,
    /// buffer device addresses). Submissions that do not use the buffer are not waited for.
    /// Every submission ends with a barrier that makes its writes visible to the host.
    ///
    /// Errors: as [`wait_stamps`](Self::wait_stamps).
    pub(crate) fn wait_host_access(
        &self,
        stamps: &ResourceStamps,
        write: bool,
    ) -> Result<(), DeviceError> {
        self.wait_stamps(if write { &stamps.used } else { &stamps.written })?;
        self.wait_stamps(&self.opaque)
    }
}
