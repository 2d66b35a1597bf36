//! c = a + b over N floats on the GPU, with layouts nobody wrote by hand.
//!
//! Usage: `cargo run --release -p kiln-examples --example vector_add [N]` (default N = 1<<20).
use kiln::vk;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let n: usize = match std::env::args().nth(1) {
        Some(s) => s.parse()?,
        None => 1 << 20,
    };
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (2 * i) as f32 + 0.5).collect();

    // --- kiln: from "have a device" to "have the result" ---
    let device = kiln::Device::new()?;
    let start = std::time::Instant::now();
    let pipeline = device.compute_pipeline(&kiln::include_spirv!("vector_add.comp")?, "main")?;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a_buf = device.buffer_from_slice("a", usage, &a)?;
    let b_buf = device.buffer_from_slice("b", usage, &b)?;
    let c_buf = device.storage_buffer::<f32>("c", n)?;
    let mut set = pipeline.descriptor_set(0)?;
    set.write_buffer(0, &a_buf)?;
    set.write_buffer(1, &b_buf)?;
    set.write_buffer(2, &c_buf)?;
    device.execute(|r| {
        r.bind_pipeline(&pipeline)?;
        r.bind_set(0, &set)?;
        Ok(r.dispatch_threads(n as u32)?)
    })?;
    let c: Vec<f32> = c_buf.read()?;
    // --- end ---
    let elapsed = start.elapsed();

    let bad = (0..n).filter(|&i| c[i] != a[i] + b[i]).count();
    println!("device: {}", device.info());
    println!("N: {n}");
    println!(
        "elapsed: {:.3} ms (pipeline, upload, dispatch, readback)",
        elapsed.as_secs_f64() * 1e3
    );
    let report = device.validation_report();
    if report.enabled {
        println!(
            "validation: {} errors, {} warnings",
            report.errors, report.warnings
        );
    }
    if bad != 0 || !report.is_clean() {
        println!("FAILED: {bad} wrong elements");
        std::process::exit(1);
    }
    println!("ok");
    Ok(())
}
