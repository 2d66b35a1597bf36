//! Host uploads and readbacks of buffers and images.
//!
//! These are methods of [`Buffer`] and [`Image`] (objects of the `device` layer) defined in
//! the submission layer, because staging them records and submits copies: `device` itself
//! never touches a command buffer. Mapped memory is accessed directly, after every
//! submission made so far has finished; everything else goes through the device's
//! reusable staging buffers (see `staging`).

use std::sync::Arc;

use ash::vk;

use super::staging::{staged_readback, staged_upload, StagingCache};
use crate::device::{Buffer, BufferDesc, Image, MemoryLocation, Shared};
use crate::error::{Error, Result};

impl Buffer {
    /// Whether host transfers may use the mapping: the memory is mapped, and it is not a
    /// `GpuOnly` buffer of a device that forces staging (tests and benchmarks).
    fn direct(&self) -> Result<bool> {
        if self.mapped_ptr().is_none() {
            return Ok(false);
        }
        let forced = self.location() == MemoryLocation::GpuOnly
            && self.shared().slot::<StagingCache>()?.forced();
        Ok(!forced)
    }

    /// Writes `data` at byte 0. Mapped memory is written directly (after every submission
    /// made so far has finished); device-local memory is written through the device's
    /// reusable staging buffers and copies that this call waits for.
    ///
    /// Errors: `KILN-E151` if `data` is larger than the buffer.
    pub fn upload<T: bytemuck::Pod>(&self, data: &[T]) -> Result<()> {
        self.upload_at(0, data)
    }

    /// Writes `data` at byte `offset` (see [`upload`](Self::upload)).
    pub fn upload_at<T: bytemuck::Pod>(&self, offset: u64, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.check_transfer(offset, bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        match self.mapped_ptr() {
            Some(ptr) if self.direct()? => {
                // A pending submission (Device::submit) may read or write this memory.
                self.shared().wait_all_submitted()?;
                // SAFETY: the mapping covers `size` bytes (the range was checked above) and
                // is host-coherent (gpu-allocator asks for HOST_COHERENT for CPU locations);
                // every submission made so far has finished (waited above), so no GPU access
                // races this write.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        (ptr.as_ptr() as *mut u8).add(offset as usize),
                        bytes.len(),
                    );
                }
                Ok(())
            }
            // Earlier submissions are ordered before the copy by its submission's wait on
            // the previous timeline value: nothing to wait for first.
            _ => staged_upload(self.shared(), self.raw(), offset, bytes),
        }
    }

    /// Reads the whole buffer as `T`s (staging through the device's readback buffers when
    /// the memory is not mappable; see [`read_into_at`](Self::read_into_at)). The vector is
    /// new on every call: for a large buffer read repeatedly, [`read_into`](Self::read_into)
    /// a reused one instead (first-touch page faults of a fresh 256 MiB vector held an H200
    /// readback to 1.3 GB/s, against 7.8 GB/s into a reused one).
    ///
    /// Errors: `KILN-E153` if the size is not a multiple of `size_of::<T>()`.
    pub fn read<T: bytemuck::Pod>(&self) -> Result<Vec<T>> {
        let elem = std::mem::size_of::<T>();
        let size = self.size();
        if elem == 0 || !size.is_multiple_of(elem as u64) {
            return Err(Error::BufferElementMismatch {
                object: self.label().to_string(),
                size,
                elem,
            });
        }
        let mut out = bytemuck::zeroed_vec::<T>((size / elem as u64) as usize);
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// Reads `out.len()` elements from byte 0 into `out`, without allocating: the way to
    /// read back repeatedly (see [`read_into_at`](Self::read_into_at)).
    pub fn read_into<T: bytemuck::Pod>(&self, out: &mut [T]) -> Result<()> {
        self.read_into_at(0, out)
    }

    /// Reads `size_of_val(out)` bytes from byte `offset` into `out`. Every submission made
    /// before the call has finished writing what it reads. Mapped memory is read directly
    /// (after every submission made so far has finished); device-local memory through the
    /// device's reusable readback buffers (HOST_CACHED where the device has such memory).
    ///
    /// Errors: `KILN-E151` if the range passes the end of the buffer.
    pub fn read_into_at<T: bytemuck::Pod>(&self, offset: u64, out: &mut [T]) -> Result<()> {
        let out: &mut [u8] = bytemuck::cast_slice_mut(out);
        self.check_transfer(offset, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        match self.mapped_bytes() {
            Some(bytes) if self.direct()? => {
                // A pending submission (Device::submit) may still write this memory.
                self.shared().wait_all_submitted()?;
                let start = offset as usize;
                out.copy_from_slice(&bytes[start..start + out.len()]);
                Ok(())
            }
            _ => staged_readback(self.shared(), self.raw(), offset, out),
        }
    }

    /// `[offset, offset + len)` lies inside the buffer. Errors: `KILN-E151`.
    fn check_transfer(&self, offset: u64, len: usize) -> Result<()> {
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|e| e > self.size()) {
            return Err(Error::BufferOverflow {
                object: self.label().to_string(),
                capacity: self.size(),
                offset,
                requested: len as u64,
            });
        }
        Ok(())
    }
}

impl Image {
    /// Uploads tightly packed texels to mip 0 (see [`upload_level`](Self::upload_level)).
    pub fn upload(&self, bytes: &[u8]) -> Result<()> {
        self.upload_level(0, bytes)
    }

    /// Uploads tightly packed texels (row after row, no padding) to mip `level` through a
    /// staging buffer: UNDEFINED/current → TRANSFER_DST_OPTIMAL → copy →
    /// SHADER_READ_ONLY_OPTIMAL when the image is sampled (else it stays TRANSFER_DST).
    /// Waits for the GPU.
    ///
    /// Errors: `KILN-E181` wrong byte count, `KILN-E180` no such level.
    pub fn upload_level(&self, level: u32, bytes: &[u8]) -> Result<()> {
        self.check_level(level, bytes.len() as u64)?;
        let shared = self.shared();
        let staging = Buffer::new(
            shared,
            &BufferDesc {
                label: "kiln staging image upload",
                size: bytes.len() as u64,
                usage: vk::BufferUsageFlags::TRANSFER_SRC,
                location: MemoryLocation::CpuToGpu,
            },
        )?;
        staging.upload(bytes)?;
        let sampled = self.usage().contains(vk::ImageUsageFlags::SAMPLED);
        super::device::execute(shared, "execute", |r| {
            r.copy_buffer_to_image(&staging, self, level)?;
            if sampled {
                r.transition(self, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)?;
            }
            Ok(())
        })
    }

    /// Reads mip 0 back as tightly packed texels (see [`read_level`](Self::read_level)).
    pub fn read(&self) -> Result<Vec<u8>> {
        self.read_level(0)
    }

    /// Reads mip `level` back to the host, tightly packed; the image ends in
    /// TRANSFER_SRC_OPTIMAL. Waits for the GPU.
    ///
    /// Errors: `KILN-E180`/`KILN-E181` no such level or not a colour image.
    pub fn read_level(&self, level: u32) -> Result<Vec<u8>> {
        let size = self.level_size(level);
        self.check_level(level, size)?;
        let shared: &Arc<Shared> = self.shared();
        let staging = Buffer::new(
            shared,
            &BufferDesc {
                label: "kiln staging image readback",
                size,
                usage: vk::BufferUsageFlags::TRANSFER_DST,
                location: MemoryLocation::GpuToCpu,
            },
        )?;
        super::device::execute(shared, "execute", |r| {
            r.copy_image_to_buffer(self, level, &staging)
        })?;
        staging.read()
    }
}
