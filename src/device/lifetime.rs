//! Object lifetime: deferred destruction of objects that submissions may still use.
//!
//! Every kiln object holds the device's shared state, so the `VkDevice` outlives them all.
//! An object dropped by the user is *retired*: tagged with the last value submitted to each
//! queue and destroyed once every queue's timeline has reached its tag (the shape of
//! Granite's `PerFrame::begin`). Retired objects are collected after every wait that moves
//! a completed value forward, when an object is retired after its tag already completed,
//! and at device teardown (after `vkDeviceWaitIdle`).

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::{Queue, QueueStamps, Shared};
use crate::error::Result;

type Garbage = Box<dyn FnOnce(&Shared) + Send>;

/// Retired objects with the per-queue values they wait for.
#[derive(Default)]
pub(crate) struct Graveyard {
    entries: Mutex<Vec<(Box<[u64]>, Garbage)>>,
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
            f(self);
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
        for f in ready {
            f(self);
        }
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
    /// Errors: `KILN-E105` device lost (naming the last submission), `KILN-E108` timeout
    /// (naming the time waited).
    pub(crate) fn wait_value(&self, queue: usize, value: u64, timeout: Duration) -> Result<()> {
        if let Some(q) = self.queues.get(queue) {
            q.wait_value(&self.raw, value, timeout)?;
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
            q.poll_value(&self.raw, value, timeout)?;
        }
        self.collect();
        Ok(())
    }

    /// Blocks until every queue's value in `stamps` has completed (host access to memory
    /// that those submissions use), then collects retired objects.
    ///
    /// Errors: `KILN-E105` device lost, `KILN-E108` timeout (after
    /// [`EXECUTE_TIMEOUT`](super::EXECUTE_TIMEOUT)).
    pub(crate) fn wait_stamps(&self, stamps: &QueueStamps) -> Result<()> {
        for (queue, value) in stamps.values() {
            if value > self.completed_value(queue) {
                self.wait_value(queue, value, super::EXECUTE_TIMEOUT)?;
            }
        }
        Ok(())
    }

    /// Waits for every submission made so far to every queue: host access to mapped memory
    /// must not race a submission that may read or write it (Vulkan spec §11.2.2 "Host
    /// Access to Device Memory Objects"; every submission ends with a barrier that makes
    /// its writes visible to the host).
    pub(crate) fn wait_all_submitted(&self) -> Result<()> {
        for (i, q) in self.queues.iter().enumerate() {
            let last = q.submitted();
            if last > q.completed_value(&self.raw) {
                self.wait_value(i, last, super::EXECUTE_TIMEOUT)?;
            }
        }
        Ok(())
    }
}
