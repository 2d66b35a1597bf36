//! Copies and fills between buffers and images.
//!
//! In automatic mode each copy and fill is ordered by the hazard tracker (a barrier only
//! where it reads or writes what an earlier command wrote, or writes what one read, by
//! byte range and image); in manual mode it waits for the dispatches before it and ends
//! with a full barrier.

use ash::vk;

use super::automatic::{TRANSFER_READ, TRANSFER_WRITE};
use super::command::{BufferAccess, Command, ImageAccess};
use super::Recorder;
use crate::device::{check_copy, Buffer, Image, Subresources};
use crate::error::{MemoryError, RecordingError, Result};

impl Recorder<'_, '_> {
    /// Copies `size` bytes (ordered against the commands around it as the module docs say).
    /// Both buffers are kept alive until the submission is made (dropped later, they are
    /// destroyed after it completes).
    ///
    /// Errors: a copy past either buffer's end (`KILN-E151`), of zero bytes or between
    /// overlapping ranges of one buffer (`KILN-E155`) (VUID-vkCmdCopyBuffer-srcOffset-00113
    /// ff., -pRegions-00117, VUID-VkBufferCopy-size-01988), a buffer of another device
    /// (`KILN-E109`), inside a rendering scope (`KILN-E283`).
    #[track_caller]
    pub fn copy_buffer(
        &mut self,
        src: &Buffer,
        src_offset: u64,
        dst: &Buffer,
        dst_offset: u64,
        size: u64,
    ) -> Result<(), RecordingError> {
        for (b, offset) in [(src, src_offset), (dst, dst_offset)] {
            if offset.checked_add(size).is_none_or(|e| e > b.size()) {
                return Err(MemoryError::BufferOverflow {
                    object: b.label().to_string(),
                    capacity: b.size(),
                    offset,
                    requested: size,
                }
                .into());
            }
        }
        check_copy(src, src_offset, dst, dst_offset, size)?;
        let uses = [
            BufferAccess::new(src, src_offset, size, TRANSFER_READ),
            BufferAccess::new(dst, dst_offset, size, TRANSFER_WRITE),
        ];
        let what = "copy_buffer inside a rendering scope; call end_rendering first";
        self.record(Command::transfer(what, &uses, &[]), |raw, cb| {
            let region = vk::BufferCopy {
                src_offset,
                dst_offset,
                size,
            };
            // SAFETY: both buffers belong to this device (`record` checked), have TRANSFER
            // usage (kiln adds it) and are kept alive until the submission completes; the
            // region is in range and does not overlap (checked above).
            unsafe { raw.cmd_copy_buffer(cb, src.raw(), dst.raw(), &[region]) }
        })
    }

    /// Fills the whole buffer with the 32-bit `value` (its size rounded down to 4 bytes).
    ///
    /// Errors: `KILN-E109` a buffer of another device, `KILN-E283` inside a rendering scope.
    #[track_caller]
    pub fn fill_buffer(&mut self, buffer: &Buffer, value: u32) -> Result<(), RecordingError> {
        let uses = [BufferAccess::new(
            buffer,
            0,
            buffer.size() & !3,
            TRANSFER_WRITE,
        )];
        let what = "fill_buffer inside a rendering scope; call end_rendering first";
        self.record(Command::transfer(what, &uses, &[]), |raw, cb| {
            // SAFETY: TRANSFER_DST usage is always present; WHOLE_SIZE rounds down to 4
            // bytes; the buffer is of this device and kept alive until the submission
            // completes (`record`).
            unsafe { raw.cmd_fill_buffer(cb, buffer.raw(), 0, vk::WHOLE_SIZE, value) }
        })
    }

    /// Copies tightly packed texels from `src` (offset 0) into mip `level` of `dst`,
    /// moving that level (every layer; the other levels keep their layouts) to
    /// TRANSFER_DST_OPTIMAL first.
    ///
    /// Errors: `KILN-E181` the buffer is smaller than the level, `KILN-E283` inside a
    /// rendering scope.
    #[track_caller]
    pub fn copy_buffer_to_image(
        &mut self,
        src: &Buffer,
        dst: &Image,
        level: u32,
    ) -> Result<(), RecordingError> {
        dst.check_level(level, dst.level_size(level))?;
        if src.size() < dst.level_size(level) {
            dst.check_level(level, src.size())?;
        }
        self.copy_in(src, dst, level, 0..dst.array_layers())
    }

    /// Copies tightly packed texels from `src` (offset 0; layer after layer) into array
    /// layers `layers` of mip `level` of `dst`, moving only those subresources to
    /// TRANSFER_DST_OPTIMAL first (the other layers keep their layouts and are not
    /// ordered against the copy).
    ///
    /// Errors: `KILN-E180` no such level or layers (or an empty range), not a colour image
    /// or multisampled, `KILN-E151` the buffer is smaller than the layers, `KILN-E283`
    /// inside a rendering scope.
    #[track_caller]
    pub fn copy_buffer_to_image_layers(
        &mut self,
        src: &Buffer,
        dst: &Image,
        level: u32,
        layers: std::ops::Range<u32>,
    ) -> Result<(), RecordingError> {
        let size = layers_size(dst, level, &layers)?;
        fits(src, size)?;
        self.copy_in(src, dst, level, layers)
    }

    /// Copies mip `level` of `src` into `dst` (offset 0, tightly packed), moving that level
    /// (every layer; the other levels keep their layouts) to TRANSFER_SRC_OPTIMAL first.
    ///
    /// Errors: `KILN-E180`/`KILN-E181` no such level or not a colour image, `KILN-E151` the
    /// buffer is smaller than the level, `KILN-E283` inside a rendering scope.
    #[track_caller]
    pub fn copy_image_to_buffer(
        &mut self,
        src: &Image,
        level: u32,
        dst: &Buffer,
    ) -> Result<(), RecordingError> {
        let size = src.level_size(level);
        src.check_level(level, size)?;
        fits(dst, size)?;
        self.copy_out(src, level, 0..src.array_layers(), dst)
    }

    /// Copies array layers `layers` of mip `level` of `src` into `dst` (offset 0, tightly
    /// packed, layer after layer), moving only those subresources to TRANSFER_SRC_OPTIMAL
    /// first.
    ///
    /// Errors: as [`copy_buffer_to_image_layers`](Self::copy_buffer_to_image_layers).
    #[track_caller]
    pub fn copy_image_layers_to_buffer(
        &mut self,
        src: &Image,
        level: u32,
        layers: std::ops::Range<u32>,
        dst: &Buffer,
    ) -> Result<(), RecordingError> {
        let size = layers_size(src, level, &layers)?;
        fits(dst, size)?;
        self.copy_out(src, level, layers, dst)
    }

    /// `vkCmdCopyBufferToImage` of `layers` of `level` (checked).
    #[track_caller]
    fn copy_in(
        &mut self,
        src: &Buffer,
        dst: &Image,
        level: u32,
        layers: std::ops::Range<u32>,
    ) -> Result<(), RecordingError> {
        let size = dst.level_size(level) / u64::from(dst.array_layers().max(1))
            * u64::from(layers.end - layers.start);
        let buffers = [BufferAccess::new(src, 0, size, TRANSFER_READ)];
        let region = dst.copy_region(level, layers.clone());
        let images = [ImageAccess {
            image: dst,
            range: Subresources::new(level..level + 1, layers),
            layout: vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            use_: TRANSFER_WRITE,
        }];
        let what = "copy_buffer_to_image inside a rendering scope; call end_rendering first";
        self.record(Command::transfer(what, &buffers, &images), |raw, cb| {
            // SAFETY: the subresources are in TRANSFER_DST_OPTIMAL (`record` moved them);
            // the buffer holds them (checked) and both have transfer usage (kiln adds it);
            // both are of this device and kept alive until the submission completes.
            unsafe {
                raw.cmd_copy_buffer_to_image(
                    cb,
                    src.raw(),
                    dst.raw(),
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &[region],
                )
            }
        })
    }

    /// `vkCmdCopyImageToBuffer` of `layers` of `level` (checked).
    #[track_caller]
    fn copy_out(
        &mut self,
        src: &Image,
        level: u32,
        layers: std::ops::Range<u32>,
        dst: &Buffer,
    ) -> Result<(), RecordingError> {
        let size = src.level_size(level) / u64::from(src.array_layers().max(1))
            * u64::from(layers.end - layers.start);
        let buffers = [BufferAccess::new(dst, 0, size, TRANSFER_WRITE)];
        let region = src.copy_region(level, layers.clone());
        let images = [ImageAccess {
            image: src,
            range: Subresources::new(level..level + 1, layers),
            layout: vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            use_: TRANSFER_READ,
        }];
        let what = "copy_image_to_buffer inside a rendering scope; call end_rendering first";
        self.record(Command::transfer(what, &buffers, &images), |raw, cb| {
            // SAFETY: as in copy_in, with the roles swapped.
            unsafe {
                raw.cmd_copy_image_to_buffer(
                    cb,
                    src.raw(),
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    dst.raw(),
                    &[region],
                )
            }
        })
    }
}

/// The bytes of `layers` of mip `level` of `image`, tightly packed. Errors: `KILN-E180`
/// no such level or layers, an empty range, not a copyable image (`Image::check_level`).
fn layers_size(
    image: &Image,
    level: u32,
    layers: &std::ops::Range<u32>,
) -> Result<u64, RecordingError> {
    let full = image.level_size(level);
    image.check_level(level, full)?;
    let n = image.array_layers();
    if layers.start >= layers.end || layers.end > n {
        return Err(MemoryError::InvalidImage {
            object: image.label().to_string(),
            detail: format!(
                "layers {}..{} of mip {level}: the image has layers 0..{n} (and a range \
                 names at least one)",
                layers.start, layers.end
            ),
        }
        .into());
    }
    Ok(full / u64::from(n) * u64::from(layers.end - layers.start))
}

/// `KILN-E151` when `buffer` holds fewer than `size` bytes.
fn fits(buffer: &Buffer, size: u64) -> Result<(), RecordingError> {
    if buffer.size() < size {
        return Err(MemoryError::BufferOverflow {
            object: buffer.label().to_string(),
            capacity: buffer.size(),
            offset: 0,
            requested: size,
        }
        .into());
    }
    Ok(())
}
