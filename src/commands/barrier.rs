//! Explicit global memory barriers (synchronization2, `vkCmdPipelineBarrier2`), the switch
//! to manual barriers, and the barriers kiln records in manual mode.

use ash::vk;

use super::Recorder;
use crate::error::{RecordingError, Result};

use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

impl Recorder<'_, '_> {
    /// Turns off the automatic barriers and image layouts for the rest of this recording.
    ///
    /// By default (automatic mode) kiln knows what each dispatch, draw, copy and fill reads
    /// and writes (the bound sets with the pipeline's reflected access, vertex and index
    /// buffers, copy sources and destinations, by byte range and image) and records a
    /// barrier only where a command reads or writes what an earlier one wrote, or writes
    /// what an earlier one read, with the stages and accesses of the two; images bound
    /// through sets are moved to the layouts their descriptors need (see
    /// [`barrier_count`](Self::barrier_count) and the `commands` module docs). Commands
    /// recorded through [`raw`](Self::raw) are not seen: order them with
    /// [`full_barrier`](Self::full_barrier).
    ///
    /// In manual mode nothing is tracked: dispatches get no barrier between them (the
    /// caller places [`barrier`](Self::barrier)s where a dispatch reads or writes what an
    /// earlier one wrote, else results are undefined and synchronization validation reports
    /// a hazard), images bound through sets must be transitioned by the caller
    /// ([`transition`](Self::transition)), and copies and fills wait for the dispatches
    /// recorded before them and end with a full barrier, as kiln did before automatic mode.
    ///
    /// Switched to in the middle of a recording, it first orders everything recorded so far
    /// with a full barrier (the caller cannot know which barriers automatic mode still owed
    /// the commands before: a dispatch after `copy_image_to_buffer` and this switch read
    /// the copy's writes unordered, which the API-sequence fuzzer found).
    #[track_caller]
    pub fn manual_barriers(&mut self) {
        self.at(std::panic::Location::caller());
        if self.sync.automatic && !self.sync.tracker.is_clear() {
            self.record_full_barrier();
            self.sync.tracker.reset();
        }
        self.sync.automatic = false;
    }

    /// A memory barrier after dispatches: their writes are visible to later dispatches,
    /// copies and fills, which also wait for their reads (compute → compute and transfer;
    /// it used to order only dispatches while copies and fills in manual mode relied on it,
    /// which the API-sequence fuzzer found). Valid in both modes (automatic mode may still record its own barriers after
    /// it: it does not attribute an explicit barrier to the resources it orders).
    ///
    /// Errors: `KILN-E283` inside a rendering scope (a barrier there needs a self-dependency
    /// kiln's rendering scopes do not declare).
    #[track_caller]
    pub fn barrier(&mut self) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.outside_rendering("barrier inside a rendering scope; call end_rendering first")?;
        self.compute_barrier();
        Ok(())
    }

    /// A full memory barrier (all commands, all memory). In automatic mode it also orders
    /// everything recorded before it for the tracker: later commands need no barrier for
    /// it. The way to order commands recorded through [`raw`](Self::raw).
    ///
    /// Errors: `KILN-E283` inside a rendering scope.
    #[track_caller]
    pub fn full_barrier(&mut self) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.outside_rendering("full_barrier inside a rendering scope; call end_rendering first")?;
        self.record_full_barrier();
        self.sync.tracker.reset();
        Ok(())
    }

    /// `KILN-E283` with `what` inside a rendering scope.
    #[inline]
    pub(crate) fn outside_rendering(&self, what: &'static str) -> Result<(), RecordingError> {
        if self.state.rendering {
            return Err(RecordingError::RenderingState { what });
        }
        Ok(())
    }

    /// [`barrier`](Self::barrier) where the caller knows no rendering scope is open.
    /// It clears the dispatch-since-barrier flag that copies and fills look at too, so it
    /// orders them as well.
    pub(crate) fn compute_barrier(&mut self) {
        self.sync.dirty = false;
        if !self.caps.stages.contains(S::COMPUTE_SHADER) {
            // A transfer queue runs no dispatch: nothing to order (and a shader access with
            // only the transfer stage left would be invalid, VUID-VkMemoryBarrier2-dstAccessMask-03908).
            return;
        }
        self.barriers += 1;
        self.memory_barrier(
            S::COMPUTE_SHADER,
            A::SHADER_WRITE,
            S::COMPUTE_SHADER | S::ALL_TRANSFER,
            A::SHADER_READ | A::SHADER_WRITE | A::TRANSFER_READ | A::TRANSFER_WRITE,
        );
    }

    /// [`full_barrier`](Self::full_barrier) where the caller knows no rendering scope is
    /// open.
    pub(crate) fn record_full_barrier(&mut self) {
        self.sync.dirty = false;
        self.barriers += 1;
        self.memory_barrier(
            S::ALL_COMMANDS,
            A::MEMORY_WRITE,
            S::ALL_COMMANDS,
            A::MEMORY_READ | A::MEMORY_WRITE,
        );
    }

    /// Device writes → host reads and writes: recorded last in every submission that the
    /// host reads back from (Vulkan spec §7.9: a wait alone does not make device writes
    /// visible to the host).
    pub(crate) fn host_barrier(&mut self) {
        self.memory_barrier(
            S::ALL_COMMANDS,
            A::MEMORY_WRITE,
            S::HOST,
            A::HOST_READ | A::HOST_WRITE,
        );
    }

    /// One global `VkMemoryBarrier2` from (stage, access) to (stage, access), masked to the
    /// queue's stages.
    fn memory_barrier(&mut self, src_stage: S, src_access: A, dst_stage: S, dst_access: A) {
        let (src_stage, src_access) = self.supported(src_stage, src_access);
        let (dst_stage, dst_access) = self.supported(dst_stage, dst_access);
        let b = [vk::MemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)];
        let dep = vk::DependencyInfo::default().memory_barriers(&b);
        // SAFETY: `cb` is recording outside a rendering scope (callers check); the device
        // has synchronization2 enabled (required at device creation); locals outlive the
        // call.
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) }
    }
}
