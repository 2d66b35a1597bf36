//! Indirect draws: `vkCmdDrawIndirect`, `vkCmdDrawIndexedIndirect` and their `…Count`
//! forms (Vulkan spec §21.3 "Programmable Primitive Shading", the indirect commands).
//!
//! The draw parameters live in a buffer the GPU reads when the draw runs: `draw_count`
//! commands `stride` bytes apart from `offset`, each a `VkDrawIndirectCommand` (16 bytes,
//! [`DRAW_INDIRECT_SIZE`]) or a `VkDrawIndexedIndirectCommand` (20 bytes,
//! [`DRAW_INDEXED_INDIRECT_SIZE`]); the `…Count` forms also read a `u32` draw count from a
//! second buffer and draw `min(count, max_draw_count)`. Both buffers are uses of the
//! command (`DRAW_INDIRECT` / `INDIRECT_COMMAND_READ`) like its vertex buffers: in
//! automatic mode a dispatch that writes them before the rendering scope is ordered before
//! the draws by the scope's barrier, with no barrier of the caller's.
//!
//! Everything Vulkan checks of the arguments is checked here first (usage, alignment,
//! stride, range, count limits, features): a coded error, never a validation message. The
//! contents of the commands (vertex counts, the count buffer's value) are the GPU's to read;
//! kiln cannot see them at record time.

use ash::vk;

use super::command::{BufferAccess, Command};
use super::hazards::Use;
use super::Recorder;
use crate::device::Buffer;
use crate::error::{DeviceError, RecordingError, Result};

/// Bytes of a `VkDrawIndirectCommand`: `vertexCount`, `instanceCount`, `firstVertex`,
/// `firstInstance`, four `u32`.
pub const DRAW_INDIRECT_SIZE: u64 = 16;
/// Bytes of a `VkDrawIndexedIndirectCommand`: `indexCount`, `instanceCount`, `firstIndex`
/// (`u32`), `vertexOffset` (`i32`), `firstInstance` (`u32`).
pub const DRAW_INDEXED_INDIRECT_SIZE: u64 = 20;

/// The use of an indirect buffer (commands or count).
const INDIRECT: Use = Use {
    stage: vk::PipelineStageFlags2::DRAW_INDIRECT,
    read: vk::AccessFlags2::INDIRECT_COMMAND_READ,
    write: vk::AccessFlags2::NONE,
};

/// Where a draw's commands are: `count` commands of `size` bytes, `stride` apart from
/// `offset` of `buffer`.
pub(super) struct Commands<'b> {
    pub what: &'static str,
    pub buffer: &'b Buffer,
    pub offset: u64,
    pub count: u32,
    pub stride: u32,
    pub size: u64,
}

fn bad(what: &'static str, buffer: &Buffer, detail: String) -> RecordingError {
    RecordingError::IndirectDraw {
        what,
        object: buffer.label().to_string(),
        detail,
    }
}

fn usage(buffer: &Buffer) -> Result<(), RecordingError> {
    if buffer
        .usage()
        .contains(vk::BufferUsageFlags::INDIRECT_BUFFER)
    {
        return Ok(());
    }
    Err(RecordingError::IndirectUsage {
        object: buffer.label().to_string(),
    })
}

impl Commands<'_> {
    /// The bytes the commands span, `[offset, offset + span)`, after the argument checks
    /// of a draw with up to `max` commands (`max` is `maxDrawIndirectCount`; `multi`
    /// whether `multiDrawIndirect` is enabled; `counted` for the `…Count` forms, whose
    /// count Vulkan does not bound by `multiDrawIndirect`).
    fn check(&self, max: u32, multi: bool, counted: bool) -> Result<u64, RecordingError> {
        let (what, b) = (self.what, self.buffer);
        usage(b)?;
        if !self.offset.is_multiple_of(4) {
            return Err(bad(
                what,
                b,
                format!("offset {} is not a multiple of 4", self.offset),
            ));
        }
        // One host-counted draw ignores the stride (VUID-vkCmdDrawIndirect-drawCount-00476 is
        // for more); the counted forms check it whatever the count (-stride-03110, -03142).
        let stride_used = self.count > 1 || counted;
        if stride_used && (u64::from(self.stride) < self.size || !self.stride.is_multiple_of(4)) {
            return Err(bad(
                what,
                b,
                format!(
                    "stride {} must be a multiple of 4 and at least {} (the command's size)",
                    self.stride, self.size
                ),
            ));
        }
        if self.count > max {
            return Err(bad(
                what,
                b,
                format!(
                    "{} draws exceed maxDrawIndirectCount ({max}); split the draw",
                    self.count
                ),
            ));
        }
        if self.count > 1 && !multi && !counted {
            return Err(bad(
                what,
                b,
                format!(
                    "{} draws need the multiDrawIndirect feature, which the device lacks \
                     (Features::multi_draw_indirect); issue one indirect draw per command",
                    self.count
                ),
            ));
        }
        let span = match self.count {
            0 => 0,
            n => u64::from(n - 1) * u64::from(self.stride) + self.size,
        };
        if self
            .offset
            .checked_add(span)
            .is_none_or(|end| end > b.size())
        {
            return Err(bad(
                what,
                b,
                format!(
                    "{} commands of {} bytes, {} apart from offset {} end past the buffer's \
                     {} bytes",
                    self.count,
                    self.size,
                    self.stride,
                    self.offset,
                    b.size()
                ),
            ));
        }
        Ok(span)
    }
}

impl Recorder<'_, '_> {
    /// `vkCmdDrawIndirect`: `draw_count` draws whose `VkDrawIndirectCommand`s
    /// ([`DRAW_INDIRECT_SIZE`] bytes each) are `stride` bytes apart from `offset` of
    /// `buffer` (see the module docs: a dispatch earlier in the recording may write them).
    /// A `draw_count` of 0 draws nothing; `stride` is ignored for one draw.
    ///
    /// Errors: `KILN-E257` the buffer lacks INDIRECT_BUFFER usage, `KILN-E259` an offset
    /// or stride Vulkan rejects, commands past the buffer's end, more than
    /// `maxDrawIndirectCount` draws or more than one without `multiDrawIndirect`, and the
    /// errors of [`draw`](Self::draw); `KILN-E109` a buffer of another device.
    #[track_caller]
    pub fn draw_indirect(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        draw_count: u32,
        stride: u32,
    ) -> Result<(), RecordingError> {
        let cmds = Commands {
            what: "draw_indirect",
            buffer,
            offset,
            count: draw_count,
            stride,
            size: DRAW_INDIRECT_SIZE,
        };
        let access = [self.indirect_access(&cmds, false)?];
        self.record(
            Command::draw_using("draw_indirect", false, &access),
            |raw, cb| {
                // SAFETY: a graphics pipeline is bound with its sets and push constants inside
                // a rendering scope (`record`); the buffer is of this device, has
                // INDIRECT_BUFFER usage and holds the commands at the checked offset and
                // stride; it is kept alive until the submission completes (`record`).
                unsafe { raw.cmd_draw_indirect(cb, buffer.raw(), offset, draw_count, stride) }
            },
        )
    }

    /// `vkCmdDrawIndexedIndirect`: as [`draw_indirect`](Self::draw_indirect) with
    /// `VkDrawIndexedIndirectCommand`s ([`DRAW_INDEXED_INDIRECT_SIZE`] bytes each) and the
    /// bound index buffer.
    ///
    /// Errors: as `draw_indirect`; `KILN-E283` also without an index buffer bound.
    #[track_caller]
    pub fn draw_indexed_indirect(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        draw_count: u32,
        stride: u32,
    ) -> Result<(), RecordingError> {
        let what = "draw_indexed_indirect";
        let cmds = Commands {
            what,
            buffer,
            offset,
            count: draw_count,
            stride,
            size: DRAW_INDEXED_INDIRECT_SIZE,
        };
        let access = [self.indirect_access(&cmds, false)?];
        self.record(Command::draw_using(what, true, &access), |raw, cb| {
            // SAFETY: as in `draw_indirect`; an index buffer is bound (`record`).
            unsafe { raw.cmd_draw_indexed_indirect(cb, buffer.raw(), offset, draw_count, stride) }
        })
    }

    /// `vkCmdDrawIndirectCount`: as [`draw_indirect`](Self::draw_indirect) with the draw
    /// count read by the GPU, a `u32` at `count_offset` of `count_buffer`, and at most
    /// `max_draw_count` draws (the command range checked is that of `max_draw_count`).
    ///
    /// Errors: as `draw_indirect` (a `count_offset` not a multiple of 4 or past the end is
    /// `KILN-E259`, a count buffer without INDIRECT_BUFFER usage `KILN-E257`); `KILN-E107`
    /// a device without `drawIndirectCount` (Vulkan 1.2; `Features::draw_indirect_count`).
    #[track_caller]
    pub fn draw_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_draw_count: u32,
        stride: u32,
    ) -> Result<(), RecordingError> {
        let what = "draw_indirect_count";
        let cmds = Commands {
            what,
            buffer,
            offset,
            count: max_draw_count,
            stride,
            size: DRAW_INDIRECT_SIZE,
        };
        let access = [
            self.indirect_access(&cmds, true)?,
            self.count_access(what, count_buffer, count_offset)?,
        ];
        self.record(Command::draw_using(what, false, &access), |raw, cb| {
            // SAFETY: as in `draw_indirect`; drawIndirectCount is enabled, and the count
            // buffer is of this device, has INDIRECT_BUFFER usage and holds the aligned
            // count (checked), kept alive like the command buffer.
            unsafe {
                raw.cmd_draw_indirect_count(
                    cb,
                    buffer.raw(),
                    offset,
                    count_buffer.raw(),
                    count_offset,
                    max_draw_count,
                    stride,
                )
            }
        })
    }

    /// `vkCmdDrawIndexedIndirectCount`: as [`draw_indirect_count`](Self::draw_indirect_count)
    /// with `VkDrawIndexedIndirectCommand`s and the bound index buffer.
    ///
    /// Errors: as `draw_indirect_count`; `KILN-E283` also without an index buffer bound.
    #[track_caller]
    pub fn draw_indexed_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_draw_count: u32,
        stride: u32,
    ) -> Result<(), RecordingError> {
        let what = "draw_indexed_indirect_count";
        let cmds = Commands {
            what,
            buffer,
            offset,
            count: max_draw_count,
            stride,
            size: DRAW_INDEXED_INDIRECT_SIZE,
        };
        let access = [
            self.indirect_access(&cmds, true)?,
            self.count_access(what, count_buffer, count_offset)?,
        ];
        self.record(Command::draw_using(what, true, &access), |raw, cb| {
            // SAFETY: as in `draw_indirect_count`; an index buffer is bound (`record`).
            unsafe {
                raw.cmd_draw_indexed_indirect_count(
                    cb,
                    buffer.raw(),
                    offset,
                    count_buffer.raw(),
                    count_offset,
                    max_draw_count,
                    stride,
                )
            }
        })
    }

    /// Checks a draw's commands (and, for `counted`, the `drawIndirectCount` feature);
    /// returns their use.
    pub(super) fn indirect_access<'b>(
        &self,
        cmds: &Commands<'b>,
        counted: bool,
    ) -> Result<BufferAccess<'b>, RecordingError> {
        let features = &self.shared.features;
        if counted && !features.draw_indirect_count {
            return Err(DeviceError::MissingFeature {
                device: self.shared.info.name.clone(),
                what: format!(
                    "drawIndirectCount (Vulkan 1.2), which {} needs; draw with a count the \
                     host knows (draw_indirect / draw_indexed_indirect)",
                    cmds.what
                ),
            }
            .into());
        }
        let max = self.shared.limits().max_draw_indirect_count;
        let span = cmds.check(max, features.multi_draw_indirect, counted)?;
        Ok(BufferAccess::new(cmds.buffer, cmds.offset, span, INDIRECT))
    }

    /// Checks the draw count's place in `buffer`; returns its use.
    pub(super) fn count_access<'b>(
        &self,
        what: &'static str,
        buffer: &'b Buffer,
        offset: u64,
    ) -> Result<BufferAccess<'b>, RecordingError> {
        usage(buffer)?;
        if !offset.is_multiple_of(4) || offset.checked_add(4).is_none_or(|e| e > buffer.size()) {
            return Err(bad(
                what,
                buffer,
                format!(
                    "the draw count's offset {offset} must be a multiple of 4 and at most the \
                     buffer's size ({}) - 4",
                    buffer.size()
                ),
            ));
        }
        Ok(BufferAccess::new(buffer, offset, 4, INDIRECT))
    }
}
