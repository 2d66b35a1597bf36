//! [`Queue`]: the public handle of one of the device's queues, and the `Device` methods
//! that hand queues out.
//!
//! A device has a main queue and, where the hardware has them, async-compute and
//! transfer queues (`device::families` says how they are chosen). Work goes to a queue by
//! calling it on that queue's handle — `device.queue(QueueKind::Transfer).upload(..)`,
//! `device.queue(QueueKind::Compute).submit(|r| ..)` — the shape of a CUDA stream or of
//! wgpu's and vulkano's `Queue`. `Device::execute`/`submit`/`record` are the main queue's.
//! A kind the device has no queue of its own for is the main queue
//! ([`QueueInfo::source`] says which): code written for three queues runs unchanged on one.
//!
//! Submissions on different queues are ordered where they use the same resources (see
//! `queue::submit`): an upload on the transfer queue followed by a dispatch on the compute
//! queue that reads the buffer waits for it on the GPU; independent work overlaps. Each
//! queue has its own lock, timeline and command contexts, so threads submit to different
//! queues at once.

use std::sync::Arc;

use super::device::submit_on;
use super::{Recording, Submission};
use crate::commands::Recorder;
use crate::device::{Device, QueueInfo, QueueKind, Shared};
use crate::error::{DeviceError, Result};

/// One of the device's queues (cheap to clone: the device and an index). Made by
/// [`Device::queue`] and [`Device::queues`].
#[derive(Clone)]
pub struct Queue {
    pub(crate) shared: Arc<Shared>,
    pub(crate) index: usize,
    pub(crate) kind: QueueKind,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("info", &self.info()).finish()
    }
}

impl Queue {
    /// What this queue is: kind, family, index, capabilities and whether it is a queue of
    /// its own ([`QueueSource`](crate::QueueSource)).
    pub fn info(&self) -> QueueInfo {
        queue_info(&self.shared, self.index, self.kind)
    }

    /// Records commands with `f` on this queue, submits them and waits until the GPU has
    /// finished (see [`Device::execute`]).
    ///
    /// Errors: whatever `f` returns (`KILN-E120` for a command this queue's family cannot
    /// run, e.g. a dispatch on a transfer queue), `KILN-E105` device lost, `KILN-E108`
    /// timeout.
    pub fn execute<'a, R>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<R> {
        let (out, sub) = submit_on(&self.shared, self.index, "execute", f)?;
        sub.wait()?;
        Ok(out)
    }

    /// Records commands with `f` on this queue and submits them without waiting (see
    /// [`Device::submit`]). The submission waits on the GPU for other queues' pending work
    /// that writes what it uses (or uses what it writes). Errors: as
    /// [`execute`](Self::execute), without the waits.
    pub fn submit<'a>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Submission> {
        Ok(submit_on(&self.shared, self.index, "submit", f)?.1)
    }

    /// Like [`submit`](Self::submit), with a label reported if the device is lost, and
    /// the closure's result returned beside the submission.
    pub fn submit_labeled<'a, R>(
        &'a self,
        label: &str,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<(R, Submission)> {
        submit_on(&self.shared, self.index, label.to_string(), f)
    }

    /// Records commands with `f` once, for this queue (see [`Device::record`]).
    ///
    /// Errors: whatever `f` returns; `KILN-E284` an image left in another layout than the
    /// one it started in (images it discards first excepted).
    pub fn record<'a>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Recording<'a>> {
        Recording::new(&self.shared, self.index, f)
    }

    /// Waits until every submission made to this queue so far has finished.
    ///
    /// Errors: `KILN-E105` device lost, `KILN-E108` timeout.
    pub fn wait_idle(&self) -> Result<(), DeviceError> {
        let last = self.shared.queues[self.index].submitted();
        self.shared
            .wait_value(self.index, last, self.shared.wait_timeout)
    }
}

impl PartialEq for Queue {
    /// The same kiln queue of the same device (the kind asked for does not count).
    fn eq(&self, other: &Queue) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared) && self.index == other.index
    }
}

impl Eq for Queue {}

fn queue_info(shared: &Shared, index: usize, kind: QueueKind) -> QueueInfo {
    let q = &shared.queues[index];
    let p = q.planned;
    QueueInfo {
        kind,
        index,
        family: p.family,
        queue_index: p.queue_index,
        flags: p.flags,
        source: if index == 0 && kind != QueueKind::Main {
            crate::QueueSource::Main
        } else {
            p.source
        },
    }
}

impl Device {
    /// The first queue of `kind`: a dedicated queue where the device has one, else the
    /// main queue (its [`info`](Queue::info) says which).
    pub fn queue(&self, kind: QueueKind) -> Queue {
        let index = self.shared.queues_by_kind[kind.slot()]
            .first()
            .copied()
            .unwrap_or(0);
        Queue {
            shared: self.shared.clone(),
            index,
            kind,
        }
    }

    /// Every queue of `kind` kiln created (`DeviceDesc::compute_queues`,
    /// `DeviceDesc::transfer_queues`), or the main queue alone where the device has none
    /// of its own for it.
    pub fn queues(&self, kind: QueueKind) -> Vec<Queue> {
        self.shared.queues_by_kind[kind.slot()]
            .iter()
            .map(|&index| Queue {
                shared: self.shared.clone(),
                index,
                kind,
            })
            .collect()
    }

    /// What every kiln queue of the device is, main queue first (each queue once).
    pub fn queue_infos(&self) -> Vec<QueueInfo> {
        (0..self.shared.queues.len())
            .map(|i| queue_info(&self.shared, i, self.shared.queues[i].planned.kind))
            .collect()
    }
}
