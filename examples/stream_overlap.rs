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
    let device = kiln::Device::with_desc(&kiln::DeviceDesc {
        host_buffer_memory,
        ..Default::default()
    })?;
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
    let mut stream = Stream::new(&device, chunk, chunks, 64)?;
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
    if !device.validation_report().is_clean() {
        println!("FAILED: validation messages");
        std::process::exit(1);
    }
    println!("ok (results match the CPU reference)");
    Ok(())
}
