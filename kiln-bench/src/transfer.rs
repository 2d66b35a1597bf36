//! Rows 3 and 7: SAXPY bandwidth from GPU timestamps, and staging upload/readback.

use std::time::Instant;

use ash::vk;
use kiln::{Buffer, BufferDesc, ComputePipeline, Device, MemoryLocation};

use super::raw::{Ctx, Raw};
use super::{median, note, BenchResult, Opts, Peer, Row};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Saxpy {
    a: f32,
    n: u32,
    pitch: u32,
}

/// Workgroups of 256 laid out as a 2D grid (x ≤ 32768) covering `threads`.
fn grid(threads: u64) -> (u32, u32, u32) {
    let groups = threads.div_ceil(256);
    let gx = groups.min(32_768) as u32;
    let gy = groups.div_ceil(gx as u64) as u32;
    (gx, gy, gx * 256)
}

pub(super) fn write_ts(
    raw: &Raw,
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    stage: vk::PipelineStageFlags,
    q: u32,
) {
    // SAFETY: `cb` is recording; query `q` < 2 was reset earlier in this command buffer.
    unsafe { raw.d.cmd_write_timestamp(cb, stage, pool, q) };
}

pub(super) fn ticks(raw: &Raw, pool: vk::QueryPool) -> BenchResult<u64> {
    let mut t = [0u64; 2];
    // SAFETY: both queries were written by a submission that was waited on.
    unsafe {
        raw.d.get_query_pool_results(
            pool,
            0,
            &mut t,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )?
    };
    Ok(t[1].saturating_sub(t[0]))
}

/// Row 3: GB/s of `y = a*x + y` (bytes = 3 × 4 × n: read x, read y, write y), from
/// timestamps around the dispatch alone, scalar and vec4 shaders.
pub fn bandwidth_rows(
    device: &Device,
    raw: &Raw,
    mut peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let n = saxpy_size(device, opts);
    if device.limits().timestamp_compute_and_graphics == vk::FALSE {
        return Err("the device does not promise timestamps on compute queues \
                    (timestampComputeAndGraphics); the bandwidth rows need them"
            .into());
    }
    let period = device.limits().timestamp_period as f64;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let make = |label| {
        device.buffer(
            &BufferDesc::default()
                .label(label)
                .size(n * 4)
                .usage(usage)
                .location(MemoryLocation::GpuOnly),
        )
    };
    let (x, y) = (make("saxpy x")?, make("saxpy y")?);
    device.execute(|r| {
        r.fill_buffer(&x, 1.0f32.to_bits())?;
        r.fill_buffer(&y, 2.0f32.to_bits())?;
        Ok(())
    })?;
    let qinfo = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(2);
    // SAFETY: plain create; destroyed below.
    let qpool = unsafe { raw.d.create_query_pool(&qinfo, None) }?;
    if let Some(w) = peer.as_deref_mut() {
        w.saxpy_setup(n)?;
    }
    let ctx = raw.ctx()?;
    let iters = if opts.quick { 3 } else { 15 };
    let mut rows = Vec::new();
    let mut result = Ok(());
    let mut dispatches = 0u32;
    for (name, file, per_thread) in [
        ("saxpy scalar", "scalar", 1u64),
        ("saxpy vec4", "vec4", 4u64),
    ] {
        let r = saxpy_variant(
            device,
            raw,
            &ctx,
            qpool,
            (&x, &y),
            n,
            per_thread,
            file,
            iters,
            peer.as_deref_mut(),
        );
        match r {
            Ok((k, rw, w)) => {
                dispatches += 2 * (iters + 1);
                let gbs = |ticks: f64| (3 * 4 * n) as f64 / (ticks * period);
                let bytes = (3 * 4 * n) as f64;
                rows.push(
                    Row::new(name, "GB/s", gbs(k), gbs(rw)).with_wgpu(w.map(|ns| bytes / ns)),
                );
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    device.wait_idle()?;
    raw.drop_ctx(ctx);
    // SAFETY: no submission using the pool is pending.
    unsafe { raw.d.destroy_query_pool(qpool, None) };
    result?;
    if let Some(w) = peer {
        w.saxpy_finish()?;
    }
    check_saxpy(device, &y, n, dispatches)?;
    Ok(rows)
}

/// Elements of the SAXPY vectors: `--size-log2`, else 2^20 / 2^24 on a CPU device
/// (quick / full) and 2^24 / 2^28 on a GPU, halved until 4 bytes each fit
/// maxStorageBufferRange.
fn saxpy_size(device: &Device, opts: &Opts) -> u64 {
    let cpu = device.info().device_type == vk::PhysicalDeviceType::CPU;
    let log2 = opts.size_log2.unwrap_or(match (cpu, opts.quick) {
        (true, true) => 20,
        (true, false) => 24,
        (false, true) => 24,
        (false, false) => 28,
    });
    let mut n = 1u64 << log2;
    let max_range = device.limits().max_storage_buffer_range as u64;
    while n * 4 > max_range {
        n /= 2;
    }
    if n != 1 << log2 {
        eprintln!(
            "kiln bench: SAXPY size lowered to 2^{} (maxStorageBufferRange)",
            n.trailing_zeros()
        );
    }
    n
}

/// Checks the arithmetic: y started at 2 and each of the `dispatches` added a * x = 0.5.
fn check_saxpy(device: &Device, y: &Buffer, n: u64, dispatches: u32) -> BenchResult<()> {
    let probe = device.buffer(
        &BufferDesc::default()
            .label("saxpy probe")
            .size(16)
            .usage(vk::BufferUsageFlags::TRANSFER_DST)
            .location(MemoryLocation::GpuToCpu),
    )?;
    device.execute(|r| {
        r.copy_buffer(y, n * 4 - 16, &probe, 0, 16)?;
        Ok(())
    })?;
    let got: Vec<f32> = probe.read()?;
    let want = 2.0 + 0.5 * dispatches as f32;
    if got.iter().any(|v| *v != want) {
        return Err(format!("saxpy: last elements {got:?}, expected {want}").into());
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn saxpy_variant(
    device: &Device,
    raw: &Raw,
    ctx: &Ctx,
    qpool: vk::QueryPool,
    (x, y): (&Buffer, &Buffer),
    n: u64,
    per_thread: u64,
    variant: &str,
    iters: u32,
    mut peer: Option<&mut Peer>,
) -> BenchResult<(f64, f64, Option<f64>)> {
    let module = match variant {
        "vec4" => kiln::include_spirv!("saxpy_vec4.comp")?,
        _ => kiln::include_spirv!("saxpy_scalar.comp")?,
    };
    let pipe: ComputePipeline = device.compute_pipeline(&module, "main")?;
    let mut set = pipe.descriptor_set(0)?;
    set.write_buffer(0, x)?;
    set.write_buffer(1, y)?;
    let threads = n / per_thread;
    let (gx, gy, pitch) = grid(threads);
    let p = Saxpy {
        a: 0.5,
        n: threads as u32,
        pitch,
    };
    let rs = RawSaxpy::new(raw, module.words(), (x, y))?;
    let RawSaxpy {
        layout,
        rpipe,
        rset,
        ..
    } = rs;
    let top = vk::PipelineStageFlags::TOP_OF_PIPE;
    let bottom = vk::PipelineStageFlags::BOTTOM_OF_PIPE;
    let mut run = || -> BenchResult<(f64, f64, Option<f64>)> {
        let (mut k, mut r, mut w) = (Vec::new(), Vec::new(), Vec::new());
        for it in 0..=iters {
            device.execute(|rec| {
                // SAFETY: the raw command buffer is recording inside `execute`; the query
                // pool outlives the call (execute waits).
                let cb = unsafe { rec.raw() };
                // SAFETY: as above; queries 0..2 exist.
                unsafe { raw.d.cmd_reset_query_pool(cb, qpool, 0, 2) };
                write_ts(raw, cb, qpool, top, 0);
                rec.bind_pipeline(&pipe)?;
                rec.bind_set(0, &set)?;
                rec.push(0, &p)?;
                rec.dispatch(gx, gy, 1)?;
                write_ts(raw, cb, qpool, bottom, 1);
                Ok(())
            })?;
            let kt = ticks(raw, qpool)? as f64;
            raw.begin(ctx)?;
            let d = &raw.d;
            // SAFETY: `cb` is recording; every object is alive; queries 0..2 exist.
            unsafe {
                d.cmd_reset_query_pool(ctx.cb, qpool, 0, 2);
                d.cmd_write_timestamp(ctx.cb, top, qpool, 0);
                d.cmd_bind_pipeline(ctx.cb, vk::PipelineBindPoint::COMPUTE, rpipe);
                d.cmd_bind_descriptor_sets(
                    ctx.cb,
                    vk::PipelineBindPoint::COMPUTE,
                    layout,
                    0,
                    &[rset],
                    &[],
                );
                d.cmd_push_constants(
                    ctx.cb,
                    layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    bytemuck::bytes_of(&p),
                );
                d.cmd_dispatch(ctx.cb, gx, gy, 1);
                d.cmd_write_timestamp(ctx.cb, bottom, qpool, 1);
            }
            raw.submit_wait(ctx)?;
            let rt = ticks(raw, qpool)? as f64;
            let wt = match peer.as_deref_mut() {
                Some(peer) => {
                    Some(peer.saxpy(per_thread == 4, (gx, gy), bytemuck::bytes_of(&p))?)
                }
                None => None,
            };
            if it > 0 {
                // The first of each is a warm-up.
                k.push(kt);
                r.push(rt);
                w.extend(wt);
            }
        }
        let (k, r) = (median(&mut k), median(&mut r));
        if !(k > 0.0 && r > 0.0) {
            return Err(format!("timestamps did not advance ({k} / {r} ticks)").into());
        }
        let w = (!w.is_empty()).then(|| median(&mut w));
        if w.is_some_and(|w| w.is_nan() || w <= 0.0) {
            return Err(format!("wgpu timestamps did not advance ({w:?} ns)").into());
        }
        Ok((k, r, w))
    };
    let out = run();
    device.wait_idle()?;
    rs.destroy(raw);
    out
}

/// Raw's SAXPY objects: set layout, pipeline layout (12 bytes of push constants), pipeline,
/// descriptor pool and a set naming x and y.
struct RawSaxpy {
    sl: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    rpipe: vk::Pipeline,
    pool: vk::DescriptorPool,
    rset: vk::DescriptorSet,
}

impl RawSaxpy {
    fn new(raw: &Raw, words: &[u32], (x, y): (&Buffer, &Buffer)) -> BenchResult<RawSaxpy> {
        let types = [vk::DescriptorType::STORAGE_BUFFER; 2];
        let bindings: Vec<_> = (0..2)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(types[i as usize])
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let sl_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        // SAFETY: plain create with locals; destroyed by `destroy`.
        let sl = unsafe { raw.d.create_descriptor_set_layout(&sl_info, None) }?;
        let layout = raw.pipeline_layout(sl, 12)?;
        let rpipe = raw.pipeline(vk::PipelineCache::null(), layout, words, &[])?;
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 2,
        }];
        let pool = raw.pool(&sizes, 1)?;
        let rset = raw.alloc_set(pool, sl)?;
        let infos = [x.raw(), y.raw()].map(|b| {
            [vk::DescriptorBufferInfo {
                buffer: b,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }]
        });
        let writes: Vec<_> = (0..2)
            .map(|i| {
                vk::WriteDescriptorSet::default()
                    .dst_set(rset)
                    .dst_binding(i as u32)
                    .descriptor_type(types[i])
                    .buffer_info(&infos[i])
            })
            .collect();
        // SAFETY: the set is fresh; both buffers are alive storage buffers.
        unsafe { raw.d.update_descriptor_sets(&writes, &[]) };
        Ok(RawSaxpy {
            sl,
            layout,
            rpipe,
            pool,
            rset,
        })
    }

    fn destroy(self, raw: &Raw) {
        // SAFETY: nothing pending uses these objects (the caller waited for the device).
        unsafe {
            raw.d.destroy_pipeline(self.rpipe, None);
            raw.d.destroy_descriptor_pool(self.pool, None);
            raw.d.destroy_pipeline_layout(self.layout, None);
            raw.d.destroy_descriptor_set_layout(self.sl, None);
        }
    }
}

/// Row 7: host slice → device-local buffer and back, through staging; GB/s of wall time.
/// kiln: `Buffer::upload` / `Buffer::read_into` (the device's reusable staging buffers,
/// chunked above `STAGING_CHUNK`) into a reused host vector, as the raw side reads into
/// one; `Buffer::read` (a fresh vector per call) is reported as a note. raw: one
/// persistent mapped staging buffer per direction, whole-size copies (the floor).
///
/// Where the device maps device-local memory (lavapipe, integrated GPUs) kiln writes and
/// reads it directly, without staging; `KILN_BENCH_FORCE_STAGING=1` makes kiln stage there
/// too, so the row compares the same work.
pub fn transfer_rows(
    device: &Device,
    raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let size: u64 = if opts.quick { 16 << 20 } else { 256 << 20 };
    let rounds = if opts.quick { 2 } else { 5 };
    let data: Vec<u8> = (0..size)
        .map(|i| ((i * 2_654_435_761) >> 13) as u8)
        .collect();
    let dst = device.buffer(
        &BufferDesc::default()
            .label("transfer target")
            .size(size)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
            .location(MemoryLocation::GpuOnly),
    )?;
    let up = raw.host_buffer(size, false)?;
    let down = raw.host_buffer(size, true)?;
    let ctx = raw.ctx()?;
    let mut back = vec![0u8; size as usize];
    let mut kback = vec![0u8; size as usize];
    let forced = std::env::var("KILN_BENCH_FORCE_STAGING").is_ok_and(|v| v == "1");
    device.debug_force_staging(forced);
    let result = (|| -> BenchResult<Vec<Row>> {
        let (mut ku, mut kd, mut ru, mut rd) = (vec![], vec![], vec![], vec![]);
        let mut kd_vec = vec![];
        let gbs = |t: Instant| size as f64 / t.elapsed().as_nanos() as f64;
        for _ in 0..rounds {
            let t = Instant::now();
            dst.upload(&data)?;
            ku.push(gbs(t));
            let t = Instant::now();
            dst.read_into(&mut kback)?;
            kd.push(gbs(t));
            if kback != data {
                return Err("kiln readback differs from the upload".into());
            }
            kback.fill(0);
            let t = Instant::now();
            let got: Vec<u8> = dst.read()?;
            kd_vec.push(gbs(t));
            if got != data {
                return Err("kiln readback (read) differs from the upload".into());
            }
            drop(got);
            let region = [vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size,
            }];
            let t = Instant::now();
            // SAFETY: `up` is mapped for `size` bytes and not in use by the GPU.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), up.ptr, size as usize) };
            raw.begin(&ctx)?;
            // SAFETY: `cb` is recording; both buffers are alive and large enough.
            unsafe { raw.d.cmd_copy_buffer(ctx.cb, up.buf, dst.raw(), &region) };
            raw.submit_wait(&ctx)?;
            ru.push(gbs(t));
            let t = Instant::now();
            raw.begin(&ctx)?;
            let xfer = vk::PipelineStageFlags2::ALL_TRANSFER;
            raw.barrier(
                ctx.cb,
                vk::AccessFlags2::TRANSFER_WRITE,
                vk::AccessFlags2::TRANSFER_READ,
                xfer,
            );
            // SAFETY: as above.
            unsafe { raw.d.cmd_copy_buffer(ctx.cb, dst.raw(), down.buf, &region) };
            raw.barrier(
                ctx.cb,
                vk::AccessFlags2::TRANSFER_WRITE,
                vk::AccessFlags2::HOST_READ,
                vk::PipelineStageFlags2::HOST,
            );
            raw.submit_wait(&ctx)?;
            // SAFETY: `down` is mapped, coherent, and the copy into it was waited on.
            unsafe { std::ptr::copy_nonoverlapping(down.ptr, back.as_mut_ptr(), size as usize) };
            rd.push(gbs(t));
            if back != data {
                return Err("raw readback differs from the upload".into());
            }
            back.fill(0);
        }
        note(format!(
            "staging readback through Buffer::read (a fresh {} MiB vector per call): \
             median {:.3} GB/s{}",
            size >> 20,
            median(&mut kd_vec),
            if forced {
                " (KILN_BENCH_FORCE_STAGING=1: kiln stages even mappable device memory)"
            } else {
                ""
            }
        ));
        Ok(vec![
            Row::new("staging upload", "GB/s", median(&mut ku), median(&mut ru)),
            Row::new("staging readback", "GB/s", median(&mut kd), median(&mut rd)),
        ])
    })();
    device.debug_force_staging(false);
    device.wait_idle()?;
    raw.drop_ctx(ctx);
    raw.drop_host_buffer(up);
    raw.drop_host_buffer(down);
    result
}
