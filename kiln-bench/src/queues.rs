//! The queue rows (issue 12): host ↔ device transfers from pinned memory, imported memory
//! and a plain `Vec`, at two sizes, and the chunked stream overlapped over three queues vs
//! the same work serial (`stream`). Every row interleaves kiln and the raw-`ash` baseline
//! round by round; GB/s of wall time (bytes / (end - start) of the blocking call).
//!
//! - pinned: kiln `Queue::upload_from_host` / `read_to_host` on its transfer queues (DMA
//!   copies between a `HostBuffer` and the device buffer, split over two queues from 64 MiB
//!   by kiln's default `TransferSplit`); raw: one copy between a host-cached `VkBuffer` and
//!   the device buffer on the same `VkQueue` (the hostmem sweep's split group has raw doing
//!   the same split).
//! - imported: the same, from and to page-aligned user memory imported with
//!   `VK_EXT_external_memory_host` (kiln `Device::import_host_memory`, raw: its own import
//!   of another allocation); absent when the device lacks the extension.
//! - Vec: kiln `Buffer::upload` / `read_into` (chunked, pipelined, multi-threaded staging on
//!   the transfer queues); raw: what a straightforward program does, one memcpy into a
//!   mapped staging buffer and one copy (the floor a single thread reaches).
//!
//! The pinned and imported rows first copy for half a second (`WARMUP`, raw copies up and
//! down; the H200's copy rate ramps up over the first few hundred ms of traffic), as
//! `scripts/cuda_transfers.py` drops its first copy; every measured round is printed.
//!
//! `KILN_BENCH_SWEEP=1` adds rows for the Vec paths over staging chunk sizes, host thread
//! counts and upload staging memory (system memory vs the BAR), to tune the defaults on a
//! new machine; raw is the naive figure of the same size.

use std::time::Instant;

use ash::vk;
use kiln::{Buffer, BufferDesc, Device, MemoryLocation, Queue, QueueKind};

use super::raw::{HostBuf, Raw};
use super::{median, note, stream, BenchResult, Opts, Peer, Row};

/// Bytes that differ with position (a misplaced chunk shows).
fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

fn gbs(size: u64, t: Instant) -> f64 {
    size as f64 / t.elapsed().as_nanos() as f64
}

fn mib(size: u64) -> String {
    if size >= 1 << 30 && size.is_multiple_of(1 << 30) {
        format!("{} GiB", size >> 30)
    } else {
        format!("{} MiB", size >> 20)
    }
}

/// Page-aligned host memory (what importing needs), freed on drop.
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(len: usize) -> BenchResult<Aligned> {
        let layout = std::alloc::Layout::from_size_align(len, 1 << 16)?;
        // SAFETY: `len` > 0 (the sizes are at least 16 MiB).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err("out of host memory".into());
        }
        Ok(Aligned { ptr, layout })
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: a live allocation of `layout.size()` bytes owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// The raw side's queues: the `VkQueue`s of kiln's first (uploads) and last (readbacks)
/// transfer queue, and a context of each one's family.
struct RawQueues<'r> {
    raw: &'r Raw,
    up: (vk::Queue, super::raw::Ctx),
    down: (vk::Queue, super::raw::Ctx),
}

impl<'r> RawQueues<'r> {
    fn new(raw: &'r Raw, device: &Device) -> BenchResult<RawQueues<'r>> {
        let up = device.queue(QueueKind::Transfer).info();
        let down = device
            .queues(QueueKind::Transfer)
            .last()
            .map(|q| q.info())
            .unwrap_or(up);
        Ok(RawQueues {
            raw,
            up: (raw.queue_of(&up), raw.ctx_for(up.family)?),
            down: (raw.queue_of(&down), raw.ctx_for(down.family)?),
        })
    }

    /// One copy of `size` bytes from `src` to `dst`, waited for; `readback` ends with a
    /// device→host barrier and runs on the readback queue.
    fn copy(&self, src: vk::Buffer, dst: vk::Buffer, size: u64, readback: bool) -> BenchResult<()> {
        let (queue, ctx) = if readback { &self.down } else { &self.up };
        let raw = self.raw;
        raw.begin(ctx)?;
        let region = [vk::BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size,
        }];
        // SAFETY: `cb` is recording; both buffers are alive and at least `size` bytes; kiln
        // has no submission in flight that uses them.
        unsafe { raw.d.cmd_copy_buffer(ctx.cb, src, dst, &region) };
        if readback {
            raw.barrier(
                ctx.cb,
                vk::AccessFlags2::TRANSFER_WRITE,
                vk::AccessFlags2::HOST_READ,
                vk::PipelineStageFlags2::HOST,
            );
        }
        raw.submit_wait_on(*queue, ctx)
    }

    fn finish(self) {
        self.raw.drop_ctx(self.up.1);
        self.raw.drop_ctx(self.down.1);
    }
}

/// The queue rows (see the module docs).
pub fn rows(
    device: &Device,
    raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let cpu = device.info().device_type == vk::PhysicalDeviceType::CPU;
    let sizes: &[u64] = match (opts.quick, cpu) {
        (true, _) => &[16 << 20],
        // lavapipe's heap is 2 GiB, shared by device and host buffers.
        (false, true) => &[64 << 20, 256 << 20],
        (false, false) => &[256 << 20, 1 << 30],
    };
    let rounds = if opts.quick { 2 } else { 5 };
    for q in device.queue_infos() {
        note(format!(
            "queue {}: {:?}, family {} index {} ({:?}), {:?}",
            q.index, q.kind, q.family, q.queue_index, q.flags, q.source
        ));
    }
    let forced = std::env::var("KILN_BENCH_FORCE_STAGING").is_ok_and(|v| v == "1");
    device.debug_force_staging(forced);
    let queues = RawQueues::new(raw, device)?;
    let result = (|| -> BenchResult<Vec<Row>> {
        let mut rows = Vec::new();
        for &size in sizes {
            rows.extend(size_rows(device, raw, &queues, size, rounds)?);
        }
        rows.extend(stream::rows(device, raw, opts)?);
        if std::env::var("KILN_BENCH_SWEEP").is_ok_and(|v| v == "1") {
            rows.extend(sweep(device, raw, &queues, sizes[0], rounds)?);
        }
        Ok(rows)
    })();
    device.debug_force_staging(false);
    device.wait_idle()?;
    queues.finish();
    result
}

/// How long the transfer rows copy before they measure: on the H200 the copy rate ramps up
/// over the first few hundred ms of copies after the GPU was idle (run D2: the first three
/// 1 GiB rounds at 37.6–43.5 GB/s for kiln and raw alike, then 48.4–51.8), and CUDA's
/// reference (`scripts/cuda_transfers.py`) drops its first copy as warm-up too.
const WARMUP: std::time::Duration = std::time::Duration::from_millis(500);

/// Raw copies of `size` bytes between `host` and `device`, up and down in turn, for
/// [`WARMUP`] (at least one of each); returns the rates (GB/s) for the notes.
fn warm_up(
    queues: &RawQueues<'_>,
    host: vk::Buffer,
    device: vk::Buffer,
    size: u64,
) -> BenchResult<Vec<f64>> {
    let start = Instant::now();
    let mut rates = Vec::new();
    while rates.len() < 2 || start.elapsed() < WARMUP {
        let t = Instant::now();
        queues.copy(host, device, size, false)?;
        rates.push(gbs(size, t));
        let t = Instant::now();
        queues.copy(device, host, size, true)?;
        rates.push(gbs(size, t));
    }
    Ok(rates)
}

fn size_rows(
    device: &Device,
    raw: &Raw,
    queues: &RawQueues<'_>,
    size: u64,
    rounds: usize,
) -> BenchResult<Vec<Row>> {
    let data = pattern(size as usize);
    let dst = device.buffer(
        &BufferDesc::default()
            .label("queues bench target")
            .size(size)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
            .location(MemoryLocation::GpuOnly),
    )?;
    let up = device.queue(QueueKind::Transfer);
    let down = device
        .queues(QueueKind::Transfer)
        .pop()
        .unwrap_or_else(|| up.clone());
    let c = SizeRun {
        device,
        raw,
        queues,
        dst: &dst,
        data: &data,
        up: &up,
        down: &down,
        size,
        rounds,
        name: mib(size),
    };
    let name = &c.name;
    let mut rows = Vec::new();
    rows.extend(up_down_rows(
        &format!("upload {name} from pinned memory"),
        &format!("readback {name} to pinned memory"),
        pinned(&c)?,
    ));

    // Imported memory. A driver that lists the extension but refuses the import leaves the
    // rows out with a note rather than failing the group.
    if device.features().external_memory_host {
        match imported(&c) {
            Ok(r) => rows.extend(r),
            Err(e) => note(format!("imported-memory rows left out: {e}")),
        }
    } else {
        note("no VK_EXT_external_memory_host: the imported-memory rows are left out".into());
    }

    // A plain Vec.
    rows.extend(up_down_rows(
        &format!("upload {name} from a Vec"),
        &format!("readback {name} into a Vec"),
        vec_rounds(device, raw, queues, &dst, &data, rounds)?,
    ));
    Ok(rows)
}

/// One size's run of the queue rows: kiln's device and queues, raw's, the device target
/// and the data.
struct SizeRun<'a> {
    device: &'a Device,
    raw: &'a Raw,
    queues: &'a RawQueues<'a>,
    dst: &'a Buffer,
    data: &'a [u8],
    up: &'a Queue,
    down: &'a Queue,
    size: u64,
    rounds: usize,
    name: String,
}

/// kiln's `HostBuffer` against raw's pinned buffer, rounds in turn, a note with every
/// round: `[kiln up, raw up, kiln down, raw down]` medians (GB/s).
fn pinned(c: &SizeRun<'_>) -> BenchResult<[f64; 4]> {
    let (device, raw, queues, dst, data) = (c.device, c.raw, c.queues, c.dst, c.data);
    let (up, down, size, rounds, name) = (c.up, c.down, c.size, c.rounds, &c.name);
    let mut host = device.host_buffer_from_slice("bench pinned", data)?;
    let raw_host = raw.host_buffer(size, true)?;
    // SAFETY: `raw_host` is mapped for `size` bytes and not in use by the GPU.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), raw_host.ptr, size as usize) };
    let r = (|| -> BenchResult<[f64; 4]> {
        let warm = warm_up(queues, raw_host.buf, dst.raw(), size)?;
        let (mut ku, mut kd, mut ru, mut rd) = (vec![], vec![], vec![], vec![]);
        let (mut up_parts, mut down_parts) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t = Instant::now();
            let transfer = up.upload_from_host(&host, 0, dst, 0, size)?;
            up_parts.push(transfer.parts().iter().map(|p| p.0).collect::<Vec<_>>());
            transfer.wait()?;
            ku.push(gbs(size, t));
            let t = Instant::now();
            queues.copy(raw_host.buf, dst.raw(), size, false)?;
            ru.push(gbs(size, t));
            let t = Instant::now();
            let transfer = down.read_to_host(dst, 0, &mut host, 0, size)?;
            down_parts.push(transfer.parts().iter().map(|p| p.0).collect::<Vec<_>>());
            transfer.wait()?;
            kd.push(gbs(size, t));
            let t = Instant::now();
            queues.copy(dst.raw(), raw_host.buf, size, true)?;
            rd.push(gbs(size, t));
        }
        if host.as_slice()? != data {
            return Err("kiln pinned readback differs from the upload".into());
        }
        let list = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.1}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        note(format!(
            "pinned {name}: warm-up (raw, up/down in turn, {} ms, {} copies, the first 12) {} | \
             kiln upload rounds {} on \
             kiln queues {up_parts:?}; raw (one copy) {} | kiln readback rounds {} on \
             {down_parts:?}; raw {} (GB/s)",
            WARMUP.as_millis(),
            warm.len(),
            list(&warm[..warm.len().min(12)]),
            list(&ku),
            list(&ru),
            list(&kd),
            list(&rd)
        ));
        Ok([
            median(&mut ku),
            median(&mut ru),
            median(&mut kd),
            median(&mut rd),
        ])
    })();
    raw.drop_host_buffer(raw_host);
    drop(host);
    r
}

/// kiln's import of host memory against raw's import of other memory with the same data:
/// the two rows (GB/s).
fn imported(c: &SizeRun<'_>) -> BenchResult<Vec<Row>> {
    let (device, raw, queues, dst, data) = (c.device, c.raw, c.queues, c.dst, c.data);
    let (up, down, size, rounds, name) = (c.up, c.down, c.size, c.rounds, &c.name);
    let mut mine = Aligned::new(size as usize)?;
    mine.bytes().copy_from_slice(data);
    let mut theirs = Aligned::new(size as usize)?;
    theirs.bytes().copy_from_slice(data);
    let raw_import = import(raw, theirs.bytes())?;
    let r = device.import_host_memory("bench import", mine.bytes(), |host| {
        let (mut ku, mut kd, mut ru, mut rd) = (vec![], vec![], vec![], vec![]);
        let mut run = || -> BenchResult<()> {
            warm_up(queues, raw_import.buf, dst.raw(), size)?;
            for _ in 0..rounds {
                let t = Instant::now();
                up.upload_from_host(host, 0, dst, 0, size)?.wait()?;
                ku.push(gbs(size, t));
                let t = Instant::now();
                queues.copy(raw_import.buf, dst.raw(), size, false)?;
                ru.push(gbs(size, t));
                let t = Instant::now();
                down.read_to_host(dst, 0, host, 0, size)?.wait()?;
                kd.push(gbs(size, t));
                let t = Instant::now();
                queues.copy(dst.raw(), raw_import.buf, size, true)?;
                rd.push(gbs(size, t));
            }
            Ok(())
        };
        let outcome = run().map_err(|e| e.to_string());
        Ok((
            outcome,
            [
                median(&mut ku),
                median(&mut ru),
                median(&mut kd),
                median(&mut rd),
            ],
        ))
    });
    drop_import(raw, raw_import);
    let (outcome, medians) = r?;
    outcome?;
    if mine.bytes() != data || theirs.bytes() != data {
        return Err("imported-memory readback differs from the upload".into());
    }
    Ok(up_down_rows(
        &format!("upload {name} from imported memory"),
        &format!("readback {name} to imported memory"),
        medians,
    )
    .into())
}

/// The upload and readback rows (GB/s) of `[kiln up, raw up, kiln down, raw down]`.
fn up_down_rows(upload: &str, readback: &str, [ku, ru, kd, rd]: [f64; 4]) -> [Row; 2] {
    [
        Row::new(upload, "GB/s", ku, ru),
        Row::new(readback, "GB/s", kd, rd),
    ]
}

/// Medians of kiln and raw upload and readback of `data` through `dst`, from and into
/// plain vectors: `[kiln up, raw up, kiln down, raw down]`.
fn vec_rounds(
    _device: &Device,
    raw: &Raw,
    queues: &RawQueues<'_>,
    dst: &Buffer,
    data: &[u8],
    rounds: usize,
) -> BenchResult<[f64; 4]> {
    let size = data.len() as u64;
    let up = raw.host_buffer(size, false)?;
    let down = raw.host_buffer(size, true)?;
    let mut back = vec![0u8; data.len()];
    let mut kback = vec![0u8; data.len()];
    let r = (|| -> BenchResult<[f64; 4]> {
        let (mut ku, mut kd, mut ru, mut rd) = (vec![], vec![], vec![], vec![]);
        for _ in 0..rounds {
            let t = Instant::now();
            dst.upload(data)?;
            ku.push(gbs(size, t));
            let t = Instant::now();
            dst.read_into(&mut kback)?;
            kd.push(gbs(size, t));
            if kback != data {
                return Err("kiln readback differs from the upload".into());
            }
            kback.fill(0);
            let t = Instant::now();
            // SAFETY: `up` is mapped for `size` bytes and not in use by the GPU.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), up.ptr, data.len()) };
            queues.copy(up.buf, dst.raw(), size, false)?;
            ru.push(gbs(size, t));
            let t = Instant::now();
            queues.copy(dst.raw(), down.buf, size, true)?;
            // SAFETY: `down` is mapped, coherent, and the copy into it was waited on.
            unsafe { std::ptr::copy_nonoverlapping(down.ptr, back.as_mut_ptr(), data.len()) };
            rd.push(gbs(size, t));
            if back != data {
                return Err("raw readback differs from the upload".into());
            }
            back.fill(0);
        }
        Ok([
            median(&mut ku),
            median(&mut ru),
            median(&mut kd),
            median(&mut rd),
        ])
    })();
    raw.drop_host_buffer(up);
    raw.drop_host_buffer(down);
    r
}

/// The Vec paths over staging chunk sizes, host threads and upload staging memory.
fn sweep(
    device: &Device,
    raw: &Raw,
    queues: &RawQueues<'_>,
    size: u64,
    rounds: usize,
) -> BenchResult<Vec<Row>> {
    let data = pattern(size as usize);
    let dst = device.buffer(
        &BufferDesc::default()
            .label("queues sweep target")
            .size(size)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
            .location(MemoryLocation::GpuOnly),
    )?;
    let mut rows = Vec::new();
    // Pinned copies on each kind of queue (is the copy engine of a transfer queue as fast as
    // the main queue's?), kiln only; raw: the pinned copy on kiln's transfer queues.
    let mut host = device.host_buffer_from_slice("sweep pinned", &data)?;
    let raw_host = raw.host_buffer(size, true)?;
    let r = (|| -> BenchResult<Vec<Row>> {
        let mut rows = Vec::new();
        for kind in [QueueKind::Main, QueueKind::Compute, QueueKind::Transfer] {
            let q = device.queue(kind);
            let (mut ku, mut kd, mut ru, mut rd) = (vec![], vec![], vec![], vec![]);
            for _ in 0..rounds {
                let t = Instant::now();
                q.upload_from_host(&host, 0, &dst, 0, size)?.wait()?;
                ku.push(gbs(size, t));
                let t = Instant::now();
                queues.copy(raw_host.buf, dst.raw(), size, false)?;
                ru.push(gbs(size, t));
                let t = Instant::now();
                q.read_to_host(&dst, 0, &mut host, 0, size)?.wait()?;
                kd.push(gbs(size, t));
                let t = Instant::now();
                queues.copy(dst.raw(), raw_host.buf, size, true)?;
                rd.push(gbs(size, t));
            }
            let what = format!(
                "{} pinned, {kind:?} queue ({:?})",
                mib(size),
                q.info().source
            );
            rows.push(Row::new(
                &format!("sweep upload {what}"),
                "GB/s",
                median(&mut ku),
                median(&mut ru),
            ));
            rows.push(Row::new(
                &format!("sweep readback {what}"),
                "GB/s",
                median(&mut kd),
                median(&mut rd),
            ));
        }
        Ok(rows)
    })();
    raw.drop_host_buffer(raw_host);
    drop(host);
    rows.extend(r?);
    let max_threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for bar in [false, true] {
        for chunk_mib in [8u64, 16, 32, 64, 256] {
            for threads in [1usize, 2, 4, 8, 16] {
                if threads > max_threads.max(1) * 2 {
                    continue;
                }
                device.release_staging_memory();
                device.debug_set_upload_staging_bar(bar);
                device.debug_set_staging_chunk(chunk_mib << 20);
                device.debug_set_transfer_threads(threads);
                let [ku, ru, kd, rd] = vec_rounds(device, raw, queues, &dst, &data, rounds)?;
                let what = format!(
                    "{} chunk {chunk_mib} MiB, {threads} threads{}",
                    mib(size),
                    if bar { ", BAR" } else { "" }
                );
                rows.push(Row::new(&format!("sweep upload {what}"), "GB/s", ku, ru));
                rows.push(Row::new(&format!("sweep readback {what}"), "GB/s", kd, rd));
            }
        }
    }
    // Back to the defaults.
    device.release_staging_memory();
    device.debug_set_upload_staging_bar(false);
    device.debug_set_staging_chunk(kiln::hooks::STAGING_CHUNK);
    device.debug_set_transfer_threads(0);
    Ok(rows)
}

/// The raw side's import of `memory` (`VK_EXT_external_memory_host`): a buffer bound to
/// imported memory, not mapped (the host pointer is `memory`).
fn import(raw: &Raw, memory: &mut [u8]) -> BenchResult<HostBuf> {
    let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    let mut ext = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
    let info = vk::BufferCreateInfo::default()
        .size(memory.len() as u64)
        .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
        .push_next(&mut ext);
    // SAFETY: plain create; memory is bound below before any use.
    let buf = unsafe { raw.d.create_buffer(&info, None) }?;
    // SAFETY: `buf` is alive.
    let req = unsafe { raw.d.get_buffer_memory_requirements(buf) };
    let fns = raw.external_memory_host();
    let mut props = vk::MemoryHostPointerPropertiesEXT::default();
    // SAFETY: the extension is enabled on kiln's device (the row runs only then); the
    // pointer is a live, 64 KiB-aligned allocation.
    unsafe {
        (fns.fp().get_memory_host_pointer_properties_ext)(
            raw.d.handle(),
            handle,
            memory.as_ptr().cast(),
            &mut props,
        )
    }
    .result()?;
    let ty = raw
        .memory_type(
            req.memory_type_bits & props.memory_type_bits,
            vk::MemoryPropertyFlags::HOST_VISIBLE,
        )
        .ok_or("no memory type imports host memory")?;
    let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
        .handle_type(handle)
        .host_pointer(memory.as_mut_ptr().cast());
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(memory.len() as u64)
        .memory_type_index(ty)
        .push_next(&mut import);
    // SAFETY: aligned pointer and size; the memory outlives the import (dropped first).
    unsafe {
        let mem = raw.d.allocate_memory(&alloc, None)?;
        raw.d.bind_buffer_memory(buf, mem, 0)?;
        Ok(HostBuf {
            buf,
            mem,
            ptr: memory.as_mut_ptr(),
        })
    }
}

fn drop_import(raw: &Raw, b: HostBuf) {
    // SAFETY: no pending GPU work uses the import (every copy was waited on).
    unsafe {
        raw.d.destroy_buffer(b.buf, None);
        raw.d.free_memory(b.mem, None);
    }
}
