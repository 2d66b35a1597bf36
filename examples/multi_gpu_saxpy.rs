//! y = a * x + y split over every GPU kiln finds (`Device::enumerate`): one `Device` per GPU,
//! each its contiguous slice in a thread of its own (upload, dispatch, readback), the
//! slices gathered into one buffer on the first device with `kiln::copy_between_devices`
//! (through pinned host memory, readbacks and uploads overlapped) and checked exactly. Where the machine has no GPU (lavapipe) the CPU
//! devices are used, so the example runs everywhere; `KILN_MULTI_GPU_COPIES=<n>` opens each
//! device `n` times (several kiln devices on one physical device, as the tests do).
//!
//! Usage: `cargo run --release -p kiln-examples --example multi_gpu_saxpy [N] [A]`
//! (defaults 1<<24, 2.5).
use kiln::{vk, DeviceDesc};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    a: f32,
    n: u32,
}

/// Runs saxpy over `x` and `y` on the device `index` and returns the device and its new `y`.
fn saxpy_on(
    index: usize,
    a: f32,
    x: &[f32],
    y: &[f32],
) -> kiln::Result<(kiln::Device, kiln::Buffer)> {
    let device = kiln::Device::with_desc(&DeviceDesc::default().device(Some(index.to_string())))?;
    let pipeline = device.compute_pipeline(&kiln::include_spirv!("saxpy.comp")?, "main")?;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let x_buf = device.buffer_from_slice("x", usage, x)?;
    let y_buf = device.buffer_from_slice("y", usage, y)?;
    let mut set = pipeline.descriptor_set(0)?;
    set.write_named("X", &x_buf)?;
    set.write_named("Y", &y_buf)?;
    let n = x.len() as u32;
    device.execute(|r| {
        r.bind_pipeline(&pipeline)?;
        r.bind_set(0, &set)?;
        r.push(0, &Params { a, n })?;
        Ok(r.dispatch_threads(n)?)
    })?;
    Ok((device, y_buf))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1 << 24);
    let a: f32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2.5);
    let copies: usize = std::env::var("KILN_MULTI_GPU_COPIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);
    let all = kiln::Device::enumerate()?;
    let gpus: Vec<_> = all
        .iter()
        .filter(|d| d.device_type != vk::PhysicalDeviceType::CPU)
        .collect();
    let chosen: Vec<_> = if gpus.is_empty() {
        all.iter().collect()
    } else {
        gpus
    };
    let slots: Vec<usize> = chosen
        .iter()
        .flat_map(|d| std::iter::repeat_n(d.index, copies))
        .collect();
    for d in &chosen {
        println!("device {}: {}", d.index, d.name);
    }
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let per = n.div_ceil(slots.len());
    let start = std::time::Instant::now();
    let parts: Vec<kiln::Result<(kiln::Device, kiln::Buffer)>> = std::thread::scope(|s| {
        let handles: Vec<_> = slots
            .iter()
            .zip(x.chunks(per).zip(y.chunks(per)))
            .map(|(&index, (xs, ys))| s.spawn(move || saxpy_on(index, a, xs, ys)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a device thread panicked"))
            .collect()
    });
    let elapsed = start.elapsed();
    let parts = parts.into_iter().collect::<kiln::Result<Vec<_>>>()?;
    // Gather every slice into one buffer of the first device, device to device.
    let gather = std::time::Instant::now();
    let first = &parts[0].0;
    let all_y = first.storage_buffer::<f32>("y, gathered", n)?;
    let mut offset = 0u64;
    for (_, part) in &parts {
        kiln::copy_between_devices(part, 0, &all_y, offset, part.size())?;
        offset += part.size();
    }
    let gathered = gather.elapsed();
    let out: Vec<f32> = all_y.read()?;
    let bad = (0..n).filter(|&i| out[i] != a * x[i] + y[i]).count();
    println!(
        "N: {n}, a: {a}, {} device(s) × {copies}, {:.1} ms (device creation included)",
        chosen.len(),
        elapsed.as_secs_f64() * 1e3
    );
    println!(
        "gathered on device {} with copy_between_devices: {:.1} ms",
        first.info().index,
        gathered.as_secs_f64() * 1e3
    );
    if bad != 0 || out.len() != n {
        println!("FAILED: {bad} wrong elements");
        std::process::exit(1);
    }
    println!("ok");
    Ok(())
}
