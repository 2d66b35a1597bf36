//! Image layout tracking and transitions (synchronization2 image barriers, Vulkan spec
//! §7.6.2 and §12.4 "Image Layouts").
//!
//! kiln tracks one layout per image (all mips): the image holds the layout after the last
//! submitted command buffer that changed it, and a recorder keeps, per image it touched,
//! the layout it found the image in and the layout it leaves it in (`ImageUse`) until the
//! submission layer commits them.

use ash::vk;

use super::work::ImageUse;
use super::Recorder;
use crate::device::Image;
use crate::error::Result;

/// Stages and accesses that use an image in `layout` (Vulkan spec §7.1.2, §12.4).
pub(super) fn stage_access(layout: vk::ImageLayout) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    use vk::AccessFlags2 as A;
    use vk::ImageLayout as L;
    use vk::PipelineStageFlags2 as S;
    match layout {
        // Discarding the contents still waits for earlier work on the image (a read of it
        // earlier in the command buffer; a swapchain acquire's semaphore wait, whose stages
        // the transition must chain with): all stages. And it makes earlier writes
        // available: the memory may have held another resource, written by an earlier
        // submission, and the layout transition writes it (write after write). The timeline
        // wait of the submission orders that already, but validation layer 1.3.239's
        // submit-time checks do not see it (the API-sequence fuzzer found the report).
        L::UNDEFINED | L::PREINITIALIZED => (S::ALL_COMMANDS, A::MEMORY_WRITE),
        L::TRANSFER_DST_OPTIMAL => (S::ALL_TRANSFER, A::TRANSFER_WRITE),
        L::TRANSFER_SRC_OPTIMAL => (S::ALL_TRANSFER, A::TRANSFER_READ),
        // Every shader stage; `Recorder::supported` drops those the device lacks.
        L::SHADER_READ_ONLY_OPTIMAL => (
            S::VERTEX_SHADER
                | S::TESSELLATION_CONTROL_SHADER
                | S::TESSELLATION_EVALUATION_SHADER
                | S::GEOMETRY_SHADER
                | S::TASK_SHADER_EXT
                | S::MESH_SHADER_EXT
                | S::FRAGMENT_SHADER
                | S::COMPUTE_SHADER,
            A::SHADER_SAMPLED_READ | A::SHADER_READ,
        ),
        L::COLOR_ATTACHMENT_OPTIMAL => (
            S::COLOR_ATTACHMENT_OUTPUT,
            A::COLOR_ATTACHMENT_READ | A::COLOR_ATTACHMENT_WRITE,
        ),
        L::DEPTH_ATTACHMENT_OPTIMAL | L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL => (
            S::EARLY_FRAGMENT_TESTS | S::LATE_FRAGMENT_TESTS,
            A::DEPTH_STENCIL_ATTACHMENT_READ | A::DEPTH_STENCIL_ATTACHMENT_WRITE,
        ),
        L::PRESENT_SRC_KHR => (S::NONE, A::NONE),
        _ => (S::ALL_COMMANDS, A::MEMORY_READ | A::MEMORY_WRITE),
    }
}

impl Recorder<'_, '_> {
    /// The layout `image` is in at this point of the recording.
    pub fn image_layout(&self, image: &Image) -> vk::ImageLayout {
        self.images
            .iter()
            .find(|u| u.image.raw() == image.raw())
            .map_or_else(|| image.layout(), |u| u.last)
    }

    /// The recording's entry for `image`, made (with the image's current layout, and a
    /// clone that keeps it alive) on first touch.
    pub(crate) fn touch(&mut self, image: &Image) -> &mut ImageUse {
        let i = match self
            .images
            .iter()
            .position(|u| u.image.raw() == image.raw())
        {
            Some(i) => i,
            None => {
                let layout = image.layout();
                self.images.push(ImageUse {
                    image: image.clone(),
                    first: layout,
                    last: layout,
                    moved: false,
                    prepare: false,
                    discards: false,
                });
                self.images.len() - 1
            }
        };
        &mut self.images[i]
    }

    /// Moves `image` (every mip) from its current layout to `new` with a
    /// `vkCmdPipelineBarrier2` whose stages and accesses follow from the two layouts
    /// (writes before are made visible to the uses after). When it is already in `new` no
    /// barrier is recorded, but the recording relies on that layout (a reusable recording
    /// checks it at every submission, `KILN-E285`). The image is kept alive until the
    /// submission.
    ///
    /// Errors: `KILN-E109` an image of another device, `KILN-E283` inside a rendering scope.
    #[track_caller]
    pub fn transition(&mut self, image: &Image, new: vk::ImageLayout) -> Result<()> {
        self.at(std::panic::Location::caller());
        self.own_image(image)?;
        self.transition_now(image, new)
    }

    /// [`transition`](Self::transition) of an image of this device, for kiln's own
    /// commands (the caller's location is theirs).
    pub(crate) fn transition_now(&mut self, image: &Image, new: vk::ImageLayout) -> Result<()> {
        let old = self.image_layout(image);
        if old == new {
            self.touch(image);
            return Ok(());
        }
        self.layout_barrier(image, old, new, false)
    }

    /// Like [`transition`](Self::transition) with an explicit old layout (`UNDEFINED`
    /// discards the contents); the barrier is recorded even when `old == new`. When it is
    /// the recording's first command on the image and `old` is `UNDEFINED`, the recording
    /// relies on no layout of the image: a reusable recording may then leave it in `new`
    /// (such a barrier is valid from every layout, so no `KILN-E284`/`KILN-E285`).
    ///
    /// Errors: `KILN-E109` an image of another device, `KILN-E283` inside a rendering scope.
    #[track_caller]
    pub fn transition_from(
        &mut self,
        image: &Image,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
    ) -> Result<()> {
        self.at(std::panic::Location::caller());
        self.own_image(image)?;
        self.layout_barrier(image, old, new, true)
    }

    /// The barrier of [`transition_from`](Self::transition_from); `explicit`: the caller
    /// chose `old` (an `UNDEFINED` one then discards on purpose, rather than because the
    /// image happened to be in no layout yet).
    pub(crate) fn layout_barrier(
        &mut self,
        image: &Image,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
        explicit: bool,
    ) -> Result<()> {
        self.outside_rendering(
            "image layout transition inside a rendering scope; transition before begin_rendering",
        )?;
        let (dst_stage, dst_access) = stage_access(new);
        // Also after the stages of `old`: the caller may have used the image through raw
        // commands, which the tracker does not see.
        let (old_stage, old_access) = stage_access(old);
        let (src_stage, src_access) = match self.automatic {
            true => self.tracker.image_src(image.raw()),
            false => None,
        }
        .map_or((old_stage, old_access), |(s, a)| {
            (s | old_stage, a | old_access)
        });
        let fresh = !self.images.iter().any(|u| u.image.raw() == image.raw());
        self.defer_transition(
            image,
            old,
            new,
            (src_stage, src_access),
            (dst_stage, dst_access),
        );
        self.emit_transitions();
        self.mark_discards(
            image,
            explicit && fresh && old == vk::ImageLayout::UNDEFINED,
        );
        Ok(())
    }

    /// The recording's first command on `image` discards it (`discards`): valid from
    /// whatever layout the image is in then.
    pub(crate) fn mark_discards(&mut self, image: &Image, discards: bool) {
        if discards {
            if let Some(u) = self
                .images
                .iter_mut()
                .find(|u| u.image.raw() == image.raw())
            {
                u.discards = true;
            }
        }
    }

    /// [`transition`](Self::transition) for a command of kiln's own whose first use of
    /// the image is (`dst_stage`, `dst_access`): in automatic mode the transition waits
    /// for what the recording did with the image and joins the command's barrier; in
    /// manual mode it is recorded at once, as `transition` records it.
    pub(crate) fn transition_for(
        &mut self,
        image: &Image,
        new: vk::ImageLayout,
        dst_stage: vk::PipelineStageFlags2,
        dst_access: vk::AccessFlags2,
    ) -> Result<()> {
        if !self.automatic {
            return self.transition_now(image, new);
        }
        self.outside_rendering(
            "image layout transition inside a rendering scope; transition before begin_rendering",
        )?;
        let old = self.image_layout(image);
        if old == new {
            self.touch(image);
            return Ok(());
        }
        let src = self.transition_src(image, old);
        self.defer_transition(image, old, new, src, (dst_stage, dst_access));
        Ok(())
    }

    /// The source scope of a transition of `image` out of `old` by kiln's own commands:
    /// what the recording did with it (automatic mode, when it used it), else the stages of
    /// `old` (Vulkan spec §7.1.2, §12.4).
    pub(crate) fn transition_src(
        &self,
        image: &Image,
        old: vk::ImageLayout,
    ) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
        let tracked = if self.automatic {
            self.tracker.image_src(image.raw())
        } else {
            None
        };
        tracked.unwrap_or_else(|| stage_access(old))
    }

    /// Adds the transition of `image` from `old` to `new` to the barrier of the command
    /// being recorded (`pending_images`), from scope `src` to scope `dst` (stages,
    /// accesses); updates the recording's view and the tracker.
    pub(crate) fn defer_transition(
        &mut self,
        image: &Image,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
        src: (vk::PipelineStageFlags2, vk::AccessFlags2),
        dst: (vk::PipelineStageFlags2, vk::AccessFlags2),
    ) {
        let (src_stage, src_access) = src;
        let (dst_stage, dst_access) = dst;
        let (src_stage, src_access) = self.supported(src_stage, src_access);
        let (mut dst_stage, dst_access) = self.supported(dst_stage, dst_access);
        if dst_stage == vk::PipelineStageFlags2::NONE {
            dst_stage = vk::PipelineStageFlags2::BOTTOM_OF_PIPE;
        }
        self.pending_images.push(
            vk::ImageMemoryBarrier2::default()
                .src_stage_mask(src_stage)
                .src_access_mask(src_access)
                .dst_stage_mask(dst_stage)
                .dst_access_mask(dst_access)
                .old_layout(old)
                .new_layout(new)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image.raw())
                .subresource_range(image.full_range()),
        );
        if self.automatic {
            self.tracker
                .transitioned(image.raw(), dst_stage, dst_access, attachment_write(new));
        }
        let u = self.touch(image);
        u.last = new;
        u.moved = true;
    }

    /// Records the pending transitions alone (not counted in `barrier_count`).
    pub(crate) fn emit_transitions(&mut self) {
        if self.pending_images.is_empty() {
            return;
        }
        let dep = vk::DependencyInfo::default().image_memory_barriers(&self.pending_images);
        // SAFETY: `cb` is recording outside a rendering scope (callers check);
        // synchronization2 is enabled (required at device creation); the images are alive
        // (`touch` keeps a clone until the recording is submitted).
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) };
        self.pending_images.clear();
    }
}

/// The write access of the commands that use an image in `layout` without naming it to the
/// tracker (rendering into attachments).
fn attachment_write(layout: vk::ImageLayout) -> vk::AccessFlags2 {
    use vk::ImageLayout as L;
    match layout {
        L::COLOR_ATTACHMENT_OPTIMAL => vk::AccessFlags2::COLOR_ATTACHMENT_WRITE,
        L::DEPTH_ATTACHMENT_OPTIMAL | L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL => {
            vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE
        }
        _ => vk::AccessFlags2::NONE,
    }
}
