//! Reflects every `.spv` file of the third-party corpus and prints microseconds per module.
//!
//! `cargo run --release -p kiln-examples --example reflect_bench [-- ROUNDS]`. The corpus
//! is found through `$KILN_CORPUS` or `../shared/corpus` beside the checkout; modules that
//! are invalid on purpose count as reflected when they give a coded error.

use std::path::{Path, PathBuf};
use std::time::Instant;

fn corpus() -> PathBuf {
    match std::env::var_os("KILN_CORPUS") {
        Some(p) => PathBuf::from(p),
        // This package is `examples/` of the checkout: the corpus sits beside the checkout.
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "spv") {
            out.push(p);
        }
    }
}

fn main() {
    let root = corpus();
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    if files.is_empty() {
        eprintln!(
            "no .spv files under {}; set KILN_CORPUS to the corpus folder",
            root.display()
        );
        std::process::exit(1);
    }
    let rounds: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let data: Vec<(PathBuf, Vec<u8>)> = files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect();
    let mut errors = 0;
    for (p, bytes) in &data {
        if let Err(e) = kiln::ShaderModule::from_bytes(bytes) {
            errors += 1;
            println!("{}: {e}", p.strip_prefix(&root).unwrap_or(p).display());
        }
    }
    let bytes: usize = data.iter().map(|(_, b)| b.len()).sum();
    let start = Instant::now();
    for _ in 0..rounds {
        for (_, b) in &data {
            std::hint::black_box(kiln::ShaderModule::from_bytes(b).ok());
        }
    }
    let elapsed = start.elapsed();
    let n = data.len() as f64 * rounds as f64;
    println!(
        "{} modules ({} KiB), {} with errors, {} rounds: {:.1} µs per module ({:.1} MB/s)",
        data.len(),
        bytes / 1024,
        errors,
        rounds,
        elapsed.as_secs_f64() * 1e6 / n,
        bytes as f64 * rounds as f64 / elapsed.as_secs_f64() / 1e6
    );
}
