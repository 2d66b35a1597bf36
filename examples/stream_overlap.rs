//! Streams a large array through a kernel in chunks, serial (every stage on the main queue)
//! and overlapped (upload chunk i+1 on `Device::upload_queue`, compute chunk i on the
//! async-compute queue, read back chunk i-1 on `Device::readback_queue`, kiln's policy for
//! readbacks beside uploads), checks every element of both against a CPU reference (the
//! kernel's closed form: one multiply-add per element) and prints the two times. The kernel's iteration count is chosen so that one
//! chunk's compute takes about as long as its upload (the case where overlap pays most).
//!
//! Usage: `cargo run --release -p kiln-examples --example stream_overlap [MiB] [CHUNKS]`
//! (defaults: 256 MiB in 16 chunks on GPUs, 16 MiB in 8 on CPU devices). The input and
//! output host buffers take driver memory; `KILN_STREAM_HOST_MEMORY=imported` puts them in
//! host pages kiln maps and imports (`HostBufferMemory::Imported`: the H200's duplex copies
//! moved 61 GB/s from those against 57 from driver memory).
//!
//! Then, opt-in, the overlapped run once more for each fraction in `KILN_STREAM_HOST_WRITES`
//! (a comma list; unset, empty or `0`: none): that part of every chunk is written by host
//! threads into the ring buffer through its mapping (device-local, host-visible memory: the
//! PCIe BAR) while the rest is copied by DMA, a second path into the device beside the DMA
//! copies (on the H200 the DMA copies up and down at once share ~58 GB/s). The serial run
//! stays all-DMA, the faster serial path, and the speedups are against it. Skipped, with a
//! line saying so, where the host-visible memory is not device-local. On the H200 it does
//! not pay: beside the stream's DMA copies the host's writes through the BAR crawl at
//! 5–10 GB/s (docs/benchmarks/log/2026-12-01-to-02.md, run F). `KILN_STREAM_RING`
//! sets the ring's buffer pairs (chunks in flight; default 3).
use std::time::Duration;

use kiln::QueueKind;
use kiln_examples::stream::Stream;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let host_buffer_memory = match std::env::var("KILN_STREAM_HOST_MEMORY").as_deref() {
        Ok("imported") => kiln::HostBufferMemory::Imported,
        Ok("driver") | Ok("") | Err(_) => kiln::HostBufferMemory::Auto,
        Ok(other) => {
            return Err(format!("KILN_STREAM_HOST_MEMORY=`{other}`: driver or imported").into())
        }
    };
    let device = kiln::Device::with_desc(
        &kiln::DeviceDesc::default().host_buffer_memory(host_buffer_memory),
    )?;
    println!("host buffers: {host_buffer_memory:?} memory");
    let cpu = device.info().device_type == kiln::vk::PhysicalDeviceType::CPU;
    let mut args = std::env::args().skip(1);
    let mib: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(if cpu { 16 } else { 256 });
    let chunks: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(if cpu { 8 } else { 16 });
    let chunk = (mib << 20) / 4 / chunks.max(1);
    println!("device: {}", device.info());
    for kind in [QueueKind::Main, QueueKind::Compute, QueueKind::Transfer] {
        for q in device.queues(kind) {
            let i = q.info();
            println!(
                "  {kind:?} queue: kiln queue {}, family {} index {} ({:?}), {:?}",
                i.index, i.family, i.queue_index, i.flags, i.source
            );
        }
    }
    let stage = |q: kiln::Queue| {
        let i = q.info();
        format!("kiln queue {} ({:?}, family {})", i.index, i.kind, i.family)
    };
    println!(
        "overlapped stages: uploads on {}, dispatches on {}, readbacks on {}",
        stage(device.upload_queue()),
        stage(device.queue(QueueKind::Compute)),
        stage(device.readback_queue())
    );
    // Iterations for compute ≈ transfer per chunk: scale, measure again, twice (a short
    // dispatch's time is mostly launch overhead, so one step undershoots).
    let fractions: Vec<f64> = match std::env::var("KILN_STREAM_HOST_WRITES") {
        Ok(list) => list
            .split(',')
            .filter(|f| !f.trim().is_empty())
            .map(|f| f.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("KILN_STREAM_HOST_WRITES=`{list}`: {e} (fractions 0..1)"))?,
        Err(_) => vec![],
    };
    let fractions: Vec<f64> = fractions.into_iter().filter(|&f| f > 0.0).collect();
    let most = fractions.iter().copied().fold(0.0, f64::max);
    let ring: usize = match std::env::var("KILN_STREAM_RING") {
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|&r| r > 0)
            .ok_or_else(|| format!("KILN_STREAM_RING=`{v}`: a count of buffer pairs, >= 1"))?,
        Err(_) => kiln_examples::stream::RING,
    };
    let mut stream = Stream::with_ring(&device, chunk, chunks, 64, most, ring)?;
    let bar =
        kiln::vk::MemoryPropertyFlags::DEVICE_LOCAL | kiln::vk::MemoryPropertyFlags::HOST_VISIBLE;
    let fractions = if most > 0.0 && !stream.ring_in_memory().contains(bar) {
        println!(
            "no host writes: the ring's host-visible memory is {:?}, not device-local",
            stream.ring_in_memory()
        );
        stream = Stream::with_ring(&device, chunk, chunks, 64, 0.0, ring)?;
        vec![]
    } else {
        fractions
    };
    stream.set_host_writes(0.0);
    // Half a second of copies first: calibrated cold, the upload is slow (run H: 0.397
    // against 0.354 ms per 16 MiB, and 1.55x instead of 1.67x).
    if !cpu {
        stream.warm_up(&device, Duration::from_millis(500))?;
    }
    let mut iters = 64u32;
    let (mut up, mut compute) = stream.calibrate(&device, iters)?;
    for _ in 0..2 {
        iters = ((iters as f64 * up.as_secs_f64() / compute.as_secs_f64().max(1e-9)) as u32)
            .clamp(1, 1 << 20);
        (up, compute) = stream.calibrate(&device, iters)?;
    }
    stream.iters = iters;
    println!(
        "{mib} MiB in {chunks} chunks of {} KiB; one chunk: upload {:.3} ms, compute {:.3} ms \
         at {iters} iterations",
        (chunk * 4) >> 10,
        ms(up),
        ms(compute)
    );
    // Warm up both paths once, then take the best of three.
    let mut best = [Duration::MAX; 2];
    for round in 0..4 {
        for (i, overlapped) in [false, true].into_iter().enumerate() {
            let t = stream.run(&device, overlapped)?;
            if let Some(bad) = stream.check()? {
                println!("FAILED: element {bad} differs from the CPU reference");
                std::process::exit(1);
            }
            if round > 0 {
                best[i] = best[i].min(t);
            }
        }
    }
    let [serial, overlapped] = best;
    println!(
        "serial {:.3} ms, overlapped {:.3} ms: {:.2}x",
        ms(serial),
        ms(overlapped),
        serial.as_secs_f64() / overlapped.as_secs_f64()
    );
    let mut fastest = overlapped;
    for f in fractions {
        stream.set_host_writes(f);
        let mut t_best = Duration::MAX;
        for round in 0..4 {
            let t = stream.run(&device, true)?;
            if let Some(bad) = stream.check()? {
                println!("FAILED: element {bad} differs from the CPU reference (host writes {f})");
                std::process::exit(1);
            }
            if round > 0 {
                t_best = t_best.min(t);
            }
        }
        fastest = fastest.min(t_best);
        println!(
            "overlapped with {} KiB of every chunk written by the host through the BAR \
             ({f}): {:.3} ms: {:.2}x (the last run's host writes, waits included: {:.3} ms)",
            (stream.host_elements() * 4) >> 10,
            ms(t_best),
            serial.as_secs_f64() / t_best.as_secs_f64(),
            ms(stream.host_write_time)
        );
    }
    println!(
        "best overlapped {:.3} ms: {:.2}x the serial run",
        ms(fastest),
        serial.as_secs_f64() / fastest.as_secs_f64()
    );
    if !device.validation_report().is_clean() {
        println!("FAILED: validation messages");
        std::process::exit(1);
    }
    println!("ok (results match the CPU reference)");
    Ok(())
}
