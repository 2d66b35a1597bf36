//! Recording: the [`Recorder`] and its contract with the submission layer.
//!
//! A [`Recorder`] is handed out by `Device::execute`/`submit`/`record` and by the
//! presenter's `frame`; it records into one command buffer that the submission layer
//! (`queue`) begins, ends and submits. The commands are split by subject: `bind`
//! (pipelines, descriptor sets), `push` (push constants), `dispatch`, `barrier`,
//! `transfer` (copies, fills), `image_layouts` (layout transitions) and `render`
//! (rendering scopes, vertex/index buffers, viewport, scissor, draws).
//!
//! # The contract
//!
//! **Every command returns `Result<()>`.** A command whose arguments Vulkan would reject
//! records nothing and returns the coded error; nothing is deferred, so `?` stops the
//! recording at the first error and the submission layer then submits nothing.
//!
//! **Arguments.** Binding commands (pipelines, descriptor sets, vertex and index buffers)
//! borrow their object for `'a`, the lifetime of the whole recording: nothing to count or
//! keep per call. Commands that use a buffer or an image only for the call (copies, fills,
//! transitions, rendering attachments) take `&Buffer`/`&Image` and keep a clone in the
//! recorded work.
//!
//! **State a command updates** (fields of `Recorder`):
//!
//! | state | who updates it |
//! | --- | --- |
//! | `bound[bind point]` (pipeline, layout, sets, `pushed`, `ready`) | `bind_pipeline`, `bind_set`, `push_constants`; a draw or dispatch checks it (`check_bound_state`) |
//! | `used_sets` | `bind_set`, once per set per recording (`listed_by`) |
//! | `kept`, `images`, `used_sets` (uses) | the submission layer derives from them which other queues' work a submission waits for (`queue::submit`) |
//! | `images` (`ImageUse`: first/last layout, `moved`) | every command that uses an image in a layout: through `transition`/`transition_from` (or `touch` for a use without a barrier) |
//! | `kept` | a command that uses a buffer for the call only (`copy_image_to_buffer`, copies, fills) |
//! | `dirty` | set by `dispatch`; cleared by every barrier; a command that reads or writes memory a dispatch may have written records a barrier first when it is set |
//! | `rendering` | `begin_rendering` / `end_rendering`; commands that are invalid inside (or outside) a scope check it |
//!
//! **What the submission layer does with it.** The recording ends in one
//! `RecordedWork` (`Recorder::into_work`, called only by `queue`):
//! before ending the command buffer `queue` closes an open rendering scope (an error) and
//! records the final device→host barrier; once the command buffer is submitted it sets every
//! `used_sets` stamp to the submission's timeline value (a descriptor-set write then waits
//! for it), commits every moved image's `last` layout to the image, and drops the work after
//! the submission is recorded, so the kept images and buffers are destroyed only after it
//! completes. A reusable recording keeps the work: it checks at record time that it leaves
//! each image as it found it (`KILN-E284`) and at each submission that every image is still
//! in that layout (`KILN-E285`).
//!
//! Every barrier is a synchronization2 barrier (`vkCmdPipelineBarrier2`, Vulkan spec
//! §7.6.2), its stages masked to those the recorder's queue supports
//! ([`Recorder::supported`]: a transfer queue has no shader stages). Commands a queue
//! cannot run at all (binding a compute pipeline on a transfer queue, rendering on a
//! compute queue) fail with `KILN-E120`.

mod barrier;
mod bind;
mod dispatch;
mod image_layouts;
mod push;
mod push_descriptor;
mod render;
mod transfer;
mod work;

use std::sync::atomic::{AtomicU64, Ordering};

use ash::vk;

pub use dispatch::DISPATCH_INDIRECT_SIZE;
pub use push_descriptor::PushWrite;
pub use render::{ColorAttachment, DepthAttachment, LoadOp, RenderingDesc};
pub(crate) use work::RecordedWork;

use crate::descriptors::DescriptorSet;
use crate::device::{supported_stages, Buffer, Shared};
use crate::error::{Error, Result};
use crate::pipeline::PipelineLayout;
use work::ImageUse;

/// The pipeline bound at one bind point and what was bound for its layout.
struct Bound<'a> {
    raw: vk::Pipeline,
    layout: &'a PipelineLayout,
    bind_point: vk::PipelineBindPoint,
    workgroup: [u32; 3],
    /// Set handles currently bound at this bind point, by set number (for redundant-bind
    /// elision). Updated in place: a pipeline switch truncates it, never reallocates it.
    sets: Vec<vk::DescriptorSet>,
    /// Push constants were pushed for this layout's ranges (values survive pipeline binds
    /// whose layouts have identical push constant ranges, Vulkan spec §14.2.10).
    pushed: bool,
    /// [`Bound::check`] passed for `layout`, `sets` and `pushed` as they are. Only a layout
    /// change can make it false again: `bind_set` only adds sets and `push_constants` only
    /// sets `pushed`, so neither can undo a passed check.
    ready: bool,
}

impl Bound<'_> {
    /// Every non-empty set of the layout is bound and push constants were pushed if the
    /// layout has ranges. Errors: `KILN-E254`, `KILN-E255`.
    #[cold]
    #[inline(never)]
    fn check(&self) -> Result<()> {
        for (i, l) in self.layout.set_layouts().iter().enumerate() {
            let bound_here = self
                .sets
                .get(i)
                .is_some_and(|s| *s != vk::DescriptorSet::null());
            if !bound_here && !l.desc().bindings().is_empty() {
                return Err(Error::SetNotBound { set: i as u32 });
            }
        }
        if !self.pushed && !self.layout.push_constant_ranges().is_empty() {
            return Err(Error::PushConstantsNotSet {
                ranges: format!("{:?}", self.layout.push_constant_ranges()),
            });
        }
        Ok(())
    }
}

/// Records commands into one command buffer. Obtained from `Device::execute`.
///
/// `'a` is how long everything the recording binds must live (the device borrow of the
/// `execute`/`submit` call); `'r` brands one recording: it is a fresh, invariant lifetime
/// per call, so two recorders (e.g. of nested `execute` calls) cannot be swapped:
///
/// ```compile_fail
/// fn nested(device: &kiln::Device) -> kiln::Result<()> {
///     device.execute(|outer| {
///         device.execute(|inner| {
///             std::mem::swap(outer, inner); // error: the two recorders have distinct brands
///             Ok(())
///         })
///     })
/// }
/// ```
pub struct Recorder<'a, 'r> {
    shared: &'a Shared,
    cb: vk::CommandBuffer,
    /// Bound pipelines: [compute, graphics] (Vulkan keeps state per bind point).
    bound: [Option<Bound<'a>>; 2],
    /// The bind point of the pipeline bound last: `bind_set` and `push_constants` use it.
    /// (A bool, not an index: indexing `bound` with it needs no bounds check.)
    current_graphics: bool,
    /// Images touched, with the layout each was found in and is left in.
    images: Vec<ImageUse>,
    /// Inside `begin_rendering` … `end_rendering`.
    rendering: bool,
    /// Every set bound, stamped with the submission value; each set is listed once (its
    /// `listed_by` holds the id of the recording that listed it).
    used_sets: Vec<&'a DescriptorSet>,
    /// Buffers used for one call only, kept until the submission.
    kept: Vec<Buffer>,
    /// Unique (process-wide) id of this recording, for `used_sets`' deduplication.
    id: u64,
    /// A dispatch was recorded since the last barrier.
    dirty: bool,
    /// `maxComputeWorkGroupCount` (copied: `dispatch` checks it every call).
    max_groups: [u32; 3],
    /// Insert a compute→compute barrier before a dispatch that follows another.
    auto_barriers: bool,
    /// The capabilities of the queue the command buffer is for (its pool's family).
    queue_flags: vk::QueueFlags,
    /// The pipeline stages that queue supports: every barrier's stages are masked to them
    /// (VUID-vkCmdPipelineBarrier2-srcStageMask-03849 ff.).
    stages: vk::PipelineStageFlags2,
    /// Per bind point (compute, graphics): the queue cannot bind such a pipeline.
    unsupported_bind: [bool; 2],
    /// Invariant in `'r`: see the type's docs.
    _brand: std::marker::PhantomData<fn(&'r ()) -> &'r ()>,
}

/// Next recording id (0 is "listed by no recording").
static NEXT_RECORDING: AtomicU64 = AtomicU64::new(1);

impl<'a> Recorder<'a, '_> {
    /// A recorder for `cb`, which the caller has begun (the submission layer), of a queue
    /// with capabilities `queue_flags`.
    pub(crate) fn new(
        shared: &'a Shared,
        cb: vk::CommandBuffer,
        queue_flags: vk::QueueFlags,
    ) -> Self {
        Recorder {
            shared,
            cb,
            bound: [None, None],
            current_graphics: false,
            images: Vec::new(),
            rendering: false,
            used_sets: Vec::new(),
            kept: Vec::new(),
            id: NEXT_RECORDING.fetch_add(1, Ordering::Relaxed),
            dirty: false,
            max_groups: shared.limits().max_compute_work_group_count,
            auto_barriers: true,
            queue_flags,
            stages: supported_stages(queue_flags),
            unsupported_bind: [
                !queue_flags.contains(vk::QueueFlags::COMPUTE),
                !queue_flags.contains(vk::QueueFlags::GRAPHICS),
            ],
            _brand: std::marker::PhantomData,
        }
    }

    /// How many set stamps this recording has listed for its submission to update (each
    /// set once, and again after a nested recording listed it). Unstable: for kiln's tests.
    #[doc(hidden)]
    pub fn debug_used_set_count(&self) -> usize {
        self.used_sets.len()
    }

    /// Ends the recording: what the submission layer applies once the command buffer is
    /// submitted (see the module docs).
    pub(crate) fn into_work(self) -> RecordedWork<'a> {
        RecordedWork {
            used_sets: self.used_sets,
            images: self.images,
            kept: self.kept,
        }
    }

    /// The capabilities of the queue this command buffer is recorded for
    /// (`VkQueueFamilyProperties::queueFlags` of its family; an emulated queue has those of
    /// its kind: a transfer queue `TRANSFER` only). Raw commands must be ones that family
    /// supports (each command's "Supported Queue Types", e.g. `vkCmdWaitEvents` needs
    /// graphics or compute: VUID-vkCmdWaitEvents-commandBuffer-cmdpool).
    pub fn queue_flags(&self) -> vk::QueueFlags {
        self.queue_flags
    }

    /// The raw command buffer, for commands kiln does not wrap.
    ///
    /// # Safety
    /// Commands recorded through it must be valid for the current state and must not use
    /// objects that may be destroyed before the execution finishes.
    pub unsafe fn raw(&self) -> vk::CommandBuffer {
        self.cb
    }

    /// `(stage, access)` restricted to the stages the queue supports; an access whose
    /// stages are all unsupported is dropped (work of those stages cannot be on this queue:
    /// other queues' work is ordered by semaphores).
    #[inline]
    pub(crate) fn supported(
        &self,
        stage: vk::PipelineStageFlags2,
        access: vk::AccessFlags2,
    ) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
        let masked = stage & self.stages;
        if masked.is_empty() && !stage.is_empty() {
            (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE)
        } else {
            (masked, access)
        }
    }

    /// `KILN-E120`: this queue cannot run `what`, which needs `needed`.
    #[cold]
    #[inline(never)]
    pub(crate) fn unsupported(&self, what: &'static str, needed: vk::QueueFlags) -> Error {
        Error::QueueUnsupported {
            flags: self.queue_flags,
            what,
            needed,
        }
    }

    /// Checks that `buffer` was made by this recorder's device. Errors: `KILN-E109`.
    fn own(&self, buffer: &Buffer) -> Result<()> {
        if std::ptr::eq(&**buffer.shared(), self.shared) {
            return Ok(());
        }
        Err(Error::ForeignObject {
            object: format!("buffer `{}`", buffer.label()),
        })
    }
}
