//! `impl Device` of the transfer layer: the queues kiln's uploads and readbacks use, the
//! constructors that upload (buffers from slices, textures from bytes), the staging cache's
//! reports and the hidden hooks of the staged path.

use ash::vk;

use super::copies::transfer_queue_of;
use super::staging::{StagingCache, StagingUsage};
use crate::device::{Buffer, BufferDesc, Device, Image, ImageDesc, MemoryLocation};
use crate::error::Result;
use crate::queue::Queue;

impl Device {
    /// The queue kiln's uploads use (`Buffer::upload`, staged chunks), as
    /// `DeviceDesc::upload_queue` says ([`UploadQueue`](crate::UploadQueue)): by default
    /// the first transfer queue, the main queue where the device has none.
    pub fn upload_queue(&self) -> Queue {
        let (index, kind) = transfer_queue_of(&self.shared, true);
        Queue {
            shared: self.shared.clone(),
            index,
            kind,
        }
    }

    /// The queue kiln's readbacks use (`Buffer::read_into`, staged chunks), as
    /// `DeviceDesc::readback_queue` says ([`ReadbackQueue`](crate::ReadbackQueue)): put a
    /// stream's readbacks here and its uploads on [`upload_queue`](Self::upload_queue).
    pub fn readback_queue(&self) -> Queue {
        let (index, kind) = transfer_queue_of(&self.shared, false);
        Queue {
            shared: self.shared.clone(),
            index,
            kind,
        }
    }

    /// Creates a device-local buffer of `usage` holding `data` (staged upload).
    pub fn buffer_from_slice<T: bytemuck::Pod>(
        &self,
        label: &str,
        usage: vk::BufferUsageFlags,
        data: &[T],
    ) -> Result<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let buf = self.buffer(&BufferDesc {
            label,
            size: bytes.len() as u64,
            usage,
            location: MemoryLocation::GpuOnly,
        })?;
        buf.upload(bytes)?;
        Ok(buf)
    }

    /// Creates a sampled texture from tightly packed texels (`width * height * bytes per
    /// texel`), uploaded through a staging buffer; it ends in SHADER_READ_ONLY_OPTIMAL.
    pub fn texture_from_bytes(
        &self,
        label: &str,
        width: u32,
        height: u32,
        format: vk::Format,
        bytes: &[u8],
    ) -> Result<Image> {
        let img = self.image(&ImageDesc::texture(label, width, height, format))?;
        img.upload(bytes)?;
        Ok(img)
    }

    /// Frees the idle staging buffers that [`Buffer::upload`] and [`Buffer::read`] keep for
    /// reuse (at most two chunks' worth per direction, `STAGING_CHUNK` = 32 MiB each);
    /// returns the bytes freed.
    /// Transfers in progress keep theirs. The next staged transfer allocates again.
    pub fn release_staging_memory(&self) -> u64 {
        self.shared
            .slot::<StagingCache>()
            .map_or(0, |c| c.trim(&self.shared))
    }

    /// The idle staging buffers held for reuse by this device, and their bytes.
    pub fn staging_usage(&self) -> StagingUsage {
        self.shared
            .slot::<StagingCache>()
            .map_or_else(|_| StagingUsage::default(), |c| c.usage(&self.shared))
    }

    /// Readbacks done by kiln's copy shader so far (`ReadbackQueue::ComputeShader`), for
    /// tests. Unstable.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_shader_copies(&self) -> u64 {
        self.shared
            .slot::<super::shader_copy::ShaderCopies>()
            .map_or(0, |c| {
                c.submitted.load(std::sync::atomic::Ordering::Relaxed)
            })
    }

    /// Makes `upload`/`read` of `GpuOnly` buffers go through staging buffers even where the
    /// device maps that memory (CPU and integrated devices such as lavapipe, where the
    /// direct path is normally taken), so tests and benchmarks exercise the staged path.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_force_staging(&self, on: bool) {
        if let Ok(c) = self.shared.slot::<StagingCache>() {
            c.set_forced(on);
        }
    }

    /// Sets the staging chunk size (default 32 MiB, `STAGING_CHUNK`), so tests can
    /// exercise chunked transfers with small buffers and the bench can sweep it.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_set_staging_chunk(&self, bytes: u64) {
        if let Ok(c) = self.shared.slot::<StagingCache>() {
            c.set_chunk(bytes);
        }
    }

    /// Sets the host threads of one staged transfer (0: the default, `KILN_TRANSFER_THREADS`,
    /// else the machine's parallelism up to 8), for the bench's sweep.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_set_transfer_threads(&self, threads: usize) {
        if let Ok(c) = self.shared.slot::<StagingCache>() {
            c.set_threads(threads);
        }
    }

    /// Stages uploads in `CpuToGpu` memory (the BAR on discrete GPUs) instead of system
    /// memory; staging buffers already made keep their memory (call
    /// [`release_staging_memory`](Self::release_staging_memory) first). For the bench.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_set_upload_staging_bar(&self, on: bool) {
        if let Ok(c) = self.shared.slot::<StagingCache>() {
            c.set_bar(on);
        }
    }
}
