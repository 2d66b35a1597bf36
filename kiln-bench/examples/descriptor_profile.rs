//! The CPU cost of kiln's descriptor sets per set, for a profiler (`perf record`,
//! `valgrind --tool=callgrind`): the stream of the bench's `descriptor set
//! alloc+write+bind` row (`kiln-bench/src/descriptor_sets.rs`): 2 000 sets of `six.comp`'s
//! set 0 per round, each allocated from the pipeline, its 6 buffer bindings written with
//! one `write_buffers` over 12 buffers, then every set bound once in one recording (which
//! is submitted); the sets are dropped after the round, outside the measured part, as in
//! the bench. Prints the thread CPU time per set (best of the rounds).
//!
//! `KILN_VALIDATION=0 cargo run --release -p kiln-bench --example descriptor_profile [rounds]`.
//! For instruction counts, collect only the measured functions:
//! `valgrind --tool=callgrind --toggle-collect='*descriptor_profile::alloc_write*'
//! --toggle-collect='*descriptor_profile::bind_all*' target/release/examples/descriptor_profile 4`
//! (the first round allocates every set from new pools; later rounds take the sets the
//! previous round freed).

use kiln::{Buffer, ComputePipeline, ComputePipelineDesc, DescriptorSet, Device, SpecValue};

const SETS: usize = 2_000;
const BUFS: usize = 12;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds = kiln_bench::rounds_arg(30);
    let device = Device::new()?;
    let module = kiln::include_spirv!("six.comp")?;
    let pipe = device.compute_pipeline_with(
        &ComputePipelineDesc::new(&module, "main").spec(&[(0, SpecValue::U32(0))]),
    )?;
    let bufs = kiln_bench::six_buffers(&device, "profile six", BUFS)?;
    let (mut best, mut sum) = (f64::MAX, 0.0);
    for _ in 0..rounds {
        let t0 = kiln_bench::thread_cpu_ns();
        let sets = alloc_write(&pipe, &bufs)?;
        let alloc = kiln_bench::thread_cpu_ns() - t0;
        let bind = device.execute(|r| {
            r.bind_pipeline(&pipe)?;
            Ok(bind_all(r, &sets))
        })??;
        drop(sets);
        best = best.min((alloc + bind) / SETS as f64);
        sum += (alloc + bind) / SETS as f64;
    }
    let mean = sum / rounds.max(1) as f64;
    println!(
        "alloc+write+bind {best:8.1} ns per set (thread CPU, best of {rounds}; mean {mean:.1})"
    );
    Ok(())
}

/// Allocates and writes the round's sets (the bench's loop).
#[inline(never)]
fn alloc_write(pipe: &ComputePipeline, bufs: &[Buffer]) -> kiln::Result<Vec<DescriptorSet>> {
    let mut sets = Vec::with_capacity(SETS);
    for i in 0..SETS {
        let mut s = pipe.descriptor_set(0)?;
        kiln_bench::write_six(&mut s, bufs, i)?;
        sets.push(s);
    }
    Ok(sets)
}

/// Binds every set once; the thread CPU time it took.
#[inline(never)]
fn bind_all<'s>(r: &mut kiln::Recorder<'s, '_>, sets: &'s [DescriptorSet]) -> kiln::Result<f64> {
    let t0 = kiln_bench::thread_cpu_ns();
    for s in sets {
        r.bind_set(0, s)?;
    }
    Ok(kiln_bench::thread_cpu_ns() - t0)
}
