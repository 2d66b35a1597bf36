//! The plan of one submission, from plain data (unit-tested without a device): which other
//! queues' timeline values it waits for ([`cross_queue_after`], the rules in
//! `queue/submit.rs`'s module docs) and its waits and signals in `VkSubmitInfo2`'s order
//! ([`SubmitPlan`]). `queue::submit` applies the plan.

use ash::vk;

use super::submit::{Batch, MAX_EXTRA, MAX_TIMELINE_WAITS};
use crate::device::MAX_QUEUES;

/// The value of every other queue's timeline a submission on `queue` waits for (0: none),
/// from plain data: `submitted` (per kiln queue, its last submitted value; used with
/// `batch.after_all`), `use_waits` (the largest stamps of its uses on each other queue,
/// `ResourceStamps::add_waits`), `batch.siblings` and `batch.explicit`.
///
/// In order: `after_all` waits for everything submitted on the other queues; the uses'
/// stamps raise that; a sibling part's value (another part of one split copy) is lowered
/// to the value before it, so the parts do not wait for each other (the sibling's queue's
/// value before it is at least every stamp the sibling replaced); the caller's explicit
/// dependencies raise it (one wait per queue, the larger value). The own queue is never
/// in it (its order is the timeline's previous value, [`SubmitPlan::new`]).
pub(crate) fn cross_queue_after(
    queue: usize,
    batch: &Batch<'_>,
    submitted: &[u64; MAX_QUEUES],
    use_waits: &[u64; MAX_QUEUES],
) -> [u64; MAX_QUEUES] {
    let mut after = [0u64; MAX_QUEUES];
    for (p, a) in after.iter_mut().enumerate() {
        if p == queue {
            continue;
        }
        if batch.after_all {
            *a = submitted[p];
        }
        *a = (*a).max(use_waits[p]);
    }
    for &(p, v) in batch.siblings {
        if let Some(a) = after.get_mut(p) {
            if *a == v {
                *a = v - 1;
            }
        }
    }
    super::after::merge_explicit(queue, &mut after, batch.explicit);
    after
}

/// The most semaphores one submission waits for: its own timeline, the binary ones, the
/// application's timelines and one per other queue.
pub(super) const MAX_WAITS: usize = 1 + MAX_EXTRA + MAX_TIMELINE_WAITS + MAX_QUEUES;
/// The most semaphores one submission signals.
pub(super) const MAX_SIGNALS: usize = 1 + MAX_EXTRA + MAX_TIMELINE_WAITS;

/// One semaphore a submission waits for or signals: the value (0 for a binary semaphore)
/// and the stages (`VkSemaphoreSubmitInfo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SemaphoreOp {
    pub semaphore: vk::Semaphore,
    pub value: u64,
    pub stages: vk::PipelineStageFlags2,
}

impl SemaphoreOp {
    fn all(semaphore: vk::Semaphore, value: u64) -> SemaphoreOp {
        SemaphoreOp {
            semaphore,
            value,
            stages: vk::PipelineStageFlags2::ALL_COMMANDS,
        }
    }

    pub(super) fn info(&self) -> vk::SemaphoreSubmitInfo<'static> {
        vk::SemaphoreSubmitInfo::default()
            .semaphore(self.semaphore)
            .value(self.value)
            .stage_mask(self.stages)
    }
}

/// The waits and signals of one submission, in `VkSubmitInfo2`'s order, computed from plain
/// data (fixed arrays: a submission allocates nothing).
///
/// Waits: the own timeline's previous value (left out for the queue's first submission:
/// value 0 is the timeline's initial value, which no operation signalled, so a wait on it
/// orders nothing, §7.4.2), `batch.wait` at their stages, `batch.timeline_wait` and each
/// other queue's timeline at its `after` value (also when that value is complete already:
/// a host wait makes the other queue's writes available, not visible to this queue's
/// accesses; the semaphore wait does that, §7.4, §7.1 "Availability and visibility", and
/// costs nothing on a signalled value). Signals: the own timeline's `value`, `batch.signal`,
/// `batch.timeline_signal`. All at `ALL_COMMANDS` but the binary waits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SubmitPlan {
    waits: [SemaphoreOp; MAX_WAITS],
    pub(super) n_waits: usize,
    signals: [SemaphoreOp; MAX_SIGNALS],
    pub(super) n_signals: usize,
    /// How many of the waits are other queues' timelines.
    pub cross: usize,
    /// The value the submission signals on its queue's timeline.
    pub value: u64,
}

impl SubmitPlan {
    /// The plan for submission `value` on `queue` (its timeline `timelines[queue]`; one
    /// timeline per kiln queue) of `batch` (within `check_batch`'s limits), waiting for
    /// the other queues' values `after` ([`cross_queue_after`]).
    pub(crate) fn new(
        timelines: &[vk::Semaphore],
        queue: usize,
        value: u64,
        batch: &Batch<'_>,
        after: &[u64; MAX_QUEUES],
    ) -> SubmitPlan {
        let own = timelines.get(queue).copied().unwrap_or_default();
        let mut plan = SubmitPlan {
            waits: [SemaphoreOp::default(); MAX_WAITS],
            n_waits: 0,
            signals: [SemaphoreOp::default(); MAX_SIGNALS],
            n_signals: 0,
            cross: 0,
            value,
        };
        if value > 1 {
            plan.wait(SemaphoreOp::all(own, value - 1));
        }
        for &(semaphore, stages) in batch.wait {
            plan.wait(SemaphoreOp {
                semaphore,
                value: 0,
                stages,
            });
        }
        for &(s, v) in batch.timeline_wait {
            plan.wait(SemaphoreOp::all(s, v));
        }
        for (&timeline, &v) in timelines.iter().zip(after) {
            if v > 0 {
                plan.wait(SemaphoreOp::all(timeline, v));
                plan.cross += 1;
            }
        }
        plan.signal(SemaphoreOp::all(own, value));
        for &s in batch.signal {
            plan.signal(SemaphoreOp::all(s, 0));
        }
        for &(s, v) in batch.timeline_signal {
            plan.signal(SemaphoreOp::all(s, v));
        }
        plan
    }

    fn wait(&mut self, op: SemaphoreOp) {
        if let Some(w) = self.waits.get_mut(self.n_waits) {
            *w = op;
            self.n_waits += 1;
        }
    }

    fn signal(&mut self, op: SemaphoreOp) {
        if let Some(s) = self.signals.get_mut(self.n_signals) {
            *s = op;
            self.n_signals += 1;
        }
    }

    /// The waits, in order.
    pub(crate) fn waits(&self) -> &[SemaphoreOp] {
        &self.waits[..self.n_waits]
    }

    /// The signals, in order.
    pub(crate) fn signals(&self) -> &[SemaphoreOp] {
        &self.signals[..self.n_signals]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn sem(n: u64) -> vk::Semaphore {
        vk::Semaphore::from_raw(n)
    }

    const ALL: vk::PipelineStageFlags2 = vk::PipelineStageFlags2::ALL_COMMANDS;

    fn op(s: u64, value: u64) -> SemaphoreOp {
        SemaphoreOp::all(sem(s), value)
    }

    #[test]
    fn first_submission_waits_for_nothing_of_its_own_queue() {
        let batch = Batch::commands("b", vk::CommandBuffer::null());
        let plan = SubmitPlan::new(&[sem(10)], 0, 1, &batch, &[0; MAX_QUEUES]);
        assert_eq!(plan.waits(), &[] as &[SemaphoreOp]);
        assert_eq!(plan.signals(), &[op(10, 1)]);
        assert_eq!(plan.cross, 0);
        let plan = SubmitPlan::new(&[sem(10)], 0, 7, &batch, &[0; MAX_QUEUES]);
        assert_eq!(plan.waits(), &[op(10, 6)]);
        assert_eq!(plan.signals(), &[op(10, 7)]);
    }

    #[test]
    fn waits_and_signals_in_submit_order() {
        let acquire = vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT;
        let mut batch = Batch::commands("frame", vk::CommandBuffer::null());
        let wait = [(sem(1), acquire)];
        let timeline_wait = [(sem(2), 5), (sem(3), 9)];
        let signal = [sem(4)];
        let timeline_signal = [(sem(5), 11)];
        batch.wait = &wait;
        batch.timeline_wait = &timeline_wait;
        batch.signal = &signal;
        batch.timeline_signal = &timeline_signal;
        let mut after = [0; MAX_QUEUES];
        after[0] = 3;
        after[2] = 8;
        let timelines = [sem(20), sem(21), sem(22)];
        let plan = SubmitPlan::new(&timelines, 1, 4, &batch, &after);
        let binary = SemaphoreOp {
            semaphore: sem(1),
            value: 0,
            stages: acquire,
        };
        assert_eq!(
            plan.waits(),
            &[op(21, 3), binary, op(2, 5), op(3, 9), op(20, 3), op(22, 8)]
        );
        assert_eq!(plan.signals(), &[op(21, 4), op(4, 0), op(5, 11)]);
        assert_eq!(plan.cross, 2);
        assert!(plan
            .waits()
            .iter()
            .filter(|w| w.semaphore != sem(1))
            .all(|w| w.stages == ALL));
        // The limits are what the fixed arrays hold.
        let full_wait = [(sem(1), acquire); MAX_EXTRA];
        let full_tw = [(sem(2), 1); MAX_TIMELINE_WAITS];
        batch.wait = &full_wait;
        batch.timeline_wait = &full_tw;
        // Every other queue (`after` never names the own queue).
        let mut after = [9; MAX_QUEUES];
        after[0] = 0;
        let timelines = [sem(30); MAX_QUEUES];
        let plan = SubmitPlan::new(&timelines, 0, 2, &batch, &after);
        assert_eq!(plan.waits().len(), MAX_WAITS - 1);
        assert_eq!(plan.cross, MAX_QUEUES - 1);
    }

    #[test]
    fn cross_queue_after_merges_in_order() {
        let mut batch = Batch::commands("copy", vk::CommandBuffer::null());
        let mut submitted = [0; MAX_QUEUES];
        submitted[..3].copy_from_slice(&[10, 20, 30]);
        let mut uses = [0; MAX_QUEUES];
        uses[1] = 4;
        uses[2] = 30;
        // Uses only: the largest stamp per other queue; never the own queue.
        let mut own = uses;
        own[0] = 99;
        assert_eq!(
            cross_queue_after(0, &batch, &submitted, &own)[..3],
            [0, 4, 30]
        );
        // after_all: everything submitted on the other queues.
        batch.after_all = true;
        assert_eq!(
            cross_queue_after(0, &batch, &submitted, &uses)[..3],
            [0, 20, 30]
        );
        // A sibling part's value is lowered to the one before it (after after_all).
        let siblings = [(2, 30), (1, 7)];
        batch.siblings = &siblings;
        assert_eq!(
            cross_queue_after(0, &batch, &submitted, &uses)[..3],
            [0, 20, 29]
        );
        batch.after_all = false;
        // Explicit dependencies raise (never lower) the derived values.
        let mut explicit = [0; MAX_QUEUES];
        explicit[0] = 50;
        explicit[1] = 2;
        explicit[2] = 31;
        batch.explicit = &explicit;
        assert_eq!(
            cross_queue_after(0, &batch, &submitted, &uses)[..3],
            [0, 4, 31]
        );
        assert_eq!(
            cross_queue_after(1, &batch, &submitted, &uses)[..3],
            [50, 0, 31]
        );
    }
}
