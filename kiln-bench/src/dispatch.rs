//! Rows 1 and 2: dispatch recording and round trip (row 6, descriptor sets, in
//! `descriptor_sets.rs`, on this file's [`Fixture`]). All use
//! `kiln-bench/shaders/six.comp` (one set of 6 bindings: 2 uniform + 4 storage buffers, 16 bytes
//! of push constants) with several pipelines (specializations) and several sets.

use std::time::Instant;

use ash::vk;
use kiln::{Buffer, ComputePipeline, ComputePipelineDesc, DescriptorSet, Device, SpecValue};

pub(super) mod paired;

use super::raw::{BarrierMasks, Ctx, Raw};
use super::{best, median, ns_since, percentile, thread_cpu_ns, BenchResult, Opts, Peer, Row};

pub(super) const TYPES: [vk::DescriptorType; 6] = [
    vk::DescriptorType::UNIFORM_BUFFER,
    vk::DescriptorType::UNIFORM_BUFFER,
    vk::DescriptorType::STORAGE_BUFFER,
    vk::DescriptorType::STORAGE_BUFFER,
    vk::DescriptorType::STORAGE_BUFFER,
    vk::DescriptorType::STORAGE_BUFFER,
];
pub(super) const PIPES: usize = 4;
pub(super) const SETS: usize = 8;
pub(super) const BUFS: usize = 12;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Params {
    pub n: u32,
    pub pad: u32,
    pub a: f32,
    pub b: f32,
}

/// The same objects made through kiln and through raw ash.
pub(super) struct Fixture {
    pub pipes: Vec<ComputePipeline>,
    pub bufs: Vec<Buffer>,
    pub sets: Vec<DescriptorSet>,
    pub r_set_layout: vk::DescriptorSetLayout,
    pub r_layout: vk::PipelineLayout,
    pub r_pipes: Vec<vk::Pipeline>,
    r_pool: vk::DescriptorPool,
    pub r_sets: Vec<vk::DescriptorSet>,
}

impl Fixture {
    /// Raw ash: binds pipeline `pi` and set `si` at the compute bind point and pushes `p`
    /// (a dispatch's state, as the raw side of every recording row records it).
    #[inline(always)]
    pub(super) fn raw_bind(
        &self,
        raw: &Raw,
        cb: vk::CommandBuffer,
        (pi, si): (usize, usize),
        p: &Params,
    ) {
        let d = &raw.d;
        // SAFETY: `cb` is recording; pipeline, layout and set are alive and compatible.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.r_pipes[pi]);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.r_layout,
                0,
                &[self.r_sets[si]],
                &[],
            );
            d.cmd_push_constants(
                cb,
                self.r_layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytemuck::bytes_of(p),
            );
        }
    }
}

impl Fixture {
    /// kiln: binds pipeline `pi` and set `si`, pushes `p` and dispatches one workgroup (a
    /// dispatch of the kiln side of every recording row; `raw_bind` and `cmd_dispatch` are
    /// raw's).
    #[inline(always)]
    pub(super) fn kiln_dispatch<'a>(
        &'a self,
        rec: &mut kiln::Recorder<'a, '_>,
        (pi, si): (usize, usize),
        p: &Params,
    ) -> kiln::Result<()> {
        rec.bind_pipeline(&self.pipes[pi])?;
        rec.bind_set(0, &self.sets[si])?;
        rec.push(0, p)?;
        Ok(rec.dispatch(1, 1, 1)?)
    }
}

pub(super) fn set_buffers(bufs: &[Buffer], s: usize) -> [vk::Buffer; 6] {
    std::array::from_fn(|j| bufs[(s + j) % BUFS].raw())
}

pub(super) fn pool_sizes(sets: u32) -> [vk::DescriptorPoolSize; 2] {
    [
        vk::DescriptorPoolSize {
            ty: vk::DescriptorType::UNIFORM_BUFFER,
            descriptor_count: 2 * sets,
        },
        vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 4 * sets,
        },
    ]
}

impl Fixture {
    fn new(device: &Device, raw: &Raw) -> BenchResult<Fixture> {
        let module = kiln::include_spirv!("six.comp")?;
        let mut pipes = Vec::new();
        for v in 0..PIPES {
            pipes.push(device.compute_pipeline_with(
                &ComputePipelineDesc::new(&module, "main").spec(&[(0, SpecValue::U32(v as u32))]),
            )?);
        }
        let bufs = crate::six_buffers(device, "bench six", BUFS)?;
        device.execute(|r| {
            for b in &bufs {
                r.fill_buffer(b, 0)?;
            }
            Ok(())
        })?;
        let mut sets = Vec::new();
        for s in 0..SETS {
            let mut set = pipes[0].descriptor_set(0)?;
            for j in 0..6 {
                set.write_buffer(j as u32, &bufs[(s + j) % BUFS])?;
            }
            sets.push(set);
        }
        let r_set_layout = raw.set_layout(&TYPES)?;
        let r_layout = raw.pipeline_layout(r_set_layout, 16)?;
        let mut r_pipes = Vec::new();
        for v in 0..PIPES {
            r_pipes.push(raw.pipeline(
                vk::PipelineCache::null(),
                r_layout,
                module.words(),
                &[(0, v as u32)],
            )?);
        }
        let r_pool = raw.pool(&pool_sizes(SETS as u32), SETS as u32)?;
        let mut r_sets = Vec::new();
        for s in 0..SETS {
            let set = raw.alloc_set(r_pool, r_set_layout)?;
            raw.write_set(set, &TYPES, &set_buffers(&bufs, s));
            r_sets.push(set);
        }
        Ok(Fixture {
            pipes,
            bufs,
            sets,
            r_set_layout,
            r_layout,
            r_pipes,
            r_pool,
            r_sets,
        })
    }

    fn destroy(self, raw: &Raw) {
        // SAFETY: every submission that used these objects was waited on.
        unsafe {
            for p in &self.r_pipes {
                raw.d.destroy_pipeline(*p, None);
            }
            raw.d.destroy_descriptor_pool(self.r_pool, None);
            raw.d.destroy_pipeline_layout(self.r_layout, None);
            raw.d.destroy_descriptor_set_layout(self.r_set_layout, None);
        }
    }
}

/// A deterministic pseudo-random (pipeline, set) stream.
pub(super) fn stream(n: usize) -> Vec<(usize, usize)> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (
                (x % PIPES as u64) as usize,
                ((x >> 20) % SETS as u64) as usize,
            )
        })
        .collect()
}

pub fn rows(
    device: &Device,
    raw: &Raw,
    mut peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let fx = Fixture::new(device, raw)?;
    let ctx = raw.ctx()?;
    let out = (|| {
        let mut rows = recording(device, raw, &fx, &ctx, peer.as_deref_mut(), opts)?;
        rows.extend(round_trip(device, raw, &fx, &ctx, peer, opts)?);
        let (p, m) = (tiny_params(), if opts.quick { 250 } else { 5000 });
        wait_variants(device, raw, &fx, &ctx, &p, m)?;
        let body = |cb: vk::CommandBuffer| record_body(raw, &fx, cb, &p);
        super::floors::run(raw, device.features().timeline_semaphore, &body, m)?;
        rows.extend(super::descriptor_sets::rows(device, raw, &fx, &ctx, opts)?);
        rows.extend(super::scopes::rows(device, raw, &fx, &ctx, opts)?);
        Ok(rows)
    })();
    device.wait_idle()?;
    raw.drop_ctx(ctx);
    fx.destroy(raw);
    out
}

/// Row 1: ns per (bind pipeline + bind set + push constants + dispatch), recording only.
fn recording(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    mut peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let n = if opts.quick { 2_000 } else { 10_000 };
    let rounds = if opts.quick { 5 } else { 15 };
    let seq = stream(n);
    let p = Params {
        n: u32::MAX,
        pad: 0,
        a: 1.0,
        b: 2.0,
    };
    let (mut k, mut r, mut w) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = device.execute(|rec| {
            let t0 = Instant::now();
            // Like the raw stream: no barriers between the dispatches (recording cost only).
            rec.manual_barriers();
            for &d in &seq {
                fx.kiln_dispatch(rec, d, &p)?;
            }
            Ok(ns_since(t0))
        })?;
        k.push(t / n as f64);
        raw.begin(ctx)?;
        let d = &raw.d;
        let t0 = Instant::now();
        for &(pi, si) in &seq {
            fx.raw_bind(raw, ctx.cb, (pi, si), &p);
            // SAFETY: `cb` is recording, with a compute pipeline and its set bound.
            unsafe { d.cmd_dispatch(ctx.cb, 1, 1, 1) };
        }
        r.push(ns_since(t0) / n as f64);
        raw.submit_wait(ctx)?;
        if let Some(peer) = peer.as_deref_mut() {
            w.push(peer.record(&seq, bytemuck::bytes_of(&p))? / n as f64);
        }
    }
    if std::env::var_os("KILN_BENCH_DEBUG").is_some() {
        eprintln!("recording rounds kiln {k:?}\nraw {r:?}\nwgpu {w:?}");
    }
    let row = Row::new("dispatch recording", "ns", best(&k), best(&r));
    let tracked = tracked_recording(device, raw, fx, ctx, &seq, &p, rounds)?;
    Ok(vec![
        row.with_wgpu((!w.is_empty()).then(|| best(&w))),
        tracked,
    ])
}

/// Row 1b: the same stream in kiln's automatic mode (the hazard tracker decides each
/// dispatch's barrier from the sets' reflected access), against raw ash recording the same
/// commands: the same global barriers, with the same masks, exactly where kiln recorded
/// them (found by a first kiln pass: `Recorder::barrier_count` and
/// `Recorder::debug_last_barrier` after each dispatch). A note gives raw's time with one
/// fixed barrier (`ALL_COMMANDS`/storage write → compute/storage read and write) in those
/// places instead, the row's raw form until 2026-12-05 (it misses the uniform reads of
/// buffers written as storage, and NVIDIA's recording cost depends on the masks), and with
/// the union of kiln's masks in each place (one barrier form, as a conservative hand-written
/// recording would have it).
fn tracked_recording(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    seq: &[(usize, usize)],
    p: &Params,
    rounds: usize,
) -> BenchResult<Row> {
    let n = seq.len();
    let marks = crate::barrier_places(device, (&fx.pipes, &fx.sets), seq, p)?;
    let barriers = marks.iter().filter(|m| m.is_some()).count();
    let mut kinds: Vec<BarrierMasks> = marks.iter().flatten().copied().collect();
    kinds.sort_by_key(|m| (m.0.as_raw(), m.1.as_raw(), m.2.as_raw(), m.3.as_raw()));
    kinds.dedup();
    super::note(format!(
        "dispatch recording, automatic barriers: {barriers} barriers in {n} dispatches, \
         {} distinct masks",
        kinds.len()
    ));
    let union = kinds.iter().fold(Default::default(), |u: BarrierMasks, m| {
        (u.0 | m.0, u.1 | m.1, u.2 | m.2, u.3 | m.3)
    });
    let (mut k, mut r, mut off) = (Vec::new(), Vec::new(), Vec::new());
    let (mut fixed, mut joined) = (Vec::new(), Vec::new());
    let (mut known, mut known_raw) = (Vec::new(), Vec::new());
    let mut off_barriers = 0;
    use vk::AccessFlags2 as A;
    let fixed_masks = (
        vk::PipelineStageFlags2::ALL_COMMANDS,
        A::SHADER_STORAGE_WRITE,
        vk::PipelineStageFlags2::COMPUTE_SHADER,
        A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE,
    );
    for round in 0..rounds {
        // A/B: the tracker without its last-barrier shortcut (a note, not a row), before or
        // after the measured form in alternate rounds (the allocator's state after the
        // previous recording moves whichever runs first).
        for cover in [round % 2 == 0, round % 2 == 1] {
            let t = device.execute(|rec| {
                if !cover {
                    rec.debug_no_last_barrier_cover();
                }
                let t0 = Instant::now();
                for &d in seq {
                    fx.kiln_dispatch(rec, d, p)?;
                }
                if !cover {
                    off_barriers = rec.barrier_count();
                }
                Ok(ns_since(t0))
            })?;
            if cover {
                k.push(t / n as f64);
            } else {
                off.push(t / n as f64);
            }
        }
        // The barriers known: kiln's recording with no tracker (manual mode) and
        // `Recorder::barrier` where kiln's tracker placed one (what any tracker adds to).
        known.push(known_barriers(device, fx, seq, p, &marks)? / n as f64);
        // Raw with kiln's masks, with the fixed barrier, with the union of kiln's masks
        // and with `Recorder::barrier`'s masks in each place, in rotating order.
        for form in (0..4).map(|i| (i + round) % 4) {
            let instead = [None, Some(fixed_masks), Some(union), Some(BARRIER_MASKS)][form];
            raw.begin(ctx)?;
            let t0 = Instant::now();
            raw_stream(raw, fx, ctx, seq, p, &marks, instead);
            let t = ns_since(t0) / n as f64;
            raw.submit_wait(ctx)?;
            [&mut r, &mut fixed, &mut joined, &mut known_raw][form].push(t);
        }
    }
    if std::env::var_os("KILN_BENCH_DEBUG").is_some() {
        let round = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>();
        eprintln!(
            "automatic rounds kiln {:?}\nraw {:?}\nknown {:?}\nknown raw {:?}",
            round(&k),
            round(&r),
            round(&known),
            round(&known_raw)
        );
    }
    super::note(format!(
        "dispatch recording, automatic barriers without the last-barrier shortcut: {:.1} ns \
         per dispatch ({off_barriers} barriers; with it {:.1} ns, {barriers} barriers; raw \
         {:.1} ns with kiln's masks, {:.1} ns with one fixed barrier, {:.1} ns with the \
         union of kiln's masks {union:?})",
        best(&off),
        best(&k),
        best(&r),
        best(&fixed),
        best(&joined)
    ));
    super::note(format!(
        "dispatch recording, barriers known (manual mode, Recorder::barrier where kiln's \
         tracker placed one): kiln {:.1} ns per dispatch, raw with the same barrier {:.1} ns \
         ({:.3}x: the floor of the automatic row's ratio, without the tracker's own cost)",
        best(&known),
        best(&known_raw),
        best(&known) / best(&known_raw)
    ));
    // The medians beside the row's best-of-rounds: on a host whose recording speed moves
    // between modes from round to round (the H100 virtual machines of 2026-12-05, ~1.1
    // and ~1.8 us a dispatch), the fastest round of each side is a draw of the host; the
    // medians compare both sides in the mode the host was in most.
    let med = |v: &[f64]| median(&mut v.to_vec());
    super::note(format!(
        "dispatch recording, automatic barriers, medians of the {rounds} rounds: kiln {:.1} \
         ns, raw {:.1} ns ({:.3}x); barriers known: kiln {:.1} ns, raw {:.1} ns ({:.3}x)",
        med(&k),
        med(&r),
        med(&k) / med(&r),
        med(&known),
        med(&known_raw),
        med(&known) / med(&known_raw)
    ));
    let pr = paired::paired_ratios(device, raw, fx, ctx, (seq, &marks), p, rounds)?;
    super::note(format!(
        "dispatch recording, automatic barriers, {}",
        pr.describe("dispatch")
    ));
    Ok(Row::new(
        "dispatch recording, automatic barriers",
        "ns",
        best(&k),
        best(&r),
    ))
}

/// The masks [`kiln::Recorder::barrier`] records on a queue with compute and transfer
/// stages (compute writes → compute and transfer reads and writes).
const BARRIER_MASKS: BarrierMasks = (
    vk::PipelineStageFlags2::COMPUTE_SHADER,
    vk::AccessFlags2::SHADER_WRITE,
    vk::PipelineStageFlags2::from_raw(
        vk::PipelineStageFlags2::COMPUTE_SHADER.as_raw()
            | vk::PipelineStageFlags2::ALL_TRANSFER.as_raw(),
    ),
    vk::AccessFlags2::from_raw(
        vk::AccessFlags2::SHADER_READ.as_raw()
            | vk::AccessFlags2::SHADER_WRITE.as_raw()
            | vk::AccessFlags2::TRANSFER_READ.as_raw()
            | vk::AccessFlags2::TRANSFER_WRITE.as_raw(),
    ),
);

/// kiln records the stream in manual mode with [`kiln::Recorder::barrier`] before each
/// dispatch `marks` has a barrier for; ns for the whole stream.
fn known_barriers(
    device: &Device,
    fx: &Fixture,
    seq: &[(usize, usize)],
    p: &Params,
    marks: &[Option<BarrierMasks>],
) -> BenchResult<f64> {
    Ok(device.execute(|rec| {
        rec.manual_barriers();
        let t0 = Instant::now();
        for (&(pi, si), mark) in seq.iter().zip(marks) {
            rec.bind_pipeline(&fx.pipes[pi])?;
            rec.bind_set(0, &fx.sets[si])?;
            rec.push(0, p)?;
            if mark.is_some() {
                rec.barrier()?;
            }
            rec.dispatch(1, 1, 1)?;
        }
        Ok(ns_since(t0))
    })?)
}

/// Records the stream with raw ash: per dispatch the bind, the push and, where `marks` has
/// one, a global barrier (kiln's masks, or `fixed` in place of each).
fn raw_stream(
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    seq: &[(usize, usize)],
    p: &Params,
    marks: &[Option<BarrierMasks>],
    fixed: Option<BarrierMasks>,
) {
    let d = &raw.d;
    for (&(pi, si), mark) in seq.iter().zip(marks) {
        fx.raw_bind(raw, ctx.cb, (pi, si), p);
        if let Some(m) = mark {
            raw.barrier_masks(ctx.cb, fixed.unwrap_or(*m));
        }
        // SAFETY: `cb` is recording, with a compute pipeline and its set bound.
        unsafe { d.cmd_dispatch(ctx.cb, 1, 1, 1) };
    }
}

/// Row 2's dispatch parameters: each run adds b = 1 to s5[0].
fn tiny_params() -> Params {
    Params {
        n: 0,
        pad: 0,
        a: 1.0,
        b: 1.0,
    }
}

/// Row 2: submit one tiny dispatch and wait for it; wall-clock median and p99, and the
/// submitting thread's CPU time per round trip (what kiln's fence spin costs).
fn round_trip(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let n = if opts.quick { 500 } else { 10_000 };
    let p = tiny_params();
    let mut kiln_once = || {
        device.execute(|r| {
            r.bind_pipeline(&fx.pipes[0])?;
            r.bind_set(0, &fx.sets[0])?;
            r.push(0, &p)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
    };
    let raw_once = || -> BenchResult<()> {
        record_tiny(raw, fx, ctx, &p)?;
        raw.submit_wait(ctx)
    };
    // Recorded once, resubmitted: kiln's `Device::record` against a raw command buffer
    // recorded once with the same stream (without ONE_TIME_SUBMIT), same fence wait as above.
    let mut kiln_rec = device.record(|r| {
        r.bind_pipeline(&fx.pipes[0])?;
        r.bind_set(0, &fx.sets[0])?;
        r.push(0, &p)?;
        Ok(r.dispatch(1, 1, 1)?)
    })?;
    let rctx = raw.ctx()?;
    let body = |cb: vk::CommandBuffer| record_body(raw, fx, cb, &p);
    let reusable = vk::CommandBufferUsageFlags::empty();
    let reused = super::floors::record(raw, rctx.cb, &body, reusable, super::floors::FULL);
    let out = reused.and_then(|_| {
        let raw_reused = || -> BenchResult<()> { raw.resubmit_wait(&rctx) };
        round_trip_rows(
            fx,
            &mut kiln_once,
            &raw_once,
            &mut || kiln_rec.execute().map_err(Into::into),
            &raw_reused,
            peer,
            &p,
            n,
        )
    });
    drop(kiln_rec);
    device.wait_idle()?;
    raw.drop_ctx(rctx);
    out
}

/// The measured loops of row 2 (both forms), interleaved in blocks.
#[allow(clippy::too_many_arguments)]
fn round_trip_rows(
    fx: &Fixture,
    kiln_once: &mut dyn FnMut() -> kiln::Result<()>,
    raw_once: &dyn Fn() -> BenchResult<()>,
    kiln_reused: &mut dyn FnMut() -> BenchResult<()>,
    raw_reused: &dyn Fn() -> BenchResult<()>,
    mut peer: Option<&mut Peer>,
    p: &Params,
    n: usize,
) -> BenchResult<Vec<Row>> {
    let blocks = 10;
    let per = n / blocks;
    let warm = 20;
    for _ in 0..warm {
        kiln_once()?;
        raw_once()?;
        kiln_reused()?;
        raw_reused()?;
        if let Some(peer) = peer.as_deref_mut() {
            peer.round_trip(bytemuck::bytes_of(p))?;
        }
    }
    let (mut kt, mut rt) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut kr, mut rr) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut wt = Vec::with_capacity(if peer.is_some() { n } else { 0 });
    let (mut kcpu, mut rcpu, mut wcpu) = (0.0, 0.0, 0.0);
    for _ in 0..blocks {
        for _ in 0..per {
            let t0 = Instant::now();
            kiln_reused()?;
            kr.push(ns_since(t0) / 1e3);
            let t0 = Instant::now();
            raw_reused()?;
            rr.push(ns_since(t0) / 1e3);
        }
        let c0 = thread_cpu_ns();
        for _ in 0..per {
            let t0 = Instant::now();
            kiln_once()?;
            kt.push(ns_since(t0) / 1e3);
        }
        let c1 = thread_cpu_ns();
        for _ in 0..per {
            let t0 = Instant::now();
            raw_once()?;
            rt.push(ns_since(t0) / 1e3);
        }
        let c2 = thread_cpu_ns();
        kcpu += c1 - c0;
        rcpu += c2 - c1;
        if let Some(peer) = peer.as_deref_mut() {
            for _ in 0..per {
                let t0 = Instant::now();
                peer.round_trip(bytemuck::bytes_of(p))?;
                wt.push(ns_since(t0) / 1e3);
            }
            wcpu += thread_cpu_ns() - c2;
        }
    }
    // Every round trip added b = 1 to s5[0] (binding 5 of set 0): check the GPU did them all.
    let total = (4 * (warm + blocks * per)) as f32;
    let s5: Vec<f32> = fx.bufs[5].read()?;
    if s5[0] != total {
        return Err(format!("round trip: s5[0] = {} after {total} dispatches", s5[0]).into());
    }
    let wgpu = peer.is_some();
    if let Some(peer) = peer {
        // wgpu's own buffer 5 (bind group 0, binding 5): +1 per wgpu round trip.
        let (got, want) = (peer.s5()?, (warm + blocks * per) as f32);
        if got != want {
            return Err(format!("wgpu round trip: s5[0] = {got} after {want} dispatches").into());
        }
    }
    let count = (blocks * per) as f64;
    let some = |v: f64| wgpu.then_some(v);
    Ok(vec![
        Row::new("round trip median", "us", median(&mut kt), median(&mut rt))
            .with_wgpu(some(median(&mut wt))),
        Row::new(
            "round trip p99",
            "us",
            percentile(&mut kt, 0.99),
            percentile(&mut rt, 0.99),
        )
        .with_wgpu(some(percentile(&mut wt, 0.99))),
        Row::new(
            "round trip CPU time",
            "us",
            kcpu / count / 1e3,
            rcpu / count / 1e3,
        )
        .with_wgpu(some(wcpu / count / 1e3)),
        Row::new(
            "round trip, recorded once",
            "us",
            median(&mut kr),
            median(&mut rr),
        ),
    ])
}

/// Begins `ctx`, records kiln's round-trip command stream (full barrier, bind pipeline, bind
/// set, push constants, one workgroup, device→host barrier); the caller ends it.
fn record_tiny(raw: &Raw, fx: &Fixture, ctx: &Ctx, p: &Params) -> BenchResult<()> {
    raw.begin(ctx)?;
    let rw = vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE;
    let host = vk::AccessFlags2::HOST_READ | vk::AccessFlags2::HOST_WRITE;
    let all = vk::PipelineStageFlags2::ALL_COMMANDS;
    raw.barrier(ctx.cb, vk::AccessFlags2::MEMORY_WRITE, rw, all);
    record_body(raw, fx, ctx.cb, p);
    raw.barrier(
        ctx.cb,
        vk::AccessFlags2::MEMORY_WRITE,
        host,
        vk::PipelineStageFlags2::HOST,
    );
    Ok(())
}

/// The round trip's dispatch: bind pipeline 0, bind set 0, push constants, one workgroup.
fn record_body(raw: &Raw, fx: &Fixture, cb: vk::CommandBuffer, p: &Params) {
    fx.raw_bind(raw, cb, (0, 0), p);
    // SAFETY: `cb` is recording, with a compute pipeline and its set bound.
    unsafe { raw.d.cmd_dispatch(cb, 1, 1, 1) };
}

/// Diagnostics for row 2 (printed as notes, not rows): the raw round trip split into
/// record / submit / wait / reset, waiting three ways — blocking `vkWaitForFences`, polling
/// `vkGetFenceStatus`, polling a timeline semaphore's counter (when the device enabled
/// timeline semaphores). Shows where the time goes and which wait is cheapest.
fn wait_variants(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    p: &Params,
    m: usize,
) -> BenchResult<()> {
    let timeline = device.features().timeline_semaphore;
    let mut type_info = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(vk::SemaphoreType::TIMELINE)
        .initial_value(0);
    let info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
    let sem = if timeline {
        // SAFETY: timeline semaphores are enabled on this device (kiln's features say so).
        Some(unsafe { raw.d.create_semaphore(&info, None) }?)
    } else {
        None
    };
    let mut value = 0u64;
    let mut run = |how: &str| -> BenchResult<()> {
        let mut ph: [Vec<f64>; 5] = Default::default();
        for _ in 0..m {
            let t0 = Instant::now();
            record_tiny(raw, fx, ctx, p)?;
            // SAFETY: `cb` is recording.
            unsafe { raw.d.end_command_buffer(ctx.cb)? };
            let t1 = Instant::now();
            let cbs = [ctx.cb];
            value += 1;
            let values = [value];
            let sems = [sem.unwrap_or_default()];
            let mut tl =
                vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
            let mut submit = vk::SubmitInfo::default().command_buffers(&cbs);
            let fence = if how == "timeline spin" {
                submit = submit.signal_semaphores(&sems).push_next(&mut tl);
                vk::Fence::null()
            } else {
                ctx.fence
            };
            // SAFETY: `cb` is executable; the queue is used by this thread only; the fence
            // is unsignaled; the semaphore value increases with every submission.
            unsafe { raw.d.queue_submit(raw.queue, &[submit], fence)? };
            let t2 = Instant::now();
            // SAFETY (all three): waits on objects of this device that were just submitted.
            match how {
                "fence block" => unsafe { raw.d.wait_for_fences(&[ctx.fence], true, u64::MAX)? },
                "fence spin" => {
                    while !unsafe { raw.d.get_fence_status(ctx.fence)? } {
                        std::hint::spin_loop()
                    }
                }
                _ => {
                    // SAFETY: the timeline semaphore belongs to this device and is alive.
                    while unsafe { raw.d.get_semaphore_counter_value(sems[0])? } < value {
                        std::hint::spin_loop()
                    }
                }
            }
            let t3 = Instant::now();
            if fence != vk::Fence::null() {
                // SAFETY: the fence was waited on.
                unsafe { raw.d.reset_fences(&[ctx.fence])? };
            }
            raw.reset(ctx)?;
            let t4 = Instant::now();
            for (v, (a, b)) in ph
                .iter_mut()
                .zip([(t0, t1), (t1, t2), (t2, t3), (t3, t4), (t0, t4)])
            {
                v.push((b - a).as_nanos() as f64 / 1e3);
            }
        }
        let [mut rec, mut sub, mut wait, mut reset, mut total] = ph;
        super::note(format!(
            "raw round trip, {how}: median total {:.1} us = record {:.1} + submit {:.1} + wait {:.1} + reset {:.1} (per-phase medians)",
            median(&mut total),
            median(&mut rec),
            median(&mut sub),
            median(&mut wait),
            median(&mut reset)
        ));
        Ok(())
    };
    let mut out = run("fence block").and_then(|_| run("fence spin"));
    if timeline && out.is_ok() {
        out = run("timeline spin");
    }
    device.wait_idle()?;
    if let Some(s) = sem {
        // SAFETY: no submission signalling it is pending.
        unsafe { raw.d.destroy_semaphore(s, None) };
    }
    out
}
