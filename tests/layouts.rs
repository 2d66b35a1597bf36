//! Layouts shared by content: interning across pipelines, compatibility diffs, widened
//! visibility, pool growth, bindless arrays, buffer-range limits and host-struct checks.

use common::{assert_clean, device};
use kiln::pipeline::Visibility;
use kiln::{vk, PipelineLayoutDesc};

fn storage(device: &kiln::Device, label: &str, data: &[f32]) -> kiln::Buffer {
    device
        .buffer_from_slice(label, vk::BufferUsageFlags::STORAGE_BUFFER, data)
        .unwrap()
}

#[test]
fn one_material_set_drives_two_pipelines_and_a_stage_only_difference_is_refused() {
    let device = device();
    let ma = kiln::include_spirv!("material_a.comp").unwrap();
    let mb = kiln::include_spirv!("material_b.comp").unwrap();
    let pa = device.compute_pipeline(&ma, "main").unwrap();
    let pb = device.compute_pipeline(&mb, "main").unwrap();
    let (la, lb) = (&pa.layout().set_layouts()[1], &pb.layout().set_layouts()[1]);
    assert_eq!(la.raw(), lb.raw(), "set 1 is one VkDescriptorSetLayout");
    assert_eq!(la.id(), lb.id());

    let n = 200usize;
    let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let src_buf = storage(&device, "src", &src);
    let material = device
        .buffer_from_slice(
            "material",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[2.0f32, 0.5],
        )
        .unwrap();
    let out_a = device.storage_buffer::<f32>("out a", n).unwrap();
    let out_b = device.storage_buffer::<f32>("out b", n).unwrap();
    // The material set is allocated once, from pipeline a, and bound to both.
    let mut mat_set = pa.new_set(1).unwrap();
    mat_set.write_named("material", &material).unwrap();
    mat_set.write_named("Source", &src_buf).unwrap();
    let mut set_a = pa.new_set(0).unwrap();
    set_a.write_buffer(0, &out_a).unwrap();
    let mut set_b = pb.new_set(0).unwrap();
    set_b.write_buffer(0, &out_b).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pa);
            r.bind_set(0, &set_a)?;
            r.bind_set(1, &mat_set)?;
            r.dispatch_threads(n as u32)?;
            r.bind_pipeline(&pb);
            r.bind_set(0, &set_b)?;
            r.bind_set(1, &mat_set)?;
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    let a: Vec<f32> = out_a.read(&device).unwrap();
    let b: Vec<f32> = out_b.read(&device).unwrap();
    for i in 0..n {
        assert_eq!(a[i], src[i] * 2.0, "a[{i}]");
        assert_eq!(b[i], src[i] + 0.5, "b[{i}]");
    }

    // A third pipeline whose set 1 differs only in stage flags.
    let wide = PipelineLayoutDesc::from_stages(&[(&mb, "main")])
        .unwrap()
        .with_visibility(1, Visibility::All);
    let pc = device
        .compute_pipeline_with(&kiln::ComputePipelineDesc {
            module: &mb,
            entry: "main",
            spec: &[],
            layout: Some(&wide),
        })
        .unwrap();
    assert_ne!(pc.layout().set_layouts()[1].id(), la.id());
    let err = device
        .execute(|r| {
            r.bind_pipeline(&pc);
            r.bind_set(1, &mat_set)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E204", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("binding 0"), "{msg}");
    assert!(msg.contains("only stage flags differ"), "{msg}");
    assert_clean(&device);
}

#[test]
fn graphics_and_compute_share_a_scene_set_through_widened_visibility() {
    let device = device();
    let vert = kiln::include_spirv!("test/scene.vert").unwrap();
    let frag = kiln::include_spirv!("test/scene.frag").unwrap();
    let comp = kiln::include_spirv!("test/scene_cull.comp").unwrap();
    let gfx = PipelineLayoutDesc::from_stages(&[(&vert, "main"), (&frag, "main")]).unwrap();
    let cmp = PipelineLayoutDesc::from_stages(&[(&comp, "main")]).unwrap();
    // Exact static use: the scene UBO is VERTEX in one, COMPUTE in the other.
    assert_eq!(
        gfx.sets[0].bindings()[0].stages,
        vk::ShaderStageFlags::VERTEX
    );
    assert_eq!(
        cmp.sets[0].bindings()[0].stages,
        vk::ShaderStageFlags::COMPUTE
    );
    let diff = gfx.sets[0].diff(&cmp.sets[0]).unwrap();
    assert!(diff.contains("only stage flags differ"), "{diff}");
    let g_exact = device.pipeline_layout(&gfx).unwrap();
    let c_exact = device.pipeline_layout(&cmp).unwrap();
    assert_ne!(g_exact.set_layouts()[0].id(), c_exact.set_layouts()[0].id());

    let both = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE;
    let g = device
        .pipeline_layout(&gfx.clone().with_visibility(0, Visibility::Stages(both)))
        .unwrap();
    let c = device
        .pipeline_layout(&cmp.clone().with_visibility(0, Visibility::Stages(both)))
        .unwrap();
    assert_eq!(g.set_layouts()[0].raw(), c.set_layouts()[0].raw());
    assert_eq!(g.set_layouts()[0].desc().bindings()[0].stages, both);
    // The compute pipeline built on the widened layout runs with a set made for graphics.
    let pipeline = device
        .compute_pipeline_with(&kiln::ComputePipelineDesc {
            module: &comp,
            entry: "main",
            spec: &[],
            layout: Some(&cmp.with_visibility(0, Visibility::Stages(both))),
        })
        .unwrap();
    let names = std::sync::Arc::new(Default::default());
    let mut scene = device.allocate_set(&g.set_layouts()[0], 0, names).unwrap();
    let mut ubo = [0.0f32; 20];
    ubo[19] = 7.0; // light.w
    let ubo = device
        .buffer_from_slice("scene", vk::BufferUsageFlags::UNIFORM_BUFFER, &ubo)
        .unwrap();
    scene.write_buffer(0, &ubo).unwrap();
    let vis = device.storage_buffer::<u32>("visible", 64).unwrap();
    let mut vset = pipeline.new_set(1).unwrap();
    vset.write_buffer(0, &vis).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline);
            r.bind_set(0, &scene)?;
            r.bind_set(1, &vset)?;
            r.dispatch(1, 1, 1)
        })
        .unwrap();
    assert_eq!(vis.read::<u32>(&device).unwrap(), vec![7u32; 64]);
    assert_clean(&device);
}

#[test]
fn ten_thousand_sets_free_half_allocate_again() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let mut sets: Vec<_> = (0..10_000).map(|_| p.new_set(0).unwrap()).collect();
    let distinct: std::collections::HashSet<_> = sets.iter().map(|s| s.raw()).collect();
    assert_eq!(distinct.len(), 10_000);
    // Free every other set, then allocate 5 000 more: freed slots are reused.
    let mut i = 0;
    sets.retain(|_| {
        i += 1;
        i % 2 == 0
    });
    assert_eq!(sets.len(), 5_000);
    for _ in 0..5_000 {
        sets.push(p.new_set(0).unwrap());
    }
    // The last set works for a real dispatch.
    let buf = device.storage_buffer::<f32>("x", 8).unwrap();
    let set = sets.last_mut().unwrap();
    for b in 0..3 {
        set.write_buffer(b, &buf).unwrap();
    }
    let set = &*set;
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, set)?;
            r.dispatch_threads(8)
        })
        .unwrap();
    assert_clean(&device);
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct BindlessPush {
    count: u32,
    n: u32,
}

#[test]
fn bindless_runtime_array_with_variable_count() {
    let device = device();
    let m = kiln::include_spirv!("test/bindless_sum.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let arr = ep.bindings.iter().find(|b| b.binding == 1).unwrap();
    assert!(arr.runtime_array);
    let desc = PipelineLayoutDesc::from_stages(&[(&m, "main")])
        .unwrap()
        .with_bindless_max(0, 1, 64);
    if !device.features().runtime_descriptor_array {
        // lavapipe in Mesa 22.3 has no descriptor indexing: the error path is what runs.
        let err = device.pipeline_layout(&desc).unwrap_err();
        assert_eq!(err.code(), "KILN-E107", "{err}");
        assert!(err.to_string().contains("runtimeDescriptorArray"), "{err}");
        assert!(err.to_string().contains("set 0 binding 1"), "{err}");
        eprintln!(
            "bindless: {} lacks descriptor indexing; checked the error",
            device.info().name
        );
        assert_clean(&device);
        return;
    }
    let p = device
        .compute_pipeline_with(&kiln::ComputePipelineDesc {
            module: &m,
            entry: "main",
            spec: &[],
            layout: Some(&desc),
        })
        .unwrap();
    let b = p.layout().set_layouts()[0]
        .desc()
        .binding(1)
        .unwrap()
        .clone();
    assert_eq!(b.count, 64);
    assert!(b.flags.contains(
        vk::DescriptorBindingFlags::PARTIALLY_BOUND
            | vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT
    ));
    // Allocate with 5 of the 64, write 5 buffers holding 1, 2, 4, 8, 16.
    let mut set = p.new_set_with_count(0, Some(5)).unwrap();
    let inputs: Vec<_> = (0..5)
        .map(|k| {
            device
                .buffer_from_slice("in", vk::BufferUsageFlags::STORAGE_BUFFER, &[1u32 << k])
                .unwrap()
        })
        .collect();
    for (k, buf) in inputs.iter().enumerate() {
        set.write_buffer_at(1, k as u32, buf).unwrap();
    }
    // Element 5 is past the variable count.
    assert_eq!(
        set.write_buffer_at(1, 5, &inputs[0]).unwrap_err().code(),
        "KILN-E203"
    );
    assert_eq!(
        p.new_set_with_count(0, Some(65)).unwrap_err().code(),
        "KILN-E203"
    );
    let n = 40u32;
    let out = device.storage_buffer::<u32>("out", n as usize).unwrap();
    set.write_buffer(0, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.push(0, &BindlessPush { count: 5, n })?;
            r.dispatch_threads(n)
        })
        .unwrap();
    let got: Vec<u32> = out.read(&device).unwrap();
    let want: Vec<u32> = (0..n).map(|i| 31 * (i + 1)).collect();
    assert_eq!(got, want);
    assert_clean(&device);
}

#[test]
fn buffer_range_beyond_device_limit_is_an_error() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let limit = device.limits().max_storage_buffer_range as u64;
    // lavapipe: 128 MiB; NVIDIA: 4 GiB - 1 (a 4 GiB buffer bound whole is the classic case).
    let big = device
        .create_buffer(&kiln::BufferDesc {
            label: "too big",
            size: limit + 4,
            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
            location: kiln::MemoryLocation::GpuOnly,
        })
        .unwrap();
    let mut set = p.new_set(0).unwrap();
    let err = set.write_buffer(0, &big).unwrap_err();
    assert_eq!(err.code(), "KILN-E206", "{err}");
    assert!(err.to_string().contains("maxStorageBufferRange"));
    // A sub-range within the limit is fine.
    set.write_buffer_range(0, 0, None, &big, 0, limit).unwrap();
    // A misaligned offset is refused.
    let align = device.limits().min_storage_buffer_offset_alignment;
    if align > 1 {
        let err = set.write_buffer_range(0, 0, None, &big, 1, 64).unwrap_err();
        assert_eq!(err.code(), "KILN-E208");
    }
    assert_clean(&device);
}

#[repr(C)]
#[derive(Clone, Copy)]
struct PaddedWrong {
    x: f32,
    v: [f32; 3],
    y: f32,
}
kiln::host_layout!(PaddedWrong { x, v, y });

#[repr(C)]
#[derive(Clone, Copy)]
struct PaddedRight {
    x: f32,
    _pad: [f32; 3],
    v: [f32; 3],
    y: f32,
}
kiln::host_layout!(PaddedRight { x, v, y });

#[repr(C)]
#[derive(Clone, Copy)]
struct PushRight {
    dir: [f32; 3],
    len: f32,
}
kiln::host_layout!(PushRight { dir, len });

#[test]
fn vec3_padding_mismatch_is_caught_and_a_correct_struct_passes() {
    let m = kiln::include_spirv!("test/padding.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let err = ep.check_block::<PaddedWrong>(0, 0).unwrap_err();
    assert_eq!(err.code(), "KILN-E055");
    match &err {
        kiln::Error::HostLayoutMismatch {
            host_offset,
            shader_offset,
            member,
            ..
        } => {
            assert_eq!((*host_offset, *shader_offset), (4, 16));
            assert!(member.starts_with("v "), "{member}");
        }
        e => panic!("unexpected {e:?}"),
    }
    ep.check_block::<PaddedRight>(0, 0).unwrap();
    ep.check_push_constants::<PushRight>().unwrap();
    assert_eq!(
        ep.check_block::<PushRight>(0, 0).unwrap_err().code(),
        "KILN-E056"
    );
    assert_eq!(
        ep.check_block::<PaddedRight>(0, 9).unwrap_err().code(),
        "KILN-E200"
    );
}

#[test]
fn conflicting_declarations_name_both_entry_points() {
    // vector_add declares set 0 binding 0 as a storage buffer; padding.comp as a uniform.
    let a = kiln::include_spirv!("vector_add.comp").unwrap();
    let b = kiln::include_spirv!("test/padding.comp").unwrap();
    let err = PipelineLayoutDesc::from_stages(&[(&a, "main"), (&b, "main")]).unwrap_err();
    assert_eq!(err.code(), "KILN-E051");
    let msg = err.to_string();
    assert!(
        msg.contains("vector_add.comp") && msg.contains("test/padding.comp"),
        "{msg}"
    );
    assert!(
        msg.contains("STORAGE_BUFFER") && msg.contains("UNIFORM_BUFFER"),
        "{msg}"
    );
}

#[test]
fn runtime_array_element_size_must_match_the_stride() {
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    ep.check_array_element::<f32>(0, 0).unwrap();
    let err = ep.check_array_element::<[f32; 2]>(0, 0).unwrap_err();
    assert_eq!(err.code(), "KILN-E056", "{err}");
    assert!(err.to_string().contains("stride is 4"), "{err}");
    let padded = kiln::include_spirv!("test/padding.comp").unwrap();
    let pe = padded.reflection().entry_point("main").unwrap();
    assert_eq!(
        pe.check_array_element::<f32>(0, 0).unwrap_err().code(),
        "KILN-E056"
    );
}
