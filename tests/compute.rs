//! End-to-end compute on a real device: results are checked element by element and every
//! test asserts the validation layer stayed silent.

use common::{assert_clean, assert_watch_clean, device};
use kiln::{vk, Error};

fn vector_add(device: &kiln::Device, n: usize) {
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let pipeline = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a_buf = device.buffer_from_slice("a", usage, &a).unwrap();
    let b_buf = device.buffer_from_slice("b", usage, &b).unwrap();
    let c_buf = device.storage_buffer::<f32>("c", n).unwrap();
    let mut set = pipeline.new_set(0).unwrap();
    set.write_buffer(0, &a_buf).unwrap();
    set.write_buffer(1, &b_buf).unwrap();
    set.write_buffer(2, &c_buf).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline);
            r.bind_set(0, &set)?;
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    let c: Vec<f32> = c_buf.read(device).unwrap();
    assert_eq!(c.len(), n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "element {i} of {n}");
    }
}

#[test]
fn vector_add_exact_for_edge_sizes() {
    let device = device();
    for n in [1, 255, 256, 257, 1 << 20] {
        vector_add(&device, n);
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
        let mut set = pipeline.new_set(0).unwrap();
        set.write_named("X", &x_buf).unwrap();
        set.write_named("Y", &y_buf).unwrap();
        device
            .execute(|r| {
                r.bind_pipeline(&pipeline);
                r.bind_set(0, &set)?;
                r.push(0, &SaxpyParams { a, n: n as u32 })?;
                r.dispatch_threads(n as u32)
            })
            .unwrap();
        let out: Vec<f32> = y_buf.read(&device).unwrap();
        for i in 0..n {
            assert_eq!(out[i], a * x[i] + y[i], "element {i} of {n}");
        }
        assert_eq!(out[n], y[n], "element past n was written");
    }
    assert_clean(&device);
}

#[test]
fn identical_set_declared_in_other_order_shares_one_layout() {
    let device = device();
    let pa = device
        .compute_pipeline(
            &kiln::include_spirv!("test/scale_order_a.comp").unwrap(),
            "main",
        )
        .unwrap();
    let pb = device
        .compute_pipeline(
            &kiln::include_spirv!("test/scale_order_b.comp").unwrap(),
            "main",
        )
        .unwrap();
    let la = &pa.layout().set_layouts()[0];
    let lb = &pb.layout().set_layouts()[0];
    assert_eq!(la.raw(), lb.raw(), "same VkDescriptorSetLayout handle");
    assert_eq!(la.id(), lb.id());
    // Whole pipeline layouts are equal too, so they are interned as one.
    assert_eq!(pa.layout().raw(), pb.layout().raw());

    // One set, made for pipeline a, drives both pipelines.
    let data: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let buf = device
        .buffer_from_slice("data", vk::BufferUsageFlags::STORAGE_BUFFER, &data)
        .unwrap();
    let uni = device
        .buffer_from_slice("uniform", vk::BufferUsageFlags::UNIFORM_BUFFER, &[3.0f32])
        .unwrap();
    let mut set = pa.new_set(0).unwrap();
    set.write_buffer(0, &uni).unwrap();
    set.write_buffer(1, &buf).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pa);
            r.bind_set(0, &set)?;
            r.dispatch_threads(100)?;
            r.barrier();
            r.bind_pipeline(&pb);
            r.bind_set(0, &set)?;
            r.dispatch_threads(100)
        })
        .unwrap();
    let out: Vec<f32> = buf.read(&device).unwrap();
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, i as f32 * 3.0 + 3.0, "element {i}");
    }
    assert_clean(&device);
}

#[test]
fn uniform_buffer_into_storage_binding_is_an_error() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let ubo = device
        .buffer_from_slice("ubo", vk::BufferUsageFlags::UNIFORM_BUFFER, &[0u32; 4])
        .unwrap();
    let mut set = p.new_set(0).unwrap();
    let err = set.write_buffer(0, &ubo).unwrap_err();
    assert_eq!(err.code(), "KILN-E202", "{err}");
    match err {
        Error::DescriptorTypeMismatch {
            set: 0,
            binding: 0,
            expected,
            found,
            ..
        } => {
            assert_eq!(expected, vk::DescriptorType::STORAGE_BUFFER);
            assert_eq!(found, vk::DescriptorType::UNIFORM_BUFFER);
        }
        other => panic!("unexpected {other:?}"),
    }
    // Asking for the wrong type explicitly is caught the same way.
    let err = set.write_uniform_buffer(1, &ubo).unwrap_err();
    assert_eq!(err.code(), "KILN-E202");
    // A binding the layout lacks.
    assert_eq!(set.write_buffer(7, &ubo).unwrap_err().code(), "KILN-E200");
    assert_clean(&device);
}

#[test]
fn binding_a_set_with_unwritten_bindings_is_an_error() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let buf = device.storage_buffer::<f32>("a", 16).unwrap();
    let mut set = p.new_set(0).unwrap();
    set.write_buffer(0, &buf).unwrap();
    let err = device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E207", "{err}");
    // The device keeps working after a failed recording.
    vector_add(&device, 10);
    assert_clean(&device);
}

#[test]
fn messenger_counts_a_real_validation_error() {
    let device = device();
    assert_clean(&device);
    // SAFETY (test): a deliberately invalid call through the unchecked path: a buffer of
    // size 0 violates VUID-VkBufferCreateInfo-size-00912. lavapipe tolerates it.
    unsafe {
        let raw = device.raw();
        let info = vk::BufferCreateInfo::default()
            .size(0)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        if let Ok(b) = raw.create_buffer(&info, None) {
            raw.destroy_buffer(b, None);
        }
    }
    let r = device.validation_report();
    assert!(
        r.errors >= 1,
        "the messenger did not count the error: {r:?}"
    );
    assert!(
        r.messages
            .iter()
            .any(|m| m.contains("VUID-VkBufferCreateInfo-size-00912")),
        "{:?}",
        r.messages
    );
}

#[test]
fn teardown_with_everything_dropped_is_silent() {
    let device = device();
    let watch = device.validation_watch();
    vector_add(&device, 1000);
    drop(device);
    // The object tracker reports leaked objects at vkDestroyDevice / vkDestroyInstance.
    assert_watch_clean(&watch);
    assert!(watch.report().enabled);
}

#[test]
fn zero_sized_buffer_is_an_error_not_a_validation_message() {
    let device = device();
    let err = device.storage_buffer::<f32>("empty", 0).unwrap_err();
    assert_eq!(err.code(), "KILN-E152");
    assert_clean(&device);
}

#[test]
fn batched_writes_are_checked_before_anything_is_written() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a = device
        .buffer_from_slice("a", usage, &[1.0f32, 2.0])
        .unwrap();
    let b = device
        .buffer_from_slice("b", usage, &[10.0f32, 20.0])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", 2).unwrap();
    let ubo = device
        .buffer_from_slice("ubo", vk::BufferUsageFlags::UNIFORM_BUFFER, &[0u32; 4])
        .unwrap();
    let mut set = p.new_set(0).unwrap();
    // The third write is wrong: nothing of the batch is written.
    let err = set
        .write_buffers(&[(0, &a), (1, &b), (2, &ubo)])
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E202");
    assert_eq!(set.first_unwritten(), Some(0));
    set.write_buffers(&[(0, &a), (1, &b), (2, &c)]).unwrap();
    assert_eq!(set.first_unwritten(), None);
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(2)
        })
        .unwrap();
    assert_eq!(c.read::<f32>(&device).unwrap(), vec![11.0, 22.0]);
    assert_clean(&device);
}
