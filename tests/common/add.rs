//! The vector_add pipeline (`examples/shaders/vector_add.comp`: c = a + b over three
//! storage buffers at set 0, bindings 0, 1, 2), which most GPU tests use as their workload,
//! and the buffers and set around it.

use kiln::{vk, Buffer, ComputePipeline, DescriptorSet, Device, Recorder};

/// The vector_add compute pipeline.
pub fn vector_add(device: &Device) -> ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap()
}

/// A storage buffer holding `data`.
pub fn storage<T: kiln::bytemuck::Pod>(device: &Device, label: &str, data: &[T]) -> Buffer {
    device
        .buffer_from_slice(label, vk::BufferUsageFlags::STORAGE_BUFFER, data)
        .unwrap()
}

/// Set 0 of `pipeline` (vector_add's layout) with `a`, `b` and `c` at bindings 0, 1, 2.
pub fn set(pipeline: &ComputePipeline, a: &Buffer, b: &Buffer, c: &Buffer) -> DescriptorSet {
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_buffer(0, a).unwrap();
    set.write_buffer(1, b).unwrap();
    set.write_buffer(2, c).unwrap();
    set
}

/// Records `pipeline` with `set` at set 0 and a dispatch of `n` threads.
pub fn dispatch<'a>(
    r: &mut Recorder<'a, '_>,
    pipeline: &'a ComputePipeline,
    set: &'a DescriptorSet,
    n: u32,
) -> kiln::Result<()> {
    r.bind_pipeline(pipeline)?;
    r.bind_set(0, set)?;
    Ok(r.dispatch_threads(n)?)
}

/// Runs c = a + b over `n` elements and checks every element exactly.
pub fn run_and_check(device: &Device, n: usize) {
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let pipeline = vector_add(device);
    let (a_buf, b_buf) = (storage(device, "a", &a), storage(device, "b", &b));
    let c_buf = device.storage_buffer::<f32>("c", n).unwrap();
    let set = set(&pipeline, &a_buf, &b_buf, &c_buf);
    device
        .execute(|r| dispatch(r, &pipeline, &set, n as u32))
        .unwrap();
    let c: Vec<f32> = c_buf.read().unwrap();
    assert_eq!(c.len(), n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "element {i} of {n}");
    }
}

/// Runs c = a + a over `[1, 2, 3]` and checks `[2, 4, 6]`: the device still works.
pub fn still_works(device: &Device) {
    let p = vector_add(device);
    let a = storage(device, "a", &[1.0f32, 2.0, 3.0]);
    let c = device.storage_buffer::<f32>("c", 3).unwrap();
    let set = set(&p, &a, &a, &c);
    device.execute(|r| dispatch(r, &p, &set, 3)).unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
}
