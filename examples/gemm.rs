//! GEMM C = A·B (fp32 accumulate) on every path the device has: the fp32 shared-memory
//! tiled kernel everywhere, and the cooperative-matrix kernels (fp16 and bf16 in) where the
//! device has VK_KHR_cooperative_matrix (`examples/common/gemm.rs` says how the tile shape
//! is picked).
//!
//! Usage: `cargo run --release -p kiln-examples --example gemm` checks 256×256×256 on each
//! path against the CPU reference (exact: the inputs are small integers);
//! `--bench [N]` times N×N×N (default 8192, 5 products per submission, best of 3
//! submissions) and prints TFLOP/s, then checks 256 entries of C exactly; `--json` prints
//! the bench results as one JSON array. Cooperative matrices need `KILN_VALIDATION=0`
//! where the validation layer predates them (the Debian layer 1.3.239).
use std::time::Instant;

use kiln::vk;
use kiln_examples::gemm::{self, Gemm, Precision};

fn paths(device: &kiln::Device) -> kiln::Result<Vec<Gemm>> {
    let mut out = vec![gemm::tiled(device)?];
    for p in [Precision::F16, Precision::Bf16] {
        match gemm::coopmat(device, p)? {
            Ok(g) => out.push(g),
            Err(why) => eprintln!("gemm: no cooperative-matrix {p:?} path: {why}"),
        }
    }
    Ok(out)
}

fn check(device: &kiln::Device, g: &Gemm) -> Result<(), Box<dyn std::error::Error>> {
    let dims = [256u32, 256, 256];
    let a = gemm::inputs(256 * 256, 1, 1.0);
    let b = gemm::inputs(256 * 256, 2, 1.0);
    let c = g.run(device, &a, &b, dims)?;
    let want = gemm::reference(&a, &b, dims);
    let bad = c.iter().zip(&want).filter(|(x, y)| x != y).count();
    println!(
        "gemm {:<13} 256x256x256: {} of {} elements exact{}",
        g.path,
        c.len() - bad,
        c.len(),
        g.fragment
            .map(|f| format!(
                " (fragment {}x{}x{}, tile {}x{})",
                f[0], f[1], f[2], g.tile[0], g.tile[1]
            ))
            .unwrap_or_default()
    );
    if bad > 0 {
        return Err(format!("{}: {bad} elements differ from the CPU reference", g.path).into());
    }
    Ok(())
}

struct Timed {
    path: &'static str,
    n: u32,
    ms: f64,
    tflops: f64,
    checked: usize,
}

fn bench(device: &kiln::Device, g: &Gemm, n: u32) -> Result<Timed, Box<dyn std::error::Error>> {
    let dims = [n, n, n];
    g.check(n, n, n)?;
    let len = n as usize * n as usize;
    // Small integers: every sum of products is exact in fp32 (|C| <= 16 n < 2^24).
    let a = gemm::inputs(len, 3, 1.0);
    let b = gemm::inputs(len, 4, 1.0);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let ab = device.buffer_from_slice("A", usage, &g.precision.encode(&a))?;
    let bb = device.buffer_from_slice("B", usage, &g.precision.encode(&b))?;
    let cb = device.storage_buffer::<f32>("C", len)?;
    let set = g.set(&ab, &bb, &cb)?;
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
    let mut checked = 0;
    for s in 0..256usize {
        let (i, j) = ((s * 7919) % n as usize, (s * 104_729 + 13) % n as usize);
        let want = gemm::reference_at(&a, &b, dims, i, j);
        if c[i * n as usize + j] != want {
            return Err(format!(
                "{}: C[{i}][{j}] = {} but the CPU reference is {want}",
                g.path,
                c[i * n as usize + j]
            )
            .into());
        }
        checked += 1;
    }
    let flops = 2.0 * (n as f64).powi(3);
    Ok(Timed {
        path: g.path,
        n,
        ms: best * 1e3,
        tflops: flops / best / 1e12,
        checked,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let bench_at = args.iter().position(|a| a == "--bench");
    let device = kiln::Device::new()?;
    eprintln!("gemm on {}", device.info());
    let paths = paths(&device)?;
    for g in &paths {
        check(&device, g)?;
    }
    let Some(at) = bench_at else {
        return Ok(());
    };
    let n: u32 = args
        .get(at + 1)
        .filter(|s| !s.starts_with("--"))
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(8192);
    let mut rows = Vec::new();
    for g in &paths {
        let t = bench(&device, g, n)?;
        println!(
            "gemm {:<13} {n}^3: {:9.3} ms  {:9.3} TFLOP/s  ({} entries exact)",
            t.path, t.ms, t.tflops, t.checked
        );
        rows.push(t);
    }
    if json {
        let items: Vec<String> = rows
            .iter()
            .map(|t| {
                format!(
                    "{{\"path\": \"{}\", \"n\": {}, \"ms\": {:.4}, \"tflops\": {:.3}, \"checked\": {}}}",
                    t.path, t.n, t.ms, t.tflops, t.checked
                )
            })
            .collect();
        println!("[{}]", items.join(", "));
    }
    Ok(())
}
