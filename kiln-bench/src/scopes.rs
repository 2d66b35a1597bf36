//! GPU timing scopes (issue 13): what a `Recorder::scope` costs. Timing off, no other row
//! changes (a recording without scopes on a device without `DeviceDesc::timing` writes no
//! timestamp and takes no query pool).
//!
//! - **scoped dispatch recording** (ns per scope + bind + bind set + push + dispatch,
//!   recording only), against raw ash recording the same commands with two
//!   `vkCmdWriteTimestamp2` (ALL_COMMANDS) each into one query pool reset on the host;
//! - **timed round trip** (µs, median): `Device::execute_timed` of one dispatch in one
//!   scope, timings read back, against raw ash writing two timestamps around the dispatch,
//!   submitting, waiting and reading the two results.

use std::time::Instant;

use ash::vk;
use kiln::Device;

use super::dispatch::paired::{pairs, Paired};
use super::dispatch::{stream, Fixture, Params};
use super::raw::{Ctx, Raw};
use super::{best, median, ns_since, BenchResult, Opts, Row};

pub(super) fn rows(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let n = if opts.quick { 500 } else { 2_000 };
    let d = &raw.d;
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(2 * n as u32);
    // SAFETY: a plain create on the live device; destroyed below after the device is idle.
    let pool = unsafe { d.create_query_pool(&info, None)? };
    let out = measure(device, raw, fx, ctx, opts, pool, n);
    device.wait_idle()?;
    // SAFETY: the device is idle: no submission uses the pool.
    unsafe { d.destroy_query_pool(pool, None) };
    out
}

fn measure(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    opts: &Opts,
    pool: vk::QueryPool,
    n: usize,
) -> BenchResult<Vec<Row>> {
    let d = &raw.d;
    let rounds = if opts.quick { 5 } else { 15 };
    let seq = stream(n);
    let p = Params {
        n: u32::MAX,
        pad: 0,
        a: 1.0,
        b: 2.0,
    };
    let (mut k, mut r) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = device.execute(|rec| {
            let t0 = Instant::now();
            rec.manual_barriers();
            for &d in &seq {
                rec.scope("dispatch", |rec| fx.kiln_dispatch(rec, d, &p))?;
            }
            Ok(ns_since(t0))
        })?;
        k.push(t / n as f64);
        // SAFETY: the pool's queries are not in use (the last submission was waited for).
        unsafe { d.reset_query_pool(pool, 0, 2 * n as u32) };
        raw.begin(ctx)?;
        let t0 = Instant::now();
        raw_scoped((raw, ctx), fx, (pool, &seq), 0..n, &p);
        r.push(ns_since(t0) / n as f64);
        raw.submit_wait(ctx)?;
    }
    let recording = Row::new("scoped dispatch recording", "ns", best(&k), best(&r));
    let pr = paired(device, (raw, ctx), fx, (pool, &seq), &p, rounds)?;
    super::note(format!(
        "scoped dispatch recording, {}",
        pr.describe("scoped dispatch")
    ));

    // Round trips: one scoped dispatch, timings read back.
    let m = if opts.quick { 100 } else { 1_000 };
    let (mut kt, mut rt) = (Vec::with_capacity(m), Vec::with_capacity(m));
    let mut sink = 0u64;
    for _ in 0..m {
        let t0 = Instant::now();
        let ((), t) = device.execute_timed("bench", |rec| {
            rec.scope("dispatch", |rec| {
                rec.bind_pipeline(&fx.pipes[0])?;
                rec.bind_set(0, &fx.sets[0])?;
                rec.push(0, &p)?;
                Ok(rec.dispatch(1, 1, 1)?)
            })
        })?;
        kt.push(ns_since(t0) / 1e3);
        sink = sink.wrapping_add(t.gpu_ns);
        let t0 = Instant::now();
        // SAFETY: as above; the two queries are not in use.
        unsafe { d.reset_query_pool(pool, 0, 2) };
        raw.begin(ctx)?;
        // SAFETY: as in the recording loop.
        unsafe {
            d.cmd_bind_pipeline(ctx.cb, vk::PipelineBindPoint::COMPUTE, fx.r_pipes[0]);
            d.cmd_bind_descriptor_sets(
                ctx.cb,
                vk::PipelineBindPoint::COMPUTE,
                fx.r_layout,
                0,
                &[fx.r_sets[0]],
                &[],
            );
            d.cmd_push_constants(
                ctx.cb,
                fx.r_layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytemuck::bytes_of(&p),
            );
            d.cmd_write_timestamp2(ctx.cb, vk::PipelineStageFlags2::ALL_COMMANDS, pool, 0);
            d.cmd_dispatch(ctx.cb, 1, 1, 1);
            d.cmd_write_timestamp2(ctx.cb, vk::PipelineStageFlags2::ALL_COMMANDS, pool, 1);
        }
        raw.submit_wait(ctx)?;
        let mut ticks = [0u64; 2];
        // SAFETY: both queries were written by the completed submission.
        unsafe { d.get_query_pool_results(pool, 0, &mut ticks, vk::QueryResultFlags::TYPE_64)? };
        rt.push(ns_since(t0) / 1e3);
        sink = sink.wrapping_add(ticks[1].wrapping_sub(ticks[0]));
    }
    std::hint::black_box(sink);
    let round_trip = Row::new(
        "timed round trip median",
        "us",
        median(&mut kt),
        median(&mut rt),
    );
    Ok(vec![recording, round_trip])
}

/// The scoped row's stream in pairs of chunks (`dispatch::paired`): kiln's scoped
/// dispatches and raw's timestamped ones side by side in each round, raw's queries in
/// `pool` (2 per dispatch, reset on the host before each round).
fn paired(
    device: &Device,
    (raw, ctx): (&Raw, &Ctx),
    fx: &Fixture,
    (pool, seq): (vk::QueryPool, &[(usize, usize)]),
    p: &Params,
    rounds: usize,
) -> BenchResult<Paired> {
    let d = &raw.d;
    pairs(
        device,
        (raw, ctx),
        (seq.len(), rounds),
        || {
            // SAFETY: no submission uses the pool's queries (the last one was waited for).
            unsafe { d.reset_query_pool(pool, 0, 2 * seq.len() as u32) };
            Ok(())
        },
        |rec, part| {
            if part.start == 0 {
                rec.manual_barriers();
            }
            for &d in &seq[part] {
                rec.scope("dispatch", |rec| fx.kiln_dispatch(rec, d, p))?;
            }
            Ok(())
        },
        |part| raw_scoped((raw, ctx), fx, (pool, seq), part, p),
    )
}

/// raw's side of the scoped stream: dispatches `part` of `seq`, each between two
/// timestamps (queries `2 i` and `2 i + 1` of `pool`, reset on the host before the round).
#[inline(always)]
fn raw_scoped(
    (raw, ctx): (&Raw, &Ctx),
    fx: &Fixture,
    (pool, seq): (vk::QueryPool, &[(usize, usize)]),
    part: std::ops::Range<usize>,
    p: &Params,
) {
    let d = &raw.d;
    let all = vk::PipelineStageFlags2::ALL_COMMANDS;
    for i in part {
        let q = 2 * i as u32;
        fx.raw_bind(raw, ctx.cb, seq[i], p);
        // SAFETY: `cb` is recording with the pipeline and set bound; the pool is alive;
        // each query was reset and is written once in the round.
        unsafe {
            d.cmd_write_timestamp2(ctx.cb, all, pool, q);
            d.cmd_dispatch(ctx.cb, 1, 1, 1);
            d.cmd_write_timestamp2(ctx.cb, all, pool, q + 1);
        }
    }
}
