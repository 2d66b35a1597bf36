//! The recorder's side of breadcrumbs (`device::breadcrumbs` says what they are): a marker
//! at the start of the command buffer and of each timing scope, and one after a barrier at
//! each scope's end and at the command buffer's end.

use std::panic::Location;

use ash::vk;

use super::Recorder;
use crate::device::{CrumbEvent, CrumbScope, Crumbs, MAX_PER_RECORDING, SUBMISSION};

impl Recorder<'_, '_> {
    /// Starts the recording's breadcrumbs when the device has them on: a barrier that
    /// orders the queue's earlier marker writes before this command buffer's, and the
    /// submission's start marker.
    pub(crate) fn begin_crumbs(&mut self) {
        if !self.shared.breadcrumbs_on() {
            return;
        }
        self.timing.crumbs = Some(Crumbs::default());
        self.marker(SUBMISSION, false, vk::PipelineStageFlags2::CLEAR);
    }

    /// Ends them: the submission's end marker (after every earlier command); what the
    /// submission layer remembers for the post-mortem.
    pub(crate) fn end_crumbs(&mut self) -> Option<std::sync::Arc<Crumbs>> {
        self.timing.crumbs.as_ref()?;
        self.marker(SUBMISSION, true, vk::PipelineStageFlags2::ALL_COMMANDS);
        self.timing.crumbs.take().map(std::sync::Arc::new)
    }

    /// The start marker of a scope whose name, with those of the scopes around it, is
    /// `path` (`outer/inner`), opened at `location`; the scope's index for its end marker
    /// (`u32::MAX`: none).
    pub(crate) fn crumb_begin(
        &mut self,
        path: String,
        location: &'static Location<'static>,
    ) -> u32 {
        let Some(c) = &mut self.timing.crumbs else {
            return u32::MAX;
        };
        if self.state.rendering {
            return u32::MAX;
        }
        let index = c.scopes.len() as u32;
        c.scopes.push(CrumbScope { path, location });
        self.marker(index, false, vk::PipelineStageFlags2::NONE);
        index
    }

    /// The end marker of scope `index` (from [`crumb_begin`](Self::crumb_begin)).
    pub(crate) fn crumb_end(&mut self, index: u32) {
        if index != u32::MAX && !self.state.rendering {
            self.marker(index, true, vk::PipelineStageFlags2::ALL_COMMANDS);
        }
    }

    /// Writes one marker of `scope` into the queue's ring, after a barrier on the ring from
    /// `after` (none: `NONE`). The submission's end always has room.
    fn marker(&mut self, scope: u32, end: bool, after: vk::PipelineStageFlags2) {
        let Some(c) = &self.timing.crumbs else { return };
        let room = if scope == SUBMISSION && end {
            MAX_PER_RECORDING
        } else {
            MAX_PER_RECORDING - 1
        };
        if c.events.len() >= room {
            return;
        }
        let Some((ring, slot, token)) = self.shared.marker_slot(self.timing.queue) else {
            return;
        };
        if after != vk::PipelineStageFlags2::NONE {
            self.ring_barrier(ring, after);
        }
        // SAFETY: `cb` is recording outside a rendering scope (callers check); the ring
        // has TRANSFER_DST usage, `slot * 4 + 4 <= SLOTS * 4`, offset and size are
        // multiples of 4 (VUID-vkCmdFillBuffer-dstOffset-00025, -size-00028); every queue
        // family supports fills (Vulkan 1.1+).
        unsafe {
            self.shared
                .raw
                .cmd_fill_buffer(self.cb, ring, u64::from(slot) * 4, 4, token)
        };
        if let Some(c) = &mut self.timing.crumbs {
            c.events.push(CrumbEvent {
                slot,
                token,
                scope,
                end,
            });
        }
    }

    /// A buffer barrier on the ring: `after` (and earlier markers' writes) → the next
    /// marker's write. Only the ring is made visible (see `device::breadcrumbs`).
    fn ring_barrier(&mut self, ring: vk::Buffer, after: vk::PipelineStageFlags2) {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let b = [vk::BufferMemoryBarrier2::default()
            .src_stage_mask(after | S::CLEAR)
            .src_access_mask(A::TRANSFER_WRITE)
            .dst_stage_mask(S::CLEAR)
            .dst_access_mask(A::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(ring)
            .offset(0)
            .size(vk::WHOLE_SIZE)];
        let dep = vk::DependencyInfo::default().buffer_memory_barriers(&b);
        // SAFETY: `cb` is recording outside a rendering scope (callers check);
        // synchronization2 is enabled; ALL_COMMANDS is valid on every queue and CLEAR on
        // every family that records (graphics, compute and transfer ones all support
        // transfer commands, VUID-vkCmdPipelineBarrier2-srcStageMask-03849); locals outlive
        // the call.
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) }
    }
}
