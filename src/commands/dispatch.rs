//! Dispatches, with the bound-state checks draws share: by workgroups (`dispatch`), by
//! invocations in 1, 2 or 3 dimensions (`dispatch_threads*`), and indirect
//! (`dispatch_indirect`, the group counts read from a buffer by the device).

use ash::vk;

use super::command::{BufferAccess, Command};
use super::hazards::Use;
use super::Recorder;
use crate::device::Buffer;
use crate::error::{RecordingError, Result};

/// Bytes of a `VkDispatchIndirectCommand` (three `u32` group counts).
pub const DISPATCH_INDIRECT_SIZE: u64 = 12;

impl Recorder<'_, '_> {
    /// Checks that every non-empty set of the layout bound at `slot` is bound and that push
    /// constants were pushed (VUID-vkCmdDispatch-None-08600, -maintenance4-08602, and the
    /// same VUIDs of vkCmdDraw*). Errors: `KILN-E254`, `KILN-E255`. The answer is cached
    /// until a pipeline with another layout is bound (see `Bound::ready`).
    #[inline]
    pub(crate) fn check_bound_state(&mut self, slot: usize) -> Result<(), RecordingError> {
        match &mut self.state.bound[slot] {
            Some(bound) if !bound.ready => {
                bound.check()?;
                bound.ready = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Dispatches `groups` workgroups.
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E253` beyond maxComputeWorkGroupCount,
    /// `KILN-E254` a set of the pipeline's layout is not bound (VUID-vkCmdDispatch-None-08600),
    /// `KILN-E255` push constants never pushed (VUID-vkCmdDispatch-maintenance4-08602),
    /// `KILN-E283` inside a rendering scope.
    #[inline(always)]
    #[track_caller]
    pub fn dispatch(&mut self, x: u32, y: u32, z: u32) -> Result<(), RecordingError> {
        let limit = self.caps.max_groups;
        if (x > limit[0]) | (y > limit[1]) | (z > limit[2]) {
            return Err(self.dispatch_error([x, y, z]));
        }
        self.record(Command::dispatch("dispatch", &[]), |raw, cb| {
            // SAFETY: a compute pipeline is bound with its sets and push constants
            // (checked by `record`); the counts are within maxComputeWorkGroupCount.
            unsafe { raw.cmd_dispatch(cb, x, y, z) }
        })
    }

    /// The error of a dispatch beyond maxComputeWorkGroupCount (`KILN-E253`).
    #[cold]
    #[inline(never)]
    fn dispatch_error(&self, groups: [u32; 3]) -> RecordingError {
        RecordingError::DispatchTooLarge {
            groups,
            limit: self.caps.max_groups,
        }
    }

    /// Dispatches enough workgroups along x to cover `n` invocations (at least one
    /// workgroup; the shader checks `gl_GlobalInvocationID.x < n`).
    ///
    /// Errors: as [`dispatch`](Self::dispatch); a count whose workgroups exceed
    /// maxComputeWorkGroupCount\[0\] is `KILN-E253`, whose message says how to fold it into
    /// [`dispatch_threads_2d`](Self::dispatch_threads_2d).
    #[inline]
    #[track_caller]
    pub fn dispatch_threads(&mut self, n: u32) -> Result<(), RecordingError> {
        let wg = self.state.bound[0]
            .as_ref()
            .map_or(1, |b| b.workgroup[0].max(1));
        self.dispatch(n.div_ceil(wg).max(1), 1, 1)
    }

    /// Dispatches enough workgroups to cover `width × height` invocations, each dimension
    /// divided by the bound pipeline's workgroup size and rounded up (the shader checks
    /// `gl_GlobalInvocationID.xy` against the size).
    ///
    /// Errors: as [`dispatch`](Self::dispatch).
    #[inline]
    #[track_caller]
    pub fn dispatch_threads_2d(&mut self, width: u32, height: u32) -> Result<(), RecordingError> {
        self.dispatch_threads_3d(width, height, 1)
    }

    /// Dispatches enough workgroups to cover `x × y × z` invocations (each dimension rounded
    /// up to whole workgroups, at least one).
    ///
    /// Errors: as [`dispatch`](Self::dispatch).
    #[inline]
    #[track_caller]
    pub fn dispatch_threads_3d(&mut self, x: u32, y: u32, z: u32) -> Result<(), RecordingError> {
        let wg = self.state.bound[0].as_ref().map_or([1; 3], |b| b.workgroup);
        let groups = |n: u32, w: u32| n.div_ceil(w.max(1)).max(1);
        self.dispatch(groups(x, wg[0]), groups(y, wg[1]), groups(z, wg[2]))
    }

    /// Dispatches with the group counts the device reads from `buffer` at `offset` when the
    /// command runs: a `VkDispatchIndirectCommand`, three `u32` (x, y, z), 12 bytes
    /// ([`DISPATCH_INDIRECT_SIZE`]). A dispatch earlier in the recording may write them: with
    /// automatic barriers, its writes are made visible to the indirect read
    /// (`DRAW_INDIRECT` / `INDIRECT_COMMAND_READ`). The buffer is kept alive until the
    /// submission completes. The counts themselves must be within maxComputeWorkGroupCount
    /// (VUID-VkDispatchIndirectCommand-x-00417): kiln cannot see them at record time.
    ///
    /// Errors: `KILN-E257` the buffer lacks INDIRECT_BUFFER usage
    /// (VUID-vkCmdDispatchIndirect-buffer-02709), `KILN-E258` the offset is not a multiple
    /// of 4 or the command does not end inside the buffer (-offset-02710, -offset-00407),
    /// `KILN-E109` a buffer of another device, and the errors of [`dispatch`](Self::dispatch)
    /// other than `KILN-E253`.
    #[track_caller]
    pub fn dispatch_indirect(
        &mut self,
        buffer: &Buffer,
        offset: u64,
    ) -> Result<(), RecordingError> {
        if !buffer
            .usage()
            .contains(vk::BufferUsageFlags::INDIRECT_BUFFER)
        {
            return Err(RecordingError::IndirectUsage {
                object: buffer.label().to_string(),
            });
        }
        let fits = offset
            .checked_add(DISPATCH_INDIRECT_SIZE)
            .is_some_and(|end| end <= buffer.size());
        if !offset.is_multiple_of(4) || !fits {
            return Err(RecordingError::IndirectOutOfBounds {
                object: buffer.label().to_string(),
                offset,
                size: buffer.size(),
            });
        }
        let indirect = Use {
            stage: vk::PipelineStageFlags2::DRAW_INDIRECT,
            read: vk::AccessFlags2::INDIRECT_COMMAND_READ,
            write: vk::AccessFlags2::NONE,
        };
        let command = [BufferAccess::new(
            buffer,
            offset,
            DISPATCH_INDIRECT_SIZE,
            indirect,
        )];
        self.record(
            Command::dispatch("dispatch_indirect", &command),
            |raw, cb| {
                // SAFETY: a compute pipeline is bound with its sets and push constants; the
                // buffer is of this device, has INDIRECT_BUFFER usage and holds the 12-byte
                // command at the aligned offset; it is kept alive until the submission
                // completes (`record`).
                unsafe { raw.cmd_dispatch_indirect(cb, buffer.raw(), offset) }
            },
        )
    }
}
