//! Rendering helpers: colour targets, pixel reads and the textured full-screen quad (a 2×2
//! texture, red/green over blue/white, sampled by `test/textured.{vert,frag}`).

use kiln::{
    vk, ColorAttachment, DescriptorSet, Device, GraphicsPipeline, GraphicsPipelineDesc, Image,
    ImageDesc, RenderingDesc, VertexBufferLayout,
};

pub const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// The RGBA8 pixel at (x, y) of a tightly packed image `width` pixels wide.
pub fn pixel(data: &[u8], width: u32, x: u32, y: u32) -> [u8; 4] {
    let i = ((y * width + x) * 4) as usize;
    [data[i], data[i + 1], data[i + 2], data[i + 3]]
}

/// An RGBA8 colour target.
pub fn target(device: &Device, w: u32, h: u32) -> Image {
    device
        .image(&ImageDesc::color_target("target", w, h, RGBA8))
        .unwrap()
}

/// `test/flat.{vert,frag}`: a `vec2` position per vertex, the colour from 16 bytes of
/// fragment push constants; drawing into `fmt`.
pub fn flat_pipeline(device: &Device, fmt: vk::Format) -> kiln::Result<kiln::GraphicsPipeline> {
    let vs = kiln::include_spirv!("test/flat.vert")?;
    let fs = kiln::include_spirv!("test/flat.frag")?;
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(VertexBufferLayout::packed(
        &[(0, vk::Format::R32G32_SFLOAT)],
    ));
    desc.color_formats = vec![fmt];
    Ok(device.graphics_pipeline(&desc)?)
}

/// `test/textured.{vert,frag}` drawing into RGBA8: set 0 binding 0 is the fragment
/// stage's combined image sampler.
pub fn textured_pipeline(device: &Device) -> GraphicsPipeline {
    let vs = kiln::include_spirv!("test/textured.vert").unwrap();
    let fs = kiln::include_spirv!("test/textured.frag").unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(quad_vertex_layout());
    desc.color_formats = vec![RGBA8];
    device.graphics_pipeline(&desc).unwrap()
}

/// The textured quad's vertex buffer layout: position and uv, two `vec2`s.
pub fn quad_vertex_layout() -> VertexBufferLayout {
    VertexBufferLayout::packed(&[
        (0, vk::Format::R32G32_SFLOAT),
        (1, vk::Format::R32G32_SFLOAT),
    ])
}

/// The 2×2 RGBA8 texture: red, green / blue, white.
pub fn texture_2x2(device: &Device) -> Image {
    let texels: [u8; 16] = [
        255, 0, 0, 255, 0, 255, 0, 255, //
        0, 0, 255, 255, 255, 255, 255, 255,
    ];
    device
        .texture_from_bytes("2x2", 2, 2, RGBA8, &texels)
        .unwrap()
}

/// Draws the full-screen quad (two triangles of (position, uv)) with `pipeline` and its
/// set 0 into `img`, cleared to zero, and reads `img` back.
pub fn draw_quad(
    device: &Device,
    pipeline: &GraphicsPipeline,
    set: &DescriptorSet,
    img: &Image,
) -> Vec<u8> {
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
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                img, [0.0; 4],
            )]))?;
            r.bind_pipeline(pipeline)?;
            r.bind_set(0, set)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    img.read().unwrap()
}

/// Asserts the four texels of [`texture_2x2`] in the four quarters of an 8×8 [`draw_quad`]
/// render sampled with a nearest filter.
#[track_caller]
pub fn assert_quad_texels(data: &[u8]) {
    for (x, y, want) in [
        (1, 1, [255, 0, 0, 255]),
        (6, 1, [0, 255, 0, 255]),
        (1, 6, [0, 0, 255, 255]),
        (6, 6, [255, 255, 255, 255]),
    ] {
        assert_eq!(pixel(data, 8, x, y), want, "pixel ({x}, {y})");
    }
}
