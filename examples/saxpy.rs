//! y = a * x + y with `a` and `n` as push constants.
//!
//! Usage: `cargo run --release -p kiln-examples --example saxpy [N] [A]` (defaults 1<<20, 2.5).
use kiln::vk;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    a: f32,
    n: u32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1 << 20);
    let a: f32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2.5);
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();

    let device = kiln::Device::new()?;
    let pipeline = device.compute_pipeline(&kiln::include_spirv!("saxpy.comp")?, "main")?;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let x_buf = device.buffer_from_slice("x", usage, &x)?;
    let y_buf = device.buffer_from_slice("y", usage, &y)?;
    let mut set = pipeline.descriptor_set(0)?;
    set.write_named("X", &x_buf)?;
    set.write_named("Y", &y_buf)?;
    device.execute(|r| {
        r.bind_pipeline(&pipeline)?;
        r.bind_set(0, &set)?;
        r.push(0, &Params { a, n: n as u32 })?;
        Ok(r.dispatch_threads(n as u32)?)
    })?;
    let out: Vec<f32> = y_buf.read()?;

    let bad = (0..n).filter(|&i| out[i] != a * x[i] + y[i]).count();
    println!("device: {}", device.info());
    println!("N: {n}, a: {a}");
    if bad != 0 || !device.validation_report().is_clean() {
        println!("FAILED: {bad} wrong elements");
        std::process::exit(1);
    }
    println!("ok");
    Ok(())
}
