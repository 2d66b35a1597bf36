//! Layouts shared by content: interning across pipelines (declaration order, the scene's
//! material set, immutable samplers by description, samplers), compatibility diffs, widened
//! visibility, bindless arrays, overlapping push-constant ranges and host-struct checks.

use common::add;
use common::draw::{assert_quad_texels, draw_quad, quad_vertex_layout, texture_2x2, RGBA8};
use common::{assert_clean, code, device};
use kiln::Visibility;
use kiln::{
    vk, ColorAttachment, GraphicsPipelineDesc, ImageDesc, PipelineLayoutDesc, RenderingDesc,
    SamplerDesc, VertexBufferLayout,
};
use kiln_examples::scene;

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
    let src_buf = common::add::storage(&device, "src", &src);
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
    let mut mat_set = pa.descriptor_set(1).unwrap();
    mat_set.write_named("material", &material).unwrap();
    mat_set.write_named("Source", &src_buf).unwrap();
    let mut set_a = pa.descriptor_set(0).unwrap();
    set_a.write_buffer(0, &out_a).unwrap();
    let mut set_b = pb.descriptor_set(0).unwrap();
    set_b.write_buffer(0, &out_b).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pa)?;
            r.bind_set(0, &set_a)?;
            r.bind_set(1, &mat_set)?;
            r.dispatch_threads(n as u32)?;
            r.bind_pipeline(&pb)?;
            r.bind_set(0, &set_b)?;
            r.bind_set(1, &mat_set)?;
            Ok(r.dispatch_threads(n as u32)?)
        })
        .unwrap();
    let a: Vec<f32> = out_a.read().unwrap();
    let b: Vec<f32> = out_b.read().unwrap();
    for i in 0..n {
        assert_eq!(a[i], src[i] * 2.0, "a[{i}]");
        assert_eq!(b[i], src[i] + 0.5, "b[{i}]");
    }

    // A third pipeline whose set 1 differs only in stage flags.
    let wide = PipelineLayoutDesc::from_stages(&[(&mb, "main")])
        .unwrap()
        .with_visibility(1, Visibility::All);
    let pc = device
        .compute_pipeline_with(&kiln::ComputePipelineDesc::new(&mb, "main").layout(Some(&wide)))
        .unwrap();
    assert_ne!(pc.layout().set_layouts()[1].id(), la.id());
    let err = device
        .execute(|r| {
            r.bind_pipeline(&pc)?;
            Ok(r.bind_set(1, &mat_set)?)
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
        .compute_pipeline_with(
            &kiln::ComputePipelineDesc::new(&comp, "main")
                .layout(Some(&cmp.with_visibility(0, Visibility::Stages(both)))),
        )
        .unwrap();
    let mut scene = device.descriptor_set(&g.set_layouts()[0], 0).unwrap();
    let mut ubo = [0.0f32; 20];
    ubo[19] = 7.0; // light.w
    let ubo = device
        .buffer_from_slice("scene", vk::BufferUsageFlags::UNIFORM_BUFFER, &ubo)
        .unwrap();
    scene.write_buffer(0, &ubo).unwrap();
    let vis = device.storage_buffer::<u32>("visible", 64).unwrap();
    let mut vset = pipeline.descriptor_set(1).unwrap();
    vset.write_buffer(0, &vis).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &scene)?;
            r.bind_set(1, &vset)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    assert_eq!(vis.read::<u32>().unwrap(), vec![7u32; 64]);
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
        .compute_pipeline_with(&kiln::ComputePipelineDesc::new(&m, "main").layout(Some(&desc)))
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
    // Update-after-bind where the device has it for storage buffers (lavapipe 25, the
    // H200; not lavapipe 22.3).
    let uab = device.features().update_after_bind_storage_buffer;
    assert_eq!(
        b.flags
            .contains(vk::DescriptorBindingFlags::UPDATE_AFTER_BIND),
        uab
    );
    eprintln!(
        "bindless: {} has descriptor indexing (update-after-bind: {uab}); ran the real path",
        device.info().name
    );
    // Allocate with 5 of the 64, write 5 buffers holding 1, 2, 4, 8, 16.
    let mut set = p.descriptor_set_with_count(0, Some(5)).unwrap();
    let inputs: Vec<_> = (0..5)
        .map(|k| add::storage(&device, "in", &[1u32 << k]))
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
        p.descriptor_set_with_count(0, Some(65)).unwrap_err().code(),
        "KILN-E203"
    );
    let n = 40u32;
    let out = device.storage_buffer::<u32>("out", n as usize).unwrap();
    set.write_buffer(0, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &BindlessPush { count: 5, n })?;
            Ok(r.dispatch_threads(n)?)
        })
        .unwrap();
    let got: Vec<u32> = out.read().unwrap();
    let want: Vec<u32> = (0..n).map(|i| 31 * (i + 1)).collect();
    assert_eq!(got, want);
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
    let buf = add::storage(&device, "data", &data);
    let uni = device
        .buffer_from_slice("uniform", vk::BufferUsageFlags::UNIFORM_BUFFER, &[3.0f32])
        .unwrap();
    let mut set = pa.descriptor_set(0).unwrap();
    set.write_buffer(0, &uni).unwrap();
    set.write_buffer(1, &buf).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pa)?;
            r.bind_set(0, &set)?;
            r.dispatch_threads(100)?;
            r.barrier()?;
            r.bind_pipeline(&pb)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_threads(100)?)
        })
        .unwrap();
    let out: Vec<f32> = buf.read().unwrap();
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, i as f32 * 3.0 + 3.0, "element {i}");
    }
    assert_clean(&device);
}

/// Review of the layout's name table: two pipelines share one interned set layout but name
/// its bindings differently; each set answers `binding_of` with its own pipeline's names
/// (the other's are KILN-E201), also when it takes the slot a set of the other pipeline
/// freed, and in either order of the pipelines' creation; a set of the layout alone has none.
#[test]
fn sets_of_a_shared_layout_answer_with_their_own_pipelines_names() {
    let device = device();
    let pb = device
        .compute_pipeline(
            &kiln::include_spirv!("test/scale_order_b.comp").unwrap(),
            "main",
        )
        .unwrap();
    let pa = device
        .compute_pipeline(
            &kiln::include_spirv!("test/scale_order_a.comp").unwrap(),
            "main",
        )
        .unwrap();
    let layout = pa.layout().set_layouts()[0].clone();
    assert_eq!(layout.raw(), pb.layout().set_layouts()[0].raw());
    let mut old = None;
    for round in 0..3 {
        let a = pa.descriptor_set(0).unwrap();
        if let Some(old) = old {
            assert_eq!(a.raw(), old, "round {round}: a freed slot is taken again");
        }
        assert_eq!(a.binding_of("scale").unwrap(), 0);
        assert_eq!(a.binding_of("Data").unwrap(), 1);
        let e = a.binding_of("offset_").unwrap_err();
        assert_eq!(e.code(), "KILN-E201", "{e}");
        let raw = a.raw();
        drop(a);
        let b = pb.descriptor_set(0).unwrap();
        assert_eq!(b.raw(), raw, "round {round}: b takes a's slot");
        assert_eq!(b.binding_of("offset_").unwrap(), 0);
        assert_eq!(b.binding_of("Values").unwrap(), 1);
        let e = b.binding_of("scale").unwrap_err();
        assert_eq!(e.code(), "KILN-E201", "{e}");
        assert!(e.to_string().contains("`offset_` (binding 0)"), "{e}");
        drop(b);
        let plain = device.descriptor_set(&layout, 0).unwrap();
        assert_eq!(plain.binding_of("Values").unwrap_err().code(), "KILN-E201");
        old = Some(plain.raw());
    }
    assert_clean(&device);
}

#[test]
fn samplers_are_interned_by_content() {
    let device = device();
    let a = device.sampler(&SamplerDesc::default()).unwrap();
    let b = device.sampler(&SamplerDesc::default()).unwrap();
    assert_eq!(a.id(), b.id());
    assert_eq!(a.raw(), b.raw());
    let c = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    assert_ne!(a.id(), c.id());
    // Floats compare by bits: -0.0 is another description.
    let neg = SamplerDesc::default().mip_lod_bias(-0.0);
    assert_ne!(neg, SamplerDesc::default());
    assert_ne!(device.sampler(&neg).unwrap().id(), a.id());
    let bad = SamplerDesc::default().min_lod(4.0).max_lod(1.0);
    let err = device.sampler(&bad).unwrap_err();
    assert_eq!(err.code(), "KILN-E190", "{err}");
    assert_clean(&device);
}

#[test]
fn material_scene_pipelines_share_one_material_set() {
    let device = device();
    let s = scene::Scene::new(&device, scene::COLOR_FORMAT).unwrap();
    let chair = s.chair.layout().set_layouts();
    let desk = s.desk.layout().set_layouts();
    assert_eq!(chair.len(), 2);
    // Set 1: one interned layout (same id and handle) for both fragment shaders.
    assert_eq!(chair[1].id(), desk[1].id());
    assert_eq!(chair[1].raw(), desk[1].raw());
    assert_eq!(chair[0].id(), desk[0].id());
    let b = chair[1].desc().bindings();
    let types: Vec<_> = b
        .iter()
        .map(|b| (b.binding, b.descriptor_type, b.stages))
        .collect();
    let f = vk::ShaderStageFlags::FRAGMENT;
    assert_eq!(
        types,
        vec![
            (0, vk::DescriptorType::SAMPLED_IMAGE, f),
            (1, vk::DescriptorType::SAMPLER, f),
            (2, vk::DescriptorType::UNIFORM_BUFFER, f),
        ]
    );
    let cam = chair[0].desc().bindings();
    assert_eq!(cam.len(), 1);
    assert_eq!(cam[0].descriptor_type, vk::DescriptorType::UNIFORM_BUFFER);
    assert_eq!(cam[0].stages, vk::ShaderStageFlags::VERTEX);
    // The pipeline layouts differ only by pipeline: same interned layout object.
    assert_eq!(s.chair.layout().id(), s.desk.layout().id());
    assert_eq!(s.material.layout().id(), desk[1].id());
    assert_clean(&device);
}

#[test]
fn immutable_samplers_compare_by_description() {
    let device = device();
    let vs = kiln::include_spirv!("test/textured.vert").unwrap();
    let fs = kiln::include_spirv!("test/textured.frag").unwrap();
    let base = PipelineLayoutDesc::from_stages(&[(&vs, "main"), (&fs, "main")]).unwrap();
    let nearest = base
        .clone()
        .with_immutable_sampler(0, 0, SamplerDesc::nearest_clamp())
        .unwrap();
    let nearest_again = base
        .clone()
        .with_immutable_sampler(0, 0, SamplerDesc::nearest_clamp())
        .unwrap();
    let linear = base
        .clone()
        .with_immutable_sampler(0, 0, SamplerDesc::default())
        .unwrap();
    let a = device.pipeline_layout(&nearest).unwrap();
    let b = device.pipeline_layout(&nearest_again).unwrap();
    let c = device.pipeline_layout(&linear).unwrap();
    let plain = device.pipeline_layout(&base).unwrap();
    assert_eq!(
        a.set_layouts()[0].raw(),
        b.set_layouts()[0].raw(),
        "equal descriptions"
    );
    assert_ne!(
        a.set_layouts()[0].id(),
        c.set_layouts()[0].id(),
        "other sampler"
    );
    assert_ne!(
        a.set_layouts()[0].id(),
        plain.set_layouts()[0].id(),
        "no immutable sampler"
    );
    // Only sampler bindings take one.
    let ubo = kiln::include_spirv!("test/scene.vert").unwrap();
    let err = PipelineLayoutDesc::from_stages(&[(&ubo, "main")])
        .unwrap()
        .with_immutable_sampler(0, 0, SamplerDesc::default())
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E200", "{err}");

    // Render with the immutable nearest sampler: the set is written with the image only.
    let img = device
        .image(&ImageDesc::color_target("target", 8, 8, RGBA8))
        .unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(quad_vertex_layout())
        .targets(&[&img], None);
    desc.layout = Some(&nearest);
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    assert_eq!(
        pipeline.layout().set_layouts()[0].raw(),
        a.set_layouts()[0].raw()
    );
    let tex = texture_2x2(&device);
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_image(0, &tex).unwrap();
    let data = draw_quad(&device, &pipeline, &set, &img);
    assert_quad_texels(&data);
    assert_clean(&device);
}

#[test]
fn overlapping_vertex_and_fragment_push_constants_are_validation_clean() {
    let device = device();
    let vs = kiln::include_spirv!("test/pc_transform.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let img = device
        .image(&ImageDesc::color_target("target", 16, 16, RGBA8))
        .unwrap();
    let desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(VertexBufferLayout::packed(&[(
            0,
            vk::Format::R32G32_SFLOAT,
        )]))
        .targets(&[&img], None);
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    let ranges: Vec<_> = pipeline
        .layout()
        .push_constant_ranges()
        .iter()
        .map(|r| (r.stages, r.offset, r.size))
        .collect();
    assert_eq!(
        ranges,
        vec![
            (vk::ShaderStageFlags::VERTEX, 0, 64),
            (vk::ShaderStageFlags::FRAGMENT, 0, 16)
        ]
    );
    // Column-major mvp. Its column 0 (bytes [0, 16)) is also what the fragment stage reads
    // as its colour: (1, 0, 0, 1), opaque red. With it, clip w = 1 + x.
    let mvp: [f32; 16] = [
        1.0, 0.0, 0.0, 1.0, // column 0: x contributes to x and w
        0.0, 1.0, 0.0, 0.0, // column 1
        0.0, 0.0, 1.0, 0.0, // column 2
        0.0, 0.0, 0.0, 1.0, // column 3
    ];
    // A big triangle covering the screen after the transform (w = 1 + x).
    let verts: [[f32; 2]; 3] = [[-0.5, -3.0], [3.0, 1.0], [-0.5, 3.0]];
    let vb = device
        .buffer_from_slice("tri", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img,
                [0.0, 0.0, 0.0, 1.0],
            )]))?;
            r.bind_pipeline(&pipeline)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            // One call for 64 bytes: kiln splits it into [0,16) VERTEX|FRAGMENT and
            // [16,64) VERTEX (VUID-vkCmdPushConstants-offset-01795/01796).
            r.push(0, &mvp)?;
            // And the fragment's 16 bytes alone (VERTEX|FRAGMENT: both ranges contain them).
            r.push(0, &[1.0f32, 0.0, 0.0, 1.0])?;
            // Bytes only the vertex range holds.
            r.push(48, &[0.0f32, 0.0, 0.0, 1.0])?;
            r.draw(3, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = img.read().unwrap();
    let red = [255, 0, 0, 255];
    let covered = data.chunks(4).filter(|p| *p == red).count();
    assert!(covered > 0, "nothing was drawn");
    // Bytes beyond every range are an error, not a validation message.
    let err = device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            Ok(r.push(64, &[0u32; 4])?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E250", "{err}");
    assert_clean(&device);
}

/// Runtime arrays of sampled images and of samplers: partially bound (only some elements
/// written), the texture array of variable count, update-after-bind where the device has it
/// for sampled images; elements written after the set was bound by an earlier submission
/// are read by the next one.
#[test]
fn bindless_sampled_images_and_samplers() {
    let device = device();
    let m = kiln::include_spirv!("test/bindless_textures.comp").unwrap();
    let desc = PipelineLayoutDesc::from_stages(&[(&m, "main")])
        .unwrap()
        .with_bindless_max(0, 2, 4)
        .with_bindless_max(0, 3, 16);
    assert_eq!(desc.runtime_arrays, vec![(0, 2), (0, 3)]);
    if !device.features().runtime_descriptor_array {
        let err = device.pipeline_layout(&desc).unwrap_err();
        assert_eq!(err.code(), "KILN-E107", "{err}");
        assert!(err.to_string().contains("set 0 binding 2"), "{err}");
        eprintln!(
            "bindless textures: {} lacks descriptor indexing; checked the error",
            device.info().name
        );
        assert_clean(&device);
        return;
    }
    let p = device
        .compute_pipeline_with(&kiln::ComputePipelineDesc::new(&m, "main").layout(Some(&desc)))
        .unwrap();
    let set_layout = &p.layout().set_layouts()[0];
    let (samplers, textures) = (
        set_layout.desc().binding(2).unwrap().clone(),
        set_layout.desc().binding(3).unwrap().clone(),
    );
    assert_eq!((samplers.count, textures.count), (4, 16));
    let partial = vk::DescriptorBindingFlags::PARTIALLY_BOUND;
    assert!(samplers.flags.contains(partial) && textures.flags.contains(partial));
    assert!(textures
        .flags
        .contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT));
    let uab = device.features().update_after_bind_sampled_image;
    for b in [&samplers, &textures] {
        assert_eq!(
            b.flags
                .contains(vk::DescriptorBindingFlags::UPDATE_AFTER_BIND),
            uab
        );
    }
    eprintln!(
        "bindless textures: {} has descriptor indexing (update-after-bind for sampled images: \
         {uab}); ran the real path",
        device.info().name
    );
    // Eight textures of one texel, 10 k + 1; a set of 8 (variable count).
    let texture = |k: u32| {
        let v = 10.0 * k as f32 + 1.0;
        device
            .texture_from_bytes(
                "texel",
                1,
                1,
                vk::Format::R32_SFLOAT,
                bytemuck::bytes_of(&v),
            )
            .unwrap()
    };
    let images: Vec<kiln::Image> = (0..8).map(texture).collect();
    let sampler = device.sampler(&kiln::SamplerDesc::nearest_clamp()).unwrap();
    let mut set = p.descriptor_set_with_count(0, Some(8)).unwrap();
    // Only textures 0, 3 and 7 and sampler 1 are written.
    for k in [0u32, 3, 7] {
        set.write_image_element(3, k, Some(&images[k as usize]), None)
            .unwrap();
    }
    set.write_image_element(2, 1, None, Some(&sampler)).unwrap();
    assert_eq!(
        code(set.write_image_element(3, 8, Some(&images[0]), None)),
        "KILN-E203"
    );
    let which: Vec<[u32; 2]> = vec![[0, 1], [3, 1], [7, 1], [3, 1]];
    let which_buf = add::storage(&device, "which", &which);
    let out = device.storage_buffer::<f32>("out", which.len()).unwrap();
    set.write_buffer(0, &out).unwrap();
    set.write_buffer(1, &which_buf).unwrap();
    let run = |set: &kiln::DescriptorSet| {
        device.execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, set)?;
            Ok(r.dispatch_threads(which.len() as u32)?)
        })
    };
    run(&set).unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![1.0, 31.0, 71.0, 31.0]);
    // Elements written after the set was bound (texture 5, sampler 3), then read.
    set.write_image_element(3, 5, Some(&images[5]), None)
        .unwrap();
    set.write_image_element(2, 3, None, Some(&sampler)).unwrap();
    which_buf
        .upload(&[[5u32, 3], [0, 1], [5, 1], [7, 3]])
        .unwrap();
    run(&set).unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![51.0, 1.0, 51.0, 71.0]);
    assert_clean(&device);
}
