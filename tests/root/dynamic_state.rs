//! The rasterization and depth state kiln graphics pipelines keep dynamic: a bind records
//! the pipeline's values, `set_cull_mode`, `set_front_face`, `set_primitive_topology`,
//! `set_depth_test` and `set_stencil_test` override them until the next bind. Checked by
//! which of three column triangles are drawn and which colour wins a depth test, then the
//! coded errors.

use common::draw::{flat_pipeline, pixel, RGBA8};
use common::{assert_clean, device, emulated_device};
use kiln::{
    vk, Buffer, ColorAttachment, DepthAttachment, Device, GraphicsPipelineDesc, ImageDesc,
    RenderingDesc, VertexBufferLayout,
};

const W: u32 = 48;
const H: u32 = 16;
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];
const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];

/// Three triangles, one per column (bases along the top edge), 3 vertices each.
fn columns(device: &Device) -> Buffer {
    let mut v = Vec::new();
    for i in 0..3 {
        let (x0, x1) = (
            -1.0 + 2.0 * i as f32 / 3.0,
            -1.0 + 2.0 * (i + 1) as f32 / 3.0,
        );
        v.extend_from_slice(&[[x0, -1.0f32], [x1, -1.0], [(x0 + x1) / 2.0, 1.0]]);
    }
    device
        .buffer_from_slice("columns", vk::BufferUsageFlags::VERTEX_BUFFER, &v)
        .unwrap()
}

/// The colour at the middle of column `i`'s triangle.
fn at(data: &[u8], i: u32) -> [u8; 4] {
    pixel(data, W, 8 + 16 * i, 2)
}

fn target(device: &Device, label: &str) -> kiln::Image {
    device
        .image(&ImageDesc::color_target(label, W, H, RGBA8))
        .unwrap()
}

#[test]
fn culling_winding_and_topology_change_between_draws_and_a_bind_resets_them() {
    let device = device();
    let p = flat_pipeline(&device, RGBA8).unwrap();
    let vb = columns(&device);
    let (a, b) = (target(&device, "a"), target(&device, "b"));
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &a,
                [0.0, 0.0, 0.0, 1.0],
            )]))?;
            r.bind_pipeline(&p)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.push(0, &GREEN)?;
            r.draw(3, 1, 0, 0)?; // the pipeline's: no culling
            r.set_cull_mode(vk::CullModeFlags::BACK)?;
            r.draw(3, 1, 3, 0)?; // counter-clockwise front (the pipeline's)
            r.set_front_face(vk::FrontFace::CLOCKWISE)?;
            r.draw(3, 1, 6, 0)?;
            r.end_rendering()?;
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &b,
                [0.0, 0.0, 0.0, 1.0],
            )]))?;
            r.set_cull_mode(vk::CullModeFlags::FRONT_AND_BACK)?;
            r.bind_pipeline(&p)?; // the same pipeline: its state again
            r.draw(3, 1, 0, 0)?;
            r.set_cull_mode(vk::CullModeFlags::FRONT_AND_BACK)?;
            r.draw(3, 1, 3, 0)?;
            r.set_cull_mode(vk::CullModeFlags::NONE)?;
            // Three vertices as a strip are the same triangle: the same class, drawn.
            r.set_primitive_topology(vk::PrimitiveTopology::TRIANGLE_STRIP)?;
            r.draw(3, 1, 6, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let green = [0, 255, 0, 255];
    let (a, b) = (a.read().unwrap(), b.read().unwrap());
    assert_eq!(at(&a, 0), green, "no culling");
    // Back-face culling with either winding as front culls exactly one of the two.
    assert_ne!(
        at(&a, 1) == green,
        at(&a, 2) == green,
        "the front face decides: {:?} {:?}",
        at(&a, 1),
        at(&a, 2)
    );
    assert_eq!(at(&b, 0), green, "the bind reset the culling");
    assert_eq!(at(&b, 1), [0, 0, 0, 255], "both faces culled");
    assert_eq!(at(&b, 2), green, "a strip of three");
    assert_clean(&device);
}

#[test]
fn the_depth_test_changes_between_draws() {
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(VertexBufferLayout::packed(
        &[(0, vk::Format::R32G32_SFLOAT)],
    ));
    desc.color_formats = vec![RGBA8];
    desc.depth_format = Some(vk::Format::D32_SFLOAT);
    let p = device.graphics_pipeline(&desc).unwrap();
    let vb = columns(&device);
    let color = target(&device, "color");
    let depth = device
        .image(&ImageDesc::depth_target(
            "depth",
            W,
            H,
            vk::Format::D32_SFLOAT,
        ))
        .unwrap();
    // Each column: green at depth 0 first, then red at the same depth.
    device
        .execute(|r| {
            r.begin_rendering(
                &RenderingDesc::new(&[ColorAttachment::clear(&color, [0.0, 0.0, 0.0, 1.0])])
                    .depth(Some(DepthAttachment::clear(&depth, 1.0))),
            )?;
            r.bind_pipeline(&p)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            for (i, set) in [
                None,
                Some(vk::CompareOp::LESS_OR_EQUAL),
                Some(vk::CompareOp::NEVER),
            ]
            .into_iter()
            .enumerate()
            {
                let first = 3 * i as u32;
                r.bind_pipeline(&p)?; // LESS, test and write
                r.push(0, &GREEN)?;
                r.draw(3, 1, first, 0)?;
                match set {
                    Some(vk::CompareOp::NEVER) => {
                        r.set_depth_test(false, false, vk::CompareOp::NEVER)?
                    }
                    Some(op) => r.set_depth_test(true, true, op)?,
                    None => {}
                }
                r.push(0, &RED)?;
                r.draw(3, 1, first, 0)?;
            }
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let c = color.read().unwrap();
    assert_eq!(at(&c, 0), [0, 255, 0, 255], "LESS: the second draw fails");
    assert_eq!(at(&c, 1), [255, 0, 0, 255], "LESS_OR_EQUAL: it passes");
    assert_eq!(at(&c, 2), [255, 0, 0, 255], "no test: it is drawn");
    assert_clean(&device);
}

#[test]
fn dynamic_state_errors_are_coded() {
    let device = emulated_device();
    let p = flat_pipeline(&device, RGBA8).unwrap();
    let err = device
        .execute(|r| Ok(r.set_cull_mode(vk::CullModeFlags::BACK)?))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E252", "{err}");
    let err = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            Ok(r.set_primitive_topology(vk::PrimitiveTopology::LINE_LIST)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "{err}");
    assert!(err.to_string().contains("topology class"), "{err}");
    let err = device
        .queue(kiln::QueueKind::Transfer)
        .execute(|r| Ok(r.set_front_face(vk::FrontFace::CLOCKWISE)?))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E120", "{err}");
    assert_clean(&device);
}

/// Dynamic state given raw values Vulkan does not define (cull-mode bits beyond
/// FRONT_AND_BACK, a front face or topology that is no enum value): `KILN-E283` before
/// any command (before, the value reached vkCmdSet*, which the layer reports), and the
/// recording goes on: a later draw with the defined values still draws.
#[test]
fn dynamic_state_values_vulkan_does_not_define_are_e283() {
    let device = device();
    let p = flat_pipeline(&device, RGBA8).unwrap();
    let img = target(&device, "undefined values");
    let verts: [[f32; 2]; 3] = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let vb = device
        .buffer_from_slice("big triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(
                &RenderingDesc::default()
                    .color(&[ColorAttachment::clear(&img, [0.0; 4])])
                    .depth(None),
            )?;
            r.bind_pipeline(&p)?;
            for e in [
                r.set_cull_mode(vk::CullModeFlags::from_raw(0x10)),
                r.set_front_face(vk::FrontFace::from_raw(7)),
                r.set_primitive_topology(vk::PrimitiveTopology::from_raw(999)),
            ] {
                let e = e.unwrap_err();
                assert_eq!(e.code(), "KILN-E283", "{e}");
            }
            r.set_cull_mode(vk::CullModeFlags::NONE)?;
            r.push(0, &GREEN)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = img.read().unwrap();
    assert_eq!(pixel(&data, W, W / 2, H / 2), [0, 255, 0, 255]);
    assert_clean(&device);
}
