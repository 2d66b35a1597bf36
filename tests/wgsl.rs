//! A WGSL module with two entry points, compiled by naga at build time (kiln-build's `wgsl`
//! feature): reflection is per entry point, and both run on the device.

use common::{assert_clean, device};
use kiln::vk;

#[test]
fn naga_multi_entry_module_reflects_per_entry_point() {
    let m = kiln::include_spirv!("test/two_entries.wgsl").unwrap();
    let r = m.reflection();
    let generator = kiln::shaders::generator_name(r.generator);
    assert!(generator.contains("Naga"), "{generator}");
    let names: Vec<_> = r.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["scale", "clear"]);
    let scale = r.entry_point("scale").unwrap();
    let clear = r.entry_point("clear").unwrap();
    assert_eq!(scale.workgroup_size.unwrap().size, [64, 1, 1]);
    assert_eq!(clear.workgroup_size.unwrap().size, [32, 2, 1]);
    let used = |e: &kiln::shaders::EntryPoint| {
        e.bindings
            .iter()
            .map(|b| (b.binding, b.descriptor_type))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        used(scale),
        vec![
            (0, vk::DescriptorType::UNIFORM_BUFFER),
            (1, vk::DescriptorType::STORAGE_BUFFER)
        ]
    );
    // naga writes SPIR-V 1.0 with the StorageBuffer storage class: still a storage buffer.
    assert_eq!(used(clear), vec![(1, vk::DescriptorType::STORAGE_BUFFER)]);
    assert_eq!(clear.unused_bindings.len(), 1);
    // naga wraps a uniform struct in a one-member block: 8 bytes at offset 0.
    let params = scale.bindings[0].block.as_ref().unwrap();
    let members: Vec<_> = params.members.iter().map(|m| (m.offset, m.size)).collect();
    assert_eq!((params.size, members), (8, vec![(0, 8)]));
}

#[test]
fn both_entry_points_run() {
    let device = device();
    let m = kiln::include_spirv!("test/two_entries.wgsl").unwrap();
    let scale = device.compute_pipeline(&m, "scale").unwrap();
    let clear = device.compute_pipeline(&m, "clear").unwrap();
    let data: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let buf = device
        .buffer_from_slice("data", vk::BufferUsageFlags::STORAGE_BUFFER, &data)
        .unwrap();
    let params = device
        .buffer_from_slice(
            "params",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[1.5f32, 0.0],
        )
        .unwrap();
    // count = 60: only the first 60 elements are scaled.
    params.upload_at(&device, 4, &[60u32]).unwrap();
    let mut set = scale.new_set(0).unwrap();
    set.write_buffer(0, &params).unwrap();
    set.write_buffer(1, &buf).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&scale);
            r.bind_set(0, &set)?;
            r.dispatch_threads(100)
        })
        .unwrap();
    let got: Vec<f32> = buf.read(&device).unwrap();
    for (i, v) in got.iter().enumerate() {
        let want = if i < 60 { i as f32 * 1.5 } else { i as f32 };
        assert_eq!(*v, want, "element {i}");
    }
    // `clear` has its own layout (binding 1 only) and its own set.
    let mut cset = clear.new_set(0).unwrap();
    cset.write_buffer(1, &buf).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&clear);
            r.bind_set(0, &cset)?;
            r.dispatch_threads(100)
        })
        .unwrap();
    assert_eq!(buf.read::<f32>(&device).unwrap(), vec![0.0; 100]);
    assert_clean(&device);
}
