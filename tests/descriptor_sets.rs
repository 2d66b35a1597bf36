//! Descriptor sets on the fast path: flat held-resource storage, batched writes without
//! allocation, and reuse of freed sets. A reused set must be written in full again before
//! it binds (KILN-E207), is never handed out while a submission may still use it, and
//! keeps what it refers to alive.

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{assert_clean, device};
use kiln::{vk, DescriptorSetLayoutDesc, SetLayoutBinding};

fn vector_add(device: &kiln::Device) -> kiln::ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap()
}

fn input(device: &kiln::Device, v: f32, n: usize) -> kiln::Buffer {
    device
        .buffer_from_slice("in", vk::BufferUsageFlags::STORAGE_BUFFER, &vec![v; n])
        .unwrap()
}

#[test]
fn a_reused_set_must_be_written_in_full_again_before_it_binds() {
    let device = device();
    let p = vector_add(&device);
    let (one, two) = (input(&device, 1.0, 8), input(&device, 2.0, 8));
    let out = device.storage_buffer::<f32>("out", 8).unwrap();
    let mut a = p.new_set(0).unwrap();
    a.write_buffers(&[(0, &one), (1, &one), (2, &out)]).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &a)?;
            r.dispatch_threads(8)
        })
        .unwrap();
    assert_eq!(out.read::<f32>(&device).unwrap(), vec![2.0; 8]);
    let old = a.raw();
    drop(a);
    // The GPU is done with it: the handle is reused, but nothing written before counts.
    let mut b = p.new_set(0).unwrap();
    assert_eq!(b.raw(), old, "a freed set of this layout is reused");
    assert_eq!(b.first_unwritten(), Some(0));
    let bind = |set: &kiln::DescriptorSet| {
        device.execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, set)?;
            r.dispatch_threads(8)
        })
    };
    let err = bind(&b).unwrap_err();
    assert_eq!(err.code(), "KILN-E207", "{err}");
    b.write_buffer(0, &two).unwrap();
    b.write_buffer(1, &two).unwrap();
    assert_eq!(b.first_unwritten(), Some(2));
    let err = bind(&b).unwrap_err();
    assert!(err.to_string().contains("binding 2"), "{err}");
    // Rewriting a binding does not count twice.
    b.write_buffer(1, &two).unwrap();
    assert_eq!(b.first_unwritten(), Some(2));
    b.write_buffer(2, &out).unwrap();
    assert_eq!(b.first_unwritten(), None);
    bind(&b).unwrap();
    assert_eq!(out.read::<f32>(&device).unwrap(), vec![4.0; 8]);
    assert_clean(&device);
}

#[test]
fn a_set_dropped_in_flight_is_not_reused_and_keeps_its_buffers_alive() {
    let device = device();
    let p = vector_add(&device);
    let n = 1 << 16;
    let out = device.storage_buffer::<f32>("out", n).unwrap();
    let mut a = p.new_set(0).unwrap();
    {
        // The set holds the only handles of its inputs once this scope ends.
        let (x, y) = (input(&device, 3.0, n), input(&device, 4.0, n));
        a.write_buffers(&[(0, &x), (1, &y), (2, &out)]).unwrap();
    }
    let old = a.raw();
    let sub = device
        .submit(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &a)?;
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    drop(a);
    let mut b = p.new_set(0).unwrap();
    if !sub.is_done() {
        assert_ne!(b.raw(), old, "a set still in use was handed out again");
    }
    let other = device.storage_buffer::<f32>("other", n).unwrap();
    let z = input(&device, 0.5, n);
    // Writing the new set must not disturb the pending submission.
    b.write_buffers(&[(0, &z), (1, &z), (2, &other)]).unwrap();
    sub.wait().unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &b)?;
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    assert_eq!(out.read::<f32>(&device).unwrap(), vec![7.0; n]);
    assert_eq!(other.read::<f32>(&device).unwrap(), vec![1.0; n]);
    assert_clean(&device);
}

#[test]
fn batched_writes_beyond_the_stack_batch_are_checked_and_written() {
    let device = device();
    let bindings: Vec<SetLayoutBinding> = (0..20)
        .map(|i| SetLayoutBinding {
            binding: i,
            descriptor_type: if i.is_multiple_of(3) {
                vk::DescriptorType::UNIFORM_BUFFER
            } else {
                vk::DescriptorType::STORAGE_BUFFER
            },
            count: 1,
            stages: vk::ShaderStageFlags::COMPUTE,
            flags: vk::DescriptorBindingFlags::empty(),
            immutable_samplers: Vec::new(),
        })
        .collect();
    let desc = DescriptorSetLayoutDesc::new(bindings, vk::DescriptorSetLayoutCreateFlags::empty());
    let layout = device.set_layout(&desc).unwrap();
    let ubo = device
        .buffer_from_slice("ubo", vk::BufferUsageFlags::UNIFORM_BUFFER, &[0u32; 4])
        .unwrap();
    let ssbo = device.storage_buffer::<u32>("ssbo", 4).unwrap();
    let pick = |i: u32| if i.is_multiple_of(3) { &ubo } else { &ssbo };
    for round in 0..3 {
        let mut set = device
            .allocate_set(&layout, 0, Arc::new(BTreeMap::new()))
            .unwrap();
        // One wrong type at the end: nothing of the 20 is written.
        let mut writes: Vec<(u32, &kiln::Buffer)> = (0..20).map(|i| (i, pick(i))).collect();
        writes[19].1 = &ubo;
        let err = set.write_buffers(&writes).unwrap_err();
        assert_eq!(err.code(), "KILN-E202", "round {round}: {err}");
        assert_eq!(set.first_unwritten(), Some(0));
        writes[19].1 = pick(19);
        set.write_buffers(&writes[..17]).unwrap();
        assert_eq!(set.first_unwritten(), Some(17));
        set.write_buffers(&writes).unwrap();
        assert_eq!(set.first_unwritten(), None, "round {round}");
    }
    assert_clean(&device);
}
