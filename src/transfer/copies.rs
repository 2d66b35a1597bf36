//! Host uploads and readbacks of buffers and images: the blocking methods of [`Buffer`]
//! and [`Image`], and the asynchronous ones of [`Queue`], which return a [`Transfer`].
//!
//! The `Buffer` and `Image` methods are defined in the submission layer, because staging
//! them records and submits copies: `device` itself never touches a command buffer.
//! Mapped memory is accessed directly (several threads for large copies), after the
//! submissions that use it (by the buffer's stamps) have finished; everything else goes through the device's
//! reusable staging buffers, chunked and pipelined on a transfer queue (`chunks`).

use std::sync::Arc;

use ash::vk;

use super::chunks::{self, Drain};
use super::desc::{ReadbackQueue, UploadQueue};
use super::host::HostBuffer;
use super::shader_copy::{self, ShaderCopies};
use super::staging::StagingCache;
use crate::device::{Buffer, BufferDesc, Image, MemoryLocation, QueueKind, Shared, Subresources};
use crate::error::{Error, Result};
use crate::queue::Queue;

/// The queue that uploads use (the first transfer queue) or the one readbacks use
/// ([`ReadbackQueue`], `Auto` resolved by [`readback_policy`]), with the kind it is handed
/// out as.
pub(crate) fn transfer_queue_of(shared: &Shared, dir_upload: bool) -> (usize, QueueKind) {
    let first = |kind: QueueKind| {
        let i = shared.queues_by_kind[kind.slot()].first().copied();
        (i.unwrap_or(0), kind)
    };
    if dir_upload {
        return match super::desc::settings(shared).upload_queue {
            UploadQueue::Main => (0, QueueKind::Main),
            UploadQueue::ComputeShader => {
                transfer_queue_of_kind(shared, ReadbackQueue::ComputeShader)
            }
            UploadQueue::Transfer | UploadQueue::Auto => first(QueueKind::Transfer),
        };
    }
    match super::desc::settings(shared).readback_queue {
        ReadbackQueue::Auto => transfer_queue_of_kind(shared, readback_policy(shared)),
        other => transfer_queue_of_kind(shared, other),
    }
}

fn transfer_queue_of_kind(shared: &Shared, which: ReadbackQueue) -> (usize, QueueKind) {
    let by = |kind: QueueKind, last: bool| {
        let list = &shared.queues_by_kind[kind.slot()];
        let i = if last { list.last() } else { list.first() };
        (i.copied().unwrap_or(0), kind)
    };
    match which {
        ReadbackQueue::Main => (0, QueueKind::Main),
        ReadbackQueue::Compute => by(QueueKind::Compute, false),
        // Beside the first async-compute queue (where a stream's dispatches run): the
        // second where kiln created one, else the main queue.
        ReadbackQueue::ComputeShader => {
            let list = &shared.queues_by_kind[QueueKind::Compute.slot()];
            match list.get(1) {
                Some(&i) => (i, QueueKind::Compute),
                None => (0, QueueKind::Main),
            }
        }
        ReadbackQueue::Transfer | ReadbackQueue::Auto => by(QueueKind::Transfer, true),
    }
}

/// kiln's readback queue (`ReadbackQueue::Auto`): the last transfer queue, so that with
/// two transfer queues both directions of the bus are busy at once. The policy: a queue
/// runs its submissions in order, so readbacks need a queue other than the uploads'; of the
/// queues that can take them, the one whose copies ran beside an upload fastest: on a
/// PCIe 5 GPU an upload on the first transfer queue with a readback on the second moved
/// 57–61 GB/s together, with the readback on the main or the async-compute queue 51–52,
/// done by kiln's copy shader 51–52 (the stream example overlapped 1.64x against
/// 1.42–1.48x).
/// Devices with one transfer queue use it for both directions (in order, no overlap), which
/// `ReadbackQueue::Main` avoids.
fn readback_policy(_shared: &Shared) -> ReadbackQueue {
    ReadbackQueue::Transfer
}

/// Whether readbacks into host buffers on `queue` are shader copies: the resolved readback
/// queue is `ComputeShader` and `queue` is it.
fn shader_readbacks(shared: &Shared, queue: usize) -> bool {
    let which = match super::desc::settings(shared).readback_queue {
        ReadbackQueue::Auto => readback_policy(shared),
        other => other,
    };
    which == ReadbackQueue::ComputeShader
        && transfer_queue_of_kind(shared, ReadbackQueue::ComputeShader).0 == queue
}

/// Whether uploads from host buffers on `queue` are shader copies: the upload queue is
/// `UploadQueue::ComputeShader` and `queue` is it.
fn shader_uploads(shared: &Shared, queue: usize) -> bool {
    super::desc::settings(shared).upload_queue == UploadQueue::ComputeShader
        && transfer_queue_of_kind(shared, ReadbackQueue::ComputeShader).0 == queue
}

fn transfer_queue(shared: &Shared, dir_upload: bool) -> usize {
    transfer_queue_of(shared, dir_upload).0
}

impl Buffer {
    /// Whether host transfers may use the mapping: the memory is mapped, and it is not a
    /// `GpuOnly` buffer of a device that forces staging (tests and benchmarks).
    pub(super) fn direct(&self) -> Result<bool> {
        if self.mapped_ptr().is_none() {
            return Ok(false);
        }
        let forced = self.location() == MemoryLocation::GpuOnly
            && self.shared().slot::<StagingCache>()?.forced();
        Ok(!forced)
    }

    /// Writes `data` at byte 0. Mapped memory is written directly, once every submission
    /// that uses the buffer has finished (submissions that do not use it are not waited
    /// for; those with raw commands or buffer device addresses are, since kiln cannot see
    /// what they use); device-local memory is written through the device's
    /// reusable staging buffers and copies on the (first) transfer queue that this call
    /// waits for. Every submission made before the call, on any queue, is ordered before
    /// the copies.
    ///
    /// Errors: `KILN-E151` if `data` is larger than the buffer.
    pub fn upload<T: bytemuck::Pod>(&self, data: &[T]) -> Result<()> {
        self.upload_at(0, data)
    }

    /// Writes `data` at byte `offset` (see [`upload`](Self::upload)). Clones of one buffer
    /// on several threads transfer through its mapping one at a time (reads together): a
    /// read sees one upload's bytes whole.
    pub fn upload_at<T: bytemuck::Pod>(&self, offset: u64, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.check_transfer(offset, bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        match self.mapped_ptr() {
            Some(ptr) if self.direct()? => {
                // Another thread's copy into or out of the mapping waits for this one.
                let _copying = self.host_write_lock();
                // A pending submission (Device::submit) may read or write this memory.
                self.shared().wait_host_access(self.stamps(), true)?;
                // SAFETY: the mapping covers `size` bytes (the range was checked above) and
                // is host-coherent (gpu-allocator asks for HOST_COHERENT for CPU locations);
                // every submission that uses the buffer, or whose uses kiln cannot see, has
                // finished (waited above), so no GPU access races this write; no other host
                // copy of this buffer runs (the write lock); and `bytes` (the caller's)
                // cannot overlap the mapping.
                let dst = unsafe {
                    std::slice::from_raw_parts_mut(
                        (ptr.as_ptr() as *mut u8).add(offset as usize),
                        bytes.len(),
                    )
                };
                chunks::parallel_copy(dst, bytes, chunks::threads(self.shared()));
                Ok(())
            }
            // Earlier submissions are ordered before the copies by the first copy's waits
            // (its queue's previous value, every other queue's last): nothing to wait for
            // on the host first.
            _ => {
                let shared = self.shared();
                let queue = transfer_queue(shared, true);
                let last = chunks::upload(shared, queue, (self, offset), bytes, true)?;
                shared.poll_value(queue, last, shared.wait_timeout)
            }
        }
    }

    /// Reads the whole buffer as `T`s (staging through the device's readback buffers when
    /// the memory is not mappable; see [`read_into_at`](Self::read_into_at)). The vector is
    /// new on every call: for a large buffer read repeatedly, [`read_into`](Self::read_into)
    /// a reused one instead (first-touch page faults of a fresh 256 MiB vector held a
    /// GPU's readback to 1.3 GB/s, against 7.8 GB/s into a reused one).
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
    /// before the call, on any queue, has finished writing what it reads. Mapped memory is
    /// read directly, once every submission that writes the buffer has finished (and those
    /// with raw commands or buffer device addresses); device-local memory
    /// through the device's reusable readback buffers (HOST_CACHED where the device has
    /// such memory) and copies on the (last) transfer queue.
    ///
    /// Errors: `KILN-E151` if the range passes the end of the buffer.
    pub fn read_into_at<T: bytemuck::Pod>(&self, offset: u64, out: &mut [T]) -> Result<()> {
        let out: &mut [u8] = bytemuck::cast_slice_mut(out);
        self.check_transfer(offset, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        if self.mapped_ptr().is_some() && self.direct()? {
            // No other thread copies into the mapping meanwhile; taken (and the GPU's writes
            // waited for) before the mapping is borrowed as bytes.
            let _copying = self.host_read_lock();
            // A pending submission (Device::submit) may still write this memory.
            self.shared().wait_host_access(self.stamps(), false)?;
            if let Some(bytes) = self.mapped_bytes() {
                let start = offset as usize;
                let threads = chunks::threads(self.shared());
                chunks::parallel_copy(out, &bytes[start..start + out.len()], threads);
                return Ok(());
            }
        }
        let shared = self.shared();
        let queue = transfer_queue(shared, false);
        chunks::start_readback(shared, queue, (self, offset), out, true)?.run()
    }

    /// `[offset, offset + len)` lies inside the buffer. Errors: `KILN-E151`.
    pub(super) fn check_transfer(&self, offset: u64, len: usize) -> Result<()> {
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

    /// Uploads tightly packed texels of every layer (layer after layer, each depth slice
    /// after slice, row after row, no padding; [`level_size`](Self::level_size) bytes) to
    /// mip `level` through a
    /// staging buffer: the level (the others keep their layouts) UNDEFINED/current →
    /// TRANSFER_DST_OPTIMAL → copy → the layout its usage suggests: GENERAL for a storage image, else SHADER_READ_ONLY_OPTIMAL for a
    /// sampled one (else it stays TRANSFER_DST_OPTIMAL).
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
        let usage = self.usage();
        let after = if usage.contains(vk::ImageUsageFlags::STORAGE) {
            Some(vk::ImageLayout::GENERAL)
        } else if usage.contains(vk::ImageUsageFlags::SAMPLED) {
            Some(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
        } else {
            None
        };
        crate::queue::execute(shared, "execute", |r| {
            r.copy_buffer_to_image(&staging, self, level)?;
            if let Some(layout) = after {
                r.transition_subresources(self, Subresources::mip(level), layout)?;
            }
            Ok(())
        })
    }

    /// Reads mip 0 back as tightly packed texels (see [`read_level`](Self::read_level)).
    pub fn read(&self) -> Result<Vec<u8>> {
        self.read_level(0)
    }

    /// Reads mip `level` back to the host, tightly packed; the level ends in
    /// TRANSFER_SRC_OPTIMAL (the others keep their layouts). Waits for the GPU.
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
        crate::queue::execute(shared, "execute", |r| {
            Ok(r.copy_image_to_buffer(self, level, &staging)?)
        })?;
        staging.read()
    }
}

/// A transfer in flight ([`Queue::upload`], [`Queue::read_into`],
/// [`Queue::upload_from_host`], [`Queue::read_to_host`]). Its copies stamp the buffers they
/// use, so later submissions on other queues that use them wait for it on the GPU; waiting
/// on the host is [`wait`](Self::wait). A copy split over queues
/// ([`TransferSplit`](crate::TransferSplit)) is one transfer: every wait covers every part
/// ([`parts`](Self::parts) lists them). Dropping an unwaited transfer waits for it (a
/// readback into a slice then still fills the slice).
#[must_use = "a transfer runs asynchronously; wait() for it"]
pub struct Transfer<'d> {
    shared: Arc<Shared>,
    queue: usize,
    /// The last copy's timeline value (0: nothing left to wait for).
    value: u64,
    /// The other parts of a split copy (`TransferSplit`): `(kiln queue, value)` each.
    others: Vec<(usize, u64)>,
    /// A staged readback still to copy into the caller's slice.
    drain: Option<Drain<'d>>,
}

impl std::fmt::Debug for Transfer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transfer")
            .field("queue", &self.queue)
            .field("value", &self.value)
            .field("others", &self.others)
            .field("staged_readback", &self.drain.is_some())
            .finish()
    }
}

impl Transfer<'_> {
    fn done(shared: &Arc<Shared>, queue: usize, value: u64) -> Transfer<'static> {
        Transfer {
            shared: shared.clone(),
            queue,
            value,
            others: Vec::new(),
            drain: None,
        }
    }

    /// Every copy of the transfer submitted so far: `(kiln queue index, timeline value)`,
    /// the transfer's own queue first; a copy split over queues
    /// ([`TransferSplit`](crate::TransferSplit)) has one entry per part. Empty when
    /// nothing was submitted (mapped memory written directly, an empty range).
    pub fn parts(&self) -> Vec<(usize, u64)> {
        let first = match &self.drain {
            Some(d) => (d.queue(), d.last().0),
            None => (self.queue, self.value),
        };
        std::iter::once(first)
            .filter(|p| p.1 > 0)
            .chain(self.others.iter().copied())
            .collect()
    }

    /// The timeline value of the last copy submitted so far, on the queue of the
    /// transfer.
    pub fn value(&self) -> u64 {
        match &self.drain {
            Some(d) => d.last().0,
            None => self.value,
        }
    }

    /// True once the GPU has finished every copy: [`wait`](Self::wait) then blocks on
    /// nothing but the host's own copies (a staged readback's).
    pub fn is_done(&self) -> bool {
        let (value, all) = match &self.drain {
            Some(d) => d.last(),
            None => (self.value, true),
        };
        all && value <= self.shared.completed_value(self.queue)
            && self
                .others
                .iter()
                .all(|&(q, v)| v <= self.shared.completed_value(q))
    }

    /// Blocks until the transfer has finished: the device buffer holds what an upload
    /// wrote, the host memory what a readback read.
    ///
    /// Errors: `KILN-E105` device lost, `KILN-E108` timeout (after
    /// [`EXECUTE_TIMEOUT`](crate::EXECUTE_TIMEOUT)).
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    /// Waits for every part once: after the first error (a timeout, a lost device) the
    /// parts not waited for are dropped from the transfer, so dropping it (`wait` consumes
    /// it) does not wait for them again, each with the whole timeout. They stay stamped on
    /// both buffers: later users and host access still wait for them.
    fn finish(&mut self) -> Result<()> {
        let others = std::mem::take(&mut self.others);
        if let Some(d) = self.drain.take() {
            self.queue = d.queue();
            d.run()?;
        }
        let value = std::mem::take(&mut self.value);
        if value > 0 {
            self.shared
                .poll_value(self.queue, value, self.shared.wait_timeout)?;
        }
        for (q, v) in others {
            self.shared.poll_value(q, v, self.shared.wait_timeout)?;
        }
        Ok(())
    }
}

impl Drop for Transfer<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            log::error!("kiln: finishing a dropped transfer failed: {e}");
        }
    }
}

impl Queue {
    /// Uploads `data` into `dst` at byte `offset` through the device's staging buffers,
    /// with copies on this queue: returns once every chunk was copied into staging memory
    /// and its copy submitted (the caller's slice is free again), before the GPU finished.
    /// The copies wait on the GPU for other queues' pending work that uses `dst`; later
    /// submissions that use `dst` wait for them. Mapped `dst` memory is written directly
    /// (after its pending uses), like [`Buffer::upload`].
    ///
    /// Errors: `KILN-E151` the range passes the end of `dst`, `KILN-E109` a buffer of
    /// another device, `KILN-E105`/`KILN-E108` a wait failed.
    pub fn upload<T: bytemuck::Pod>(
        &self,
        dst: &Buffer,
        offset: u64,
        data: &[T],
    ) -> Result<Transfer<'static>> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.own(dst)?;
        dst.check_transfer(offset, bytes.len())?;
        if bytes.is_empty() {
            return Ok(Transfer::done(&self.shared, self.index, 0));
        }
        if dst.direct()? {
            dst.upload_at(offset, data)?;
            return Ok(Transfer::done(&self.shared, self.index, 0));
        }
        let last = chunks::upload(&self.shared, self.index, (dst, offset), bytes, false)?;
        Ok(Transfer::done(&self.shared, self.index, last))
    }

    /// Reads `size_of_val(out)` bytes of `src` from byte `offset` into `out` through the
    /// device's staging buffers, with copies on this queue: submits the first copies and
    /// returns; [`Transfer::wait`] copies the chunks into `out` (submitting the rest). The
    /// copies wait on the GPU for other queues' pending writes of `src`.
    ///
    /// Errors: `KILN-E151` the range passes the end of `src`, `KILN-E109` a buffer of
    /// another device, `KILN-E105`/`KILN-E108` a wait failed.
    pub fn read_into<'d, T: bytemuck::Pod>(
        &self,
        src: &Buffer,
        offset: u64,
        out: &'d mut [T],
    ) -> Result<Transfer<'d>> {
        let out: &mut [u8] = bytemuck::cast_slice_mut(out);
        self.own(src)?;
        src.check_transfer(offset, out.len())?;
        if out.is_empty() {
            return Ok(Transfer::done(&self.shared, self.index, 0));
        }
        if src.direct()? {
            src.read_into_at(offset, out)?;
            return Ok(Transfer::done(&self.shared, self.index, 0));
        }
        let drain = chunks::start_readback(&self.shared, self.index, (src, offset), out, false)?;
        Ok(Transfer {
            shared: self.shared.clone(),
            queue: self.index,
            value: 0,
            others: Vec::new(),
            drain: Some(drain),
        })
    }

    /// Copies `size` bytes of `src` from byte `src_offset` into `dst` at `dst_offset` with
    /// DMA copies (no staging, no host copy): the upload of CUDA's pinned memory. One copy
    /// on this queue; a copy of at least `TransferSplit::min_bytes` (64 MiB by default) is
    /// split into parts on this queue and its partners (the main queue first for uploads;
    /// [`TransferSplit`](crate::TransferSplit), `DeviceDesc::transfer_split`), one
    /// submission each, which the returned transfer, later users of `dst` (on any queue)
    /// and host access to `src` all wait for. Returns once every part is submitted. `src`
    /// may be read by the host meanwhile; [`HostBuffer::as_mut_slice`] waits for the copy.
    ///
    /// Errors: `KILN-E151` a range passes the end of either buffer, `KILN-E155` size 0,
    /// `KILN-E109` an object of another device, `KILN-E161` an import whose scope ended.
    pub fn upload_from_host(
        &self,
        src: &HostBuffer,
        src_offset: u64,
        dst: &Buffer,
        dst_offset: u64,
        size: u64,
    ) -> Result<Transfer<'static>> {
        self.host_copy(src, src_offset, dst, dst_offset, size, true)
    }

    /// Copies `size` bytes of `src` from byte `src_offset` into `dst` at `dst_offset` with
    /// DMA copies: the readback of CUDA's pinned memory. Split over queues like
    /// [`upload_from_host`](Self::upload_from_host) (for readbacks the other transfer
    /// queue first). Returns once every part is submitted; [`HostBuffer::as_slice`] waits
    /// for all of them.
    ///
    /// Errors: as [`upload_from_host`](Self::upload_from_host).
    pub fn read_to_host(
        &self,
        src: &Buffer,
        src_offset: u64,
        dst: &mut HostBuffer,
        dst_offset: u64,
        size: u64,
    ) -> Result<Transfer<'static>> {
        self.host_copy(dst, dst_offset, src, src_offset, size, false)
    }

    /// One copy between a host buffer and a device buffer (`upload`: host → device), split
    /// over queues as the device's [`TransferSplit`](crate::TransferSplit) says: the first
    /// part on this queue, the others on its idle partners (`transfer/split.rs`), each a
    /// submission that stamps both buffers, so later users wait for every part.
    fn host_copy(
        &self,
        host: &HostBuffer,
        host_offset: u64,
        device: &Buffer,
        device_offset: u64,
        size: u64,
        upload: bool,
    ) -> Result<Transfer<'static>> {
        self.own(device)?;
        let held = host.hold(&self.shared)?;
        if size == 0 {
            return Err(Error::InvalidCopy {
                src: host.label().to_string(),
                dst: device.label().to_string(),
                src_offset: host_offset,
                dst_offset: device_offset,
                size,
                detail: "the size must be greater than 0",
            });
        }
        let len = usize::try_from(size).unwrap_or(usize::MAX);
        host.range(host_offset, len)?;
        device.check_transfer(device_offset, len)?;
        let shared = &self.shared;
        let split = shared.transfer_split();
        let parts = if size >= split.min_bytes && split.max_parts > 1 {
            let idle = shared.idle_queues();
            split.plan_among(&shared.queue_kinds(), &idle, self.index, upload, size)
        } else {
            split.plan(&[], self.index, upload, size)
        };
        let (label, uses) = if upload {
            (
                "kiln upload from host buffer",
                [(held.stamps(), false), (device.stamps(), true)],
            )
        } else {
            (
                "kiln readback to host buffer",
                [(held.stamps(), true), (device.stamps(), false)],
            )
        };
        let mut submitted: Vec<(usize, u64)> = Vec::with_capacity(parts.len());
        for part in &parts {
            let (h, d) = (host_offset + part.offset, device_offset + part.offset);
            let ((src, src_offset), (dst, dst_offset)) = if upload {
                ((held.raw(), h), (device.raw(), d))
            } else {
                ((device.raw(), d), (held.raw(), h))
            };
            let shader =
                if upload {
                    shader_uploads(shared, part.queue)
                } else {
                    shader_readbacks(shared, part.queue)
                } && ShaderCopies::eligible(shared, part.queue, device.usage(), (d, h, part.len));
            let value = if shader {
                shader_copy::submit_shader_copy(
                    shared,
                    part.queue,
                    if upload {
                        "kiln shader upload from host buffer"
                    } else {
                        "kiln shader readback to host buffer"
                    },
                    (src, src_offset),
                    (dst, dst_offset),
                    part.len,
                    &uses,
                    &submitted,
                )?
            } else {
                let region = vk::BufferCopy {
                    src_offset,
                    dst_offset,
                    size: part.len,
                };
                let copy = (src, dst, region);
                chunks::submit_raw_copy(shared, part.queue, label, copy, &uses, false, &submitted)?
            };
            submitted.push((part.queue, value));
        }
        drop(held);
        let value = submitted.first().map_or(0, |p| p.1);
        let mut t = Transfer::done(shared, self.index, value);
        t.others = submitted.split_off(1.min(submitted.len()));
        Ok(t)
    }

    /// `KILN-E109` for a buffer of another device.
    fn own(&self, buffer: &Buffer) -> Result<()> {
        if Arc::ptr_eq(buffer.shared(), &self.shared) {
            Ok(())
        } else {
            Err(Error::ForeignObject {
                object: format!("buffer `{}`", buffer.label()),
            })
        }
    }
}
