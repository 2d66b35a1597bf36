//! Push descriptors (VK_KHR_push_descriptor): a pipeline whose set 0 is a push set takes
//! its buffers, images, samplers and texel buffers at record time, checked like set
//! writes, with no pool and no set object.

use common::{assert_clean, code, device};
use kiln::{
    vk, ComputePipeline, ComputePipelineDesc, Device, ImageDesc, ImageViewDesc, PipelineLayoutDesc,
    PushResource, PushWrite, SamplerDesc,
};

fn pushed_vector_add(device: &Device) -> ComputePipeline {
    assert!(
        device.features().push_descriptor,
        "{} lacks VK_KHR_push_descriptor, which these tests need (lavapipe has it)",
        device.info().name
    );
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").push_descriptor_set(Some(0)))
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
            Ok(r.dispatch_threads(n as u32)?)
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
            Ok(r.dispatch_threads(16)?)
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
            Ok(r.dispatch_threads(16)?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E254", "{e}");
    let e = device
        .execute(|r| Ok(r.push_descriptor_set(0, &all)?))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E252", "{e}");
    // A set the shader does not have, and two push sets in one layout.
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let e = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").push_descriptor_set(Some(3)))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E210", "{e}");
    let mut two = PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap();
    two.sets.push(two.sets[0].clone());
    let two = two.with_push_descriptor(0).with_push_descriptor(1);
    let e = device.pipeline_layout(&two).unwrap_err();
    assert_eq!(e.code(), "KILN-E210", "{e}");
    // kiln pushes no input attachments: a push layout with one is refused.
    let image_binding = kiln::SetLayoutBinding::new(
        0,
        vk::DescriptorType::INPUT_ATTACHMENT,
        1,
        vk::ShaderStageFlags::COMPUTE,
    );
    let e = device
        .set_layout(&kiln::DescriptorSetLayoutDesc::new(
            vec![image_binding],
            vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR,
        ))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E209", "{e}");
    assert!(e.to_string().contains("INPUT_ATTACHMENT"), "{e}");
    // The device still works.
    run(&p, 0, &all).unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![2.0; 16]);
    assert_clean(&device);
}

const W: u32 = 16;
const H: u32 = 8;
const R32F: vk::Format = vk::Format::R32_SFLOAT;

/// `push_images.comp` with set 0 a push set.
fn pushed_images(device: &Device) -> ComputePipeline {
    let m = kiln::include_spirv!("test/push_images.comp").unwrap();
    device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").push_descriptor_set(Some(0)))
        .unwrap()
}

/// The inputs of `push_images.comp`: `tex` (texel i = i), `comb` a 2-layer array whose
/// layer 1 holds i % 7 (layer 0: 999), `lut` a texel buffer of 0.25 i, `dst` a storage
/// (and sampled) image.
struct Inputs {
    tex: kiln::Image,
    comb: kiln::Image,
    lut: kiln::BufferView,
    sampler: kiln::Sampler,
    dst: kiln::Image,
}

fn inputs(device: &Device) -> Inputs {
    let n = (W * H) as usize;
    let tex_texels: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let tex = device
        .texture_from_bytes("tex", W, H, R32F, bytemuck::cast_slice(&tex_texels))
        .unwrap();
    let comb = device
        .image(&ImageDesc::array("comb", W, H, 2, R32F))
        .unwrap();
    let mut comb_texels = vec![999.0f32; n];
    comb_texels.extend((0..n).map(|i| (i % 7) as f32));
    comb.upload(bytemuck::cast_slice(&comb_texels)).unwrap();
    let lut_texels: Vec<f32> = (0..n).map(|i| 0.25 * i as f32).collect();
    let lut_buf = device
        .buffer_from_slice(
            "lut",
            vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
            &lut_texels,
        )
        .unwrap();
    let lut = lut_buf.view(R32F, 0, (n * 4) as u64).unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let dst = device
        .image(
            &ImageDesc::texture("dst", W, H, R32F)
                .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED),
        )
        .unwrap();
    Inputs {
        tex,
        comb,
        lut,
        sampler,
        dst,
    }
}

fn texels(image: &kiln::Image) -> Vec<f32> {
    bytemuck::cast_slice(&image.read().unwrap()).to_vec()
}

#[test]
fn pushed_images_samplers_and_texel_buffers_feed_two_dispatches() {
    let device = device();
    let p = pushed_images(&device);
    let i = inputs(&device);
    let layer1 = i.comb.view_of(&ImageViewDesc::layer(1, 0)).unwrap();
    let dst2 = device
        .image(&ImageDesc::texture("dst2", W, H, R32F).usage(vk::ImageUsageFlags::STORAGE))
        .unwrap();
    let (first, second, layouts) = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.push_descriptor_set(
                0,
                &[
                    PushWrite::image(0, &i.tex),
                    PushWrite::sampler(1, &i.sampler),
                    PushWrite::combined_view(2, &layer1, &i.sampler),
                    PushWrite::texel_buffer(3, &i.lut),
                    PushWrite::image(4, &i.dst),
                ],
            )?;
            r.dispatch(W / 8, H / 8, 1)?;
            let first = r.barrier_count();
            // The second reads what the first wrote, as a sampled image: kiln moves `dst`
            // from GENERAL to SHADER_READ_ONLY_OPTIMAL with the barrier.
            r.push_descriptor_set(
                0,
                &[
                    PushWrite::image(0, &i.dst),
                    PushWrite::sampler(1, &i.sampler),
                    PushWrite::combined_view(2, &layer1, &i.sampler),
                    PushWrite::texel_buffer(3, &i.lut),
                    PushWrite::image(4, &dst2),
                ],
            )?;
            r.dispatch(W / 8, H / 8, 1)?;
            let layouts = (r.image_layout(&i.dst), r.image_layout(&dst2));
            Ok((first, r.barrier_count(), layouts))
        })
        .unwrap();
    println!("push_images: barriers {first} then {second}");
    assert!(second > first, "the second dispatch needs a barrier");
    assert_eq!(
        layouts,
        (
            vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            vk::ImageLayout::GENERAL
        )
    );
    let n = (W * H) as usize;
    let add = |i: usize| 10.0 * (i % 7) as f32 + 0.25 * i as f32;
    let want1: Vec<f32> = (0..n).map(|k| k as f32 + add(k)).collect();
    assert_eq!(texels(&i.dst), want1);
    let want2: Vec<f32> = (0..n).map(|k| want1[k] + add(k)).collect();
    assert_eq!(texels(&dst2), want2);
    assert_clean(&device);
}

#[test]
fn pushed_image_errors_are_the_set_write_codes() {
    let device = device();
    let p = pushed_images(&device);
    let i = inputs(&device);
    let layer1 = i.comb.view_of(&ImageViewDesc::layer(1, 0)).unwrap();
    let run = |writes: &[PushWrite<'_>]| {
        device.execute(|r| {
            r.bind_pipeline(&p)?;
            r.push_descriptor_set(0, writes)?;
            Ok(r.dispatch(W / 8, H / 8, 1)?)
        })
    };
    let good = [
        PushWrite::image(0, &i.tex),
        PushWrite::sampler(1, &i.sampler),
        PushWrite::combined_view(2, &layer1, &i.sampler),
        PushWrite::texel_buffer(3, &i.lut),
        PushWrite::image(4, &i.dst),
    ];
    let replaced = |k: usize, w| {
        let mut v = good.to_vec();
        v[k] = w;
        code(run(&v))
    };
    // Types: a sampler at an image binding, an image at the sampler binding, an image
    // without a sampler at the combined binding, a buffer and a texel buffer at images.
    let storage = device.storage_buffer::<f32>("storage", 64).unwrap();
    assert_eq!(replaced(0, PushWrite::sampler(0, &i.sampler)), "KILN-E202");
    assert_eq!(replaced(1, PushWrite::image(1, &i.tex)), "KILN-E202");
    assert_eq!(replaced(2, PushWrite::image(2, &i.tex)), "KILN-E202");
    assert_eq!(replaced(4, PushWrite::buffer(4, &storage)), "KILN-E202");
    assert_eq!(replaced(0, PushWrite::texel_buffer(0, &i.lut)), "KILN-E202");
    assert_eq!(replaced(3, PushWrite::image(3, &i.tex)), "KILN-E202");
    // Usage: `tex` has no STORAGE usage; a texel view of a buffer without
    // UNIFORM_TEXEL_BUFFER usage.
    let e = run(&[
        good[0],
        good[1],
        good[2],
        good[3],
        PushWrite::image(4, &i.tex),
    ])
    .unwrap_err();
    assert_eq!(e.code(), "KILN-E182", "{e}");
    assert!(e.to_string().contains("`tex`"), "{e}");
    let storage_texels = device
        .buffer_from_slice(
            "storage texels",
            vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
            &[0.0f32; 128],
        )
        .unwrap();
    let wrong_view = storage_texels.view(R32F, 0, 512).unwrap();
    assert_eq!(
        replaced(3, PushWrite::texel_buffer(3, &wrong_view)),
        "KILN-E157"
    );
    // Element, binding, a descriptor not given.
    let e = run(&[good[0], good[1], good[2], good[3], good[4], good[0].at(1)]).unwrap_err();
    assert_eq!(e.code(), "KILN-E203", "{e}");
    assert_eq!(replaced(4, PushWrite::image(9, &i.dst)), "KILN-E200");
    let e = run(&[good[0], good[2], good[3], good[4]]).unwrap_err();
    assert_eq!(e.code(), "KILN-E207", "{e}");
    assert!(e.to_string().contains("binding 1"), "{e}");
    // Objects of another device.
    let other = common::device();
    let foreign_img = other
        .texture_from_bytes("foreign", W, H, R32F, &vec![0u8; (W * H * 4) as usize])
        .unwrap();
    let foreign_sampler = other.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let foreign_buf = other
        .buffer_from_slice(
            "foreign lut",
            vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
            &[0.0f32; 128],
        )
        .unwrap();
    let foreign_view = foreign_buf.view(R32F, 0, 512).unwrap();
    assert_eq!(replaced(0, PushWrite::image(0, &foreign_img)), "KILN-E109");
    assert_eq!(
        replaced(1, PushWrite::sampler(1, &foreign_sampler)),
        "KILN-E109"
    );
    assert_eq!(
        replaced(3, PushWrite::texel_buffer(3, &foreign_view)),
        "KILN-E109"
    );
    // The whole 2-layer array where the shader declares a 2D image: the dispatch refuses
    // its view type.
    let e = run(&[
        good[0],
        good[1],
        PushWrite::combined(2, &i.comb, &i.sampler),
        good[3],
        good[4],
    ])
    .unwrap_err();
    assert_eq!(e.code(), "KILN-E214", "{e}");
    assert!(e.to_string().contains("`comb`"), "{e}");
    // One image as the sampled and the storage image of one dispatch: two layouts.
    let e = run(&[
        PushWrite::image(0, &i.dst),
        good[1],
        good[2],
        good[3],
        good[4],
    ])
    .unwrap_err();
    assert_eq!(e.code(), "KILN-E286", "{e}");
    // The device still works.
    run(&good).unwrap();
    assert_eq!(texels(&i.dst)[8], 8.0 + 10.0 + 2.0);
    assert_clean(&device);
    assert_clean(&other);
}

/// A graphics pipeline's push set: a combined image sampler pushed outside the rendering
/// scope moves its image to SHADER_READ_ONLY_OPTIMAL at once (no barrier may be recorded
/// inside the scope); pushed inside the scope with the image in another layout, the draw
/// refuses it.
#[test]
fn a_graphics_push_moves_its_image_before_the_scope() {
    use common::draw::{assert_quad_texels, quad_vertex_layout, texture_2x2, RGBA8};
    use kiln::{ColorAttachment, GraphicsPipelineDesc, RenderingDesc};
    let device = device();
    let vs = kiln::include_spirv!("test/textured.vert").unwrap();
    let fs = kiln::include_spirv!("test/textured.frag").unwrap();
    let layout = PipelineLayoutDesc::from_stages(&[(&vs, "main"), (&fs, "main")])
        .unwrap()
        .with_push_descriptor(0);
    let img = device
        .image(&ImageDesc::color_target("target", 8, 8, RGBA8))
        .unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(quad_vertex_layout())
        .targets(&[&img], None);
    desc.layout = Some(&layout);
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    let tex = texture_2x2(&device);
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let quad: [[f32; 4]; 6] = [
        [-1.0, -1.0, 0.0, 0.0],
        [1.0, -1.0, 1.0, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [-1.0, -1.0, 0.0, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [-1.0, 1.0, 0.0, 1.0],
    ];
    let vb = device
        .buffer_from_slice("quad", vk::BufferUsageFlags::VERTEX_BUFFER, &quad)
        .unwrap();
    let color = [ColorAttachment::clear(&img, [0.0; 4])];
    let scope = RenderingDesc::new(&color);
    let moved = device
        .execute(|r| {
            r.transition(&tex, vk::ImageLayout::GENERAL)?;
            r.bind_pipeline(&pipeline)?;
            r.push_descriptor_set(0, &[PushWrite::combined(0, &tex, &sampler)])?;
            let moved = r.image_layout(&tex);
            r.begin_rendering(&scope)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 0, 0)?;
            r.end_rendering()?;
            Ok(moved)
        })
        .unwrap();
    assert_eq!(moved, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    assert_quad_texels(&img.read().unwrap());
    let e = device
        .execute(|r| {
            r.transition(&tex, vk::ImageLayout::GENERAL)?;
            r.begin_rendering(&scope)?;
            r.bind_pipeline(&pipeline)?;
            r.push_descriptor_set(0, &[PushWrite::combined(0, &tex, &sampler)])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E286", "{e}");
    assert_clean(&device);
}

/// A bound set and a pushed set of one dispatch naming one image: set 0 samples it
/// (SHADER_READ_ONLY_OPTIMAL), push set 1 stores to it (GENERAL). Overlapping ranges cannot
/// be in both layouts (KILN-E286, not the one layout moved twice); other layers of one
/// array can.
#[test]
fn a_bound_set_and_a_pushed_set_share_an_image_only_without_overlap() {
    let device = device();
    let m = kiln::include_spirv!("test/push_mixed_sets.comp").unwrap();
    let p = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").push_descriptor_set(Some(1)))
        .unwrap();
    let desc = ImageDesc::array("x", W, H, 2, R32F);
    let usage = desc.usage | vk::ImageUsageFlags::STORAGE;
    let x = device.image(&desc.usage(usage)).unwrap();
    let n = (W * H) as usize;
    let mut data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    data.extend(vec![-5.0f32; n]);
    x.upload(bytemuck::cast_slice(&data)).unwrap();
    let layer0 = x.view_of(&ImageViewDesc::layer(0, 0)).unwrap();
    let layer1 = x.view_of(&ImageViewDesc::layer(1, 0)).unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_image_view(0, 0, &layer0, Some(&sampler)).unwrap();
    let run = |pushed: &kiln::ImageView| {
        device.execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push_descriptor_set(1, &[PushWrite::image_view(0, pushed)])?;
            Ok(r.dispatch(W / 8, H / 8, 1)?)
        })
    };
    // Layer 0 sampled and stored by one dispatch.
    let e = run(&layer0).unwrap_err();
    assert_eq!(e.code(), "KILN-E286", "{e}");
    assert!(e.to_string().contains("`x`"), "{e}");
    // Layer 0 sampled, layer 1 stored: each layer in its own layout.
    run(&layer1).unwrap();
    let got = texels(&x);
    let want: Vec<f32> = (0..n)
        .map(|i| i as f32)
        .chain((0..n).map(|i| i as f32 + 1.0))
        .collect();
    assert_eq!(got, want);
    assert_clean(&device);
}

/// A pushed image with a view: the view must be one of that image's, of the same device.
#[test]
fn a_pushed_view_must_be_of_the_pushed_image() {
    let device = device();
    let p = pushed_images(&device);
    let i = inputs(&device);
    let layer1 = i.comb.view_of(&ImageViewDesc::layer(1, 0)).unwrap();
    let with = |binding: u32, image, view, sampler| PushWrite {
        binding,
        element: 0,
        resource: PushResource::Image {
            image,
            view: Some(view),
            sampler,
        },
    };
    let run = |w: PushWrite<'_>| {
        let writes = [
            PushWrite::image(0, &i.tex),
            PushWrite::sampler(1, &i.sampler),
            w,
            PushWrite::texel_buffer(3, &i.lut),
            PushWrite::image(4, &i.dst),
        ];
        device.execute(|r| {
            r.bind_pipeline(&p)?;
            r.push_descriptor_set(0, &writes)?;
            Ok(r.dispatch(W / 8, H / 8, 1)?)
        })
    };
    // `comb`'s view given as a view of `tex`.
    let e = run(with(2, &i.tex, &layer1, Some(&i.sampler))).unwrap_err();
    assert_eq!(e.code(), "KILN-E216", "{e}");
    assert!(
        e.to_string().contains("`comb`") && e.to_string().contains("`tex`"),
        "{e}"
    );
    // A view of another device's image given with this device's image.
    let other = common::device();
    let foreign = other
        .image(&ImageDesc::array("foreign comb", W, H, 2, R32F))
        .unwrap();
    let foreign_view = foreign.view_of(&ImageViewDesc::layer(1, 0)).unwrap();
    let e = run(with(2, &i.comb, &foreign_view, Some(&i.sampler))).unwrap_err();
    assert_eq!(e.code(), "KILN-E109", "{e}");
    // The view with its own image works: dst = tex + 10 * comb layer 1 + lut.
    run(with(2, &i.comb, &layer1, Some(&i.sampler))).unwrap();
    assert_eq!(texels(&i.dst)[8], 8.0 + 10.0 + 2.0);
    assert_clean(&device);
    assert_clean(&other);
}
