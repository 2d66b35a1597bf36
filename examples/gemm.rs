//! GEMM C = A·B (fp32 accumulate) on every path the device has: the fp32 shared-memory
//! tiled kernel everywhere, and the cooperative-matrix kernels (fp16 and bf16 in; direct
//! loads, and shared-memory staging in each tile shape of `gemm::SMEM_SHAPES` the device
//! accepts; workgroup-scope matrices where it has VK_NV_cooperative_matrix2) where the
//! device has VK_KHR_cooperative_matrix (`examples/common/gemm.rs` says
//! how the shapes are picked).
//!
//! Variants are built, checked and timed one after another, most important first, each
//! printing its lines as it goes (a pipeline's creation time too: the driver's compile of
//! these kernels takes seconds); `--only TEXT` keeps the variants whose name contains TEXT (or
//! any of `A|B|...`),
//! `--budget S` (default 70) starts no new variant after S seconds.
//!
//! Usage: `cargo run --release -p kiln-examples --example gemm` checks every variant at
//! 512×256×320 (M×N×K; rounded up to the variant's tile) against the CPU reference and
//! prints one line per variant: name, M N K, TFLOP/s, max error, ok/FAIL. The tolerance is
//! 0: the inputs are integers in −4..4, so every sum of products is exact in fp32, fp16
//! and bf16 included. `--bench [N]` then times N×N×N (default 8192, 5 products per
//! submission after a warm-up, best of 3 submissions) for each variant that passed, and
//! checks 256 sampled entries of C exactly (`--cublas fp16=X,bf16=Y` adds each line's ratio to
//! cuBLAS's TFLOP/s of that input type, measured in the same lease); `--json` adds the bench results as one JSON
//! array. `--peak` runs the cooperative-matrix ceiling (`examples/common/coopmat_peak.rs`):
//! one line per fragment configuration and accumulator block, TFLOP/s and whether the sums
//! were exact. The `coopmat-smem-noglobal` variants are the shared-memory kernels with no
//! global-memory traffic in their loop (each step multiplies the first K slice again,
//! checked against that product): between the ceiling and the GEMM, they show what the
//! shared-memory-fed loop alone costs; `coopmat-tensor-noglobal` is the same for the
//! tensor-addressing kernel (what its workgroup-scope multiply-adds cost alone). A variant that fails its check is reported and skipped; the exit status is
//! then 1. Cooperative matrices need `KILN_VALIDATION=0` where the validation layer
//! predates them (the Debian layer 1.3.239).
//!
//! `--stats` builds every variant it would run (`--only`, `--budget` as above; with
//! `--peak`, every ceiling kernel) with its pipeline capturing statistics
//! (VK_KHR_pipeline_executable_properties) and prints one line per variant instead of
//! checking and timing it: the driver's statistics as `name=value` (registers, shared
//! memory, spills, … as the driver names them) and the workgroups per SM an H200 fits by
//! those registers, that shared memory and the workgroup's threads
//! (`examples/common/gemm_stats.rs`). On a device without the extension each line is the
//! `KILN-E267` that creating the pipeline returned.
use std::time::Instant;

use kiln::vk;
use kiln_examples::coopmat_peak::{self, PEAK_BLOCKS};
use kiln_examples::gemm::{self, Gemm, Precision, SmemShape, TensorVariant, SMEM_SHAPES};
use kiln_examples::gemm_stats;

/// One variant to build: described before its pipeline exists, so that it can be
/// filtered (`--only`), skipped when the time budget is spent, and named in progress lines.
#[derive(Clone, Copy)]
enum Spec {
    Tiled,
    Direct(Precision),
    /// Shape, stream (false: the no-global variant), workgroup order group, loads ahead.
    Smem(Precision, SmemShape, bool, u32, u32),
    /// Tile, aligned strides.
    Wg(Precision, [u32; 3], bool),
    Tensor(Precision, TensorVariant),
    /// The no-global shared-memory kernel with one half of its staging.
    SmemPart(Precision, SmemShape, gemm::SmemPart),
}

fn pname(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "fp32",
        Precision::F16 => "fp16",
        Precision::Bf16 => "bf16",
    }
}

impl Spec {
    fn name(&self) -> String {
        match *self {
            Spec::Tiled => "tiled fp32".into(),
            Spec::Direct(p) => format!("coopmat {}", pname(p)),
            Spec::Smem(p, s, stream, group, ahead) => gemm::smem_name(p, s, stream, group, ahead),
            Spec::Wg(p, [m, n, k], align) => format!(
                "coopmat-wg {} {m}x{n}x{k}{}",
                pname(p),
                if align { " align" } else { "" }
            ),
            Spec::Tensor(p, v) => v.name(p),
            Spec::SmemPart(p, s, part) => gemm::smem_part_name(p, s, part),
        }
    }

    /// The pipeline, `Ok(None)` when the device cannot run it (the reason on stderr).
    fn build(&self, device: &kiln::Device) -> kiln::Result<Option<Gemm>> {
        let r = match *self {
            Spec::Tiled => return gemm::tiled(device).map(Some),
            Spec::Direct(p) => gemm::coopmat(device, p)?,
            Spec::Smem(p, s, stream, group, ahead) => {
                gemm::coopmat_smem_grouped(device, p, s, stream, group, ahead)?
            }
            Spec::Wg(p, tile, align) => gemm::coopmat_wg_with(device, p, tile, align)?,
            Spec::Tensor(p, v) => gemm::coopmat_tensor(device, p, v)?,
            Spec::SmemPart(p, s, part) => gemm::coopmat_smem_part(device, p, s, part)?,
        };
        Ok(
            r.map_err(|why| eprintln!("gemm: no {}: {why}", self.name()))
                .ok(),
        )
    }
}

/// Every variant, most important first (a kernel that hangs the compiler or loses the
/// device then costs only the variants after it): tiled; the tensor-addressing kernel with
/// aligned strides (bf16: the 128-row tiles, clamped or not, each with its no-global form;
/// unrolled by 2; row-major; one unaligned for comparison; fp16); the shared-memory
/// kernel's first shape and the smallest workgroup-scope tile, fp16 and bf16 (and, bf16,
/// two workgroup-scope tiles with aligned strides); the direct kernel; the other
/// tensor-addressing forms of run D (unaligned tiles, grouped, loads first, clamped); the
/// other shared-memory shapes, row-major, then (bf16) grouped by 8 and 16 rows and with the
/// loads two steps ahead; (bf16) the 32x32 subgroup tiles for occupancy
/// (`gemm::OCCUPANCY_SHAPES`); the no-global variants, and (bf16) with loads from two cached
/// slices plus stores, the stores alone, the global loads alone; the other workgroup-scope
/// tiles.
fn specs(device: &kiln::Device) -> Vec<Spec> {
    let mut ps = Vec::new();
    for p in [Precision::F16, Precision::Bf16] {
        match gemm::coopmat_config(device, p) {
            Ok(_) => ps.push(p),
            Err(why) => eprintln!("gemm: no cooperative-matrix {p:?} paths: {why}"),
        }
    }
    let bf16 = ps.contains(&Precision::Bf16);
    let fp16 = ps.contains(&Precision::F16);
    let tt = gemm::TENSOR_TILES;
    let tv = |tile, group, clamp, pipe| TensorVariant {
        tile,
        group,
        clamp,
        pipe,
        ..TensorVariant::plain(tile)
    };
    // Aligned strides (as llama.cpp's mul_mm_cm2), grouped by 8, clamped or not, unrolled.
    let aligned = |tile, clamp, unroll| TensorVariant {
        group: 8,
        clamp,
        align: true,
        unroll,
        ..TensorVariant::plain(tile)
    };
    let noglobal = |tile| TensorVariant {
        stream: false,
        align: true,
        ..TensorVariant::plain(tile)
    };
    let mut v = vec![Spec::Tiled];
    // Run D (01:26): aligned strides made 128x256x64 2.6x faster (166.5 TFLOP/s), the
    // Constant clamp mode 2.2x; 256-row tiles, two live A/B pairs (`pipe`) and the
    // loop-invariant no-global form collapsed to ~4.5 (spills). So: aligned, clamped or
    // not, the tiles with 128 rows first; the no-global form alternating two slices.
    if bf16 {
        let b = Precision::Bf16;
        v.push(Spec::Tensor(b, aligned(tt[0], false, 1)));
        v.push(Spec::Tensor(b, aligned(tt[0], true, 1)));
        v.push(Spec::Tensor(b, noglobal(tt[0])));
        v.push(Spec::Tensor(b, aligned(tt[1], false, 1)));
        v.push(Spec::Tensor(b, aligned(tt[1], true, 1)));
        v.push(Spec::Tensor(b, noglobal(tt[1])));
        v.push(Spec::Tensor(b, aligned(tt[2], false, 1)));
        v.push(Spec::Tensor(b, aligned(tt[2], true, 1)));
        v.push(Spec::Tensor(b, noglobal(tt[2])));
        v.push(Spec::Tensor(b, aligned(tt[5], false, 1)));
        v.push(Spec::Tensor(b, aligned(tt[5], true, 1)));
        v.push(Spec::Tensor(b, aligned(tt[4], true, 1)));
        v.push(Spec::Tensor(b, aligned(tt[0], true, 2)));
        v.push(Spec::Tensor(
            b,
            TensorVariant {
                group: 1,
                ..aligned(tt[0], true, 1)
            },
        ));
        v.push(Spec::Tensor(b, tv(tt[0], 1, false, false)));
    }
    if fp16 {
        v.push(Spec::Tensor(Precision::F16, aligned(tt[0], true, 1)));
        v.push(Spec::Tensor(Precision::F16, aligned(tt[0], false, 1)));
    }
    v.extend(
        ps.iter()
            .map(|&p| Spec::Smem(p, SMEM_SHAPES[0], true, 1, 1)),
    );
    v.extend(ps.iter().map(|&p| Spec::Wg(p, gemm::WG_TILES[0], false)));
    if bf16 {
        v.push(Spec::Wg(Precision::Bf16, gemm::WG_TILES[1], true));
        v.push(Spec::Wg(Precision::Bf16, gemm::WG_TILES[0], true));
    }
    v.extend(ps.iter().map(|&p| Spec::Direct(p)));
    if bf16 {
        for &t in &tt[1..] {
            v.push(Spec::Tensor(Precision::Bf16, tv(t, 1, false, false)));
            v.push(Spec::Tensor(Precision::Bf16, tv(t, 8, false, false)));
            v.push(Spec::Tensor(Precision::Bf16, tv(t, 8, false, true)));
        }
        v.push(Spec::Tensor(Precision::Bf16, tv(tt[0], 16, false, false)));
        v.push(Spec::Tensor(Precision::Bf16, tv(tt[0], 8, true, false)));
        v.push(Spec::Tensor(Precision::Bf16, tv(tt[1], 8, true, false)));
    }
    if fp16 {
        for &t in &tt[..3] {
            v.push(Spec::Tensor(Precision::F16, tv(t, 8, false, false)));
            v.push(Spec::Tensor(Precision::F16, tv(t, 8, false, true)));
        }
    }
    for &s in &SMEM_SHAPES[1..] {
        v.extend(ps.iter().map(|&p| Spec::Smem(p, s, true, 1, 1)));
    }
    // Grouped order, loads two steps ahead, both, bf16 (the target type): the best
    // row-major shape (128x256x16) first.
    for (group, ahead) in [(8, 1), (1, 2), (8, 2), (16, 1), (16, 2)] {
        for i in [2, 1, 3, 0] {
            if bf16 {
                v.push(Spec::Smem(
                    Precision::Bf16,
                    SMEM_SHAPES[i],
                    true,
                    group,
                    ahead,
                ));
            }
        }
    }
    // Occupancy (run F's statistics: the best streaming kernels run one workgroup of 8
    // warps per SM, limited by registers), bf16: 32x32 subgroup tiles, loads one and two
    // steps ahead, in the best order (g16); 128x64x32 w64x32 (162 registers at 128
    // invocations: 3 per SM) with loads two steps ahead; the no-global loop of the
    // 512-invocation shape.
    if bf16 {
        let b = Precision::Bf16;
        for s in gemm::OCCUPANCY_SHAPES {
            v.push(Spec::Smem(b, s, true, 16, 1));
            v.push(Spec::Smem(b, s, true, 16, 2));
        }
        v.push(Spec::Smem(b, SMEM_SHAPES[4], true, 16, 2));
        v.push(Spec::Smem(b, gemm::OCCUPANCY_SHAPES[0], false, 1, 1));
    }
    for &s in &SMEM_SHAPES[..3] {
        v.extend(ps.iter().map(|&p| Spec::Smem(p, s, false, 1, 1)));
    }
    // Where the shared-memory kernel's time goes, bf16: its best shapes with the global
    // loads alone and the shared-memory stores alone.
    if bf16 {
        for i in [2, 0, 3, 1] {
            for part in [
                gemm::SmemPart::CachedLoads,
                gemm::SmemPart::SharedStores,
                gemm::SmemPart::GlobalLoads,
            ] {
                v.push(Spec::SmemPart(Precision::Bf16, SMEM_SHAPES[i], part));
            }
        }
        v.push(Spec::Smem(Precision::Bf16, SMEM_SHAPES[3], false, 1, 1));
    }
    for &t in &gemm::WG_TILES[1..] {
        v.extend(ps.iter().map(|&p| Spec::Wg(p, t, false)));
    }
    v
}

fn round_up(x: u32, to: u32) -> u32 {
    x.div_ceil(to) * to
}

/// Checks `g` against the CPU reference at about 512×256×320; prints one line; true if
/// every element is exact.
fn check(device: &kiln::Device, g: &Gemm) -> Result<bool, Box<dyn std::error::Error>> {
    let dims = [
        round_up(512, g.tile[0]),
        round_up(256, g.tile[1]),
        round_up(320, g.k_step),
    ];
    let [m, n, k] = dims.map(|x| x as usize);
    let a = gemm::inputs(m * k, 1, 1.0);
    let b = gemm::inputs(k * n, 2, 1.0);
    let t0 = Instant::now();
    let c = g.run(device, &a, &b, dims)?;
    let secs = t0.elapsed().as_secs_f64();
    let want = g.expected(&a, &b, dims);
    let mut max_err = 0f32;
    let mut bad = Vec::new();
    for (i, (x, y)) in c.iter().zip(&want).enumerate() {
        let e = (x - y).abs();
        if e > 0.0 || x.is_nan() {
            max_err = max_err.max(if x.is_nan() { f32::INFINITY } else { e });
            if bad.len() < 4 {
                bad.push(format!("C[{}][{}] = {x} want {y}", i / n, i % n));
            }
        }
    }
    let nbad = c.iter().zip(&want).filter(|(x, y)| x != y).count();
    println!(
        "gemm {:<36} {m} {n} {k}: {:9.3} TFLOP/s (upload+run+readback)  max error {max_err}  {}{}",
        g.path,
        2.0 * (m * n * k) as f64 / secs / 1e12,
        if nbad == 0 { "ok" } else { "FAIL" },
        g.fragment
            .map(|f| format!(
                "  (fragment {}x{}x{}, tile {}x{})",
                f[0], f[1], f[2], g.tile[0], g.tile[1]
            ))
            .unwrap_or_default()
    );
    if nbad > 0 {
        println!(
            "  {nbad} of {} elements differ (tolerance 0, integer inputs): {}",
            c.len(),
            bad.join("; ")
        );
    }
    Ok(nbad == 0)
}

struct Timed {
    path: String,
    n: u32,
    ms: f64,
    tflops: f64,
    checked: usize,
    max_err: f32,
}

/// Times `g` at n³ on `ab`/`bb` (inputs `a`, `b` of `g.precision`), then checks 256
/// sampled entries of C against the CPU reference.
#[allow(clippy::too_many_arguments)]
fn bench(
    device: &kiln::Device,
    g: &Gemm,
    n: u32,
    a: &[f32],
    b: &[f32],
    ab: &kiln::Buffer,
    bb: &kiln::Buffer,
    cb: &kiln::Buffer,
) -> Result<Timed, Box<dyn std::error::Error>> {
    let dims = [n, n, n];
    g.check(n, n, n)?;
    let set = g.set(ab, bb, cb)?;
    let reps = 5;
    device.execute(|r| g.record(r, &set, dims))?; // warm-up
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t0 = Instant::now();
        device.execute(|r| {
            for _ in 0..reps {
                g.record(r, &set, dims)?;
            }
            Ok(())
        })?;
        best = best.min(t0.elapsed().as_secs_f64() / reps as f64);
    }
    let c: Vec<f32> = cb.read()?;
    let mut max_err = 0f32;
    for s in 0..256usize {
        let (i, j) = ((s * 7919) % n as usize, (s * 104_729 + 13) % n as usize);
        let want = g.expected_at(a, b, dims, i, j);
        let got = c[i * n as usize + j];
        let e = if got.is_nan() {
            f32::INFINITY
        } else {
            (got - want).abs()
        };
        if e > max_err && max_err == 0.0 {
            println!(
                "  {}: C[{i}][{j}] = {got} but the CPU reference is {want}",
                g.path
            );
        }
        max_err = max_err.max(e);
    }
    let flops = 2.0 * (n as f64).powi(3);
    Ok(Timed {
        path: g.path.clone(),
        n,
        ms: best * 1e3,
        tflops: flops / best / 1e12,
        checked: 256,
        max_err,
    })
}

/// `--peak`: the cooperative-matrix ceiling for every configuration and block (with
/// `stats`, each kernel's statistics line instead of its run).
fn peak(device: &kiln::Device, stats: bool) -> Result<bool, Box<dyn std::error::Error>> {
    let mut all_ok = true;
    let (workgroups, iters) = (4096u32, 2048u32);
    for p in [Precision::F16, Precision::Bf16] {
        let configs = match coopmat_peak::peak_configs(device, p) {
            Ok(c) => c,
            Err(why) => {
                println!("peak {p:?}: not run: {why}");
                continue;
            }
        };
        for c in &configs {
            for block in PEAK_BLOCKS {
                let k = match coopmat_peak::peak(device, p, c, block) {
                    Ok(k) => k,
                    Err(e) => {
                        println!(
                            "peak {p:?} {}x{}x{} {block:?}: pipeline FAIL: {e}",
                            c.m, c.n, c.k
                        );
                        all_ok = false;
                        continue;
                    }
                };
                if stats {
                    println!("{}", gemm_stats::stats_line(&k.name, k.pipeline(), Some(0)));
                    continue;
                }
                let r = k.run(device, workgroups, iters, 3)?;
                let ok = r.wrong == 0;
                all_ok &= ok;
                println!(
                    "{:<32} {workgroups} workgroups x {} subgroups x {iters} iters: {:8.3} ms \
                     {:9.3} TFLOP/s  sums {} (C[0] = {} want {}, {} wrong)",
                    k.name,
                    coopmat_peak::PEAK_SUBGROUPS,
                    r.ms,
                    r.tflops,
                    if ok { "ok" } else { "FAIL" },
                    r.first.0,
                    r.first.1,
                    r.wrong
                );
            }
        }
    }
    Ok(all_ok)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let bench_at = args.iter().position(|a| a == "--bench");
    let stats = args.iter().any(|a| a == "--stats");
    gemm_stats::capture_statistics(stats);
    let device = kiln::Device::new()?;
    eprintln!("gemm on {}", device.info());
    let props = device.compute_properties();
    eprintln!(
        "gemm: subgroup size {}, maxComputeSharedMemorySize {} bytes, cooperative-matrix \
         configurations {:?}",
        props.subgroup_size,
        props.max_compute_shared_memory_size,
        props
            .cooperative_matrix
            .iter()
            .map(|c| format!(
                "{}x{}x{} {:?}x{:?}+{:?}->{:?} {:?}",
                c.m, c.n, c.k, c.a_type, c.b_type, c.c_type, c.result_type, c.scope
            ))
            .collect::<Vec<_>>()
    );
    let cm2 = &props.cooperative_matrix2;
    eprintln!(
        "gemm: VK_NV_cooperative_matrix2 features {:?}; workgroup-scope max workgroup {}, \
         flexible max dimension {}, reserved shared memory {} bytes; flexible configurations {:?}",
        device.features().cooperative_matrix2,
        cm2.workgroup_scope_max_workgroup_size,
        cm2.flexible_dimensions_max_dimension,
        cm2.workgroup_scope_reserved_shared_memory,
        cm2.flexible_dimensions
            .iter()
            .map(|c| format!(
                "gran {}x{}x{} {:?}x{:?}+{:?}->{:?} {:?} wg {}",
                c.m_granularity,
                c.n_granularity,
                c.k_granularity,
                c.a_type,
                c.b_type,
                c.c_type,
                c.result_type,
                c.scope,
                c.workgroup_invocations
            ))
            .collect::<Vec<_>>()
    );
    if args.iter().any(|a| a == "--peak") {
        let ok = peak(&device, stats)?;
        if !ok {
            std::process::exit(1);
        }
        return Ok(());
    }
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let budget: f64 = args
        .iter()
        .position(|a| a == "--budget")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(70.0);
    let n: Option<u32> = match bench_at {
        None => None,
        Some(at) => Some(
            args.get(at + 1)
                .filter(|s| !s.starts_with("--"))
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(8192),
        ),
    };
    // `--cublas fp16=887.5,bf16=860.7,fp32=51.1`: cuBLAS's TFLOP/s measured in the same lease
    // (scripts/cuda_gemm.py), for the ratio on each bench line.
    let cublas: Vec<(String, f64)> = args
        .iter()
        .position(|a| a == "--cublas")
        .and_then(|i| args.get(i + 1))
        .map(|s| {
            s.split(',')
                .filter_map(|kv| kv.split_once('='))
                .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                .collect()
        })
        .unwrap_or_default();
    let started = Instant::now();
    let mut failed = false;
    let mut rows = Vec::new();
    // The N×N inputs (small integers: every sum of products is exact in fp32, |C| <= 16 N
    // < 2^24), made once, uploaded once per input type.
    let big = n.map(|n| {
        let len = n as usize * n as usize;
        (gemm::inputs(len, 3, 1.0), gemm::inputs(len, 4, 1.0))
    });
    let mut uploaded: Vec<(Precision, kiln::Buffer, kiln::Buffer)> = Vec::new();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let cb = match n {
        Some(n) => Some(device.storage_buffer::<f32>("C", n as usize * n as usize)?),
        None => None,
    };
    for spec in specs(&device) {
        let name = spec.name();
        if only
            .as_ref()
            .is_some_and(|o| !o.split('|').any(|t| name.contains(t)))
        {
            continue;
        }
        if started.elapsed().as_secs_f64() > budget {
            println!("gemm {name:<36} skipped: the {budget} s budget is spent (--budget)");
            continue;
        }
        println!("gemm {name:<36} building the pipeline");
        let t0 = Instant::now();
        let g = match spec.build(&device) {
            Ok(Some(g)) => g,
            Ok(None) => continue,
            Err(e) if stats => {
                println!("stats {name:<40} FAIL: {e}");
                failed = true;
                continue;
            }
            Err(e) => {
                println!("gemm {name:<36} pipeline creation FAIL: {e}");
                failed = true;
                continue;
            }
        };
        if stats {
            println!(
                "{}",
                gemm_stats::stats_line(&g.path, g.pipeline(), g.shared_bytes)
            );
            continue;
        }
        println!(
            "gemm {:<36} pipeline created in {:.2} s",
            g.path,
            t0.elapsed().as_secs_f64()
        );
        match check(&device, &g) {
            Ok(true) => {}
            Ok(false) => {
                failed = true;
                continue;
            }
            Err(e) => {
                println!("gemm {:<36} check FAIL: {e}", g.path);
                failed = true;
                continue;
            }
        }
        let (Some(n), Some((a, b)), Some(cb)) = (n, &big, &cb) else {
            continue;
        };
        let p = g.precision;
        if !uploaded.iter().any(|(q, _, _)| *q == p) {
            let ab = device.buffer_from_slice("A", usage, &p.encode(a))?;
            let bb = device.buffer_from_slice("B", usage, &p.encode(b))?;
            uploaded.push((p, ab, bb));
        }
        let Some((_, ab, bb)) = uploaded.iter().find(|(q, _, _)| *q == p) else {
            continue;
        };
        match bench(&device, &g, n, a, b, ab, bb, cb) {
            Ok(t) => {
                let ok = t.max_err == 0.0;
                failed |= !ok;
                let ratio = cublas
                    .iter()
                    .find(|(k, _)| k == pname(p))
                    .map(|(k, c)| format!("  {:.3}x cuBLAS {k} ({c:.1})", t.tflops / c))
                    .unwrap_or_default();
                println!(
                    "gemm {:<36} {n} {n} {n}: {:9.3} TFLOP/s  {:9.3} ms  max error {} \
                     ({} sampled entries)  {}{ratio}",
                    t.path,
                    t.tflops,
                    t.ms,
                    t.max_err,
                    t.checked,
                    if ok { "ok" } else { "FAIL" }
                );
                rows.push(t);
            }
            Err(e) => {
                println!("gemm {:<36} {n}^3: FAIL: {e}", g.path);
                failed = true;
            }
        }
    }
    if json {
        let items: Vec<String> = rows
            .iter()
            .map(|t| {
                format!(
                    "{{\"path\": \"{}\", \"n\": {}, \"ms\": {:.4}, \"tflops\": {:.3}, \
                     \"checked\": {}, \"max_error\": {}}}",
                    t.path, t.n, t.ms, t.tflops, t.checked, t.max_err
                )
            })
            .collect();
        println!("[{}]", items.join(", "));
    }
    if failed {
        std::process::exit(1);
    }
    Ok(())
}
