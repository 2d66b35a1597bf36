//! End-to-end compute on a real device: results are checked element by element (vector_add
//! at edge sizes, SAXPY with push constants, both entry points of a WGSL module) and every
//! test asserts the validation layer stayed silent.

use common::add;
use common::add::run_and_check;
use common::{assert_clean, device};
use kiln::vk;

#[test]
fn vector_add_exact_for_edge_sizes() {
    let device = device();
    for n in [1, 255, 256, 257, 1 << 20] {
        run_and_check(&device, n);
    }
    assert_clean(&device);
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SaxpyParams {
    a: f32,
    n: u32,
}

#[test]
fn saxpy_exact_for_edge_sizes_with_push_constants() {
    let device = device();
    let module = kiln::include_spirv!("saxpy.comp").unwrap();
    let pipeline = device.compute_pipeline(&module, "main").unwrap();
    // Reflection gave one push-constant range: 8 bytes for the compute stage.
    let ranges = pipeline.layout().push_constant_ranges();
    assert_eq!(ranges.len(), 1);
    assert_eq!((ranges[0].offset, ranges[0].size), (0, 8));
    assert_eq!(ranges[0].stages, vk::ShaderStageFlags::COMPUTE);
    for n in [1usize, 255, 256, 1 << 20] {
        let a = -1.75f32;
        let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32).collect();
        // One element past n must stay untouched: the shader checks `i < n`.
        let y: Vec<f32> = (0..n + 1).map(|i| (i % 13) as f32 - 6.0).collect();
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let x_buf = device.buffer_from_slice("x", usage, &x).unwrap();
        let y_buf = device.buffer_from_slice("y", usage, &y).unwrap();
        let mut set = pipeline.descriptor_set(0).unwrap();
        set.write_named("X", &x_buf).unwrap();
        set.write_named("Y", &y_buf).unwrap();
        device
            .execute(|r| {
                r.bind_pipeline(&pipeline)?;
                r.bind_set(0, &set)?;
                r.push(0, &SaxpyParams { a, n: n as u32 })?;
                Ok(r.dispatch_threads(n as u32)?)
            })
            .unwrap();
        let out: Vec<f32> = y_buf.read().unwrap();
        for i in 0..n {
            assert_eq!(out[i], a * x[i] + y[i], "element {i} of {n}");
        }
        assert_eq!(out[n], y[n], "element past n was written");
    }
    assert_clean(&device);
}

#[test]
fn both_entry_points_run() {
    let device = device();
    let m = kiln::include_spirv!("test/two_entries.wgsl").unwrap();
    let scale = device.compute_pipeline(&m, "scale").unwrap();
    let clear = device.compute_pipeline(&m, "clear").unwrap();
    let data: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let buf = add::storage(&device, "data", &data);
    let params = device
        .buffer_from_slice(
            "params",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[1.5f32, 0.0],
        )
        .unwrap();
    // count = 60: only the first 60 elements are scaled.
    params.upload_at(4, &[60u32]).unwrap();
    let mut set = scale.descriptor_set(0).unwrap();
    set.write_buffer(0, &params).unwrap();
    set.write_buffer(1, &buf).unwrap();
    device
        .execute(|r| add::dispatch(r, &scale, &set, 100))
        .unwrap();
    let got: Vec<f32> = buf.read().unwrap();
    for (i, v) in got.iter().enumerate() {
        let want = if i < 60 { i as f32 * 1.5 } else { i as f32 };
        assert_eq!(*v, want, "element {i}");
    }
    // `clear` has its own layout (binding 1 only) and its own set.
    let mut cset = clear.descriptor_set(0).unwrap();
    cset.write_buffer(1, &buf).unwrap();
    device
        .execute(|r| add::dispatch(r, &clear, &cset, 100))
        .unwrap();
    assert_eq!(buf.read::<f32>().unwrap(), vec![0.0; 100]);
    assert_clean(&device);
}
