//! Hazards between draws of one rendering scope, resolved by splitting the scope (automatic
//! mode).
//!
//! No pipeline barrier may order one draw of a dynamic-rendering instance against another
//! at all (VUID-vkCmdPipelineBarrier2-None-06191: not inside a render pass instance begun
//! with `vkCmdBeginRendering`; `VK_KHR_dynamic_rendering_local_read` later allows only
//! framebuffer-local barriers on attachments). So when a draw needs a barrier against
//! an earlier draw of the same scope (draw A writes a storage buffer or image through a
//! descriptor set, a later draw B reads or writes it: RAW, WAW, or WAR), the recorder
//! splits the scope right before B:
//!
//! 1. `vkCmdEndRendering`: every attachment of the scope is stored (the split is allowed
//!    only when each is, see below); a multisample resolve of the scope runs here too, on
//!    what was drawn so far, and again at the true end, which overwrites it whole (the
//!    render area is the attachments' extent), so the resolve target ends as one resolve
//!    of everything drawn;
//! 2. one `vkCmdPipelineBarrier2`: the hazard's barrier (`hazards`) merged with the
//!    attachments' own: their writes (stores, resolves) in the colour-output and
//!    fragment-test stages before the next segment's loads, writes and resolves in those
//!    stages (Vulkan spec §8.1: load and store operations are ordered only within one
//!    render pass instance);
//! 3. `vkCmdBeginRendering` again with the scope's attachments, views, store operations and
//!    resolves, every load operation LOAD: clears are not repeated, the contents drawn
//!    before the split are kept.
//!
//! Everything else the draws rely on is command-buffer state and survives the split: bound
//! pipelines, descriptor sets, push constants, vertex and index buffers, viewport,
//! scissor, stencil reference and the other dynamic state. The split is counted in
//! `barrier_count` (one barrier) and in [`Recorder::debug_scope_splits`].
//!
//! **What stays unresolved** (`KILN-W005`, logged once per recording, counted in
//! `debug_uncovered`): a scope with an attachment that is not stored (`store: false`; the
//! multisampled attachment of [`ColorAttachment::resolve_into`](super::ColorAttachment)
//! is one) cannot be split: its `vkCmdBeginRendering` was recorded with
//! `STORE_OP_DONT_CARE` before the hazard was known, so ending it there would discard what
//! was drawn. Store the attachment (`store: true`) and kiln splits such a scope too. In
//! manual mode (`manual_barriers`) nothing is split: ordering draws is the caller's.

use ash::vk;

use super::hazards::Need;
use super::Recorder;

use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

/// The stages attachments are loaded, stored, written and resolved in.
const ATTACHMENT_STAGES: S = S::from_raw(
    S::COLOR_ATTACHMENT_OUTPUT.as_raw()
        | S::EARLY_FRAGMENT_TESTS.as_raw()
        | S::LATE_FRAGMENT_TESTS.as_raw(),
);

/// The barrier between two segments of a split scope for its attachments: stores and
/// resolves (writes) before loads, writes and resolves.
const ATTACHMENTS: Need = Need {
    src_stage: ATTACHMENT_STAGES,
    src_access: A::from_raw(
        A::COLOR_ATTACHMENT_WRITE.as_raw() | A::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw(),
    ),
    dst_stage: ATTACHMENT_STAGES,
    dst_access: A::from_raw(
        A::COLOR_ATTACHMENT_READ.as_raw()
            | A::COLOR_ATTACHMENT_WRITE.as_raw()
            | A::DEPTH_STENCIL_ATTACHMENT_READ.as_raw()
            | A::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw(),
    ),
};

/// The barrier between two segments of a split local-read scope for its input attachments
/// (VK_KHR_dynamic_rendering_local_read): colour writes before input-attachment reads in
/// fragment shaders. Depth/stencil input reads are ordered by [`ATTACHMENTS`] already (their
/// reads are fragment-test accesses).
const INPUT_ATTACHMENTS: Need = Need {
    src_stage: S::COLOR_ATTACHMENT_OUTPUT,
    src_access: A::COLOR_ATTACHMENT_WRITE,
    dst_stage: S::FRAGMENT_SHADER,
    dst_access: A::INPUT_ATTACHMENT_READ,
};

/// The barrier of a split: `need` (the draw's), the attachments', and in a local-read scope
/// the input attachments'.
fn barrier(need: Need, local_read: bool) -> Need {
    let mut barrier = need;
    barrier.merge(ATTACHMENTS);
    if local_read {
        barrier.merge(INPUT_ATTACHMENTS);
    }
    barrier
}

/// The open rendering scope as it was begun, to begin it again after a split.
#[derive(Default)]
pub(crate) struct Resume {
    pub area: vk::Rect2D,
    pub colors: Vec<vk::RenderingAttachmentInfo<'static>>,
    pub depth: Option<vk::RenderingAttachmentInfo<'static>>,
    pub stencil: Option<vk::RenderingAttachmentInfo<'static>>,
    /// Splits of scopes this recording made.
    pub splits: u32,
}

impl Resume {
    /// Every attachment is stored: ending the scope keeps what was drawn.
    fn stored(&self) -> bool {
        let store =
            |i: &vk::RenderingAttachmentInfo<'_>| i.store_op == vk::AttachmentStoreOp::STORE;
        self.colors.iter().all(store)
            && self.depth.iter().all(store)
            && self.stencil.iter().all(store)
    }

    /// The scope's attachments loaded (from the second segment on).
    fn load(&mut self) {
        let load = |i: &mut vk::RenderingAttachmentInfo<'static>| {
            i.load_op = vk::AttachmentLoadOp::LOAD;
        };
        self.colors.iter_mut().for_each(load);
        self.depth.iter_mut().for_each(load);
        self.stencil.iter_mut().for_each(load);
    }
}

impl Recorder<'_, '_> {
    /// Scopes this recording split to order a draw after an earlier draw of the same scope
    /// (see the `split` module docs). Unstable: for kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_scope_splits(&self) -> u32 {
        self.state.resume.splits
    }

    /// A draw inside the open scope needs `need` against an earlier draw of the scope:
    /// splits the scope around the barrier (module docs), or counts and logs it
    /// (`KILN-W005`) where the scope cannot be split.
    pub(crate) fn split_scope(&mut self, need: Need) {
        if !self.state.resume.stored() {
            self.sync.tracker.uncovered += 1;
            if !self.warned {
                self.warned = true;
                log::warn!(
                    "KILN-W005: a draw uses, through a descriptor set, what an earlier draw \
                     of the same rendering scope wrote (or reads what a later one writes), \
                     and the scope has an attachment that is not stored (store: false), so \
                     kiln cannot split the scope around a barrier; store every attachment, \
                     or end the scope between the two draws"
                );
            }
            return;
        }
        // SAFETY: a rendering scope begun on this command buffer is open (`rendering`).
        unsafe { self.shared.raw.cmd_end_rendering(self.cb) };
        if let Some(recorded) = self.emit(barrier(need, self.state.local_read_scope)) {
            self.sync.tracker.recorded(recorded);
        }
        self.state.resume.load();
        let r = &self.state.resume;
        let mut info = vk::RenderingInfo::default()
            .render_area(r.area)
            .layer_count(1)
            .color_attachments(&r.colors);
        if let Some(d) = r.depth.as_ref() {
            info = info.depth_attachment(d);
        }
        if let Some(s) = r.stencil.as_ref() {
            info = info.stencil_attachment(s);
        }
        // SAFETY: the attachment infos of the scope just ended, as `begin_rendering`
        // checked and recorded them (their images are kept by the recording and still in
        // the attachment layouts: nothing moved them inside the scope), with LOAD in
        // place of their load operations.
        unsafe { self.shared.raw.cmd_begin_rendering(self.cb, &info) };
        self.state.resume.splits += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The validation layer (1.4.309) does not track input-attachment reads of a local-read
    /// scope, so tests/root/local_read.rs cannot see a missing ordering: checked here.
    #[test]
    fn a_local_read_split_orders_colour_writes_before_input_attachment_reads() {
        let storage = Need {
            src_stage: S::FRAGMENT_SHADER,
            src_access: A::SHADER_STORAGE_WRITE,
            dst_stage: S::FRAGMENT_SHADER,
            dst_access: A::SHADER_STORAGE_READ,
        };
        let plain = barrier(storage, false);
        assert!(!plain.dst_access.contains(A::INPUT_ATTACHMENT_READ));
        let local = barrier(storage, true);
        assert!(local.src_stage.contains(S::COLOR_ATTACHMENT_OUTPUT));
        assert!(local.src_access.contains(A::COLOR_ATTACHMENT_WRITE));
        assert!(local.dst_stage.contains(S::FRAGMENT_SHADER));
        assert_eq!(
            local.dst_access,
            plain.dst_access | A::INPUT_ATTACHMENT_READ,
            "only the input-attachment read added"
        );
        assert_eq!(local.src_stage, plain.src_stage);
    }

    /// The scope is begun again with its attachments in the layouts it was begun with
    /// (RENDERING_LOCAL_READ_KHR for a local-read one), loaded.
    #[test]
    fn a_resumed_scope_keeps_the_local_read_layout() {
        let info = vk::RenderingAttachmentInfo::default()
            .image_layout(vk::ImageLayout::RENDERING_LOCAL_READ_KHR)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE);
        let mut resume = Resume {
            colors: vec![info],
            ..Resume::default()
        };
        assert!(resume.stored());
        resume.load();
        assert_eq!(
            resume.colors[0].image_layout,
            vk::ImageLayout::RENDERING_LOCAL_READ_KHR
        );
        assert_eq!(resume.colors[0].load_op, vk::AttachmentLoadOp::LOAD);
    }
}
