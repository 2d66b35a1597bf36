//! `impl Device` of the submission layer: execute/submit/record and the constructors that
//! need a submission (zero-filled storage buffers). Device creation is the composition root
//! (`src/compose.rs`); the uploading constructors and the staging cache's reports are the
//! transfer layer's (`transfer/device.rs`).

use std::borrow::Cow;
use std::sync::Arc;

use ash::vk;

use super::submit::{self, Batch, RecordOptions};
use super::timing::{self, GpuTimings};
use super::trace::Trace;
use super::{Recording, Submission};
use crate::commands::Recorder;
use crate::device::{Buffer, BufferDesc, Device, MemoryLocation, Queue, Shared, MAX_QUEUES};
use crate::error::{Error, Result, SubmissionError};

/// Records `f` into a fresh context of queue `queue` and submits it with `label`.
pub(crate) fn submit_on<'a, R>(
    shared: &'a Arc<Shared>,
    queue: usize,
    label: impl Into<Cow<'static, str>>,
    f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
) -> Result<(R, Submission)> {
    submit_after_on(shared, queue, label, &Deps::NONE, f)
}

/// What a submission waits for and signals besides its queue's timeline and the derived
/// waits (`Queue::after`, `Queue::submit_after`).
pub(crate) struct Deps<'d> {
    /// Application timeline semaphores to wait for, each until its value.
    pub timeline_wait: &'d [(vk::Semaphore, u64)],
    /// Application timeline semaphores to signal, each to its value.
    pub timeline_signal: &'d [(vk::Semaphore, u64)],
    /// Per kiln queue, the value of its timeline to wait for (0: none).
    pub explicit: &'d [u64; MAX_QUEUES],
}

impl Deps<'_> {
    /// Nothing besides the queue's own order and the derived waits.
    pub(crate) const NONE: Deps<'static> = Deps {
        timeline_wait: &[],
        timeline_signal: &[],
        explicit: &submit::NO_EXPLICIT,
    };
}

/// [`submit_on`], the submission also waiting and signalling as `deps` says
/// (`Queue::after`, `Queue::submit_after`).
pub(crate) fn submit_after_on<'a, R>(
    shared: &'a Arc<Shared>,
    queue: usize,
    label: impl Into<Cow<'static, str>>,
    deps: &Deps<'_>,
    f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
) -> Result<(R, Submission)> {
    let label = label.into();
    let errors_from = timing::error_mark(shared);
    let trace = shared.slot::<Trace>()?;
    let batch = Batch {
        timeline_wait: deps.timeline_wait,
        timeline_signal: deps.timeline_signal,
        explicit: deps.explicit,
        ..Batch::commands(&label, vk::CommandBuffer::null())
    };
    let (out, value, work) = super::record_and_submit(
        shared,
        queue,
        RecordOptions::ONE_TIME,
        batch,
        Some(trace),
        f,
    )?;
    let sub = Submission::new(
        shared.clone(),
        queue,
        value,
        label,
        errors_from,
        work.timed.as_ref(),
    );
    // Dropped after the submission was recorded: what the work kept alive is retired past
    // it.
    drop(work);
    Ok((out, sub))
}

/// [`submit_on`] the main queue, then waits for the submission.
pub(crate) fn execute<'a, R>(
    shared: &'a Arc<Shared>,
    label: &'static str,
    f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
) -> Result<R> {
    let (out, sub) = submit_on(shared, Queue::MAIN, label, f)?;
    sub.wait()?;
    Ok(out)
}

impl Device {
    /// Records commands with `f`, submits them and waits until the GPU has finished; device
    /// writes are then visible to host reads of mapped memory.
    ///
    /// Errors: whatever `f` returns (nothing is submitted then), `KILN-E105` device lost,
    /// `KILN-E108` the GPU did not finish within [`EXECUTE_TIMEOUT`](crate::EXECUTE_TIMEOUT).
    pub fn execute<'a, R>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<R> {
        execute(&self.shared, "execute", f)
    }

    /// Records commands with `f` and submits them without waiting. Everything the
    /// recording used stays alive until the submission finishes, even if dropped now
    /// (deferred destruction); descriptor sets it bound are not rewritten before then
    /// (a write waits).
    pub fn submit<'a>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Submission> {
        Ok(submit_on(&self.shared, Queue::MAIN, "submit", f)?.1)
    }

    /// Like [`submit`](Self::submit), with a label reported if the device is lost, and the
    /// closure's result returned beside the submission.
    pub fn submit_labeled<'a, R>(
        &'a self,
        label: &str,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<(R, Submission)> {
        submit_on(&self.shared, Queue::MAIN, label.to_string(), f)
    }

    /// [`execute`](Self::execute) with a label, returning the closure's result and the
    /// submission's GPU timings (its scopes, `Recorder::scope`; the whole command buffer
    /// when `DeviceDesc::timing` is on).
    ///
    /// Errors: as `execute`; `KILN-E124` nothing was timed (no scope, timing off);
    /// `KILN-E122` the queue cannot time work.
    pub fn execute_timed<'a, R>(
        &'a self,
        label: &str,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<R>,
    ) -> Result<(R, GpuTimings)> {
        let (out, sub) = submit_on(&self.shared, Queue::MAIN, label.to_string(), f)?;
        Ok((out, sub.wait_timed()?))
    }

    /// Starts recording a Chrome-trace / Perfetto profile (CPU spans of record, submit and
    /// wait; GPU time and scopes per queue), dropping what an earlier trace recorded, and
    /// turns on timing of every submission. `KILN_TRACE=path.json` does this when the
    /// device is created and writes the file when it drops. See
    /// [`write_trace`](Self::write_trace).
    pub fn start_trace(&self) {
        if let Ok(t) = self.shared.slot::<Trace>() {
            self.shared
                .timing
                .store(true, std::sync::atomic::Ordering::Relaxed);
            t.start(&self.shared);
        }
    }

    /// The trace recorded so far as Trace Event Format JSON (`{"traceEvents": [...]}`,
    /// times in µs; open it in ui.perfetto.dev or chrome://tracing). Empty without
    /// [`start_trace`](Self::start_trace) or `KILN_TRACE`.
    pub fn trace_json(&self) -> String {
        self.shared
            .slot::<Trace>()
            .map(|t| t.json())
            .unwrap_or_default()
    }

    /// Writes [`trace_json`](Self::trace_json) to `path`.
    ///
    /// Errors: `KILN-E129` the file cannot be written.
    pub fn write_trace(&self, path: impl AsRef<std::path::Path>) -> Result<(), SubmissionError> {
        self.shared.slot::<Trace>()?.write(path.as_ref())
    }

    /// Timestamp query pools this device created so far (kept for reuse; unstable, for
    /// kiln's tests).
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_query_pools_created(&self) -> u32 {
        self.shared.query_pools_created()
    }

    /// Records commands with `f` once, for [`Recording::execute`] / [`Recording::submit`]
    /// any number of times.
    ///
    /// The recording must leave every image it transitions in the layout it found it in
    /// (each submission starts from the same layouts); recordings that only dispatch and
    /// copy buffers always do. An image whose first command in the recording is a
    /// transition from UNDEFINED (a depth attachment cleared by `begin_rendering`,
    /// `transition_from(img, UNDEFINED, ..)`) is exempt: that barrier discards the contents
    /// and is valid from every layout, so each submission may find the image anywhere.
    ///
    /// Errors: whatever `f` returns; `KILN-E284` an image left in another layout than the
    /// one it started in (images it discards first excepted).
    pub fn record<'a>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Recording<'a>> {
        Recording::new(&self.shared, Queue::MAIN, f)
    }

    /// Creates a zero-filled device-local storage buffer of `len` elements of `T`.
    ///
    /// Errors: `KILN-E150`-range errors of [`Device::buffer`], a size overflow.
    pub fn storage_buffer<T: bytemuck::Pod>(&self, label: &str, len: usize) -> Result<Buffer> {
        self.storage_buffer_with::<T>(label, len, vk::BufferUsageFlags::empty())
    }

    /// Like [`storage_buffer`](Self::storage_buffer), with `usage` added to STORAGE_BUFFER:
    /// e.g. `INDIRECT_BUFFER` for a buffer a compute pass fills with draw or dispatch
    /// arguments, `VERTEX_BUFFER` for one it fills with vertices, `UNIFORM_BUFFER`.
    /// (TRANSFER_SRC | TRANSFER_DST are always added, as for every kiln buffer.)
    ///
    /// Errors: as [`storage_buffer`](Self::storage_buffer).
    pub fn storage_buffer_with<T: bytemuck::Pod>(
        &self,
        label: &str,
        len: usize,
        usage: vk::BufferUsageFlags,
    ) -> Result<Buffer> {
        let elem = std::mem::size_of::<T>();
        let size = len
            .checked_mul(elem)
            .and_then(|s| u64::try_from(s).ok())
            .ok_or_else(|| Error::SizeOverflow {
                object: label.to_string(),
                len: len as u64,
                elem,
            })?;
        let buf = self.buffer(&BufferDesc {
            label,
            size,
            usage: vk::BufferUsageFlags::STORAGE_BUFFER | usage,
            location: MemoryLocation::GpuOnly,
        })?;
        self.execute(|r| Ok(r.fill_buffer(&buf, 0)?))?;
        Ok(buf)
    }

    /// How many semaphore waits on other queues' timelines kiln's submissions have made so
    /// far (values already complete are not waited for). Unstable: for kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_cross_queue_waits(&self) -> u64 {
        self.shared
            .cross_queue_waits
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}
