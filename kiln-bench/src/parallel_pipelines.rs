//! Issue 28's row: 24 specializations of `compile_me.comp` created one after another
//! against the same 24 created at once on several threads. kiln: `compute_pipeline_with`
//! in a loop, then `compute_pipeline_async` 24 times and every handle waited (the device's
//! bounded pool of pipeline threads, its persisted `VkPipelineCache` shared); raw: one
//! `vkCreateComputePipelines` after another into one empty `VkPipelineCache`, then the same
//! calls spread over as many threads as kiln's pool has (the cache shared: the driver
//! synchronizes it). Every creation is of a seed never created before in the process, so
//! no cache holds it; the drivers' disk caches are off for the whole bench.

use std::hint::black_box;
use std::time::Instant;

use ash::vk;
use kiln::{ComputePipelineDesc, Device, PendingPipeline, SpecValue};

use super::raw::Raw;
use super::{note, ns_since, BenchResult, Opts, Peer, Row};

/// Pipelines per measurement.
const N: u32 = 24;

/// kiln's pool size: the machine's parallelism, 8 at most (`pipeline/background.rs`).
fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
}

fn desc<'a>(
    module: &'a kiln::ShaderModule,
    spec: &'a [(u32, SpecValue); 2],
) -> ComputePipelineDesc<'a> {
    ComputePipelineDesc::new(module, "main").spec(spec)
}

fn spec(seed: u32) -> [(u32, SpecValue); 2] {
    [
        (0, SpecValue::U32(seed)),
        (1, SpecValue::F32(1.0 + seed as f32 * 1e-3)),
    ]
}

fn raw_spec(seed: u32) -> [(u32, u32); 2] {
    [(0, seed), (1, (1.0 + seed as f32 * 1e-3).to_bits())]
}

/// ms per pipeline: `N` kiln pipelines from `base`, one after another or on the pool.
fn kiln_side(
    device: &Device,
    module: &kiln::ShaderModule,
    base: u32,
    parallel: bool,
) -> BenchResult<f64> {
    let specs: Vec<_> = (base..base + N).map(spec).collect();
    let t = Instant::now();
    let pipes = if parallel {
        let pending = specs
            .iter()
            .map(|s| device.compute_pipeline_async(&desc(module, s)))
            .collect::<Result<Vec<_>, kiln::PipelineError>>()?;
        pending
            .into_iter()
            .map(PendingPipeline::wait)
            .collect::<Result<Vec<_>, kiln::PipelineError>>()?
    } else {
        specs
            .iter()
            .map(|s| device.compute_pipeline_with(&desc(module, s)))
            .collect::<Result<Vec<_>, kiln::PipelineError>>()?
    };
    let ms = ns_since(t) / 1e6 / N as f64;
    drop(black_box(pipes));
    Ok(ms)
}

/// ms per pipeline: `N` raw pipelines from `base` into `cache`, on `threads` threads.
fn raw_side(
    raw: &Raw,
    cache: vk::PipelineCache,
    layout: vk::PipelineLayout,
    words: &[u32],
    base: u32,
    threads: usize,
) -> BenchResult<f64> {
    let t = Instant::now();
    let made: Vec<Result<vk::Pipeline, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    (base..base + N)
                        .skip(k)
                        .step_by(threads)
                        .map(|seed| {
                            raw.pipeline(cache, layout, words, &raw_spec(seed))
                                .map_err(|e| e.to_string())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err("a thread panicked".into())])
            })
            .collect()
    });
    let ms = ns_since(t) / 1e6 / N as f64;
    let mut err = None;
    for p in made {
        match p {
            // SAFETY: the pipeline was never used.
            Ok(p) => unsafe { raw.d.destroy_pipeline(p, None) },
            Err(e) => err = Some(e),
        }
    }
    match err {
        Some(e) => Err(e.into()),
        None => Ok(ms),
    }
}

/// The rows: one after another, in parallel, and the speedup of each side.
pub fn rows(
    device: &Device,
    raw: &Raw,
    _peer: Option<&mut Peer>,
    _opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let module = kiln::include_spirv!("compile_me.comp")?;
    let words = module.words();
    let sl = raw.set_layout(&[vk::DescriptorType::STORAGE_BUFFER])?;
    let layout = raw.pipeline_layout(sl, 0)?;
    let empty = vk::PipelineCacheCreateInfo::default();
    // SAFETY: plain create; destroyed below.
    let cache = unsafe { raw.d.create_pipeline_cache(&empty, None) };
    let result = cache.map_err(Into::into).and_then(|cache| {
        let n = threads();
        note(format!(
            "pipelines in parallel: {N} specializations of compile_me.comp, {n} threads \
             (kiln's pool and raw's), {} hardware threads",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        ));
        let serial_k = kiln_side(device, &module, 20_000, false)?;
        let serial_r = raw_side(raw, cache, layout, words, 30_000, 1)?;
        let par_k = kiln_side(device, &module, 20_100, true)?;
        let par_r = raw_side(raw, cache, layout, words, 30_100, n)?;
        Ok::<_, Box<dyn std::error::Error>>((cache, serial_k, serial_r, par_k, par_r))
    });
    // SAFETY: no creation is in flight (every thread joined); the objects are unused.
    unsafe {
        if let Ok((cache, ..)) = &result {
            raw.d.destroy_pipeline_cache(*cache, None);
        }
        raw.d.destroy_pipeline_layout(layout, None);
        raw.d.destroy_descriptor_set_layout(sl, None);
    }
    let (_, serial_k, serial_r, par_k, par_r) = result?;
    Ok(vec![
        Row::new(
            "pipeline create 24, one after another",
            "ms",
            serial_k,
            serial_r,
        ),
        Row::new("pipeline create 24, in parallel", "ms", par_k, par_r),
        Row::new(
            "pipeline parallel speedup (one after another/parallel)",
            "x",
            serial_k / par_k,
            serial_r / par_r,
        ),
    ])
}
