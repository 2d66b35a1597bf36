//! Layout sharing where graphics is involved: immutable samplers compared by description,
//! and push-constant ranges of two stages that overlap ([0,64) vertex, [0,16) fragment).

use common::{assert_clean, device};
use kiln::{
    vk, ColorAttachment, GraphicsPipelineDesc, ImageDesc, PipelineLayoutDesc, RenderingDesc,
    SamplerDesc, VertexBufferLayout,
};

const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

fn pixel(data: &[u8], width: u32, x: u32, y: u32) -> [u8; 4] {
    let i = ((y * width + x) * 4) as usize;
    [data[i], data[i + 1], data[i + 2], data[i + 3]]
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
        .create_image(&ImageDesc::color_target("target", 8, 8, RGBA8))
        .unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(VertexBufferLayout::packed(&[
            (0, vk::Format::R32G32_SFLOAT),
            (1, vk::Format::R32G32_SFLOAT),
        ]))
        .targets(&[&img], None);
    desc.layout = Some(&nearest);
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    assert_eq!(
        pipeline.layout().set_layouts()[0].raw(),
        a.set_layouts()[0].raw()
    );
    let texels: [u8; 16] = [
        255, 0, 0, 255, 0, 255, 0, 255, //
        0, 0, 255, 255, 255, 255, 255, 255,
    ];
    let tex = device
        .texture_from_bytes("2x2", 2, 2, RGBA8, &texels)
        .unwrap();
    let mut set = pipeline.new_set(0).unwrap();
    set.write_image(0, &tex).unwrap();
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
fn overlapping_vertex_and_fragment_push_constants_are_validation_clean() {
    let device = device();
    let vs = kiln::include_spirv!("test/pc_transform.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let img = device
        .create_image(&ImageDesc::color_target("target", 16, 16, RGBA8))
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
            r.begin_rendering(&RenderingDesc {
                color: &[ColorAttachment::clear(&img, [0.0, 0.0, 0.0, 1.0])],
                depth: None,
            })?;
            r.bind_pipeline(&pipeline);
            r.bind_vertex_buffer(0, &vb, 0)?;
            // One call for 64 bytes: kiln splits it into [0,16) VERTEX|FRAGMENT and
            // [16,64) VERTEX (VUID-vkCmdPushConstants-offset-01795/01796).
            r.push(0, &mvp)?;
            // And the fragment's 16 bytes alone (VERTEX|FRAGMENT: both ranges contain them).
            r.push(0, &[1.0f32, 0.0, 0.0, 1.0])?;
            // Bytes only the vertex range holds.
            r.push(48, &[0.0f32, 0.0, 0.0, 1.0])?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()
        })
        .unwrap();
    let data = img.read(&device).unwrap();
    let red = [255, 0, 0, 255];
    let covered = data.chunks(4).filter(|p| *p == red).count();
    assert!(covered > 0, "nothing was drawn");
    // Bytes beyond every range are an error, not a validation message.
    let err = device
        .execute(|r| {
            r.bind_pipeline(&pipeline);
            r.push(64, &[0u32; 4])
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E250", "{err}");
    assert_clean(&device);
}
