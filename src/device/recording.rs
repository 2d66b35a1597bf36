//! Recorded once, submitted many times: [`Device::record`] and [`Recording`].
//!
//! A round trip through [`Device::execute`] records its command buffer every time. For the
//! same work repeated (a solver step, a per-frame compute pass), recording once and
//! resubmitting saves the recording and the command-buffer reset: on the H200 a
//! one-dispatch round trip measured 17.4 – 19.1 µs against 18.4 µs and more re-recorded
//! (BENCHMARKS.md, 2026-11-30). This is the shape of Kompute's
//! `Sequence` and of Vulkan's own reusable command buffers (§6.4, no
//! `ONE_TIME_SUBMIT_BIT`).
//!
//! Safety comes from borrows: a [`Recording<'a>`] keeps everything it recorded borrowed for
//! `'a`, so a descriptor set it binds cannot be rewritten (that needs `&mut`) and nothing it
//! uses can be dropped while the recording exists (a descriptor-set update would otherwise
//! invalidate the command buffer, §14.2.4; a destroyed object would leave it pointing at
//! freed memory).

use std::sync::atomic::{AtomicU64, Ordering};

use ash::vk;

use super::submit::{Context, EXECUTE_TIMEOUT};
use super::{Device, Image, Shared, Submission};
use crate::commands::Recorder;
use crate::error::{Error, Result};

/// Commands recorded once by [`Device::record`], submitted any number of times.
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
///         r.bind_pipeline(p);
///         r.bind_set(0, &set)
///     })?;
///     set.write_buffer(0, buf)?; // error: `set` is borrowed by `rec`
///     rec.execute()
/// }
/// ```
///
/// Each submission waits for every earlier submission of the device (as [`Device::submit`] does)
/// and for this recording's own previous submission (a command buffer may not be pending
/// twice without `SIMULTANEOUS_USE`, VUID-vkQueueSubmit-pCommandBuffers-00071).
pub struct Recording<'a> {
    device: &'a Device,
    ctx: Context,
    used_sets: Vec<&'a AtomicU64>,
    /// Images the recording transitions, with the layout it expects them in (and leaves
    /// them in) at every submission.
    images: Vec<(Image, vk::ImageLayout)>,
    /// Attachments referenced for the call only, kept alive as long as the recording.
    _keep: Vec<Image>,
    /// Timeline value of the last submission (0: never submitted).
    last: u64,
}

impl Device {
    /// Records commands with `f` once, for [`Recording::execute`] / [`Recording::submit`]
    /// any number of times.
    ///
    /// The recording must leave every image it transitions in the layout it found it in
    /// (each submission starts from the same layouts); recordings that only dispatch and
    /// copy buffers always do.
    ///
    /// Errors: whatever `f` returns; `KILN-E284` an image left in another layout than the
    /// one it started in.
    pub fn record<'a>(
        &'a self,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> Result<()>,
    ) -> Result<Recording<'a>> {
        let s = &*self.shared;
        let ctx = s.take_context()?;
        let ((), rec) = s.record(&ctx, vk::CommandBufferUsageFlags::empty(), f)?;
        let (used_sets, layouts, starts, relied, keep) = rec.into_parts();
        let mut recording = Recording {
            device: self,
            ctx,
            used_sets,
            images: Vec::with_capacity(layouts.len()),
            _keep: keep,
            last: 0,
        };
        // One entry per transition: the last one of each image is its final layout.
        for (k, (image, end)) in layouts.iter().enumerate() {
            if layouts[k + 1..].iter().any(|(i, _)| i.raw() == image.raw()) {
                continue;
            }
            let (image, end) = (image.clone(), *end);
            // The layout the recording found the image in (it may have moved since).
            let start = starts
                .iter()
                .find(|(i, _)| *i == image.raw())
                .map_or_else(|| image.layout(), |(_, l)| *l);
            if start != end {
                return Err(Error::RecordingChangesLayout {
                    image: image.label().to_string(),
                    start,
                    end,
                });
            }
            recording.images.push((image, end));
        }
        // Images used without a transition: each submission needs them in that layout.
        for (image, layout) in relied {
            if !recording.images.iter().any(|(i, _)| i.raw() == image.raw()) {
                recording.images.push((image, layout));
            }
        }
        Ok(recording)
    }
}

impl Recording<'_> {
    /// Submits the recorded commands without waiting for them (after waiting for this
    /// recording's previous submission, if it is still running).
    ///
    /// Errors: `KILN-E285` an image it transitions is no longer in the layout it was
    /// recorded for (another submission moved it); `KILN-E105` device lost; `KILN-E108`
    /// the previous submission did not finish within [`EXECUTE_TIMEOUT`].
    pub fn submit(&mut self) -> Result<Submission> {
        let s: &Shared = &self.device.shared;
        let ctx = &self.ctx;
        if self.last > s.completed_value() {
            s.wait_value(self.last, EXECUTE_TIMEOUT)?;
        }
        for (image, layout) in &self.images {
            let now = image.layout();
            if now != *layout {
                return Err(Error::RecordingLayoutMoved {
                    image: image.label().to_string(),
                    recorded: *layout,
                    now,
                });
            }
        }
        let value = s.submit_cb(ctx, "recording")?;
        self.last = value;
        for u in &self.used_sets {
            u.fetch_max(value, Ordering::AcqRel);
        }
        Ok(Submission::new(self.device.shared.clone(), value))
    }

    /// Submits the recorded commands and waits until the GPU has finished; device writes
    /// are then visible to host reads of mapped memory. Errors: as [`submit`](Self::submit).
    pub fn execute(&mut self) -> Result<()> {
        self.submit()?.wait()
    }
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        let ctx = Context { ..self.ctx };
        // The context is recycled like an `execute`'s: once its last submission completes
        // (at once when never submitted or already done), its pool is reset.
        self.device.shared.recycle(self.last, ctx);
    }
}
