//! Two compute pipelines from different shaders share ONE material set (set 1): kiln
//! derives both layouts from reflection, interns equal set layouts by content (declaration
//! order does not matter), so the set allocated for the first binds to the second.
use kiln::vk;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = kiln::Device::new()?;
    let scale = device.compute_pipeline(&kiln::include_spirv!("material_a.comp")?, "main")?;
    let shift = device.compute_pipeline(&kiln::include_spirv!("material_b.comp")?, "main")?;
    let same = scale.layout().set_layouts()[1].id() == shift.layout().set_layouts()[1].id();
    println!("set 1 layout shared by both pipelines: {same}");

    let n = 8;
    let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let source = device.buffer_from_slice("source", usage, &src)?;
    let params = device.buffer_from_slice(
        "material",
        vk::BufferUsageFlags::UNIFORM_BUFFER,
        &[3.0f32, 0.5],
    )?;
    let (out_a, out_b) = (
        device.storage_buffer::<f32>("a", n)?,
        device.storage_buffer::<f32>("b", n)?,
    );

    let mut material = scale.descriptor_set(1)?; // made once, from the first pipeline
    material.write_named("material", &params)?;
    material.write_named("Source", &source)?;
    let (mut set_a, mut set_b) = (scale.descriptor_set(0)?, shift.descriptor_set(0)?);
    set_a.write_buffer(0, &out_a)?;
    set_b.write_buffer(0, &out_b)?;
    device.execute(|r| {
        r.bind_pipeline(&scale)?;
        r.bind_set(0, &set_a)?;
        r.bind_set(1, &material)?;
        r.dispatch_threads(n as u32)?;
        r.bind_pipeline(&shift)?;
        r.bind_set(0, &set_b)?;
        r.bind_set(1, &material)?; // the same set, on the second pipeline
        Ok(r.dispatch_threads(n as u32)?)
    })?;
    println!("scale: {:?}", out_a.read::<f32>()?);
    println!("shift: {:?}", out_b.read::<f32>()?);
    Ok(())
}
