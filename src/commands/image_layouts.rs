//! Image layout tracking and transitions (synchronization2 image barriers, Vulkan spec
//! §7.6.2 and §12.4 "Image Layouts").
//!
//! kiln tracks a layout per mip level and array layer (`SubresourceMap`, one value while
//! they share one): the image holds the layouts after the last submitted command buffer
//! that changed them, and a recorder keeps, per image it touched, the layouts it found the
//! image in and the layouts it leaves it in (`ImageUse`) until the submission layer commits
//! them. A command moves only the subresources it uses (a copy one mip level, an
//! attachment or a descriptor the mips and layers of its view), with one image barrier per
//! piece of that range that is in one layout ([`Recorder::move_range`]); the hazard tracker
//! keeps its state per subresource too (`hazards`), so a barrier's source scope is what
//! the recording did with those subresources only.

use ash::vk;

use super::hazards::ImageRange;
use super::work::ImageUse;
use super::Recorder;
use crate::device::{layout_usage_ok, Image, Subresources};
use crate::error::{MemoryError, RecordingError, Result};

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

/// How [`Recorder::move_range`] moves a range.
#[derive(Clone, Copy)]
pub(crate) struct Move {
    /// The old layout the barriers name for every piece (an explicit `transition_from`, a
    /// discarding clear); `None`: each piece's current layout.
    pub old: Option<vk::ImageLayout>,
    /// A barrier even for pieces already in the new layout (recorded transitions from an
    /// explicit old layout, clears).
    pub always: bool,
    /// A barrier for pieces already in the new layout that the recording used (an
    /// attachment after a sampling: the scope's flush orders only shader stages).
    pub order_same: bool,
    /// The source scope also holds the stages of the old layout (the caller may have used
    /// the image through raw commands), not only what the tracker saw.
    pub raw_src: bool,
}

impl Move {
    /// Kiln's own commands: pieces not yet in the layout, after what the recording did.
    pub(crate) const FOR_COMMAND: Move = Move {
        old: None,
        always: false,
        order_same: false,
        raw_src: false,
    };
}

impl Recorder<'_, '_> {
    /// The layout `image` is in at this point of the recording: that of every mip level and
    /// layer when they share one, else that of mip 0, layer 0 (see
    /// [`subresource_layout`](Self::subresource_layout)).
    pub fn image_layout(&self, image: &Image) -> vk::ImageLayout {
        self.uniform_layout(image)
            .or_else(|| self.subresource_layout(image, 0, 0))
            .unwrap_or(vk::ImageLayout::UNDEFINED)
    }

    /// The layout of mip level `mip`, layer `layer` of `image` at this point of the
    /// recording (`None`: no such subresource).
    pub fn subresource_layout(
        &self,
        image: &Image,
        mip: u32,
        layer: u32,
    ) -> Option<vk::ImageLayout> {
        match self.images.iter().find(|u| u.image.raw() == image.raw()) {
            Some(u) => u.last.get(mip, layer),
            None => image.subresource_layout(mip, layer),
        }
    }

    /// The layout every subresource of `image` is in, when they share one.
    fn uniform_layout(&self, image: &Image) -> Option<vk::ImageLayout> {
        match self.images.iter().find(|u| u.image.raw() == image.raw()) {
            Some(u) => u.last.uniform(),
            None => image.layouts().uniform(),
        }
    }

    /// The layout of the first subresource of `range` of `image` (at this point of the
    /// recording) that is not in `layout` (`None`: all are; one compare while the image is
    /// in one layout).
    pub(crate) fn layout_other_than(
        &self,
        image: &Image,
        range: Subresources,
        layout: vk::ImageLayout,
    ) -> Option<vk::ImageLayout> {
        let mut other = None;
        let mut look = |_, l| {
            if l != layout && other.is_none() {
                other = Some(l);
            }
        };
        match self.images.iter().find(|u| u.image.raw() == image.raw()) {
            Some(u) => u.last.for_each(range, &mut look),
            None => image.layouts().for_each(range, &mut look),
        }
        other
    }

    /// The recording's entry for `image`, made (with the image's current layouts, and a
    /// clone that keeps it alive) on first touch.
    pub(crate) fn touch(&mut self, image: &Image) -> &mut ImageUse {
        let i = match self
            .images
            .iter()
            .position(|u| u.image.raw() == image.raw())
        {
            Some(i) => i,
            None => {
                let layouts = image.layouts();
                self.images.push(ImageUse {
                    image: image.clone(),
                    first: layouts.clone(),
                    last: layouts,
                    moved: false,
                    prepare: false,
                    discards: false,
                });
                self.images.len() - 1
            }
        };
        &mut self.images[i]
    }

    /// Moves `image` (every mip level and layer) from its current layouts to `new` with a
    /// `vkCmdPipelineBarrier2` whose stages and accesses follow from the layouts (writes
    /// before are made visible to the uses after); one image barrier per range of
    /// subresources in one layout. When it is already in `new` no barrier is recorded, but
    /// the recording relies on that layout (a reusable recording checks it at every
    /// submission, `KILN-E285`). The image is kept alive until the submission.
    ///
    /// Errors: `KILN-E180` a layout the image's usage does not allow (or `UNDEFINED`,
    /// `PREINITIALIZED`), `KILN-E109` an image of another device, `KILN-E283` inside a
    /// rendering scope.
    #[track_caller]
    pub fn transition(
        &mut self,
        image: &Image,
        new: vk::ImageLayout,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.own_image(image)?;
        check_layout(image, new, "new")?;
        self.transition_now(image, Subresources::all(), new)
    }

    /// [`transition`](Self::transition) of `range` (mip levels and layers) of `image`
    /// only: the other subresources keep their layouts, and the barrier names exactly the
    /// subresources of `range` that are not in `new` yet.
    ///
    /// Errors: `KILN-E180` a range that is empty or past the image's levels or layers or a
    /// layout its usage does not allow, `KILN-E109` an image of another device, `KILN-E283` inside a rendering scope.
    #[track_caller]
    pub fn transition_subresources(
        &mut self,
        image: &Image,
        range: Subresources,
        new: vk::ImageLayout,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.own_image(image)?;
        check_range(image, range)?;
        check_layout(image, new, "new")?;
        self.transition_now(image, range, new)
    }

    /// [`transition_subresources`](Self::transition_subresources) of an image of this
    /// device, for kiln's own commands (the caller's location is theirs).
    pub(crate) fn transition_now(
        &mut self,
        image: &Image,
        range: Subresources,
        new: vk::ImageLayout,
    ) -> Result<(), RecordingError> {
        self.outside_rendering(
            "image layout transition inside a rendering scope; transition before begin_rendering",
        )?;
        let how = Move {
            raw_src: true,
            ..Move::FOR_COMMAND
        };
        self.move_range(image, range, new, stage_access(new), how);
        self.emit_transitions();
        Ok(())
    }

    /// Like [`transition`](Self::transition) with an explicit old layout (`UNDEFINED`
    /// discards the contents); the barrier is recorded even when `old == new`. When it is
    /// the recording's first command on the image and `old` is `UNDEFINED`, the recording
    /// relies on no layout of the image: a reusable recording may then leave it in `new`
    /// (such a barrier is valid from every layout, so no `KILN-E284`/`KILN-E285`).
    ///
    /// Errors: `KILN-E180` a layout the image's usage does not allow (`old` may be
    /// `UNDEFINED`, `new` not), `KILN-E109` an image of another device, `KILN-E283` inside a
    /// rendering scope.
    #[track_caller]
    pub fn transition_from(
        &mut self,
        image: &Image,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.own_image(image)?;
        if old != vk::ImageLayout::UNDEFINED {
            check_layout(image, old, "old")?;
        }
        check_layout(image, new, "new")?;
        self.layout_barrier(image, Subresources::all(), old, new)
    }

    /// The barrier of [`transition_from`](Self::transition_from) for `range`: recorded at
    /// once, from `old` (an `UNDEFINED` one discards on purpose).
    pub(crate) fn layout_barrier(
        &mut self,
        image: &Image,
        range: Subresources,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
    ) -> Result<(), RecordingError> {
        self.outside_rendering(
            "image layout transition inside a rendering scope; transition before begin_rendering",
        )?;
        let fresh = !self.images.iter().any(|u| u.image.raw() == image.raw());
        let how = Move {
            old: Some(old),
            always: true,
            order_same: false,
            raw_src: true,
        };
        self.move_range(image, range, new, stage_access(new), how);
        self.emit_transitions();
        self.mark_discards(image, range, fresh && old == vk::ImageLayout::UNDEFINED);
        Ok(())
    }

    /// The recording's first command on `image` discards it whole (`discards`): valid from
    /// whatever layouts the image is in then.
    pub(crate) fn mark_discards(&mut self, image: &Image, range: Subresources, discards: bool) {
        let whole = range.covers(image.mip_levels(), image.array_layers());
        if discards && whole {
            if let Some(u) = self
                .images
                .iter_mut()
                .find(|u| u.image.raw() == image.raw())
            {
                u.discards = true;
            }
        }
    }

    /// [`transition_subresources`](Self::transition_subresources) for a command of kiln's
    /// own whose first use of `range` is `dst` (stages, accesses): in automatic mode the
    /// transitions wait for what the recording did with those subresources and join the
    /// command's barrier; in manual mode they are recorded at once, as `transition`
    /// records them.
    pub(crate) fn transition_for(
        &mut self,
        image: &Image,
        range: Subresources,
        new: vk::ImageLayout,
        dst: (vk::PipelineStageFlags2, vk::AccessFlags2),
    ) -> Result<(), RecordingError> {
        if !self.sync.automatic {
            return self.transition_now(image, range, new);
        }
        self.outside_rendering(
            "image layout transition inside a rendering scope; transition before begin_rendering",
        )?;
        self.move_range(image, range, new, dst, Move::FOR_COMMAND);
        Ok(())
    }

    /// Adds to the barrier of the command being recorded (`pending_images`) the
    /// transitions of `range` of `image` to `new`: one image barrier per piece of the range
    /// in one layout, from the scope of what the recording did with that piece (automatic
    /// mode, when it used it; `how.raw_src`: also the old layout's stages), else the old
    /// layout's stages (Vulkan spec §7.1.2, §12.4), to `dst`; pieces already in `new` get
    /// none (see [`Move`]). Updates the recording's view (the image is touched even when
    /// nothing moves: the recording relies on its layouts) and the tracker.
    pub(crate) fn move_range(
        &mut self,
        image: &Image,
        range: Subresources,
        new: vk::ImageLayout,
        dst: (vk::PipelineStageFlags2, vk::AccessFlags2),
        how: Move,
    ) {
        let (levels, layers) = (image.mip_levels(), image.array_layers());
        let (dst_stage, dst_access) = self.supported(dst.0, dst.1);
        let dst_stage = if dst_stage.is_empty() {
            vk::PipelineStageFlags2::BOTTOM_OF_PIPE
        } else {
            dst_stage
        };
        let dst = (dst_stage, dst_access);
        let uniform = self.touch(image).last.uniform();
        let moved = match uniform {
            // The common case: the image in one layout, no list of pieces.
            Some(current) => {
                let piece = range.resolve(levels, layers);
                self.move_piece(image, piece, current, new, dst, how)
            }
            None => {
                let mut pieces = std::mem::take(&mut self.sync.layout_pieces);
                pieces.clear();
                if let Some(u) = self.images.iter().find(|u| u.image.raw() == image.raw()) {
                    u.last.for_each(range, |r, l| pieces.push((r, l)));
                }
                let mut moved = false;
                for &(piece, current) in &pieces {
                    moved |= self.move_piece(image, piece, current, new, dst, how);
                }
                self.sync.layout_pieces = pieces;
                moved
            }
        };
        if moved {
            let u = self.touch(image);
            u.last.set(range, new);
            u.moved = true;
        }
    }

    /// One piece of [`move_range`](Self::move_range), in `current`; returns whether it
    /// got a barrier.
    fn move_piece(
        &mut self,
        image: &Image,
        piece: Subresources,
        current: vk::ImageLayout,
        new: vk::ImageLayout,
        (dst_stage, dst_access): (vk::PipelineStageFlags2, vk::AccessFlags2),
        how: Move,
    ) -> bool {
        let tracked = match self.sync.automatic {
            true => self.sync.tracker.image_src(image.raw(), piece),
            false => None,
        };
        if current == new && !how.always && !(how.order_same && tracked.is_some()) {
            return false;
        }
        let old = how.old.unwrap_or(current);
        let src = match (tracked, how.raw_src) {
            // Also after the old layout's stages (an UNDEFINED one: all earlier work).
            (Some((s, a)), true) => {
                let own = stage_access(old);
                (s | own.0, a | own.1)
            }
            (None, true) => stage_access(old),
            (Some(t), false) => t,
            (None, false) => stage_access(current),
        };
        let (src_stage, src_access) = self.supported(src.0, src.1);
        self.sync.pending_images.push(
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
                .subresource_range(image.vk_range(piece)),
        );
        if self.sync.automatic {
            let r = ImageRange {
                range: piece,
                levels: image.mip_levels(),
                layers: image.array_layers(),
            };
            self.sync.tracker.transitioned(
                image.raw(),
                r,
                (dst_stage, dst_access),
                attachment_write(new),
            );
        }
        true
    }

    /// Records the pending transitions alone (not counted in `barrier_count`).
    pub(crate) fn emit_transitions(&mut self) {
        if self.sync.pending_images.is_empty() {
            return;
        }
        let dep = vk::DependencyInfo::default().image_memory_barriers(&self.sync.pending_images);
        // SAFETY: `cb` is recording outside a rendering scope (callers check);
        // synchronization2 is enabled (required at device creation); the images are alive
        // (`touch` keeps a clone until the recording is submitted).
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) };
        self.sync.pending_images.clear();
    }
}

/// Checks that `range` names subresources of `image`. Errors: `KILN-E180`.
/// `KILN-E180` when `layout` (the barrier's `which` layout) cannot be the image's: a new
/// layout of `UNDEFINED` or `PREINITIALIZED` (VUID-VkImageMemoryBarrier2-newLayout-01198), or
/// a layout the image's usage does not allow (VUID-VkImageMemoryBarrier2-oldLayout-01208…
/// 01213 and their `newLayout` twins; `device::layout_usage_ok`). A layout with no usage rule
/// kiln knows (`PRESENT_SRC_KHR`, …) passes to the layer.
fn check_layout(image: &Image, layout: vk::ImageLayout, which: &str) -> Result<(), RecordingError> {
    let never = which == "new"
        && matches!(
            layout,
            vk::ImageLayout::UNDEFINED | vk::ImageLayout::PREINITIALIZED
        );
    if !never && layout_usage_ok(layout, image.usage()) != Some(false) {
        return Ok(());
    }
    Err(MemoryError::InvalidImage {
        object: image.label().to_string(),
        detail: if never {
            format!("{layout:?} cannot be the new layout of a transition; transition to the layout of the image's next use (GENERAL fits every use)")
        } else {
            format!(
                "the {which} layout {layout:?} needs a usage the image lacks (its usage is {:?}); \
                 transition to a layout its usage allows (GENERAL always), or create the image \
                 with that usage",
                image.usage()
            )
        },
    }.into())
}

pub(crate) fn check_range(image: &Image, range: Subresources) -> Result<(), RecordingError> {
    let (levels, layers) = (image.mip_levels(), image.array_layers());
    if range.fits(levels, layers) {
        return Ok(());
    }
    Err(MemoryError::InvalidImage {
        object: image.label().to_string(),
        detail: format!(
            "subresources {range:?} are empty or past the image's {levels} mip levels and \
             {layers} layers"
        ),
    }
    .into())
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
