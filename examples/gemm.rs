//! GEMM C = A·B (fp32 accumulate) on every path the device has: the fp32 shared-memory
//! tiled kernel everywhere, and the cooperative-matrix kernels (fp16 and bf16 in; direct
//! loads, and shared-memory staging in each tile shape of `gemm::SMEM_SHAPES` the device
//! accepts; workgroup-scope matrices where it has VK_NV_cooperative_matrix2) where the
//! device has VK_KHR_cooperative_matrix (`examples/common/gemm.rs` says
//! how the shapes are picked).
//!
//! Usage: `cargo run --release -p kiln-examples --example gemm` checks every variant at
//! 512×256×320 (M×N×K; rounded up to the variant's tile) against the CPU reference and
//! prints one line per variant: name, M N K, TFLOP/s, max error, ok/FAIL. The tolerance is
//! 0: the inputs are integers in −4..4, so every sum of products is exact in fp32, fp16
//! and bf16 included. `--bench [N]` then times N×N×N (default 8192, 5 products per
//! submission after a warm-up, best of 3 submissions) for each variant that passed, and
//! checks 256 sampled entries of C exactly; `--json` adds the bench results as one JSON
//! array. `--peak` runs the cooperative-matrix ceiling (`examples/common/coopmat_peak.rs`):
//! one line per fragment configuration and accumulator block, TFLOP/s and whether the sums
//! were exact. The `coopmat-smem-noglobal` variants are the shared-memory kernels with no
//! global-memory traffic in their loop (each step multiplies the first K slice again,
//! checked against that product): between the ceiling and the GEMM, they show what the
//! shared-memory-fed loop alone costs. A variant that fails its check is reported and skipped; the exit status is
//! then 1. Cooperative matrices need `KILN_VALIDATION=0` where the validation layer
//! predates them (the Debian layer 1.3.239).
use std::time::Instant;

use kiln::vk;
use kiln_examples::coopmat_peak::{self, PEAK_BLOCKS};
use kiln_examples::gemm::{self, Gemm, Precision, SMEM_SHAPES};

/// Every variant the device can run, the riskiest last (a kernel that loses the device
/// then costs only the variants after it): tiled; direct and shared-memory (fp16, bf16);
/// the no-global shared-memory variants; the workgroup-scope ones.
fn paths(device: &kiln::Device) -> kiln::Result<Vec<Gemm>> {
    let mut out = vec![gemm::tiled(device)?];
    let mut precisions = Vec::new();
    for p in [Precision::F16, Precision::Bf16] {
        match gemm::coopmat_config(device, p) {
            Ok(_) => precisions.push(p),
            Err(why) => eprintln!("gemm: no cooperative-matrix {p:?} paths: {why}"),
        }
    }
    for &p in &precisions {
        match gemm::coopmat(device, p) {
            Ok(Ok(g)) => out.push(g),
            Ok(Err(why)) => eprintln!("gemm: no cooperative-matrix {p:?} path: {why}"),
            Err(e) => println!("gemm coopmat {p:?}: pipeline creation FAIL: {e}"),
        }
        smem(device, p, true, &mut out);
    }
    for &p in &precisions {
        smem(device, p, false, &mut out);
    }
    for &p in &precisions {
        for tile in gemm::WG_TILES {
            match gemm::coopmat_wg(device, p, tile) {
                Ok(Ok(g)) => out.push(g),
                Ok(Err(why)) => eprintln!("gemm: no coopmat-wg {p:?} {tile:?}: {why}"),
                Err(e) => println!("gemm coopmat-wg {p:?} {tile:?}: pipeline creation FAIL: {e}"),
            }
        }
    }
    Ok(out)
}

/// The shared-memory variants of `p` (streaming or no-global) into `out`.
fn smem(device: &kiln::Device, p: Precision, stream: bool, out: &mut Vec<Gemm>) {
    for shape in SMEM_SHAPES {
        match gemm::coopmat_smem_with(device, p, shape, stream) {
            Ok(Ok(g)) => out.push(g),
            Ok(Err(why)) => eprintln!("gemm: no coopmat-smem {p:?} {shape:?}: {why}"),
            Err(e) => println!(
                "gemm coopmat-smem {p:?} {shape:?} stream {stream}: pipeline creation FAIL: {e}"
            ),
        }
    }
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

/// `--peak`: the cooperative-matrix ceiling for every configuration and block.
fn peak(device: &kiln::Device) -> Result<bool, Box<dyn std::error::Error>> {
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
        let ok = peak(&device)?;
        if !ok {
            std::process::exit(1);
        }
        return Ok(());
    }
    let mut failed = false;
    let mut passed = Vec::new();
    for g in paths(&device)? {
        match check(&device, &g) {
            Ok(true) => passed.push(g),
            Ok(false) => failed = true,
            Err(e) => {
                println!("gemm {:<36} check FAIL: {e}", g.path);
                failed = true;
            }
        }
    }
    if let Some(at) = bench_at {
        let n: u32 = args
            .get(at + 1)
            .filter(|s| !s.starts_with("--"))
            .map(|s| s.parse())
            .transpose()?
            .unwrap_or(8192);
        let len = n as usize * n as usize;
        // Small integers: every sum of products is exact in fp32 (|C| <= 16 n < 2^24).
        let a = gemm::inputs(len, 3, 1.0);
        let b = gemm::inputs(len, 4, 1.0);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let cb = device.storage_buffer::<f32>("C", len)?;
        let mut rows = Vec::new();
        // In `passed` order (riskiest last), the inputs uploaded once per input type.
        let mut inputs: Vec<(Precision, kiln::Buffer, kiln::Buffer)> = Vec::new();
        for g in &passed {
            let p = g.precision;
            if !inputs.iter().any(|(q, _, _)| *q == p) {
                let ab = device.buffer_from_slice("A", usage, &p.encode(&a))?;
                let bb = device.buffer_from_slice("B", usage, &p.encode(&b))?;
                inputs.push((p, ab, bb));
            }
        }
        for g in &passed {
            let Some((_, ab, bb)) = inputs.iter().find(|(q, _, _)| *q == g.precision) else {
                continue;
            };
            match bench(&device, g, n, &a, &b, ab, bb, &cb) {
                Ok(t) => {
                    let ok = t.max_err == 0.0;
                    failed |= !ok;
                    println!(
                        "gemm {:<36} {n} {n} {n}: {:9.3} TFLOP/s  {:9.3} ms  max error {} \
                             ({} sampled entries)  {}",
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
    }
    if failed {
        std::process::exit(1);
    }
    Ok(())
}
