//! The submission layer: queue handles, command contexts, the one submit function (with the
//! cross-queue waits), submissions, reusable recordings, timelines, timings and traces.
//! Transfers (staging, host buffers, uploads and readbacks) are the layer above,
//! `transfer`.
//!
//! Work reaches a queue only through `submit::record` (a command buffer recorded through a
//! [`Recorder`](crate::Recorder), ending in a `RecordedWork`) and `submit::submit` (the
//! batch submitted with the queue's timeline and the waits on other queues its uses need,
//! the work applied: image layouts committed, descriptor sets and resources stamped).
//! `Device::execute`/`submit`/`record`, [`Queue`]'s methods, [`Recording`], the staged and
//! host-buffer transfers and the window presenter all call them.
//!
//! Files: `handle` (the public [`Queue`]), `submit` (record, submit, [`Submission`], the
//! cross-queue rules), `context`, `recording`, `timing` ([`GpuTimings`], error
//! descriptions, the validation-fail check), `trace` (the Chrome-trace profile), `device`
//! (`Device`'s execute/submit/record). Device creation, which registers this layer's slots
//! with every other layer's, is the composition root (`src/compose.rs`).

mod after;
mod context;
mod device;
mod external;
mod external_image;
mod handle;
mod plan;
mod profilers;
mod recording;
mod semaphore;
pub(crate) mod submit;
mod timing;
mod trace;

use ash::vk;

pub use after::After;
pub use handle::Queue;
pub use profilers::{begin_end_order, zones_of, GpuZone, ZoneSink};
pub use recording::Recording;
pub use semaphore::TimelineSemaphore;
pub use submit::Submission;
pub use submit::MAX_TIMELINE_WAITS;
/// The one record and submit path, for the window presenter.
#[cfg(feature = "window")]
pub(crate) use submit::{record, submit, Batch, RecordOptions};
pub use timing::{GpuTimings, ScopeTiming};

use crate::commands::{RecordedWork, Recorder};
use crate::device::Shared;
use crate::error::{DeviceError, Result};
use context::{Context, Contexts};
pub(crate) use device::execute;

/// A context that has not been handed to a queue (or kept by a recording) yet.
const NO_CONTEXT: DeviceError = DeviceError::Internal {
    what: "a command context was used after it was given back",
};

/// A context taken for one recording. Unless [`keep`](Self::keep) or
/// [`submitted`](Self::submitted) takes it out, it goes back to the free list reset when
/// the guard drops — after a failed recording or submission, and when the recording closure
/// panics (else its command pool would leak: VUID-vkDestroyDevice-device-00378).
struct ContextGuard<'s> {
    contexts: &'s Contexts,
    shared: &'s Shared,
    queue: usize,
    ctx: Option<Context>,
}

impl<'s> ContextGuard<'s> {
    fn new(contexts: &'s Contexts, shared: &'s Shared, queue: usize) -> Result<Self> {
        let ctx = contexts.take(shared, queue)?;
        Ok(ContextGuard {
            contexts,
            shared,
            queue,
            ctx: Some(ctx),
        })
    }

    fn cb(&self) -> vk::CommandBuffer {
        self.ctx
            .as_ref()
            .map_or(vk::CommandBuffer::null(), |c| c.cb)
    }

    /// The context, for a reusable recording that owns it from now on.
    fn keep(mut self) -> Option<Context> {
        self.ctx.take()
    }

    /// The context was submitted with timeline value `value`: pending until it completes.
    fn submitted(mut self, value: u64) {
        if let Some(ctx) = self.ctx.take() {
            self.contexts.recycle(self.shared, self.queue, value, ctx);
        }
    }
}

impl Drop for ContextGuard<'_> {
    fn drop(&mut self) {
        if let Some(ctx) = self.ctx.take() {
            // Never submitted: the reset moves it from the recording to the initial state.
            self.contexts.reset_and_free(self.shared, self.queue, ctx);
        }
    }
}

/// The one record→submit sequence of a one-time command buffer: a context of queue `queue`
/// taken, its command buffer named `batch.label`, `f` recorded into it
/// (`submit::record` with `options`), `batch` submitted with that command buffer
/// (`submit::submit`; `batch.command_buffer` is replaced), the context handed back pending
/// on the timeline value. With `trace` (`Device::execute` and friends), the recording and
/// the submission are spans of the Chrome trace and `tracing` spans `kiln.record`,
/// `kiln.submit`. Returns what `f` returned, the timeline value and the recorded work (the
/// caller drops it once it has taken what it needs: what it kept alive is retired past the
/// submission). Used by `device::submit_after_on` (every `execute`/`submit`) and the
/// transfer layer's raw copies and copy-shader dispatches.
///
/// Errors: whatever `f` returns (nothing is submitted; the context goes back reset), the
/// errors of `submit::submit`.
pub(crate) fn record_and_submit<'a, R>(
    shared: &'a Shared,
    queue: usize,
    options: submit::RecordOptions,
    batch: submit::Batch<'_>,
    trace: Option<&trace::Trace>,
    f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
) -> Result<(R, u64, RecordedWork<'a>)> {
    let label = batch.label;
    let ctx = ContextGuard::new(shared.slot::<Contexts>()?, shared, queue)?;
    submit::name_command_buffer(shared, ctx.cb(), label);
    let span = trace.and_then(|t| t.span("record"));
    let recorded = {
        let _t = trace.map(|_| tracing::trace_span!("kiln.record", label).entered());
        submit::record(shared, queue, ctx.cb(), options, f)
    };
    let (out, work) = recorded?;
    if let Some(span) = span {
        span.end(label);
    }
    let span = trace.and_then(|t| t.span("submit"));
    let value = {
        let _t = trace.map(|_| tracing::trace_span!("kiln.submit", label).entered());
        let batch = submit::Batch {
            command_buffer: Some(ctx.cb()),
            ..batch
        };
        submit::submit(shared, queue, &batch, &work)?
    };
    if let Some(span) = span {
        span.end(label);
    }
    ctx.submitted(value);
    Ok((out, value, work))
}

/// Registers this layer's slots (command contexts, the trace, the profilers) on a device
/// being created.
pub(crate) fn register_slots(shared: &mut Shared) -> Result<()> {
    let contexts = Contexts::new(shared);
    shared.register_slot(contexts)?;
    let trace = trace::Trace::from_env(shared);
    shared.register_slot(trace)?;
    let profilers = profilers::Profilers::new(shared);
    shared.register_slot(profilers)
}
