//! Graphics on a real device under validation: images, samplers, graphics pipelines,
//! offscreen rendering checked pixel by pixel, the seed scene against its golden image, and
//! the coded errors of bad input. Every test ends with `assert_clean`.

use kiln_examples::scene;

use common::{assert_clean, device};
use kiln::vk;
use kiln::{
    ColorAttachment, Device, Error, GraphicsPipelineDesc, Image, ImageDesc, RenderingDesc,
    SamplerDesc, VertexBufferLayout,
};

const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

fn pixel(data: &[u8], width: u32, x: u32, y: u32) -> [u8; 4] {
    let i = ((y * width + x) * 4) as usize;
    [data[i], data[i + 1], data[i + 2], data[i + 3]]
}

fn target(device: &Device, w: u32, h: u32) -> Image {
    device
        .create_image(&ImageDesc::color_target("target", w, h, RGBA8))
        .unwrap()
}

#[test]
fn clear_color_exact_pixels() {
    let device = device();
    let img = target(&device, 16, 8);
    device
        .execute(|r| {
            // 0.4 * 255 = 102, 0.8 * 255 = 204: exact in UNORM8.
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0, 0.4, 0.8, 1.0])],
                depth: None,
            })?;
            r.end_rendering()
        })
        .unwrap();
    let data = img.read(&device).unwrap();
    assert_eq!(data.len(), 16 * 8 * 4);
    for y in 0..8 {
        for x in 0..16 {
            assert_eq!(
                pixel(&data, 16, x, y),
                [0, 102, 204, 255],
                "pixel ({x}, {y})"
            );
        }
    }
    assert_eq!(img.layout(), vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
    assert_clean(&device);
}

fn flat_pipeline(device: &Device, fmt: vk::Format) -> kiln::Result<kiln::GraphicsPipeline> {
    let vs = kiln::include_spirv!("test/flat.vert")?;
    let fs = kiln::include_spirv!("test/flat.frag")?;
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(VertexBufferLayout::packed(
        &[(0, vk::Format::R32G32_SFLOAT)],
    ));
    desc.color_formats = vec![fmt];
    device.graphics_pipeline(&desc)
}

#[test]
fn flat_triangle_centre_and_corner_exact() {
    let device = device();
    let pipeline = flat_pipeline(&device, RGBA8).unwrap();
    // Push constants: fragment stage only, 16 bytes, from reflection of both stages.
    let ranges = pipeline.layout().push_constant_ranges();
    assert_eq!(ranges.len(), 1);
    assert_eq!(ranges[0].stages, vk::ShaderStageFlags::FRAGMENT);
    assert_eq!((ranges[0].offset, ranges[0].size), (0, 16));
    let (w, h) = (64u32, 64u32);
    let img = target(&device, w, h);
    // A triangle covering the middle: clip-space (-0.5, 0.5), (0.5, 0.5), (0, -0.5).
    let verts: [[f32; 2]; 3] = [[-0.5, 0.5], [0.5, 0.5], [0.0, -0.5]];
    let vb = device
        .buffer_from_slice("triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0, 0.0, 0.0, 1.0])],
                depth: None,
            })?;
            r.bind_pipeline(&pipeline);
            // 0.2 * 255 = 51, 0.6 * 255 = 153: exact in UNORM8.
            r.push(0, &[1.0f32, 0.2, 0.6, 1.0])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()
        })
        .unwrap();
    let data = img.read(&device).unwrap();
    let inside = [255, 51, 153, 255];
    let outside = [0, 0, 0, 255];
    assert_eq!(pixel(&data, w, 32, 32), inside, "centre");
    assert_eq!(pixel(&data, w, 32, 44), inside, "near the bottom edge");
    assert_eq!(pixel(&data, w, 0, 0), outside, "top-left corner");
    assert_eq!(pixel(&data, w, 63, 63), outside, "bottom-right corner");
    assert_eq!(
        pixel(&data, w, 4, 60),
        outside,
        "bottom-left, outside the triangle"
    );
    let covered = data.chunks(4).filter(|p| *p == inside).count();
    // Area: half of 32×32 pixels = 512, give or take the edge pixels.
    assert!((480..=544).contains(&covered), "{covered} pixels covered");
    assert_clean(&device);
}

#[test]
fn additive_blend_exact_pixels() {
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let img = target(&device, 4, 4);
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(VertexBufferLayout::packed(&[(
            0,
            vk::Format::R32G32_SFLOAT,
        )]))
        .targets(&[&img], None);
    desc.blend = kiln::BlendMode::Additive;
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    let verts: [[f32; 2]; 3] = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let vb = device
        .buffer_from_slice("big triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.2, 0.2, 0.2, 0.2])],
                depth: None,
            })?;
            r.bind_pipeline(&pipeline);
            r.bind_vertex_buffer(0, &vb, 0)?;
            // Drawn twice: red 0.2 (clear) + 0.2 + 0.2 = 0.6, green 0.2 + 0.4 = 0.6.
            r.push(0, &[0.2f32, 0.4, 0.0, 0.0])?;
            r.draw(3, 1, 0, 0)?;
            r.push(0, &[0.2f32, 0.0, 0.0, 0.0])?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()
        })
        .unwrap();
    let data = img.read(&device).unwrap();
    // (0.6, 0.6, 0.2) * 255 = (153, 153, 51) for every pixel.
    for p in data.chunks(4) {
        assert_eq!(&p[..3], &[153, 153, 51]);
    }
    assert_clean(&device);
}

#[test]
fn textured_quad_nearest_samples_exact_texels() {
    let device = device();
    let vs = kiln::include_spirv!("test/textured.vert").unwrap();
    let fs = kiln::include_spirv!("test/textured.frag").unwrap();
    let img = target(&device, 8, 8);
    // Attachment formats from the render target.
    let desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(VertexBufferLayout::packed(&[
            (0, vk::Format::R32G32_SFLOAT),
            (1, vk::Format::R32G32_SFLOAT),
        ]))
        .targets(&[&img], None);
    assert_eq!(desc.color_formats, vec![RGBA8]);
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    let set_layout = &pipeline.layout().set_layouts()[0];
    assert_eq!(
        set_layout.desc().bindings()[0].descriptor_type,
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER
    );
    assert_eq!(
        set_layout.desc().bindings()[0].stages,
        vk::ShaderStageFlags::FRAGMENT
    );
    // 2×2 texture: red, green / blue, white.
    let texels: [u8; 16] = [
        255, 0, 0, 255, 0, 255, 0, 255, //
        0, 0, 255, 255, 255, 255, 255, 255,
    ];
    let tex = device
        .texture_from_bytes("2x2", 2, 2, RGBA8, &texels)
        .unwrap();
    assert_eq!(tex.layout(), vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let mut set = pipeline.new_set(0).unwrap();
    set.write_combined(0, &tex, &sampler).unwrap();
    // Full-screen quad as two triangles: (position, uv).
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
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0; 4])],
                depth: None,
            })?;
            r.bind_pipeline(&pipeline);
            r.bind_set(0, &set)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 0, 0)?;
            r.end_rendering()
        })
        .unwrap();
    let data = img.read(&device).unwrap();
    for (x, y, want) in [
        (1, 1, [255, 0, 0, 255]),
        (6, 1, [0, 255, 0, 255]),
        (1, 6, [0, 0, 255, 255]),
        (6, 6, [255, 255, 255, 255]),
    ] {
        assert_eq!(pixel(&data, 8, x, y), want, "pixel ({x}, {y})");
    }
    assert_clean(&device);
}

#[test]
fn image_upload_and_readback_every_mip() {
    let device = device();
    let img = device
        .create_image(&ImageDesc {
            mip_levels: 3,
            ..ImageDesc::texture("mips", 8, 4, RGBA8)
        })
        .unwrap();
    assert_eq!(img.level_size(0), 8 * 4 * 4);
    assert_eq!(img.level_size(1), 4 * 2 * 4);
    assert_eq!(img.level_size(2), 2 * 4);
    for level in 0..3 {
        let data: Vec<u8> = (0..img.level_size(level) as usize)
            .map(|i| (i * 7 + level as usize * 31) as u8)
            .collect();
        img.upload_level(&device, level, &data).unwrap();
        assert_eq!(img.read_level(&device, level).unwrap(), data, "mip {level}");
    }
    let err = img.upload_level(&device, 1, &[0u8; 3]).unwrap_err();
    assert_eq!(err.code(), "KILN-E181", "{err}");
    let err = img.read_level(&device, 3).unwrap_err();
    assert_eq!(err.code(), "KILN-E180", "{err}");
    for bad in [
        ImageDesc::texture("zero", 0, 4, RGBA8),
        ImageDesc {
            mip_levels: 5,
            ..ImageDesc::texture("too many mips", 8, 4, RGBA8)
        },
        ImageDesc::depth_target("depth as rgba8", 4, 4, vk::Format::R8G8B8A8_SINT),
    ] {
        let err = device.create_image(&bad).unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{}: {err}", bad.label);
        assert!(err.to_string().contains(bad.label), "{err}");
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
    let neg = SamplerDesc {
        mip_lod_bias: -0.0,
        ..Default::default()
    };
    assert_ne!(neg, SamplerDesc::default());
    assert_ne!(device.sampler(&neg).unwrap().id(), a.id());
    let bad = SamplerDesc {
        min_lod: 4.0,
        max_lod: 1.0,
        ..Default::default()
    };
    let err = device.sampler(&bad).unwrap_err();
    assert_eq!(err.code(), "KILN-E190", "{err}");
    assert_clean(&device);
}

#[test]
fn vertex_layout_errors_name_the_location() {
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let base = |layout: VertexBufferLayout| {
        let mut d = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(layout);
        d.color_formats = vec![RGBA8];
        d
    };
    // The shader reads a vec2 of floats at location 0; an integer format disagrees.
    let err = device
        .graphics_pipeline(&base(VertexBufferLayout::packed(&[(
            0,
            vk::Format::R32G32_UINT,
        )])))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E280", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("`position` at location 0"), "{msg}");
    assert!(
        msg.contains("R32G32_UINT") && msg.contains("R32G32_SFLOAT"),
        "{msg}"
    );
    match err {
        Error::VertexFormatMismatch { location, .. } => assert_eq!(location, 0),
        other => panic!("{other}"),
    }
    // Fewer components than the shader reads.
    let err = device
        .graphics_pipeline(&base(VertexBufferLayout::packed(&[(
            0,
            vk::Format::R32_SFLOAT,
        )])))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E280", "{err}");
    // No attribute for location 0.
    let err = device
        .graphics_pipeline(&base(VertexBufferLayout::packed(&[(
            3,
            vk::Format::R32G32_SFLOAT,
        )])))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E281", "{err}");
    assert!(
        err.to_string().contains("`position` at location 0"),
        "{err}"
    );
    // A fragment output with no colour attachment.
    let mut d = base(VertexBufferLayout::packed(&[(
        0,
        vk::Format::R32G32_SFLOAT,
    )]));
    d.color_formats.clear();
    let err = device.graphics_pipeline(&d).unwrap_err();
    assert_eq!(err.code(), "KILN-E282", "{err}");
    // Integer attachment for a float output.
    d.color_formats = vec![vk::Format::R8G8B8A8_UINT];
    assert_eq!(
        device.graphics_pipeline(&d).unwrap_err().code(),
        "KILN-E282"
    );
    // Stages swapped.
    let swapped = GraphicsPipelineDesc::new(&fs, &vs);
    assert_eq!(
        device.graphics_pipeline(&swapped).unwrap_err().code(),
        "KILN-E251"
    );
    assert_clean(&device);
}

#[test]
fn recording_errors_are_coded() {
    let device = device();
    let pipeline = flat_pipeline(&device, RGBA8).unwrap();
    let img = target(&device, 4, 4);
    let plain = device
        .buffer_from_slice(
            "not a vertex buffer",
            vk::BufferUsageFlags::STORAGE_BUFFER,
            &[0f32; 6],
        )
        .unwrap();
    let err = device
        .execute(|r| {
            r.bind_pipeline(&pipeline);
            r.draw(3, 1, 0, 0)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "draw outside rendering: {err}");
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0; 4])],
                depth: None,
            })?;
            r.draw(3, 1, 0, 0)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E252", "draw without pipeline: {err}");
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0; 4])],
                depth: None,
            })?;
            r.bind_vertex_buffer(0, &plain, 0)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "{err}");
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0; 4])],
                depth: None,
            })
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "rendering left open: {err}");
    let texture = device
        .create_image(&ImageDesc::texture("texture only", 4, 4, RGBA8))
        .unwrap();
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&texture, [0.0; 4])],
                depth: None,
            })?;
            r.end_rendering()
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E182", "{err}");
    // The device still works after the failed recordings.
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [1.0, 0.0, 0.0, 1.0])],
                depth: None,
            })?;
            r.end_rendering()
        })
        .unwrap();
    assert_eq!(&img.read(&device).unwrap()[..4], &[255, 0, 0, 255]);
    assert_clean(&device);
}

#[test]
fn compute_and_graphics_bind_points_are_tracked_apart() {
    let device = device();
    let compute = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let graphics = flat_pipeline(&device, RGBA8).unwrap();
    let n = 256usize;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a = device
        .buffer_from_slice("a", usage, &vec![1.5f32; n])
        .unwrap();
    let b = device
        .buffer_from_slice("b", usage, &vec![2.0f32; n])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", n).unwrap();
    let mut set = compute.new_set(0).unwrap();
    set.write_buffer(0, &a).unwrap();
    set.write_buffer(1, &b).unwrap();
    set.write_buffer(2, &c).unwrap();
    let verts: [[f32; 2]; 3] = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let vb = device
        .buffer_from_slice("big triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    let img = target(&device, 4, 4);
    device
        .execute(|r| {
            r.bind_pipeline(&compute);
            r.bind_set(0, &set)?;
            r.dispatch_threads(n as u32)?;
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0; 4])],
                depth: None,
            })?;
            r.bind_pipeline(&graphics);
            r.push(0, &[0.2f32, 0.4, 0.6, 1.0])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()?;
            // Back to compute: set 0 is still bound at the compute bind point (binding it
            // again is elided), and dispatch sees it — the validation layer would say so
            // otherwise.
            r.bind_pipeline(&compute);
            r.bind_set(0, &set)?;
            r.barrier();
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    assert_eq!(c.read::<f32>(&device).unwrap(), vec![3.5f32; n]);
    assert_eq!(&img.read(&device).unwrap()[..4], &[51, 102, 153, 255]);
    assert_clean(&device);
}

#[test]
fn image_descriptor_writes_are_type_checked() {
    let device = device();
    let s = scene::Scene::new(&device, scene::COLOR_FORMAT).unwrap();
    let mut set = s.chair.new_set(1).unwrap();
    let albedo = set.binding_of("albedo").unwrap();
    let samp = set.binding_of("albedo_sampler").unwrap();
    let gloss = set.binding_of("material").unwrap();
    // A sampler into the texture binding, an image into the sampler binding, a buffer
    // into the image binding, an image into the uniform binding: all KILN-E202.
    let e = set.write_sampler(albedo, &s.sampler).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set.write_image(samp, &s.texture).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set.write_buffer(albedo, &s.gloss).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set.write_image(gloss, &s.texture).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set
        .write_combined(albedo, &s.texture, &s.sampler)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    // An image without SAMPLED usage.
    let depth = device
        .create_image(&ImageDesc::depth_target("depth", 4, 4, scene::DEPTH_FORMAT))
        .unwrap();
    let e = set.write_image(albedo, &depth).unwrap_err();
    assert_eq!(e.code(), "KILN-E182", "{e}");
    assert_eq!(set.first_unwritten(), Some(albedo));
    set.write_image(albedo, &s.texture).unwrap();
    set.write_sampler(samp, &s.sampler).unwrap();
    assert_eq!(set.first_unwritten(), Some(gloss));
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

/// Per-channel tolerance of the golden comparison (lavapipe versions may round a little
/// differently at edges).
const GOLDEN_TOLERANCE: u8 = 8;
/// Channel values allowed beyond the tolerance: rasterizers may place an edge pixel
/// differently (the NVIDIA H200 differs from lavapipe in 3 of 1 048 576 channel values,
/// by at most 32). 1 in 10 000 channels.
const GOLDEN_OUTLIERS: usize = 512 * 512 * 4 / 10_000;

#[test]
fn material_scene_matches_golden_image() {
    let device = device();
    let (w, h) = (512, 512);
    let pixels = scene::render_offscreen(&device, w, h).unwrap();
    // The golden image is embedded; `KILN_UPDATE_GOLDEN=1` rewrites the checkout's file and
    // compares with the new render (as a fresh read of the file did).
    let golden = if std::env::var("KILN_UPDATE_GOLDEN").as_deref() == Ok("1") {
        let path = common::GOLDEN_SCENE_PATH;
        image::save_buffer(path, &pixels, w, h, image::ExtendedColorType::Rgba8).unwrap();
        println!("wrote {path}");
        image::RgbaImage::from_raw(w, h, pixels.clone()).unwrap()
    } else {
        common::golden_scene()
    };
    assert_eq!(golden.dimensions(), (w, h));
    let mut max_diff = 0u8;
    let mut over = 0usize;
    for (a, b) in pixels.iter().zip(golden.as_raw()) {
        let d = a.abs_diff(*b);
        max_diff = max_diff.max(d);
        if d > GOLDEN_TOLERANCE {
            over += 1;
        }
    }
    println!(
        "golden comparison: max per-channel difference {max_diff}, {over} channel values above {GOLDEN_TOLERANCE}"
    );
    assert!(
        over <= GOLDEN_OUTLIERS,
        "{over} channel values differ by more than {GOLDEN_TOLERANCE} (max {max_diff}); \
         at most {GOLDEN_OUTLIERS} may"
    );
    // The picture has content: not just the background.
    let bg = [46u8, 56, 77, 255];
    let non_bg = pixels
        .chunks(4)
        .filter(|p| p.iter().zip(bg).any(|(a, b)| a.abs_diff(b) > 2))
        .count();
    assert!(
        non_bg > (w * h / 5) as usize,
        "only {non_bg} non-background pixels"
    );
    assert_clean(&device);
}
