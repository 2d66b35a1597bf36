//! Push descriptors (VK_KHR_push_descriptor): a pipeline whose set 0 is a push set takes
//! its buffers at record time, checked like set writes, with no pool and no set object.

use common::{assert_clean, code, device};
use kiln::{vk, ComputePipeline, ComputePipelineDesc, Device, PipelineLayoutDesc, PushWrite};

fn pushed_vector_add(device: &Device) -> ComputePipeline {
    assert!(
        device.features().push_descriptor,
        "{} lacks VK_KHR_push_descriptor, which these tests need (lavapipe has it)",
        device.info().name
    );
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    device
        .compute_pipeline_with(&ComputePipelineDesc {
            push_descriptor_set: Some(0),
            ..ComputePipelineDesc::new(&m, "main")
        })
        .unwrap()
}

fn storage(device: &Device, label: &str, data: &[f32]) -> kiln::Buffer {
    device
        .buffer_from_slice(label, vk::BufferUsageFlags::STORAGE_BUFFER, data)
        .unwrap()
}

#[test]
fn pushed_buffers_feed_two_dispatches_of_one_recording() {
    let device = device();
    let p = pushed_vector_add(&device);
    assert_eq!(p.layout().push_descriptor_set(), Some(0));
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32 + 0.5).collect();
    let (a_buf, b_buf) = (storage(&device, "a", &a), storage(&device, "b", &b));
    let c1 = device.storage_buffer::<f32>("c1", n).unwrap();
    let c2 = device.storage_buffer::<f32>("c2", n).unwrap();
    let c3 = device.storage_buffer::<f32>("c3", n).unwrap();
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.push_descriptor_set(
                0,
                &[
                    PushWrite::buffer(0, &a_buf),
                    PushWrite::buffer(1, &b_buf),
                    PushWrite::buffer(2, &c1),
                ],
            )?;
            r.dispatch_threads(n as u32)?;
            // A second push replaces the set: c2 = b + b.
            r.push_descriptor_set(
                0,
                &[
                    PushWrite::buffer(0, &b_buf),
                    PushWrite::buffer(1, &b_buf),
                    PushWrite::buffer(2, &c2),
                ],
            )?;
            r.dispatch_threads(n as u32)?;
            // The second reads nothing the first wrote: no barrier. A third that reads
            // c1, which the first wrote, gets one.
            let independent = r.barrier_count();
            r.push_descriptor_set(
                0,
                &[
                    PushWrite::buffer(0, &c1),
                    PushWrite::buffer(1, &b_buf),
                    PushWrite::buffer(2, &c3),
                ],
            )?;
            r.dispatch_threads(n as u32)?;
            Ok((independent, r.barrier_count()))
        })
        .unwrap();
    assert_eq!(barriers, (0, 1), "automatic barriers over pushed buffers");
    let (r1, r2): (Vec<f32>, Vec<f32>) = (c1.read().unwrap(), c2.read().unwrap());
    for i in 0..n {
        assert_eq!(r1[i], a[i] + b[i], "c1[{i}]");
        assert_eq!(r2[i], b[i] + b[i], "c2[{i}]");
    }
    let r3: Vec<f32> = c3.read().unwrap();
    for i in 0..n {
        assert_eq!(r3[i], a[i] + b[i] + b[i], "c3[{i}]");
    }
    assert_clean(&device);
}

#[test]
fn a_sub_range_is_pushed_at_its_offset() {
    let device = device();
    let p = pushed_vector_add(&device);
    let align = device.limits().min_storage_buffer_offset_alignment.max(4);
    let n = 64usize;
    let skip = align as usize / 4;
    let a: Vec<f32> = (0..n + skip).map(|i| i as f32).collect();
    let a_buf = storage(&device, "a", &a);
    let zeros = storage(&device, "zeros", &vec![0.0; n]);
    let c = device.storage_buffer::<f32>("c", n).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.push_descriptor_set(
                0,
                &[
                    PushWrite::range(0, &a_buf, align, (n * 4) as u64),
                    PushWrite::buffer(1, &zeros),
                    PushWrite::buffer(2, &c),
                ],
            )?;
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    let out: Vec<f32> = c.read().unwrap();
    for (i, x) in out.iter().enumerate() {
        assert_eq!(*x, (i + skip) as f32, "c[{i}]");
    }
    assert_clean(&device);
}

#[test]
fn push_descriptor_errors_are_the_set_write_codes() {
    let device = device();
    let p = pushed_vector_add(&device);
    let plain = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let a = storage(&device, "a", &[1.0; 16]);
    let c = storage(&device, "c", &[0.0; 16]);
    let uniform = device
        .buffer_from_slice("u", vk::BufferUsageFlags::UNIFORM_BUFFER, &[0.0f32; 16])
        .unwrap();
    // No set object for a push set.
    let e = p.descriptor_set(0).unwrap_err();
    assert_eq!(e.code(), "KILN-E210", "{e}");
    assert!(e.to_string().contains("push_descriptor_set"), "{e}");
    let all = [
        PushWrite::buffer(0, &a),
        PushWrite::buffer(1, &a),
        PushWrite::buffer(2, &c),
    ];
    let run = |pipeline: &ComputePipeline, set: u32, writes: &[PushWrite<'_>]| {
        device.execute(|r| {
            r.bind_pipeline(pipeline)?;
            r.push_descriptor_set(set, writes)?;
            r.dispatch_threads(16)
        })
    };
    // The plain pipeline's set 0 is not a push set.
    let e = run(&plain, 0, &all).unwrap_err();
    assert_eq!(e.code(), "KILN-E210", "{e}");
    assert_eq!(code(run(&p, 1, &all)), "KILN-E205");
    // Binding 2 not given: the dispatch would read an unwritten descriptor.
    let e = run(&p, 0, &all[..2]).unwrap_err();
    assert_eq!(e.code(), "KILN-E207", "{e}");
    assert!(e.to_string().contains("binding 2"), "{e}");
    assert_eq!(
        code(run(&p, 0, &[all[0], all[1], PushWrite::buffer(3, &c)])),
        "KILN-E200"
    );
    assert_eq!(
        code(run(
            &p,
            0,
            &[all[0], all[1], PushWrite::buffer(2, &uniform)]
        )),
        "KILN-E202"
    );
    assert_eq!(
        code(run(
            &p,
            0,
            &[all[0], all[1], PushWrite::range(2, &c, 0, 65)]
        )),
        "KILN-E151"
    );
    assert_eq!(
        code(run(
            &p,
            0,
            &[all[0], all[1], PushWrite::range(2, &c, 4, 16)]
        )),
        if device.limits().min_storage_buffer_offset_alignment > 4 {
            "KILN-E208"
        } else {
            "ok"
        }
    );
    // Nothing pushed: the set is not bound.
    let e = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.dispatch_threads(16)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E254", "{e}");
    let e = device
        .execute(|r| r.push_descriptor_set(0, &all))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E252", "{e}");
    // A set the shader does not have, and two push sets in one layout.
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let e = device
        .compute_pipeline_with(&ComputePipelineDesc {
            push_descriptor_set: Some(3),
            ..ComputePipelineDesc::new(&m, "main")
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E210", "{e}");
    let mut two = PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap();
    two.sets.push(two.sets[0].clone());
    let two = two.with_push_descriptor(0).with_push_descriptor(1);
    let e = device.pipeline_layout(&two).unwrap_err();
    assert_eq!(e.code(), "KILN-E210", "{e}");
    // kiln pushes buffers only: a push layout with an image binding is refused.
    let image_binding = kiln::SetLayoutBinding {
        binding: 0,
        descriptor_type: vk::DescriptorType::STORAGE_IMAGE,
        count: 1,
        stages: vk::ShaderStageFlags::COMPUTE,
        flags: vk::DescriptorBindingFlags::empty(),
        immutable_samplers: Vec::new(),
    };
    let e = device
        .set_layout(&kiln::DescriptorSetLayoutDesc::new(
            vec![image_binding],
            vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR,
        ))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E209", "{e}");
    assert!(e.to_string().contains("STORAGE_IMAGE"), "{e}");
    // The device still works.
    run(&p, 0, &all).unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![2.0; 16]);
    assert_clean(&device);
}
