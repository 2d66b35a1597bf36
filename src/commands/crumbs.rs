//! The recorder's side of breadcrumbs (`device::breadcrumbs` says what they are): a marker
//! at the start of the command buffer and of each timing scope, and one at each scope's
//! end and at the command buffer's end — with fills after a barrier and outside rendering
//! scopes only, with VK_AMD_buffer_marker at `BOTTOM_OF_PIPE` and inside rendering scopes
//! too (`device::breadcrumbs`, "Writers").

use std::panic::Location;

use ash::vk;

use super::Recorder;
use crate::device::{CrumbEvent, CrumbScope, CrumbWriter, Crumbs, MAX_PER_RECORDING, SUBMISSION};

impl Recorder<'_, '_> {
    /// Starts the recording's breadcrumbs when the device has them on: a barrier that
    /// orders the queue's earlier marker writes before this command buffer's, and the
    /// submission's start marker.
    pub(crate) fn begin_crumbs(&mut self) {
        if !self.shared.breadcrumbs_on() {
            return;
        }
        self.timing.crumbs = Some(Crumbs::default());
        let (writer, _) = self.shared.marker_writer();
        self.marker(SUBMISSION, false, writer.write_stage());
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
        if !self.shared.marker_writer().0.writes(self.state.rendering) {
            return u32::MAX;
        }
        let index = c.scopes.len() as u32;
        c.scopes.push(CrumbScope { path, location });
        self.marker(index, false, vk::PipelineStageFlags2::NONE);
        index
    }

    /// The end marker of scope `index` (from [`crumb_begin`](Self::crumb_begin)).
    pub(crate) fn crumb_end(&mut self, index: u32) {
        if index != u32::MAX && self.shared.marker_writer().0.writes(self.state.rendering) {
            self.marker(index, true, vk::PipelineStageFlags2::ALL_COMMANDS);
        }
    }

    /// Writes one marker of `scope` into the queue's ring, after a barrier on the ring from
    /// `after` (none: `NONE`; the AMD writer's ends have none). The submission's end always
    /// has room.
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
        let shared = self.shared;
        let (writer, amd) = shared.marker_writer();
        let barrier = match writer {
            CrumbWriter::Fill => after != vk::PipelineStageFlags2::NONE,
            // At the command buffer's start only: an end is written at BOTTOM_OF_PIPE.
            CrumbWriter::Amd => scope == SUBMISSION && !end,
        };
        if barrier {
            self.ring_barrier(ring, after);
        }
        let offset = u64::from(slot) * 4;
        match amd {
            // SAFETY: VK_AMD_buffer_marker is enabled (`amd` is its functions); `cb` is
            // recording, inside or outside a rendering scope ("Render Pass Scope: Both");
            // the ring has TRANSFER_DST usage (VUID-vkCmdWriteBufferMarkerAMD-dstBuffer-
            // 01799), is bound to memory (-01800), `offset` is a multiple of 4 (-dstOffset-
            // 01801) and `offset + 4 <= SLOTS * 4` (-01798); TOP_OF_PIPE and BOTTOM_OF_PIPE
            // are valid on every queue family (-pipelineStage-04074) and need no feature
            // (-04075..-04080, -07077, -shadingRateImage-07314, -rayTracingPipeline-07943);
            // kiln records no video coding scope (-videocoding).
            Some(f) => unsafe {
                f.cmd_write_buffer_marker(self.cb, CrumbWriter::stage(end), ring, offset, token)
            },
            // SAFETY: `cb` is recording outside a rendering scope (`Writer::writes`; the
            // start and end of the command buffer are outside one); the ring has
            // TRANSFER_DST usage, `offset + 4 <= SLOTS * 4`, offset and size are multiples
            // of 4 (VUID-vkCmdFillBuffer-dstOffset-00025, -size-00028); every queue family
            // supports fills (Vulkan 1.1+).
            None => unsafe { shared.raw.cmd_fill_buffer(self.cb, ring, offset, 4, token) },
        }
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
    /// marker's write (fills: `CLEAR`; AMD writes: `after`, then `ALL_COMMANDS`). Only the
    /// ring is made visible (see `device::breadcrumbs`).
    fn ring_barrier(&mut self, ring: vk::Buffer, after: vk::PipelineStageFlags2) {
        use vk::AccessFlags2 as A;
        let write = self.shared.marker_writer().0.write_stage();
        let b = [vk::BufferMemoryBarrier2::default()
            .src_stage_mask(after | write)
            .src_access_mask(A::TRANSFER_WRITE)
            .dst_stage_mask(write)
            .dst_access_mask(A::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(ring)
            .offset(0)
            .size(vk::WHOLE_SIZE)];
        let dep = vk::DependencyInfo::default().buffer_memory_barriers(&b);
        // SAFETY: `cb` is recording outside a rendering scope (fills: `Writer::writes`; AMD:
        // only at the command buffer's start); synchronization2 is enabled; TRANSFER_WRITE
        // is an access of CLEAR and of ALL_COMMANDS (VkBufferMemoryBarrier2's access-mask
        // rules); ALL_COMMANDS is valid on every queue and CLEAR on
        // every family that records (graphics, compute and transfer ones all support
        // transfer commands, VUID-vkCmdPipelineBarrier2-srcStageMask-03849); locals outlive
        // the call.
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) }
    }
}
