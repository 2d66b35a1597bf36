//! Images beyond one 2D layer, on a real device under validation: arrays, cubes, 3D and 1D
//! images uploaded and read back layer by layer and sampled through their views by a
//! shader; mip chains generated on the GPU and read back level by level; multisampled
//! targets resolved; and the coded errors of each.

use common::draw::{pixel, RGBA8};
use common::{assert_clean, device};
use kiln::{
    vk, ColorAttachment, Device, GraphicsPipelineDesc, Image, ImageDesc, ImageView, ImageViewDesc,
    RenderingDesc, SamplerDesc, VertexBufferLayout,
};

/// The colour of layer (or slice) `i`: distinct per layer in every channel.
fn shade(i: u32) -> [u8; 4] {
    [
        (20 * i + 10) as u8,
        (250 - 20 * i) as u8,
        (7 * i) as u8,
        255,
    ]
}

/// Tightly packed texels of `image` (mip 0) with every layer, and every slice of a 3D
/// image, filled with its own [`shade`].
fn layered(image: &Image) -> Vec<u8> {
    let planes = image.array_layers() * image.depth();
    let per = (image.width() * image.height()) as usize;
    (0..planes).flat_map(|i| shade(i).repeat(per)).collect()
}

fn make(device: &Device, desc: ImageDesc) -> Image {
    let image = device.image(&desc).unwrap();
    image.upload(&layered(&image)).unwrap();
    image
}

#[test]
fn arrays_cubes_and_volumes_round_trip_and_sample_every_layer() {
    let device = device();
    let cube = make(&device, ImageDesc::cube("cube", 4, RGBA8));
    let array = make(&device, ImageDesc::array("array", 4, 2, 3, RGBA8));
    let volume = make(&device, ImageDesc::volume("volume", 2, 2, 4, RGBA8));
    let line = make(
        &device,
        ImageDesc::texture("line", 16, 1, RGBA8)
            .view_type(vk::ImageViewType::TYPE_1D_ARRAY)
            .array_layers(2),
    );
    for (image, planes) in [(&cube, 6), (&array, 3), (&volume, 4), (&line, 2)] {
        let (w, h) = (image.width(), image.height());
        assert_eq!(image.level_size(0), u64::from(w * h * 4 * planes));
        assert_eq!(image.read().unwrap(), layered(image), "{}", image.label());
    }
    assert_eq!(cube.view_type(), vk::ImageViewType::CUBE);
    assert_eq!((volume.depth(), volume.array_layers()), (4, 1));
    let p = device
        .compute_pipeline(
            &kiln::include_spirv!("test/image_kinds.comp").unwrap(),
            "main",
        )
        .unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let out = device.storage_buffer::<[f32; 4]>("out", 13).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_combined(0, &cube, &sampler).unwrap();
    set.write_combined(1, &array, &sampler).unwrap();
    set.write_combined(2, &volume, &sampler).unwrap();
    set.write_buffer(3, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    let got: Vec<[f32; 4]> = out.read().unwrap();
    let want = (0..6).chain(0..3).chain(0..4).map(shade);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let g = g.map(|c| (c * 255.0).round() as u8);
        assert_eq!(
            g, w,
            "sample {i} (cube faces 0..6, array layers 6..9, slices 9..13)"
        );
    }
    assert_clean(&device);
}

#[test]
fn mips_are_generated_on_the_gpu_for_every_layer() {
    let device = device();
    // Two layers of 4x4; layer 0's 2x2 blocks average to 40, 80, 120, 160 and layer 1's
    // to 200 - those, so level 1 is exact and level 2 is their average, 100.
    let desc = ImageDesc::array("mipped", 4, 4, 2, RGBA8).full_mip_chain();
    assert_eq!(desc.mip_levels, 3);
    let image = device.image(&desc).unwrap();
    let block = [[20u8, 60], [60, 100], [100, 140], [140, 180]];
    let mut texels = Vec::new();
    for layer in 0..2u8 {
        for y in 0..4 {
            for x in 0..4 {
                let (b, i) = ((y / 2) * 2 + x / 2, (x + y) % 2);
                let v = block[b][i];
                let v = if layer == 0 { v } else { 200 - v };
                texels.extend_from_slice(&[v, v, v, 255]);
            }
        }
    }
    image.upload(&texels).unwrap();
    device.execute(|r| Ok(r.generate_mips(&image)?)).unwrap();
    assert_eq!(image.layout(), vk::ImageLayout::TRANSFER_DST_OPTIMAL);
    let level1 = image.read_level(1).unwrap();
    let level2 = image.read_level(2).unwrap();
    let red = |data: &[u8]| data.chunks(4).map(|t| t[0]).collect::<Vec<_>>();
    let near = |got: Vec<u8>, want: &[u8], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(want) {
            assert!(g.abs_diff(*w) <= 1, "{what}: {got:?}, want {want:?}");
        }
    };
    near(
        red(&level1),
        &[40, 80, 120, 160, 160, 120, 80, 40],
        "level 1, both layers",
    );
    near(red(&level2), &[100, 100], "level 2, both layers");
    // One level: nothing to do, nothing recorded.
    let single = device
        .image(&ImageDesc::texture("single", 4, 4, RGBA8))
        .unwrap();
    device.execute(|r| Ok(r.generate_mips(&single)?)).unwrap();
    assert_eq!(single.layout(), vk::ImageLayout::UNDEFINED);
    assert_clean(&device);
}

#[test]
fn mip_generation_errors_are_coded() {
    let device = device();
    // Integer formats have no linear filtering (SAMPLED_IMAGE_FILTER_LINEAR).
    let uint = device
        .image(&ImageDesc::texture("uint", 4, 4, vk::Format::R8G8B8A8_UINT).full_mip_chain())
        .unwrap();
    let err = device.execute(|r| Ok(r.generate_mips(&uint)?)).unwrap_err();
    assert_eq!(err.code(), "KILN-E183", "{err}");
    // What the device gives the format lacks the linear filter the blits need.
    let found = err.to_string();
    let found = found.split("gives it").nth(1).unwrap_or_default();
    assert!(!found.contains("SAMPLED_IMAGE_FILTER_LINEAR"), "{err}");
    let depth = device
        .image(&ImageDesc::depth_target("depth", 4, 4, vk::Format::D32_SFLOAT).mip_levels(2))
        .unwrap();
    let err = device
        .execute(|r| Ok(r.generate_mips(&depth)?))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E180", "{err}");
    assert_clean(&device);
}

/// `test/flat.{vert,frag}` into RGBA8 with `samples` per pixel.
fn flat(device: &Device, samples: vk::SampleCountFlags) -> kiln::Result<kiln::GraphicsPipeline> {
    let vs = kiln::include_spirv!("test/flat.vert")?;
    let fs = kiln::include_spirv!("test/flat.frag")?;
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(VertexBufferLayout::packed(
        &[(0, vk::Format::R32G32_SFLOAT)],
    ));
    desc.color_formats = vec![RGBA8];
    desc.samples = samples;
    Ok(device.graphics_pipeline(&desc)?)
}

#[test]
fn a_4x_target_resolves_its_edges_to_averages() {
    let device = device();
    let x4 = vk::SampleCountFlags::TYPE_4;
    let (w, h) = (16u32, 16u32);
    let msaa = device
        .image(
            &ImageDesc::color_target("msaa", w, h, RGBA8)
                .samples(x4)
                .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT),
        )
        .unwrap();
    let resolved = device
        .image(&ImageDesc::color_target("resolved", w, h, RGBA8))
        .unwrap();
    let pipeline = flat(&device, x4).unwrap();
    // The upper-left half: the diagonal crosses pixel centres' neighbourhoods.
    let vb = device
        .buffer_from_slice(
            "half",
            vk::BufferUsageFlags::VERTEX_BUFFER,
            &[[-1.0f32, -1.0], [1.0, -1.0], [-1.0, 1.0]],
        )
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &msaa,
                [0.0, 0.0, 0.0, 1.0],
            )
            .resolve_into(&resolved)]))?;
            r.bind_pipeline(&pipeline)?;
            r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = resolved.read().unwrap();
    assert_eq!(pixel(&data, w, 2, 2), [0, 255, 0, 255], "inside");
    assert_eq!(pixel(&data, w, 13, 13), [0, 0, 0, 255], "outside");
    // On the diagonal x + y = 15 some samples of each pixel are covered and some are not:
    // one sample per pixel would give only 0 or 255.
    let partial = (0..w)
        .map(|x| pixel(&data, w, x, w - 1 - x)[1])
        .filter(|g| *g > 0 && *g < 255)
        .count();
    assert!(
        partial > w as usize / 2,
        "{partial} partly covered pixels on the diagonal"
    );
    assert_clean(&device);
}

#[test]
fn multisample_errors_are_coded() {
    let device = device();
    let x4 = vk::SampleCountFlags::TYPE_4;
    let msaa = device
        .image(&ImageDesc::color_target("msaa", 8, 8, RGBA8).samples(x4))
        .unwrap();
    let single = device
        .image(&ImageDesc::color_target("single", 8, 8, RGBA8))
        .unwrap();
    let bgra = device
        .image(&ImageDesc::color_target(
            "bgra",
            8,
            8,
            vk::Format::B8G8R8A8_UNORM,
        ))
        .unwrap();
    // A multisampled image cannot be copied.
    let err = msaa.read().unwrap_err();
    assert_eq!(err.code(), "KILN-E180", "{err}");
    assert!(err.to_string().contains("resolve it"), "{err}");
    // More samples than the device's framebuffers allow.
    let err = flat(&device, vk::SampleCountFlags::TYPE_64).unwrap_err();
    assert_eq!(err.code(), "KILN-E282", "{err}");
    assert!(
        err.to_string().contains("framebufferColorSampleCounts"),
        "{err}"
    );
    let err = device
        .image(&ImageDesc::color_target("x64", 8, 8, RGBA8).samples(vk::SampleCountFlags::TYPE_64))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E180", "{err}");
    let vb = device
        .buffer_from_slice("point", vk::BufferUsageFlags::VERTEX_BUFFER, &[[0.0f32; 2]])
        .unwrap();
    let scope = |color: ColorAttachment, pipeline: Option<&kiln::GraphicsPipeline>| {
        device.execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[color]))?;
            if let Some(p) = pipeline {
                r.bind_pipeline(p)?;
                r.push(0, &[0.0f32; 4])?;
                r.bind_vertex_buffer(0, &vb, 0)?;
                r.draw(0, 1, 0, 0)?;
            }
            Ok(r.end_rendering()?)
        })
    };
    let clear = |i| ColorAttachment::clear(i, [0.0; 4]);
    for (what, color, text) in [
        (
            "resolve of one sample",
            clear(&single).resolve_into(&bgra),
            "only a multisampled",
        ),
        (
            "resolve into another format",
            clear(&msaa).resolve_into(&bgra),
            "its attachment's format",
        ),
        (
            "resolve into a multisampled image",
            clear(&msaa).resolve_into(&msaa),
            "one sample, not",
        ),
    ] {
        let err = scope(color, None).unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{what}: {err}");
        assert!(err.to_string().contains(text), "{what}: {err}");
    }
    // A pipeline built for other attachments than the scope's.
    let x1 = flat(&device, vk::SampleCountFlags::TYPE_1).unwrap();
    let msaa_pipeline = flat(&device, x4).unwrap();
    for (what, color, p) in [
        ("1x pipeline, 4x scope", clear(&msaa), &x1),
        ("4x pipeline, 1x scope", clear(&single), &msaa_pipeline),
        ("RGBA8 pipeline, BGRA8 scope", clear(&bgra), &x1),
    ] {
        let err = scope(color, Some(p)).unwrap_err();
        assert_eq!(err.code(), "KILN-E287", "{what}: {err}");
    }
    scope(clear(&msaa).resolve_into(&single), Some(&msaa_pipeline)).unwrap();
    // Two attachments: a single-sampled one beside a 4x one (whose resolve target is
    // single-sampled, as it must be), and one image named twice.
    let two = |a: ColorAttachment, b: ColorAttachment| {
        device.execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[a, b]))?;
            Ok(r.end_rendering()?)
        })
    };
    let other = device
        .image(&ImageDesc::color_target("other", 8, 8, RGBA8))
        .unwrap();
    for (what, result, text) in [
        (
            "a 1x attachment in a 4x scope",
            two(clear(&msaa).resolve_into(&single), clear(&other)),
            "share a sample count",
        ),
        (
            "one attachment twice",
            two(clear(&msaa), clear(&msaa)),
            "named twice",
        ),
    ] {
        let err = result.unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{what}: {err}");
        assert!(err.to_string().contains(text), "{what}: {err}");
    }
    // The check is cached per pipeline and scope: a draw that passed, then the same
    // pipeline in a scope of other formats, and a depth format the pipeline lacks.
    let depth = device
        .image(&ImageDesc::depth_target(
            "depth",
            8,
            8,
            vk::Format::D32_SFLOAT,
        ))
        .unwrap();
    let err = device
        .execute(|r| {
            for (i, img) in [&single, &bgra].into_iter().enumerate() {
                r.begin_rendering(
                    &RenderingDesc::new(&[clear(img)])
                        .depth((i == 1).then(|| kiln::DepthAttachment::clear(&depth, 1.0))),
                )?;
                r.bind_pipeline(&x1)?;
                r.push(0, &[0.0f32; 4])?;
                r.bind_vertex_buffer(0, &vb, 0)?;
                r.draw(0, 1, 0, 0)?;
                r.end_rendering()?;
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E287", "{err}");
    assert!(err.to_string().contains("depth D32_SFLOAT"), "{err}");
    // A draw with the pipeline's vertex binding 0 unbound (VUID-vkCmdDraw-None-04007).
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[clear(&single)]))?;
            r.bind_pipeline(&x1)?;
            r.push(0, &[0.0f32; 4])?;
            Ok(r.draw(3, 1, 0, 0)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "{err}");
    assert!(err.to_string().contains("bind_vertex_buffer"), "{err}");
    assert_clean(&device);
}

#[test]
fn image_descriptions_beyond_the_device_are_coded() {
    let device = device();
    let limits = *device.limits();
    for desc in [
        ImageDesc::array(
            "too many layers",
            4,
            4,
            limits.max_image_array_layers + 1,
            RGBA8,
        ),
        ImageDesc::cube("too big a cube", limits.max_image_dimension_cube + 1, RGBA8),
        ImageDesc::cube("not square", 4, RGBA8).width(8),
    ] {
        let err = device.image(&desc).unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{}: {err}", desc.label);
        assert!(err.to_string().contains(desc.label), "{err}");
    }
    // A whole array image is not an attachment (one layer of it, through a view, is).
    let layers = device
        .image(
            &ImageDesc::array("layers", 4, 4, 2, RGBA8)
                .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT),
        )
        .unwrap();
    let err = device
        .execute(|r| {
            Ok(
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    &layers, [0.0; 4],
                )]))?,
            )
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E180", "{err}");
    assert!(
        err.to_string().contains("one-layer 2D image or view"),
        "{err}"
    );
    assert_clean(&device);
}

#[test]
fn an_image_whose_view_the_shader_does_not_declare_is_e214() {
    let device = device();
    let p = device
        .compute_pipeline(
            &kiln::include_spirv!("test/image_kinds.comp").unwrap(),
            "main",
        )
        .unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let out = device.storage_buffer::<[f32; 4]>("out", 13).unwrap();
    let cube = make(&device, ImageDesc::cube("cube", 4, RGBA8));
    let array = make(&device, ImageDesc::array("array", 4, 4, 6, RGBA8));
    let volume = make(&device, ImageDesc::volume("volume", 2, 2, 4, RGBA8));
    // Binding 0 is a samplerCube; a 2D array of six layers is not a cube view.
    let mut set = p.descriptor_set(0).unwrap();
    set.write_combined(0, &array, &sampler).unwrap();
    set.write_combined(1, &array, &sampler).unwrap();
    set.write_combined(2, &volume, &sampler).unwrap();
    set.write_buffer(3, &out).unwrap();
    let run = |set: &kiln::DescriptorSet| {
        device.execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, set)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
    };
    let err = run(&set).unwrap_err();
    assert_eq!(err.code(), "KILN-E214", "{err}");
    assert!(
        err.to_string().contains("`array` (set 0, binding 0)")
            && err.to_string().contains("DimCube"),
        "{err}"
    );
    set.write_combined(0, &cube, &sampler).unwrap();
    run(&set).unwrap();
    // The textured quad's sampler2D given the cube.
    let textured = common::draw::textured_pipeline(&device);
    let mut quad = textured.descriptor_set(0).unwrap();
    quad.write_combined(0, &cube, &sampler).unwrap();
    let img = common::draw::target(&device, 8, 8);
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&textured)?;
            r.bind_set(0, &quad)?;
            Ok(r.draw(0, 1, 0, 0)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E214", "{err}");
    assert_clean(&device);
}

/// `shade(i)` as the floats of a clear colour.
fn shade_f(i: u32) -> [f32; 4] {
    shade(i).map(|c| f32::from(c) / 255.0)
}

#[test]
fn faces_layers_and_mips_render_and_sample_through_views() {
    let device = device();
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let cube = device
        .image(&ImageDesc::cube("faces", 4, RGBA8).usage(usage))
        .unwrap();
    let faces: Vec<ImageView> = (0..6)
        .map(|f| cube.view_of(&ImageViewDesc::layer(f, 0)).unwrap())
        .collect();
    // Mip 1 of a two-mip texture is rendered; mip 0 keeps its upload.
    let mipped = device
        .image(
            &ImageDesc::texture("mipped", 8, 8, RGBA8)
                .usage(usage)
                .mip_levels(2),
        )
        .unwrap();
    mipped.upload(&shade(9).repeat(64)).unwrap();
    let mip1 = mipped.view_of(&ImageViewDesc::layer(0, 1)).unwrap();
    assert_eq!(
        mip1.extent(),
        vk::Extent2D {
            width: 4,
            height: 4
        }
    );
    device
        .execute(|r| {
            for (f, view) in faces.iter().enumerate() {
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::view(
                    view,
                    shade_f(f as u32),
                )]))?;
                r.end_rendering()?;
            }
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::view(
                &mip1,
                shade_f(7),
            )]))?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    assert_eq!(
        mipped.read_level(0).unwrap(),
        shade(9).repeat(64),
        "mip 0 kept"
    );
    assert_eq!(
        mipped.read_level(1).unwrap(),
        shade(7).repeat(16),
        "mip 1 rendered"
    );
    // The rendered faces sampled as a cube; layer 2 of an array sampled as a 2D texture.
    let p = device
        .compute_pipeline(
            &kiln::include_spirv!("test/image_kinds.comp").unwrap(),
            "main",
        )
        .unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let array = make(&device, ImageDesc::array("array", 4, 2, 3, RGBA8));
    let volume = make(&device, ImageDesc::volume("volume", 2, 2, 4, RGBA8));
    let out = device.storage_buffer::<[f32; 4]>("out", 13).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_combined(0, &cube, &sampler).unwrap();
    set.write_combined(1, &array, &sampler).unwrap();
    set.write_combined(2, &volume, &sampler).unwrap();
    set.write_buffer(3, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    let got: Vec<[f32; 4]> = out.read().unwrap();
    for (f, g) in got[..6].iter().enumerate() {
        assert_eq!(
            g.map(|c| (c * 255.0).round() as u8),
            shade(f as u32),
            "face {f}"
        );
    }
    let textured = common::draw::textured_pipeline(&device);
    let layer2 = array.view_of(&ImageViewDesc::layer(2, 0)).unwrap();
    let mut quad = textured.descriptor_set(0).unwrap();
    quad.write_image_view(0, 0, &layer2, Some(&sampler))
        .unwrap();
    let img = common::draw::target(&device, 8, 8);
    let data = common::draw::draw_quad(&device, &textured, &quad, &img);
    assert!(data.chunks(4).all(|p| p == shade(2)), "{:?}", &data[..8]);
    // The whole array through a 2D binding is KILN-E214; the layer view was not.
    let mut whole = textured.descriptor_set(0).unwrap();
    whole.write_combined(0, &array, &sampler).unwrap();
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&textured)?;
            r.bind_set(0, &whole)?;
            Ok(r.draw(0, 1, 0, 0)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E214", "{err}");
    assert_clean(&device);
}

#[test]
fn view_errors_are_coded() {
    let device = device();
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let cube = device
        .image(&ImageDesc::cube("cube", 4, RGBA8).usage(usage))
        .unwrap();
    for (what, desc, text) in [
        (
            "layer 6 of a cube",
            ImageViewDesc::layer(6, 0),
            "layers 6..+1",
        ),
        ("mip 1 of one mip", ImageViewDesc::layer(0, 1), "mips 1..+1"),
        (
            "a 3D view of a cube",
            ImageViewDesc::layer(0, 0).view_type(vk::ImageViewType::TYPE_3D),
            "not one Vulkan allows",
        ),
    ] {
        let err = cube.view_of(&desc).unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{what}: {err}");
        assert!(err.to_string().contains(text), "{what}: {err}");
    }
    let other = common::draw::target(&device, 4, 4);
    let face = cube.view_of(&ImageViewDesc::layer(0, 0)).unwrap();
    let scope = |c: ColorAttachment| {
        device.execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[c]))?;
            Ok(r.end_rendering()?)
        })
    };
    for (what, c, text) in [
        (
            "a whole cube",
            ColorAttachment::clear(&cube, [0.0; 4]),
            "ImageViewDesc::layer",
        ),
        (
            "a view of another image",
            ColorAttachment::view(&face, [0.0; 4]).image(&other),
            "view is of `cube`",
        ),
    ] {
        let err = scope(c).unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{what}: {err}");
        assert!(err.to_string().contains(text), "{what}: {err}");
    }
    assert_clean(&device);
}
