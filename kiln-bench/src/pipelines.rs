//! Rows 4 and 5: pipeline creation cold vs warm through kiln's persisted pipeline cache,
//! and reflection + layout derivation over the SPIR-V corpus.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ash::vk;
use kiln::PipelineCacheStatus;
use kiln::{ComputePipelineDesc, Device, PipelineLayoutDesc, ShaderModule, SpecValue};

use super::raw::Raw;
use super::{best, ns_since, BenchResult, Opts, Peer, Row};

/// Specialization of `compile_me.comp` number `seed`: every seed is a distinct pipeline.
fn spec(seed: u32) -> [(u32, SpecValue); 2] {
    [
        (0, SpecValue::U32(seed)),
        (1, SpecValue::F32(1.0 + seed as f32 * 1e-3)),
    ]
}

fn raw_spec(seed: u32) -> [(u32, u32); 2] {
    [(0, seed), (1, (1.0 + seed as f32 * 1e-3).to_bits())]
}

/// The seed of the pipeline a fresh kiln device creates before it is timed: none of the
/// measured ones (those start at 1 000 and 5 000).
const WARM_UP_SEED: u32 = 999;

/// Creates `n` kiln pipelines (seeds from `base`) on `device`; ms per pipeline. One
/// pipeline of another seed is created first, untimed: the device's first creation also
/// makes the pipeline layout (kiln interns it; raw makes its layout before timing) and pays
/// the driver's first-use costs, which raw's long-lived device paid long before.
fn kiln_create(device: &Device, module: &ShaderModule, base: u32, n: u32) -> BenchResult<f64> {
    drop(black_box(device.compute_pipeline_with(
        &ComputePipelineDesc::new(module, "main").spec(&spec(WARM_UP_SEED)),
    )?));
    let t = Instant::now();
    let mut pipes = Vec::with_capacity(n as usize);
    for s in base..base + n {
        pipes.push(
            device
                .compute_pipeline_with(&ComputePipelineDesc::new(module, "main").spec(&spec(s)))?,
        );
    }
    let ms = ns_since(t) / 1e6 / n as f64;
    drop(black_box(pipes));
    Ok(ms)
}

fn raw_create(
    raw: &Raw,
    cache: vk::PipelineCache,
    layout: vk::PipelineLayout,
    words: &[u32],
    base: u32,
    n: u32,
) -> BenchResult<f64> {
    let t = Instant::now();
    let mut pipes = Vec::with_capacity(n as usize);
    let mut result = Ok(());
    for s in base..base + n {
        match raw.pipeline(cache, layout, words, &raw_spec(s)) {
            Ok(p) => pipes.push(p),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    let ms = ns_since(t) / 1e6 / n as f64;
    for p in pipes {
        // SAFETY: the pipeline was never used.
        unsafe { raw.d.destroy_pipeline(p, None) };
    }
    result.map(|_| ms)
}

/// Row 4. kiln: a new device (empty cache file) creates N pipelines (cold) and drops, which
/// writes the cache file; another new device loads it and creates the same N (warm). raw:
/// the same N other pipelines into an empty `VkPipelineCache` (cold), then into a new cache
/// made from its `vkGetPipelineCacheData` (warm). Finally both create their N again with no
/// cache at all, which shows whether the driver keeps compiled code in memory on its own.
pub fn creation_rows(
    _device: &Device,
    raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let n = if opts.quick { 6 } else { 24 };
    let module = kiln::include_spirv!("compile_me.comp")?;
    let words = module.words();
    let (kbase, rbase) = (1_000, 5_000);
    let sl = raw.set_layout(&[vk::DescriptorType::STORAGE_BUFFER])?;
    let layout = raw.pipeline_layout(sl, 0)?;
    let empty = vk::PipelineCacheCreateInfo::default();
    // SAFETY: plain create; destroyed below.
    let c1 = unsafe { raw.d.create_pipeline_cache(&empty, None) }?;
    let mut c2 = vk::PipelineCache::null();
    let result = (|| -> BenchResult<Vec<Row>> {
        if let Some(dir) = kiln::hooks::cache_dir() {
            let _ = std::fs::remove_dir_all(dir);
        }
        let d1 = Device::new()?;
        let cold_k = kiln_create(&d1, &module, kbase, n)?;
        drop(d1);
        let cold_r = raw_create(raw, c1, layout, words, rbase, n)?;

        let d2 = Device::new()?;
        if !matches!(
            d2.pipeline_cache_status(),
            PipelineCacheStatus::Loaded { .. }
        ) {
            eprintln!(
                "kiln bench: the pipeline cache was not loaded: {:?}",
                d2.pipeline_cache_status()
            );
        }
        let warm_k = kiln_create(&d2, &module, kbase, n)?;
        drop(d2);
        // SAFETY: `c1` is alive; the cache is internally synchronized.
        let data = unsafe { raw.d.get_pipeline_cache_data(c1) }?;
        let info = vk::PipelineCacheCreateInfo::default().initial_data(&data);
        // SAFETY: the data came from this device's own cache.
        c2 = unsafe { raw.d.create_pipeline_cache(&info, None) }?;
        let warm_r = raw_create(raw, c2, layout, words, rbase, n)?;

        std::env::set_var("KILN_PIPELINE_CACHE", "0");
        let d3 = Device::new();
        std::env::remove_var("KILN_PIPELINE_CACHE");
        let again_k = kiln_create(&d3?, &module, kbase, n)?;
        let again_r = raw_create(raw, vk::PipelineCache::null(), layout, words, rbase, n)?;
        Ok(vec![
            Row::new("pipeline create cold", "ms", cold_k, cold_r),
            Row::new("pipeline create warm", "ms", warm_k, warm_r),
            Row::new(
                "pipeline warm speedup (cold/warm)",
                "x",
                cold_k / warm_k,
                cold_r / warm_r,
            ),
            Row::new("pipeline re-create, no cache", "ms", again_k, again_r),
        ])
    })();
    // SAFETY: no pipeline creation is in flight; the caches and layouts are unused now.
    unsafe {
        raw.d.destroy_pipeline_cache(c1, None);
        if c2 != vk::PipelineCache::null() {
            raw.d.destroy_pipeline_cache(c2, None);
        }
        raw.d.destroy_pipeline_layout(layout, None);
        raw.d.destroy_descriptor_set_layout(sl, None);
    }
    result
}

/// The corpus folder: `$KILN_CORPUS`, else `../shared/corpus` from the working directory.
fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("KILN_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/corpus"));
    dir.is_dir().then_some(dir)
}

fn collect_spv(dir: &Path, out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect_spv(&p, out);
        } else if p.extension().is_some_and(|e| e == "spv") {
            if let Ok(b) = std::fs::read(&p) {
                out.push(b);
            }
        }
    }
}

/// Row 5: µs per module for kiln's checks + parse + reflection + pipeline-layout derivation
/// of every entry point; raw: rspirv's parse alone (the least any reflection must do).
/// Modules kiln rejects (the corpus has deliberately broken ones) are left out of both.
pub fn reflection_rows(
    _device: &Device,
    _raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let Some(dir) = corpus_dir() else {
        eprintln!("kiln bench: no corpus (set KILN_CORPUS); reflection row skipped");
        return Ok(Vec::new());
    };
    let mut all = Vec::new();
    collect_spv(&dir, &mut all);
    let good: Vec<Vec<u8>> = all
        .into_iter()
        .filter(|b| ShaderModule::from_bytes(b).is_ok())
        .collect();
    if good.is_empty() {
        return Err(format!("no readable .spv under {}", dir.display()).into());
    }
    let rounds = if opts.quick { 2 } else { 7 };
    let (mut k, mut r) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        for b in &good {
            let m = ShaderModule::from_bytes(b)?;
            for ep in &m.reflection().entry_points {
                let _ = black_box(PipelineLayoutDesc::from_entry_points(&[("corpus", ep)]));
            }
            black_box(m);
        }
        k.push(ns_since(t) / 1e3 / good.len() as f64);
        let t = Instant::now();
        for b in &good {
            let _ = black_box(rspirv::dr::load_bytes(b));
        }
        r.push(ns_since(t) / 1e3 / good.len() as f64);
    }
    eprintln!(
        "kiln bench: reflection over {} modules from {}",
        good.len(),
        dir.display()
    );
    Ok(vec![Row::new(
        "reflection + layout per module",
        "us",
        best(&k),
        best(&r),
    )])
}
