//! The stream rows: an array streamed through a kernel in chunks (upload chunk i, compute
//! chunk i, read back chunk i, over a ring of three device buffer pairs), from and to
//! pinned host memory. Serial: every submission on the main queue, each waiting for the one
//! before. Overlapped: uploads on `Device::upload_queue` (the first transfer queue),
//! dispatches on the async-compute queue, readbacks on `Device::readback_queue` (kiln's
//! policy), each chunk's stages (and the ring's reuse)
//! ordered by timeline waits, so upload i+1 / compute i / readback i-1 run at once. A third
//! mode is the overlapped one with the readbacks on the main queue (H200 run 1 reached
//! 1.60x overlapped on two transfer queues, which may share one copy engine), a fourth with
//! the dispatches on the main queue and the readbacks on the async-compute queue.
//!
//! kiln: `Queue::upload_from_host`, `Queue::submit`, `Queue::read_to_host`, the waits
//! derived by kiln. raw: the same command buffers and timeline waits written by hand (each
//! submission also waits for its queue's previous one, as kiln's do), on the same
//! `VkQueue`s. The kernel's iteration count is chosen so that one chunk's dispatch takes
//! about as long as its upload (the case overlap helps most). Time: wall clock from the
//! first submission to the last readback's completion.

use std::time::Instant;

use ash::vk;
use kiln::{Buffer, BufferDesc, ComputePipeline, DescriptorSet, Device, MemoryLocation, QueueKind};

use super::raw::{HostBuf, Raw};
use super::{median, note, BenchResult, Opts, Row};

const RING: usize = 3;

/// Where the stages run: serial (all on the main queue), overlapped (uploads on the first
/// transfer queue, dispatches on the compute queue, readbacks on the last transfer queue),
/// or overlapped with the readbacks on the main queue (its own copy path: on the H200 the
/// two transfer queues of family 1 may share one copy engine, which would serialize the
/// uploads and the readbacks).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Serial = 0,
    Overlapped = 1,
    MainReadback = 2,
    /// Overlapped with the dispatches on the main queue and the readbacks on the
    /// async-compute queue (a third family's copy path; each kiln queue runs its own
    /// submissions in order, so a stage needs a queue of its own to overlap).
    ComputeReadback = 3,
}

impl Mode {
    /// The overlapped modes with their row names (after "overlapped, ").
    const OVERLAPPED: [(Mode, &'static str); 3] = [
        (Mode::Overlapped, ""),
        (Mode::MainReadback, "readbacks on the main queue"),
        (
            Mode::ComputeReadback,
            "dispatches on the main queue, readbacks on the compute queue",
        ),
    ];
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    iters: u32,
    n: u32,
}

/// The kernel's `iters` LCG steps as one affine map `(a, c)`: `v -> a * v + c` (mod 2^32),
/// by squaring (the check costs one multiply-add per element; kiln-examples' `stream`
/// module has the same function, tested against the iterated steps).
fn closed_form(iters: u32) -> (u32, u32) {
    let (mut ra, mut rc) = (1u32, 0u32);
    let (mut ba, mut bc) = (1_664_525u32, 1_013_904_223u32);
    let mut n = iters;
    while n > 0 {
        if n & 1 == 1 {
            ra = ba.wrapping_mul(ra);
            rc = ba.wrapping_mul(rc).wrapping_add(bc);
        }
        bc = ba.wrapping_mul(bc).wrapping_add(bc);
        ba = ba.wrapping_mul(ba);
        n >>= 1;
    }
    (ra, rc)
}

fn input(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

/// The kiln side: pipeline, sets over the ring, host input and output.
struct KilnStream {
    pipeline: ComputePipeline,
    sets: Vec<DescriptorSet>,
    input: kiln::HostBuffer,
    output: kiln::HostBuffer,
}

/// The ring of device buffers both sides use (never at the same time).
struct Ring {
    x: Vec<Buffer>,
    y: Vec<Buffer>,
}

struct Shape {
    chunk: usize,
    chunks: usize,
    iters: u32,
}

impl Shape {
    fn bytes(&self) -> u64 {
        (self.chunk * 4) as u64
    }
    fn params(&self) -> Params {
        Params {
            iters: self.iters,
            n: self.chunk as u32,
        }
    }
}

fn check(words: &[u32], iters: u32, what: &str) -> BenchResult<()> {
    let (a, c) = closed_form(iters);
    match words
        .iter()
        .enumerate()
        .position(|(i, &v)| v != a.wrapping_mul(input(i)).wrapping_add(c))
    {
        Some(i) => Err(format!("{what}: element {i} differs from the CPU reference").into()),
        None => Ok(()),
    }
}

impl KilnStream {
    fn run(&mut self, device: &Device, ring: &Ring, s: &Shape, mode: Mode) -> BenchResult<f64> {
        let t = device.queues(QueueKind::Transfer);
        let m = device.queue(QueueKind::Main);
        let (up, compute, down) = match mode {
            Mode::Serial => (m.clone(), m.clone(), m),
            Mode::Overlapped => (
                device.upload_queue(),
                device.queue(QueueKind::Compute),
                device.readback_queue(),
            ),
            Mode::MainReadback => (t[0].clone(), device.queue(QueueKind::Compute), m),
            Mode::ComputeReadback => (t[0].clone(), m, device.queue(QueueKind::Compute)),
        };
        let (bytes, params) = (s.bytes(), s.params());
        let t = Instant::now();
        let mut pending = Vec::with_capacity(2 * s.chunks);
        let mut subs = Vec::with_capacity(s.chunks);
        for i in 0..s.chunks {
            let slot = i % RING;
            let at = i as u64 * bytes;
            pending.push(up.upload_from_host(&self.input, at, &ring.x[slot], 0, bytes)?);
            let (p, set) = (&self.pipeline, &self.sets[slot]);
            subs.push(compute.submit(|r| {
                r.bind_pipeline(p)?;
                r.bind_set(0, set)?;
                r.push(0, &params)?;
                Ok(r.dispatch_threads(params.n)?)
            })?);
            pending.push(down.read_to_host(&ring.y[slot], 0, &mut self.output, at, bytes)?);
        }
        for p in pending {
            p.wait()?;
        }
        for sub in subs {
            sub.wait()?;
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        check(
            bytemuck::cast_slice(self.output.as_slice()?),
            s.iters,
            "kiln stream",
        )?;
        self.output.as_mut_slice()?.fill(0);
        Ok(ms)
    }
}

/// Records a copy of `size` bytes from `src` at `src_offset` to `dst` at `dst_offset`.
fn copy(
    raw: &Raw,
    cb: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    (src_offset, dst_offset, size): (u64, u64, u64),
) {
    let region = [vk::BufferCopy {
        src_offset,
        dst_offset,
        size,
    }];
    // SAFETY: both buffers are alive and hold the ranges; `cb` is recording.
    unsafe { raw.d.cmd_copy_buffer(cb, src, dst, &region) };
}

/// One queue of the raw side: its `VkQueue`, timeline and command pool.
struct Lane {
    queue: vk::Queue,
    timeline: vk::Semaphore,
    pool: vk::CommandPool,
    value: u64,
}

/// The raw side: its own pipeline, layouts, sets over the ring, host buffers and lanes.
struct RawStream<'r> {
    raw: &'r Raw,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
    input: HostBuf,
    output: HostBuf,
    lanes: Vec<Lane>,
    /// Lane of each role per mode (`Mode as usize`): `[up, compute, down]`.
    roles: [[usize; 3]; 4],
}

impl<'r> RawStream<'r> {
    fn new(
        raw: &'r Raw,
        device: &Device,
        ring: &Ring,
        words: &[u32],
        total: u64,
    ) -> BenchResult<RawStream<'r>> {
        let set_layout = raw.set_layout(&[vk::DescriptorType::STORAGE_BUFFER; 2])?;
        let layout = raw.pipeline_layout(set_layout, 8)?;
        let module = kiln::include_spirv!("stream.comp")?;
        let pipeline = raw.pipeline(vk::PipelineCache::null(), layout, module.words(), &[])?;
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 2 * RING as u32,
        }];
        let pool = raw.pool(&sizes, RING as u32)?;
        let mut sets = Vec::new();
        for slot in 0..RING {
            let set = raw.alloc_set(pool, set_layout)?;
            raw.write_set(
                set,
                &[vk::DescriptorType::STORAGE_BUFFER; 2],
                &[ring.x[slot].raw(), ring.y[slot].raw()],
            );
            sets.push(set);
        }
        let infos = [
            device.queue(QueueKind::Main).info(),
            device.queue(QueueKind::Transfer).info(),
            device.queue(QueueKind::Compute).info(),
            device.readback_queue().info(),
        ];
        // Used on the main queue (serial) and the transfer queues (overlapped): shared by
        // their families, as kiln's buffers are.
        let mut families: Vec<u32> = Vec::new();
        for i in &infos {
            if !families.contains(&i.family) {
                families.push(i.family);
            }
        }
        let input = raw.host_buffer_on(total, true, &families)?;
        // SAFETY: mapped for `total` bytes, not in use by the GPU.
        unsafe {
            std::ptr::copy_nonoverlapping(words.as_ptr().cast::<u8>(), input.ptr, total as usize)
        };
        let output = raw.host_buffer_on(total, true, &families)?;
        let mut lanes: Vec<Lane> = Vec::new();
        let mut lane_of = |info: &kiln::QueueInfo| -> BenchResult<usize> {
            let queue = raw.queue_of(info);
            if let Some(i) = lanes.iter().position(|l| l.queue == queue) {
                return Ok(i);
            }
            let mut ty =
                vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
            let sem = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
            let pinfo = vk::CommandPoolCreateInfo::default().queue_family_index(info.family);
            // SAFETY: plain creates; destroyed in `finish`.
            let (timeline, pool) = unsafe {
                (
                    raw.d.create_semaphore(&sem, None)?,
                    raw.d.create_command_pool(&pinfo, None)?,
                )
            };
            lanes.push(Lane {
                queue,
                timeline,
                pool,
                value: 0,
            });
            Ok(lanes.len() - 1)
        };
        let main = lane_of(&infos[0])?;
        let (up, compute, down) = (
            lane_of(&infos[1])?,
            lane_of(&infos[2])?,
            lane_of(&infos[3])?,
        );
        let roles = [
            [main; 3],
            [up, compute, down],
            [up, compute, main],
            [up, main, compute],
        ];
        Ok(RawStream {
            raw,
            set_layout,
            layout,
            pipeline,
            pool,
            sets,
            input,
            output,
            lanes,
            roles,
        })
    }

    /// Records and submits one stage: `record` fills a fresh command buffer of the lane;
    /// the submission waits for its lane's previous value and `waits`, signals the next.
    fn submit(
        &mut self,
        lane: usize,
        waits: &[(usize, u64)],
        record: impl FnOnce(vk::CommandBuffer),
    ) -> BenchResult<u64> {
        let raw = self.raw;
        let l = &self.lanes[lane];
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(l.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the pool is this lane's, used from this thread only; reset after each run.
        let cb = unsafe { raw.d.allocate_command_buffers(&alloc)?[0] };
        // SAFETY: a fresh command buffer.
        unsafe { raw.d.begin_command_buffer(cb, &begin)? };
        record(cb);
        // SAFETY: recording.
        unsafe { raw.d.end_command_buffer(cb)? };
        let value = l.value + 1;
        let all = vk::PipelineStageFlags2::ALL_COMMANDS;
        let mut w = vec![vk::SemaphoreSubmitInfo::default()
            .semaphore(l.timeline)
            .value(value - 1)
            .stage_mask(all)];
        for &(other, v) in waits {
            w.push(
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(self.lanes[other].timeline)
                    .value(v)
                    .stage_mask(all),
            );
        }
        let signal = [vk::SemaphoreSubmitInfo::default()
            .semaphore(l.timeline)
            .value(value)
            .stage_mask(all)];
        let cbs = [vk::CommandBufferSubmitInfo::default().command_buffer(cb)];
        let info = vk::SubmitInfo2::default()
            .wait_semaphore_infos(&w)
            .command_buffer_infos(&cbs)
            .signal_semaphore_infos(&signal);
        // SAFETY: the queue is used by this thread only while no kiln call is in flight;
        // every value waited for was submitted earlier (no wait before signal).
        unsafe { raw.d.queue_submit2(l.queue, &[info], vk::Fence::null())? };
        self.lanes[lane].value = value;
        Ok(value)
    }

    fn run(&mut self, ring: &Ring, s: &Shape, mode: Mode) -> BenchResult<f64> {
        let [up, comp, down] = self.roles[mode as usize];
        let (bytes, params) = (s.bytes(), s.params());
        let groups = (s.chunk as u32).div_ceil(256);
        let raw: &Raw = self.raw;
        let t = Instant::now();
        let (mut up_v, mut comp_v, mut down_v) = (
            vec![0u64; s.chunks],
            vec![0u64; s.chunks],
            vec![0u64; s.chunks],
        );
        for i in 0..s.chunks {
            let slot = i % RING;
            let at = i as u64 * bytes;
            let waits: Vec<_> = if i >= RING {
                vec![(comp, comp_v[i - RING])]
            } else {
                vec![]
            };
            let (src, dst) = (self.input.buf, ring.x[slot].raw());
            up_v[i] = self.submit(up, &waits, |cb| copy(raw, cb, src, dst, (at, 0, bytes)))?;
            let mut waits = vec![(up, up_v[i])];
            if i >= RING {
                waits.push((down, down_v[i - RING]));
            }
            let (pipeline, layout, set) = (self.pipeline, self.layout, self.sets[slot]);
            comp_v[i] = self.submit(comp, &waits, |cb| {
                let d = &raw.d;
                // SAFETY: pipeline, layout and set are alive; `cb` is recording.
                unsafe {
                    d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
                    d.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        layout,
                        0,
                        &[set],
                        &[],
                    );
                    d.cmd_push_constants(
                        cb,
                        layout,
                        vk::ShaderStageFlags::COMPUTE,
                        0,
                        bytemuck::bytes_of(&params),
                    );
                    d.cmd_dispatch(cb, groups, 1, 1);
                }
            })?;
            let (src, dst) = (ring.y[slot].raw(), self.output.buf);
            down_v[i] = self.submit(down, &[(comp, comp_v[i])], |cb| {
                copy(raw, cb, src, dst, (0, at, bytes));
                raw.barrier(
                    cb,
                    vk::AccessFlags2::TRANSFER_WRITE,
                    vk::AccessFlags2::HOST_READ,
                    vk::PipelineStageFlags2::HOST,
                );
            })?;
        }
        let sems: Vec<_> = self.lanes.iter().map(|l| l.timeline).collect();
        let values: Vec<_> = self.lanes.iter().map(|l| l.value).collect();
        let wait = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        // SAFETY: the semaphores are alive; every value was submitted.
        unsafe { self.raw.d.wait_semaphores(&wait, u64::MAX)? };
        let ms = t.elapsed().as_secs_f64() * 1e3;
        for l in &self.lanes {
            // SAFETY: every command buffer of the pool completed (waited above).
            unsafe {
                self.raw
                    .d
                    .reset_command_pool(l.pool, vk::CommandPoolResetFlags::RELEASE_RESOURCES)?
            };
        }
        let total = s.chunk * s.chunks;
        // SAFETY: mapped, coherent; the readbacks were waited for.
        let out = unsafe { std::slice::from_raw_parts(self.output.ptr as *const u32, total) };
        check(out, s.iters, "raw stream")?;
        // SAFETY: as above; no GPU work pending.
        unsafe { std::ptr::write_bytes(self.output.ptr, 0, total * 4) };
        Ok(ms)
    }

    fn finish(self) {
        let raw = self.raw;
        // SAFETY: nothing of the raw stream is pending (every run waits for all lanes).
        unsafe {
            for l in &self.lanes {
                raw.d.destroy_command_pool(l.pool, None);
                raw.d.destroy_semaphore(l.timeline, None);
            }
            raw.d.destroy_pipeline(self.pipeline, None);
            raw.d.destroy_descriptor_pool(self.pool, None);
            raw.d.destroy_pipeline_layout(self.layout, None);
            raw.d.destroy_descriptor_set_layout(self.set_layout, None);
        }
        raw.drop_host_buffer(self.input);
        raw.drop_host_buffer(self.output);
    }
}

/// The stream rows (see the module docs), for each configuration of `KILN_BENCH_STREAM`
/// (a comma list of `MiB/chunks`; default `256/16,1024/64` on GPUs: 16 MiB chunks both, the
/// larger array amortizing the ramp of the three stages; `64/8` on CPU devices, `16/4` with
/// `--quick`). The first configuration's rows keep their names; the others' name the
/// configuration.
pub fn rows(device: &Device, raw: &Raw, opts: &Opts) -> BenchResult<Vec<Row>> {
    let cpu = device.info().device_type == vk::PhysicalDeviceType::CPU;
    let list = match std::env::var("KILN_BENCH_STREAM") {
        Ok(v) => v,
        Err(_) if opts.quick => "16/4".into(),
        Err(_) if cpu => "64/8".into(),
        Err(_) => "256/16,1024/64".into(),
    };
    let mut configs = Vec::new();
    for c in list.split(',') {
        let parsed = c.trim().split_once('/').and_then(|(m, n)| {
            let (m, n) = (
                m.trim().parse::<usize>().ok()?,
                n.trim().parse::<usize>().ok()?,
            );
            (m > 0 && n > 0 && (m << 20) / 4 / n > 0).then_some((m, n))
        });
        configs.push(
            parsed.ok_or_else(|| {
                format!("KILN_BENCH_STREAM: `{c}` is not MiB/chunks (e.g. 256/16)")
            })?,
        );
    }
    let mut rows = Vec::new();
    for (i, &(mib, chunks)) in configs.iter().enumerate() {
        let suffix = if i == 0 {
            String::new()
        } else {
            format!(" in {chunks} chunks")
        };
        rows.extend(config_rows(device, raw, opts, mib, chunks, &suffix)?);
    }
    Ok(rows)
}

/// The rows of one configuration: `mib` MiB in `chunks` chunks; `suffix` follows the
/// array size in the row names.
fn config_rows(
    device: &Device,
    raw: &Raw,
    opts: &Opts,
    mib: usize,
    chunks: usize,
    suffix: &str,
) -> BenchResult<Vec<Row>> {
    let chunk = (mib << 20) / 4 / chunks;
    let total = (chunk * chunks * 4) as u64;
    let words: Vec<u32> = (0..chunk * chunks).map(input).collect();
    let (ring, mut kiln_side) = kiln_stream(device, chunk, &words, total)?;
    let (shape, t_up, t_c) = calibrate(device, &ring, &kiln_side, chunk, chunks)?;
    note(format!(
        "stream: {mib} MiB in {chunks} chunks; one chunk: upload {:.3} ms, dispatch {:.3} ms \
         at {} iterations",
        t_up * 1e3,
        t_c * 1e3,
        shape.iters
    ));
    let mut raw_side = RawStream::new(raw, device, &ring, &words, total)?;
    let rounds = if opts.quick { 2 } else { 5 };
    // Per mode (`Mode as usize`): kiln and raw times of every round after the first.
    let result = (|| -> BenchResult<[[f64; 2]; 4]> {
        let mut times: [[Vec<f64>; 2]; 4] = Default::default();
        let modes = [Mode::Serial]
            .into_iter()
            .chain(Mode::OVERLAPPED.map(|m| m.0));
        let modes: Vec<Mode> = modes.collect();
        for round in 0..=rounds {
            for &mode in &modes {
                let k = kiln_side.run(device, &ring, &shape, mode)?;
                let r = raw_side.run(&ring, &shape, mode)?;
                if round > 0 {
                    times[mode as usize][0].push(k);
                    times[mode as usize][1].push(r);
                }
            }
        }
        Ok(times.map(|[mut k, mut r]| [median(&mut k), median(&mut r)]))
    })();
    device.wait_idle()?;
    raw_side.finish();
    Ok(stream_rows(&result?, mib, suffix))
}

/// The ring of device buffers (chunks of `chunk` words) and kiln's side: the pipeline, a
/// set per ring slot, the host input (`words`) and output (`total` bytes).
fn kiln_stream(
    device: &Device,
    chunk: usize,
    words: &[u32],
    total: u64,
) -> BenchResult<(Ring, KilnStream)> {
    let make = |label| {
        device.buffer(
            &BufferDesc::default()
                .label(label)
                .size((chunk * 4) as u64)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
    };
    let mut ring = Ring {
        x: vec![],
        y: vec![],
    };
    for _ in 0..RING {
        ring.x.push(make("stream x")?);
        ring.y.push(make("stream y")?);
    }
    let module = kiln::include_spirv!("stream.comp")?;
    let pipeline = device.compute_pipeline(&module, "main")?;
    let mut sets = Vec::new();
    for slot in 0..RING {
        let mut set = pipeline.descriptor_set(0)?;
        set.write_buffer(0, &ring.x[slot])?;
        set.write_buffer(1, &ring.y[slot])?;
        sets.push(set);
    }
    let kiln_side = KilnStream {
        pipeline,
        sets,
        input: device.host_buffer_from_slice("stream input", words)?,
        output: device.host_buffer("stream output", total)?,
    };
    Ok((ring, kiln_side))
}

/// The iterations at which one chunk's dispatch takes about as long as its upload (scaled
/// and measured again, twice: a short dispatch's time is mostly launch overhead); with the
/// last upload and dispatch times (s).
fn calibrate(
    device: &Device,
    ring: &Ring,
    kiln_side: &KilnStream,
    chunk: usize,
    chunks: usize,
) -> BenchResult<(Shape, f64, f64)> {
    let mut shape = Shape {
        chunk,
        chunks,
        iters: 64,
    };
    let measure = |shape: &Shape, k: &KilnStream| -> BenchResult<(f64, f64)> {
        let (tq, cq) = (
            device.queue(QueueKind::Transfer),
            device.queue(QueueKind::Compute),
        );
        let (mut up, mut c) = (f64::MAX, f64::MAX);
        let params = shape.params();
        for _ in 0..3 {
            let t = Instant::now();
            tq.upload_from_host(&k.input, 0, &ring.x[0], 0, shape.bytes())?
                .wait()?;
            up = up.min(t.elapsed().as_secs_f64());
            let (p, set) = (&k.pipeline, &k.sets[0]);
            let t = Instant::now();
            cq.execute(|r| {
                r.bind_pipeline(p)?;
                r.bind_set(0, set)?;
                r.push(0, &params)?;
                Ok(r.dispatch_threads(params.n)?)
            })?;
            c = c.min(t.elapsed().as_secs_f64());
        }
        Ok((up, c))
    };
    // Copies first for half a second: the H200's copy rate ramps up over the first few
    // hundred ms of traffic (run D2), and the calibration must see the steady rate.
    let warm = Instant::now();
    while warm.elapsed() < std::time::Duration::from_millis(500) {
        device
            .queue(QueueKind::Transfer)
            .upload_from_host(&kiln_side.input, 0, &ring.x[0], 0, shape.bytes())?
            .wait()?;
    }
    let (mut t_up, mut t_c) = measure(&shape, kiln_side)?;
    for _ in 0..2 {
        shape.iters = ((shape.iters as f64 * t_up / t_c.max(1e-9)) as u32).clamp(1, 1 << 20);
        (t_up, t_c) = measure(&shape, kiln_side)?;
    }
    Ok((shape, t_up, t_c))
}

/// The rows from the medians per mode (`t[mode]`: kiln, raw).
fn stream_rows(t: &[[f64; 2]; 4], mib: usize, suffix: &str) -> Vec<Row> {
    let [ks, rs] = t[Mode::Serial as usize];
    let name = format!("stream {mib} MiB{suffix}");
    let speedup_of = if suffix.is_empty() {
        String::new()
    } else {
        format!(" ({mib} MiB{suffix})")
    };
    let mut rows = vec![Row::new(
        &format!("{name}, serial (one queue)"),
        "ms",
        ks,
        rs,
    )];
    for (mode, what) in Mode::OVERLAPPED {
        let [k, r] = t[mode as usize];
        if mode == Mode::Overlapped {
            rows.push(Row::new(
                &format!("{name}, overlapped (three queues)"),
                "ms",
                k,
                r,
            ));
            rows.push(Row::new(
                &format!("stream overlap speedup{speedup_of} (serial/overlapped)"),
                "x",
                ks / k,
                rs / r,
            ));
        } else {
            rows.push(Row::new(&format!("{name}, overlapped, {what}"), "ms", k, r));
            rows.push(Row::new(
                &format!("stream overlap speedup{speedup_of}, {what}"),
                "x",
                ks / k,
                rs / r,
            ));
        }
    }
    rows
}
