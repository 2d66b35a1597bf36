//! Recorded once, submitted many times: [`Device::record`](crate::Device::record) and
//! [`Recording`].
//!
//! A round trip through `Device::execute` records its command buffer every time. For the
//! same work repeated (a solver step, a per-frame compute pass), recording once and
//! resubmitting saves the recording and the command-buffer reset, and keeps a round trip
//! fast on drivers whose freshly recorded submissions are sometimes slow (a GPU driver
//! measured ~30 µs more per fresh submission in some processes, and none for a command
//! buffer recorded once). This is the shape of Kompute's
//! `Sequence` and of Vulkan's own reusable command buffers (§6.4, no
//! `ONE_TIME_SUBMIT_BIT`).
//!
//! Safety comes from borrows: a [`Recording<'a>`] keeps everything it recorded borrowed for
//! `'a`, so a descriptor set it binds cannot be rewritten (that needs `&mut`) and nothing it
//! uses can be dropped while the recording exists (a descriptor-set update would otherwise
//! invalidate the command buffer, §14.2.4; a destroyed object would leave it pointing at
//! freed memory). Images and buffers a command used for the call only are kept alive by the
//! recording's work.

use ash::vk;

use std::sync::Arc;

use super::context::{Context, Contexts};
use super::submit::{self, Batch, RecordOptions};
use super::timing;
use super::trace::Trace;
use super::Submission;
use crate::commands::{RecordedWork, Recorder};
use crate::device::{Shared, Subresources};
use crate::error::{Error, Result, SubmissionError};

/// Commands recorded once by [`Device::record`](crate::Device::record) or
/// [`Queue::record`](crate::Queue::record), submitted any number of times.
///
/// A descriptor set the recording binds stays borrowed, so it cannot be rewritten while the
/// recording exists:
///
/// ```compile_fail
/// fn rewrite(
///     device: &kiln::Device,
///     p: &kiln::ComputePipeline,
///     mut set: kiln::DescriptorSet,
///     buf: &kiln::Buffer,
/// ) -> kiln::Result<()> {
///     let mut rec = device.record(|r| {
///         r.bind_pipeline(p)?;
///         r.bind_set(0, &set)
///     })?;
///     set.write_buffer(0, buf)?; // error: `set` is borrowed by `rec`
///     rec.execute()
/// }
/// ```
///
/// Each submission waits for every earlier submission of its queue (as
/// [`Device::submit`](crate::Device::submit) does), for other queues' pending work on what
/// it uses, and for this recording's own previous submission (a command buffer may not be pending
/// twice without `SIMULTANEOUS_USE`, VUID-vkQueueSubmit-pCommandBuffers-00071).
pub struct Recording<'a> {
    shared: &'a Arc<Shared>,
    /// The kiln queue it submits to.
    queue: usize,
    /// `None` only while being dropped.
    ctx: Option<Context>,
    /// Used sets (stamped at every submission), the images with the layout each submission
    /// expects them in (and leaves them in), and what the commands keep alive.
    work: RecordedWork<'a>,
    /// Timeline value of the last submission (0: never submitted).
    last: u64,
}

impl<'a> Recording<'a> {
    /// Records `f` into a reusable command buffer of queue `queue` (see
    /// [`Device::record`](crate::Device::record)).
    pub(crate) fn new(
        shared: &'a Arc<Shared>,
        queue: usize,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Recording<'a>> {
        let contexts = shared.slot::<Contexts>()?;
        let ctx = super::ContextGuard::new(contexts, shared, queue)?;
        let options = RecordOptions {
            flags: vk::CommandBufferUsageFlags::empty(),
            host_barrier: true,
            timed: true,
        };
        let errors_from = timing::error_mark(shared);
        submit::name_command_buffer(shared, ctx.cb(), "recording");
        let ((), work) = submit::record(shared, queue, ctx.cb(), options, f)?;
        // Errors the layer raised while the commands were recorded (record-time checks).
        timing::check_validation(shared, errors_from, "recording", work.timed.as_deref())?;
        // Each submission starts from the layouts the recording found.
        // Images whose first command discards them (a transition from UNDEFINED, e.g. a
        // depth clear) are valid from any layout, so they may end elsewhere.
        for u in work.images.iter().filter(|u| !u.discards) {
            if let Some((start, end)) = u.first.first_difference(&u.last) {
                return Err(Error::RecordingChangesLayout {
                    image: u.image.label().to_string(),
                    start,
                    end,
                });
            }
        }
        // Images the recording uses through descriptor sets from their first use on, in
        // the layouts their descriptors need: moved there once now (queue order puts this
        // before the recording's first submission).
        let mut moves: Vec<(&crate::Image, Subresources, vk::ImageLayout)> = Vec::new();
        for u in work.images.iter().filter(|u| u.prepare) {
            if u.image.layouts() != u.first {
                u.first
                    .for_each(Subresources::all(), |r, l| moves.push((&u.image, r, l)));
            }
        }
        if !moves.is_empty() {
            let label = "image layouts for a recording";
            let ((), sub) = super::device::submit_on(shared, queue, label, |r| {
                for (image, range, layout) in &moves {
                    r.transition_subresources(image, *range, *layout)?;
                }
                Ok(())
            })?;
            drop(sub);
        }
        Ok(Recording {
            shared,
            queue,
            ctx: ctx.keep(),
            work,
            last: 0,
        })
    }

    /// Barriers the recorded commands contain (see
    /// [`Recorder::barrier_count`](crate::Recorder::barrier_count)).
    pub fn barrier_count(&self) -> u32 {
        self.work.barriers
    }

    /// Submits the recorded commands without waiting for them (after waiting for this
    /// recording's previous submission, if it is still running).
    ///
    /// Errors: `KILN-E285` an image it transitions is no longer in the layout it was
    /// recorded for (another submission moved it); `KILN-E105` device lost; `KILN-E108`
    /// the previous submission did not finish within the device's wait timeout
    /// (`DeviceDesc::wait_timeout`).
    pub fn submit(&mut self) -> Result<Submission, SubmissionError> {
        let shared = self.shared;
        let queue = self.queue;
        if self.last > shared.completed_value(queue) {
            shared.wait_value(queue, self.last, shared.wait_timeout)?;
        }
        for u in self.work.images.iter().filter(|u| !u.discards) {
            if let Some((recorded, now)) = u.last.first_difference(&u.image.layouts()) {
                return Err(SubmissionError::RecordingLayoutMoved {
                    image: u.image.label().to_string(),
                    recorded,
                    now,
                });
            }
        }
        let Some(ctx) = &self.ctx else {
            return Err(super::NO_CONTEXT.into());
        };
        if let (Some(t), true) = (&self.work.timed, self.last > 0) {
            // The previous submission completed (waited for above): its queries are reset
            // for this one, and a submission of it still unread can tell.
            shared.reset_lease(&t.lease);
            t.generation
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        let errors_from = timing::error_mark(shared);
        let span = shared.slot::<Trace>()?.span("submit");
        let value = {
            let _t = tracing::trace_span!("kiln.submit", label = "recording").entered();
            submit::submit(
                shared,
                queue,
                &Batch::commands("recording", ctx.cb),
                &self.work,
            )?
        };
        if let Some(span) = span {
            span.end("recording");
        }
        self.last = value;
        Ok(Submission::new(
            shared.clone(),
            queue,
            value,
            "recording".into(),
            errors_from,
            self.work.timed.as_ref(),
        ))
    }

    /// Submits the recorded commands and waits until the GPU has finished; device writes
    /// are then visible to host reads of mapped memory. Errors: as [`submit`](Self::submit).
    pub fn execute(&mut self) -> Result<(), SubmissionError> {
        self.submit()?.wait()
    }
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        let Some(ctx) = self.ctx.take() else { return };
        let shared = &**self.shared;
        // The context is recycled like an `execute`'s: once its last submission completes
        // (at once when never submitted or already done), it is reset.
        if let Ok(contexts) = shared.slot::<Contexts>() {
            contexts.recycle(shared, self.queue, self.last, ctx);
        }
    }
}
