//! The raw-ash side of `tracker_profile` and `descriptor_profile`, for instruction counts:
//! the same streams as the bench's raw rows (`kiln-bench/src/dispatch.rs`, `scopes.rs`,
//! `descriptor_sets.rs`) recorded with plain `ash` calls on kiln's device, so that
//! callgrind counts raw's own loop (the ash wrappers and the loop, in this binary) apart
//! from the driver's and libc's, the way the kiln examples are counted.
//!
//! `RAW_MODE=plain|automatic|scoped|descriptor` (one per process);
//! `KILN_VALIDATION=0 valgrind --tool=callgrind --toggle-collect='*raw_profile::measured*'
//! target/release/examples/raw_profile 2` (ops: 20 000 dispatches, or 8 000 sets with 4
//! rounds). `automatic` records a global barrier with kiln's masks before exactly the
//! dispatches kiln's automatic mode recorded one before (found by a kiln pass, not
//! counted): the raw side of the bench's automatic row. Prints the thread CPU time of the
//! recording per dispatch (best of the rounds and their mean; the submissions apart), for a
//! sampling profiler's shares (`scripts/gpu/profile.sh`).

use ash::vk;
use kiln::Device;
use kiln_bench::raw::{BarrierMasks, Ctx, Raw};

const TYPES: [vk::DescriptorType; 6] = kiln_bench::SIX_TYPES;
const SETS: usize = 2_000;

/// Raw objects of the dispatch fixture.
struct Fx {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipes: Vec<vk::Pipeline>,
    sets: Vec<vk::DescriptorSet>,
    bufs: Vec<vk::Buffer>,
    /// Per dispatch of the stream: the barrier kiln recorded before it, if any.
    flags: Vec<Option<BarrierMasks>>,
    seq: Vec<(usize, usize)>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds = kiln_bench::rounds_arg(30);
    let device = Device::new()?;
    let raw = Raw::new(&device);
    let module = kiln::include_spirv!("six.comp")?;
    let kbufs = kiln_bench::six_buffers(&device, "raw profile six", 12)?;
    let bufs: Vec<vk::Buffer> = kbufs.iter().map(|b| b.raw()).collect();
    let set_layout = raw.set_layout(&TYPES)?;
    let layout = raw.pipeline_layout(set_layout, 16)?;
    let pipes = (0..4u32)
        .map(|v| raw.pipeline(vk::PipelineCache::null(), layout, module.words(), &[(0, v)]))
        .collect::<Result<Vec<_>, _>>()?;
    let sizes = [
        vk::DescriptorPoolSize {
            ty: vk::DescriptorType::UNIFORM_BUFFER,
            descriptor_count: 2 * SETS as u32,
        },
        vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 4 * SETS as u32,
        },
    ];
    let fixed = raw.pool(&sizes[..], 8)?;
    let mut sets = Vec::new();
    for s in 0..8 {
        let set = raw.alloc_set(fixed, set_layout)?;
        raw.write_set(set, &TYPES, &six(&bufs, s));
        sets.push(set);
    }
    let seq = kiln_bench::profile_stream(10_000);
    let flags = {
        let (pipes, sets) = kiln_bench::six_pipelines_and_sets(&device, &module, &kbufs)?;
        kiln_bench::barrier_places(&device, (&pipes, &sets), &seq, &[u32::MAX, 0, 0, 0])?
    };
    let fx = Fx {
        set_layout,
        layout,
        pipes,
        sets,
        bufs,
        flags,
        seq,
    };
    let ctx = raw.ctx()?;
    let mode = std::env::var("RAW_MODE").unwrap_or_else(|_| "plain".into());
    let pool = raw.pool(&sizes, SETS as u32)?;
    let queries = {
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(2 * fx.seq.len() as u32);
        // SAFETY: a plain create on kiln's live device; destroyed below.
        unsafe { raw.d.create_query_pool(&info, None) }?
    };
    let (mut best, mut sum) = (f64::MAX, 0.0);
    // The descriptor mode's unit is a set (`SETS` of them a round), the others' a dispatch
    // of the stream.
    let (ops, unit) = if mode == "descriptor" {
        (SETS, "set")
    } else {
        (fx.seq.len(), "dispatch")
    };
    for _ in 0..rounds {
        if mode == "descriptor" {
            // SAFETY: the last submission using the pool's sets was waited on.
            unsafe {
                raw.d
                    .reset_descriptor_pool(pool, vk::DescriptorPoolResetFlags::empty())?
            };
        }
        raw.begin(&ctx)?;
        if mode == "scoped" {
            // SAFETY: `cb` is recording, outside a render pass.
            unsafe {
                raw.d
                    .cmd_reset_query_pool(ctx.cb, queries, 0, 2 * fx.seq.len() as u32)
            };
        }
        let t0 = kiln_bench::thread_cpu_ns();
        measured(&raw, &fx, &ctx, &mode, pool, queries)?;
        let t = (kiln_bench::thread_cpu_ns() - t0) / ops as f64;
        (best, sum) = (best.min(t), sum + t);
        raw.submit_wait(&ctx)?;
    }
    // SAFETY: every submission was waited on.
    unsafe {
        raw.d.destroy_query_pool(queries, None);
        raw.d.destroy_descriptor_pool(pool, None);
        raw.d.destroy_descriptor_pool(fixed, None);
        for p in &fx.pipes {
            raw.d.destroy_pipeline(*p, None);
        }
        raw.d.destroy_pipeline_layout(fx.layout, None);
        raw.d.destroy_descriptor_set_layout(fx.set_layout, None);
    }
    raw.drop_ctx(ctx);
    let mean = sum / rounds.max(1) as f64;
    println!(
        "raw {mode:30} {best:8.1} ns per {unit} (thread CPU, best of {rounds}; mean {mean:.1})"
    );
    Ok(())
}

/// The six buffers of set `s` (as `kiln_bench::write_six` writes them).
fn six(bufs: &[vk::Buffer], s: usize) -> [vk::Buffer; 6] {
    std::array::from_fn(|j| bufs[(s + j) % bufs.len()])
}

/// The counted part: one round of `mode`'s stream, recorded into `ctx.cb`.
#[inline(never)]
fn measured(
    raw: &Raw,
    fx: &Fx,
    ctx: &Ctx,
    mode: &str,
    pool: vk::DescriptorPool,
    queries: vk::QueryPool,
) -> Result<(), Box<dyn std::error::Error>> {
    let d = &raw.d;
    let p = [u32::MAX, 0, 0, 0];
    let compute = vk::PipelineBindPoint::COMPUTE;
    if mode == "descriptor" {
        let mut sets = Vec::with_capacity(SETS);
        for i in 0..SETS {
            let s = raw.alloc_set(pool, fx.set_layout)?;
            raw.write_set(s, &TYPES, &six(&fx.bufs, i));
            sets.push(s);
        }
        // SAFETY: `cb` is recording; the pipeline is alive.
        unsafe { d.cmd_bind_pipeline(ctx.cb, compute, fx.pipes[0]) };
        for s in &sets {
            // SAFETY: `cb` is recording; each set is fully written and compatible.
            unsafe { d.cmd_bind_descriptor_sets(ctx.cb, compute, fx.layout, 0, &[*s], &[]) };
        }
        return Ok(());
    }
    let (automatic, scoped) = (mode == "automatic", mode == "scoped");
    for (k, (&(pi, si), &barrier)) in fx.seq.iter().zip(&fx.flags).enumerate() {
        // SAFETY: `cb` is recording; pipeline, layout and set are alive and compatible.
        unsafe {
            d.cmd_bind_pipeline(ctx.cb, compute, fx.pipes[pi]);
            d.cmd_bind_descriptor_sets(ctx.cb, compute, fx.layout, 0, &[fx.sets[si]], &[]);
            let bytes: &[u8] = bytemuck::cast_slice(&p);
            d.cmd_push_constants(ctx.cb, fx.layout, vk::ShaderStageFlags::COMPUTE, 0, bytes);
        }
        if let (true, Some(masks)) = (automatic, barrier) {
            raw.barrier_masks(ctx.cb, masks);
        }
        let q = 2 * k as u32;
        let all = vk::PipelineStageFlags2::ALL_COMMANDS;
        // SAFETY: as above; the queries were reset at the recording's start.
        unsafe {
            if scoped {
                d.cmd_write_timestamp2(ctx.cb, all, queries, q);
            }
            d.cmd_dispatch(ctx.cb, 1, 1, 1);
            if scoped {
                d.cmd_write_timestamp2(ctx.cb, all, queries, q + 1);
            }
        }
    }
    Ok(())
}
