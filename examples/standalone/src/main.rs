//! kiln used from a crate of its own: scales a buffer on the GPU and checks every element.
//! Run: `cargo run` in this folder (or `cargo xtask test` from kiln's checkout).
use bytemuck::{Pod, Zeroable};
use kiln::vk;

/// The shader's push-constant block, checked against the reflected one below.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    by: f32,
    n: u32,
}
kiln::host_layout!(Params { by, n });

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // RUST_LOG=info shows the device kiln picked; validation messages come as warnings.
    env_logger::init();
    let device = kiln::Device::new()?;
    let module = kiln::include_spirv!("scale.comp")?;
    // `cargo xtask test` builds this crate once with `--features misspelt` and expects the
    // compile error that lists the compiled shaders and names the closest one.
    #[cfg(feature = "misspelt")]
    let _ = kiln::include_spirv!("scale.com");
    // Names, types, offsets and sizes of `Params` against the shader's block.
    module
        .reflection()
        .entry_point("main")?
        .check_push_constants::<Params>()?;
    let pipeline = device.compute_pipeline(&module, "main")?;

    let n = 1000u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let src = device.buffer_from_slice("src", vk::BufferUsageFlags::STORAGE_BUFFER, &input)?;
    let dst = device.storage_buffer::<f32>("dst", n as usize)?;
    let mut set = pipeline.descriptor_set(0)?;
    set.write_named("In", &src)?;
    set.write_named("Out", &dst)?;
    device.execute(|r| {
        r.bind_pipeline(&pipeline)?;
        r.bind_set(0, &set)?;
        r.push(0, &Params { by: 2.5, n })?;
        r.dispatch_threads(n)?;
        Ok(())
    })?;
    let out: Vec<f32> = dst.read()?;
    for (i, (x, y)) in input.iter().zip(&out).enumerate() {
        if *y != x * 2.5 {
            return Err(format!("element {i}: {y} != {x} * 2.5").into());
        }
    }
    let report = device.validation_report();
    if report.errors + report.warnings > 0 {
        return Err(format!("validation reported {report:?}").into());
    }
    println!("standalone: {} on {}: {n} elements ok", module.label(), device.info().name);
    Ok(())
}
