//! Copies between two devices (issue 28): a device-local buffer of one [`Device`] copied
//! into a buffer of another through pinned host memory, in chunks, with the readback of
//! one chunk overlapped with the upload of the chunk before.
//!
//! Two slots, each a pair of [`HostBuffer`]s (one of the source device, one of the
//! destination device) of one chunk: chunk `i` is read back into slot `i % 2` on the
//! source's readback queue while chunk `i - 1`, already on the host, is copied from its
//! slot's source-side host buffer into the destination-side one (one memcpy, multi-threaded
//! over the host) and uploaded on the destination's upload queue. So the source device's
//! DMA engine, the host and the destination device's DMA engine each work on a different
//! chunk; a slot is reused only once the upload from it finished (`HostBuffer`'s host
//! access waits for its copies). Every wait is bounded by the devices' wait timeouts
//! (`KILN-E108`).
//!
//! Peer memory (`VK_KHR_device_group`, CUDA's peer access) is not used: each kiln
//! [`Device`] is its own `VkInstance` and `VkDevice`, and Vulkan shares memory between
//! `VkDevice`s only through external memory (`device::external`), which needs the same
//! physical device (opaque fd) or a DMA-BUF the importing driver accepts.

use super::chunks;
use super::copies::Transfer;
use super::host::HostBuffer;
use crate::device::{check_copy, Buffer, Device};
use crate::error::Result;

/// The default chunk of [`copy_between_devices`]: 32 MiB (kiln's staging chunk size).
pub const BETWEEN_DEVICES_CHUNK: u64 = 32 << 20;

/// Copies `size` bytes of `src` (a buffer of one device) from byte `src_offset` into `dst`
/// (a buffer of another device, or of the same one) at `dst_offset`, through pinned host
/// memory in chunks of [`BETWEEN_DEVICES_CHUNK`], readbacks and uploads overlapped (see
/// the module docs of `queue::between`). Blocks until `dst` holds the bytes; the copies
/// wait for pending writes of `src` and later uses of `dst` wait for them, on either
/// device, as for any upload and readback.
///
/// Errors: `KILN-E155` size 0, or `src` and `dst` one buffer with overlapping ranges
/// (as [`Recorder::copy_buffer`](crate::Recorder::copy_buffer)); `KILN-E151` a range that passes the end of a buffer; those
/// of [`Device::host_buffer`] for the four chunk buffers (`KILN-E154`, `KILN-E150`);
/// `KILN-E105`/`KILN-E108` a device lost or a wait that timed out.
pub fn copy_between_devices(
    src: &Buffer,
    src_offset: u64,
    dst: &Buffer,
    dst_offset: u64,
    size: u64,
) -> Result<()> {
    copy_between_devices_in_chunks(
        src,
        src_offset,
        dst,
        dst_offset,
        size,
        BETWEEN_DEVICES_CHUNK,
    )
}

/// [`copy_between_devices`] with chunks of `chunk` bytes (at least 4 KiB; rounded up to
/// it). Smaller chunks overlap sooner, larger ones submit less often.
///
/// Errors: as [`copy_between_devices`].
pub fn copy_between_devices_in_chunks(
    src: &Buffer,
    src_offset: u64,
    dst: &Buffer,
    dst_offset: u64,
    size: u64,
    chunk: u64,
) -> Result<()> {
    let len = usize::try_from(size).unwrap_or(usize::MAX);
    if size > 0 {
        src.check_transfer(src_offset, len)?;
        dst.check_transfer(dst_offset, len)?;
    }
    // One buffer as source and destination: the readback of chunk `i + 2` would run after
    // the upload of chunk `i` and read what it wrote, so overlapping ranges are refused as
    // `copy_buffer` refuses them (both ranges are in bounds here, so the sums fit).
    check_copy(src, src_offset, dst, dst_offset, size)?;
    let chunk = chunk.max(4096).min(size);
    let (from, to) = (
        Device {
            shared: src.shared().clone(),
        },
        Device {
            shared: dst.shared().clone(),
        },
    );
    let slots = usize::from(size > chunk) + 1;
    let mut host_src = Vec::with_capacity(slots);
    let mut host_dst = Vec::with_capacity(slots);
    for k in 0..slots {
        host_src.push(from.host_buffer(&format!("kiln between devices, out {k}"), chunk)?);
        host_dst.push(to.host_buffer(&format!("kiln between devices, in {k}"), chunk)?);
    }
    let (readback, upload) = (from.readback_queue(), to.upload_queue());
    let chunks = size.div_ceil(chunk);
    let range = |i: u64| (i * chunk, chunk.min(size - i * chunk));
    let mut reads: Vec<Option<Transfer<'static>>> = (0..slots).map(|_| None).collect();
    let mut uploads: Vec<Option<Transfer<'static>>> = (0..slots).map(|_| None).collect();
    // Chunk `i`'s slot: its readback is waited for, its bytes moved to the destination
    // side's host buffer (which waits for that buffer's previous upload) and uploaded.
    let mut flush = |i: u64,
                     reads: &mut Vec<Option<Transfer<'static>>>,
                     host_src: &Vec<HostBuffer>,
                     host_dst: &mut Vec<HostBuffer>|
     -> Result<()> {
        let k = (i % slots as u64) as usize;
        let (off, n) = range(i);
        if let Some(r) = reads[k].take() {
            r.wait()?;
        }
        let n_usize = usize::try_from(n).unwrap_or(usize::MAX);
        let bytes = &host_src[k].as_slice()?[..n_usize];
        let out = &mut host_dst[k].as_mut_slice()?[..n_usize];
        chunks::parallel_copy(out, bytes, chunks::threads(&to.shared));
        uploads[k] = Some(upload.upload_from_host(&host_dst[k], 0, dst, dst_offset + off, n)?);
        Ok(())
    };
    for i in 0..chunks {
        let k = (i % slots as u64) as usize;
        let (off, n) = range(i);
        let r = readback.read_to_host(src, src_offset + off, &mut host_src[k], 0, n)?;
        reads[k] = Some(r);
        if i > 0 {
            flush(i - 1, &mut reads, &host_src, &mut host_dst)?;
        }
    }
    flush(chunks - 1, &mut reads, &host_src, &mut host_dst)?;
    for u in uploads.into_iter().flatten() {
        u.wait()?;
    }
    Ok(())
}
