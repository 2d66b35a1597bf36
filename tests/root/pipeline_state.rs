//! Fixed-function pipeline state on a real device under validation, each checked by the
//! pixels it changes: the stencil test (a mask written with no colour, then a quad drawn
//! only outside it), per-attachment blending and write masks into two targets, depth bias
//! deciding a depth test; and the coded errors of state the attachments or the device
//! cannot have.

use common::draw::{pixel, target, RGBA8};
use common::{assert_clean, device};
use kiln::{
    vk, BlendMode, ColorAttachment, ColorBlendAttachment, DepthAttachment, DepthBias, Device,
    GraphicsPipeline, GraphicsPipelineDesc, Image, ImageDesc, RenderingDesc, StencilState,
    VertexBufferLayout,
};

const W: u32 = 16;
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];

/// `test/flat.vert` with `fragment`, into RGBA8 targets (`colors` of them) and `depth`,
/// changed by `edit`.
fn pipeline(
    device: &Device,
    colors: usize,
    depth: Option<vk::Format>,
    edit: impl FnOnce(&mut GraphicsPipelineDesc),
) -> kiln::Result<GraphicsPipeline> {
    let vs = kiln::include_spirv!("test/flat.vert")?;
    let fs = if colors == 2 {
        kiln::include_spirv!("test/two_targets.frag")?
    } else {
        kiln::include_spirv!("test/flat.frag")?
    };
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(VertexBufferLayout::packed(
        &[(0, vk::Format::R32G32_SFLOAT)],
    ));
    desc.color_formats = vec![RGBA8; colors];
    desc.depth_format = depth;
    edit(&mut desc);
    Ok(device.graphics_pipeline(&desc)?)
}

/// Two triangles: the upper-left half (vertices 0..3) and the full screen (3..9).
fn shapes(device: &Device) -> kiln::Buffer {
    let v: [[f32; 2]; 9] = [
        [-1.0, -1.0],
        [1.0, -1.0],
        [-1.0, 1.0],
        [-1.0, -1.0],
        [1.0, -1.0],
        [1.0, 1.0],
        [-1.0, -1.0],
        [1.0, 1.0],
        [-1.0, 1.0],
    ];
    device
        .buffer_from_slice("shapes", vk::BufferUsageFlags::VERTEX_BUFFER, &v)
        .unwrap()
}

fn depth_image(device: &Device, format: vk::Format) -> Image {
    device
        .image(&ImageDesc::depth_target("depth", W, W, format))
        .unwrap()
}

#[test]
fn a_stencil_mask_written_without_colour_keeps_a_quad_outside_it() {
    let device = device();
    let ds = vk::Format::D32_SFLOAT_S8_UINT;
    let no_depth = |d: &mut GraphicsPipelineDesc| {
        d.depth.test = false;
        d.depth.write = false;
    };
    let mark = pipeline(&device, 1, Some(ds), |d| {
        no_depth(d);
        d.color_blend =
            vec![ColorBlendAttachment::default().write_mask(vk::ColorComponentFlags::empty())];
        d.stencil = StencilState::both(vk::StencilOpState {
            pass_op: vk::StencilOp::REPLACE,
            compare_op: vk::CompareOp::ALWAYS,
            compare_mask: 0xff,
            write_mask: 0xff,
            ..Default::default()
        });
    })
    .unwrap();
    let outside = pipeline(&device, 1, Some(ds), |d| {
        no_depth(d);
        d.stencil = StencilState::both(vk::StencilOpState {
            compare_op: vk::CompareOp::NOT_EQUAL,
            compare_mask: 0xff,
            ..Default::default()
        });
    })
    .unwrap();
    let (img, depth, vb) = (
        target(&device, W, W),
        depth_image(&device, ds),
        shapes(&device),
    );
    device
        .execute(|r| {
            r.begin_rendering(
                &RenderingDesc::new(&[ColorAttachment::clear(&img, [0.0, 0.0, 0.0, 1.0])])
                    .depth(Some(DepthAttachment::clear(&depth, 1.0))),
            )?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.bind_pipeline(&mark)?;
            r.push(0, &[1.0f32, 0.0, 0.0, 1.0])?;
            r.set_stencil_reference(vk::StencilFaceFlags::FRONT_AND_BACK, 1)?;
            r.draw(3, 1, 0, 0)?;
            r.bind_pipeline(&outside)?;
            r.push(0, &GREEN)?;
            r.draw(6, 1, 3, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = img.read().unwrap();
    assert_eq!(
        pixel(&data, W, 2, 2),
        [0, 0, 0, 255],
        "inside the mask: no colour at all"
    );
    assert_eq!(
        pixel(&data, W, 13, 13),
        [0, 255, 0, 255],
        "outside the mask"
    );
    assert_clean(&device);
}

#[test]
fn each_attachment_blends_and_masks_on_its_own() {
    let device = device();
    let p = pipeline(&device, 2, None, |d| {
        d.color_blend = vec![
            ColorBlendAttachment::default(),
            ColorBlendAttachment::default()
                .blend(BlendMode::Additive)
                .write_mask(vk::ColorComponentFlags::R | vk::ColorComponentFlags::A),
        ];
    })
    .unwrap();
    let (a, b, vb) = (
        target(&device, W, W),
        target(&device, W, W),
        shapes(&device),
    );
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[
                ColorAttachment::clear(&a, [0.0, 0.0, 0.0, 0.0]),
                ColorAttachment::clear(&b, [0.5, 0.5, 0.0, 1.0]),
            ]))?;
            r.bind_pipeline(&p)?;
            r.push(0, &[0.25f32, 0.25, 0.25, 1.0])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 3, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    assert_eq!(
        pixel(&a.read().unwrap(), W, 8, 8),
        [64, 64, 64, 255],
        "opaque, RGBA"
    );
    // Red added to the clear (0.5 + 0.25, give or take the rounding of UNORM8 blending),
    // green and blue untouched, alpha 1 + 1 clamped.
    let got = pixel(&b.read().unwrap(), W, 8, 8);
    let want = [191u8, 128, 0, 255];
    assert!(
        got.iter().zip(want).all(|(g, w)| g.abs_diff(w) <= 1),
        "additive, R|A: {got:?}, want {want:?}"
    );
    assert_clean(&device);
}

#[test]
fn depth_bias_decides_a_depth_test_between_equal_depths() {
    let device = device();
    let d16 = vk::Format::D16_UNORM;
    // Both draws are at depth 0; the first is pushed back by 1000 depth units, so the
    // second passes LESS. Without the bias it would fail (0 < 0) and red would stay.
    let biased = pipeline(&device, 1, Some(d16), |d| {
        d.depth_bias = Some(DepthBias::default().constant_factor(1000.0));
    })
    .unwrap();
    let plain = pipeline(&device, 1, Some(d16), |_| {}).unwrap();
    let (img, depth, vb) = (
        target(&device, W, W),
        depth_image(&device, d16),
        shapes(&device),
    );
    for (first, want) in [(&biased, [0, 255, 0, 255]), (&plain, [255, 0, 0, 255])] {
        device
            .execute(|r| {
                r.begin_rendering(
                    &RenderingDesc::new(&[ColorAttachment::clear(&img, [0.0; 4])])
                        .depth(Some(DepthAttachment::clear(&depth, 1.0))),
                )?;
                r.bind_vertex_buffer(0, &vb, 0)?;
                r.bind_pipeline(first)?;
                r.push(0, &[1.0f32, 0.0, 0.0, 1.0])?;
                r.draw(6, 1, 3, 0)?;
                r.bind_pipeline(&plain)?;
                r.push(0, &GREEN)?;
                r.draw(6, 1, 3, 0)?;
                Ok(r.end_rendering()?)
            })
            .unwrap();
        assert_eq!(pixel(&img.read().unwrap(), W, 8, 8), want);
    }
    assert_clean(&device);
}

/// A change to a pipeline description.
type Edit = dyn FnOnce(&mut GraphicsPipelineDesc);

#[test]
fn pipeline_state_errors_are_coded() {
    let device = device();
    let cases: [(&str, usize, Option<vk::Format>, Box<Edit>); 4] = [
        (
            "stencil without a stencil format",
            1,
            Some(vk::Format::D32_SFLOAT),
            Box::new(|d| d.stencil.test = true),
        ),
        (
            "one blend state for two attachments",
            2,
            None,
            Box::new(|d| d.color_blend = vec![ColorBlendAttachment::default()]),
        ),
        (
            "an integer attachment that blends",
            1,
            None,
            Box::new(|d| {
                d.color_formats = vec![vk::Format::R8G8B8A8_UINT];
                d.blend = BlendMode::Alpha;
            }),
        ),
        (
            "an infinite depth bias",
            1,
            None,
            Box::new(|d| d.depth_bias = Some(DepthBias::default().slope_factor(f32::INFINITY))),
        ),
    ];
    for (what, colors, depth, edit) in cases {
        let err = pipeline(&device, colors, depth, edit).unwrap_err();
        assert_eq!(err.code(), "KILN-E282", "{what}: {err}");
    }
    // One colour attachment more than the device has, in a pipeline and in a scope.
    let max = device.limits().max_color_attachments as usize;
    let err = pipeline(&device, 1, None, |d| d.color_formats = vec![RGBA8; max + 1]).unwrap_err();
    assert_eq!(err.code(), "KILN-E282", "{err}");
    assert!(err.to_string().contains("maxColorAttachments"), "{err}");
    let images: Vec<Image> = (0..=max).map(|_| target(&device, 4, 4)).collect();
    let colors: Vec<ColorAttachment> = images
        .iter()
        .map(|i| ColorAttachment::clear(i, [0.0; 4]))
        .collect();
    let err = device
        .execute(|r| Ok(r.begin_rendering(&RenderingDesc::new(&colors))?))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "{err}");
    assert!(err.to_string().contains("maxColorAttachments"), "{err}");
    assert_clean(&device);
}

/// Fixed-function enums given as raw values Vulkan does not define (topology, polygon
/// mode, cull mode, front face): `KILN-E282` naming the field, from `graphics_pipeline` and
/// through a `graphics_pipeline_async` handle, and the validation layer says nothing
/// (before, the value reached vkCreateGraphicsPipelines:
/// VUID-VkPipelineInputAssemblyStateCreateInfo-topology-parameter).
#[test]
fn raw_values_that_are_no_vulkan_enum_are_e282() {
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let base = || {
        let mut d = kiln::GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(
            kiln::VertexBufferLayout::packed(&[(0, vk::Format::R32G32_SFLOAT)]),
        );
        d.color_formats = vec![RGBA8];
        d
    };
    type Set = Box<dyn Fn(&mut kiln::GraphicsPipelineDesc)>;
    let cases: [(&str, Set); 4] = [
        (
            "topology",
            Box::new(|d| d.topology = vk::PrimitiveTopology::from_raw(999)),
        ),
        (
            "polygon mode",
            Box::new(|d| d.polygon_mode = vk::PolygonMode::from_raw(999)),
        ),
        (
            "cull mode",
            Box::new(|d| d.cull_mode = vk::CullModeFlags::from_raw(0x10)),
        ),
        (
            "front face",
            Box::new(|d| d.front_face = vk::FrontFace::from_raw(7)),
        ),
    ];
    for (what, set) in &cases {
        let mut d = base();
        set(&mut d);
        let e = device.graphics_pipeline(&d).unwrap_err();
        assert_eq!(e.code(), "KILN-E282", "{what}: {e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
        let pending = device.graphics_pipeline_async(&d).unwrap();
        assert_eq!(pending.wait().unwrap_err().code(), "KILN-E282", "{what}");
    }
    // Every defined value still creates.
    let mut d = base();
    d.topology = vk::PrimitiveTopology::TRIANGLE_STRIP;
    d.cull_mode = vk::CullModeFlags::FRONT_AND_BACK;
    d.front_face = vk::FrontFace::CLOCKWISE;
    device.graphics_pipeline(&d).unwrap();
    assert_clean(&device);
}
