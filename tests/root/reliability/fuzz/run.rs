//! The `Run` step: a command list recorded on one of the device's queues and run once,
//! submitted (waited for later, or dropped) or recorded once and resubmitted; the model
//! takes its effects at each submission that succeeded.

use std::sync::atomic::Ordering;

use kiln::{vk, Device, Queue, Recorder, Recording, Submission};
use proptest::test_runner::TestCaseError;

use super::model::apply;
use super::program::{Cmd, Mode, On};
use super::record::{record, Notes, RUN_CODES};
use super::world::{fail, World};
use super::{expect, CODED_ERRORS, REFUSED, RUNS};

/// Where a recording goes: the device's own path (`Device::execute`/`submit`/`record`,
/// the main queue) or a queue handle's.
#[derive(Clone, Copy)]
enum Target<'q> {
    Device(&'q Device),
    Queue(&'q Queue),
}

impl<'q> Target<'q> {
    fn execute(
        self,
        f: impl for<'r> FnOnce(&mut Recorder<'q, 'r>) -> kiln::Result<()>,
    ) -> kiln::Result<()> {
        match self {
            Target::Device(d) => d.execute(f),
            Target::Queue(q) => q.execute(f),
        }
    }

    fn submit(
        self,
        f: impl for<'r> FnOnce(&mut Recorder<'q, 'r>) -> kiln::Result<()>,
    ) -> kiln::Result<Submission> {
        match self {
            Target::Device(d) => d.submit(f),
            Target::Queue(q) => q.submit(f),
        }
    }

    fn record(
        self,
        f: impl for<'r> FnOnce(&mut Recorder<'q, 'r>) -> kiln::Result<()>,
    ) -> kiln::Result<Recording<'q>> {
        match self {
            Target::Device(d) => d.record(f),
            Target::Queue(q) => q.record(f),
        }
    }

    /// What the queue can run (`Recorder` refuses the rest with `KILN-E120`).
    fn flags(self) -> vk::QueueFlags {
        match self {
            Target::Device(d) => d.queue(kiln::QueueKind::Main).info().flags,
            Target::Queue(q) => q.info().flags,
        }
    }
}

/// A recording's result: with a command the queue cannot run, exactly `KILN-E120` (and
/// never success); otherwise success or one of [`RUN_CODES`].
fn judge<T>(r: kiln::Result<T>, notes: &Notes, step: &str) -> Result<Option<T>, TestCaseError> {
    let Some(what) = notes.refused else {
        return expect(r, RUN_CODES, step);
    };
    match r {
        Ok(_) => Err(fail(step, format!("{what} was accepted"))),
        Err(e) if e.code() == "KILN-E120" => {
            CODED_ERRORS.fetch_add(1, Ordering::Relaxed);
            REFUSED.fetch_add(1, Ordering::Relaxed);
            Ok(None)
        }
        Err(e) => Err(fail(step, format!("{what}: {e}, not KILN-E120"))),
    }
}

impl World<'_> {
    /// Records `cmds` on the queue `on` names and runs them as `mode` says.
    pub(super) fn run(
        &mut self,
        cmds: &[Cmd],
        mode: Mode,
        on: On,
        step: &str,
    ) -> Result<(), TestCaseError> {
        let w: &World<'_> = self;
        let target = match on {
            On::Main => Target::Device(w.device),
            On::Compute => Target::Queue(&w.compute),
            On::Transfer => Target::Queue(&w.transfer),
        };
        let flags = target.flags();
        let mut notes = Notes::default();
        let mut pending = None;
        let ran = match mode {
            Mode::Execute => {
                let r = target.execute(|r| record(r, w, cmds, flags, &mut notes));
                judge(r, &notes, step)?.map_or(0, |()| {
                    apply(&notes.effects);
                    1
                })
            }
            Mode::Submit => {
                let r = target.submit(|r| record(r, w, cmds, flags, &mut notes));
                judge(r, &notes, step)?.map_or(0, |sub| {
                    apply(&notes.effects);
                    pending = Some(sub);
                    1
                })
            }
            Mode::Record(times) => {
                let rec = target.record(|r| record(r, w, cmds, flags, &mut notes));
                let mut ran = 0;
                if let Some(mut rec) = judge(rec, &notes, step)? {
                    for _ in 0..times {
                        if expect(rec.execute(), RUN_CODES, step)?.is_some() {
                            apply(&notes.effects);
                            ran += 1;
                        }
                    }
                }
                ran
            }
        };
        RUNS[on as usize].fetch_add(ran, Ordering::Relaxed);
        self.pending.extend(pending);
        Ok(())
    }
}
