//! Image layouts and hazards tracked per mip level and array layer (issue 25): a command
//! that uses part of an image (a view's mips and layers, one copied level, one transitioned
//! layer) moves and orders those subresources only. Checked by exact pixels and bytes, by
//! the layouts kiln reports per subresource, and by synchronization validation.

use common::draw::{pixel, quad_vertex_layout, RGBA8};
use common::{assert_clean, code, device};
use kiln::{
    vk, ColorAttachment, GraphicsPipelineDesc, ImageDesc, ImageViewDesc, RenderingDesc,
    SamplerDesc, Subresources,
};

/// The 4×4 texel (x, y) of mip 0: a byte pattern no two texels share.
fn texel(x: u32, y: u32) -> [u8; 4] {
    [(x * 60) as u8, (y * 60) as u8, (x * 16 + y) as u8, 255]
}

/// Renders into mip 1 (2×2) of an image through a view while a draw samples mip 0 (4×4)
/// of the same image through another view, in one rendering scope: mip 0 stays in
/// SHADER_READ_ONLY_OPTIMAL, mip 1 is a colour attachment (with whole-image layouts the
/// attachment moved mip 0 too and the draw was refused with KILN-E286).
#[test]
fn render_into_mip_1_while_sampling_mip_0() {
    let device = device();
    let img = device
        .image(&ImageDesc::color_target("chain", 4, 4, RGBA8).mip_levels(2))
        .unwrap();
    let bytes: Vec<u8> = (0..16).flat_map(|i| texel(i % 4, i / 4)).collect();
    img.upload_level(0, &bytes).unwrap();
    let read = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
    assert_eq!(img.subresource_layout(0, 0), Some(read));
    assert_eq!(
        img.subresource_layout(1, 0),
        Some(vk::ImageLayout::UNDEFINED),
        "an upload of mip 0 leaves mip 1 alone"
    );
    let mip0 = img.view_of(&ImageViewDesc::layer(0, 0)).unwrap();
    let mip1 = img.view_of(&ImageViewDesc::layer(0, 1)).unwrap();
    let vs = kiln::include_spirv!("test/textured.vert").unwrap();
    let fs = kiln::include_spirv!("test/textured.frag").unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(quad_vertex_layout());
    desc.color_formats = vec![RGBA8];
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_image_view(0, 0, &mip0, Some(&sampler)).unwrap();
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
    let layouts = device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::view(
                &mip1, [0.0; 4],
            )]))?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 0, 0)?;
            r.end_rendering()?;
            Ok((
                r.subresource_layout(&img, 0, 0),
                r.subresource_layout(&img, 1, 0),
            ))
        })
        .unwrap();
    let attachment = vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL;
    assert_eq!(layouts, (Some(read), Some(attachment)));
    assert_eq!(img.subresource_layout(0, 0), Some(read));
    assert_eq!(img.subresource_layout(1, 0), Some(attachment));
    // Pixel (x, y) of mip 1 samples uv ((x + 0.5) / 2, (y + 0.5) / 2): texel
    // (2x + 1, 2y + 1) of mip 0.
    let data = img.read_level(1).unwrap();
    for (x, y) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        assert_eq!(
            pixel(&data, 2, x, y),
            texel(2 * x + 1, 2 * y + 1),
            "({x}, {y})"
        );
    }
    // Mip 0 was only read.
    assert_eq!(img.read_level(0).unwrap(), bytes);
    assert_clean(&device);
}

/// One layer of a 2-layer image moves to GENERAL while the other stays where it was; a
/// view renders into layer 0 only; a copy of the level then moves each layer from its own
/// layout (two image barriers) and reads both: layer 0 the clear, layer 1 the upload.
#[test]
fn one_layer_moves_while_the_other_keeps_its_layout() {
    let device = device();
    let img = device
        .image(
            &ImageDesc::array("layers", 4, 4, 2, RGBA8)
                .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::COLOR_ATTACHMENT),
        )
        .unwrap();
    let upload: Vec<u8> = (0..2 * 16 * 4).map(|i| i as u8).collect();
    img.upload(&upload).unwrap();
    let read = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
    let general = vk::ImageLayout::GENERAL;
    let layer0 = img.view_of(&ImageViewDesc::layer(0, 0)).unwrap();
    let out = device.storage_buffer::<u8>("out", upload.len()).unwrap();
    let seen = device
        .execute(|r| {
            r.transition_subresources(&img, Subresources::layer(1), general)?;
            let after_move = (
                r.subresource_layout(&img, 0, 0),
                r.subresource_layout(&img, 0, 1),
            );
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::view(
                &layer0,
                [0.0, 0.2, 0.4, 1.0],
            )]))?;
            r.end_rendering()?;
            let after_render = (
                r.subresource_layout(&img, 0, 0),
                r.subresource_layout(&img, 0, 1),
            );
            r.copy_image_to_buffer(&img, 0, &out)?;
            Ok((after_move, after_render))
        })
        .unwrap();
    let attachment = vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL;
    assert_eq!(seen.0, (Some(read), Some(general)));
    assert_eq!(seen.1, (Some(attachment), Some(general)));
    let src = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
    assert_eq!(img.layout(), src, "the copy moved both layers");
    let got: Vec<u8> = out.read().unwrap();
    for p in got[..64].chunks(4) {
        assert_eq!(p, [0, 51, 102, 255], "layer 0: the clear");
    }
    assert_eq!(got[64..], upload[64..], "layer 1: the upload");
    // One layer back to sampling: the other stays a copy source.
    device
        .execute(|r| Ok(r.transition_subresources(&img, Subresources::layer(0), read)?))
        .unwrap();
    assert_eq!(img.subresource_layout(0, 0), Some(read));
    assert_eq!(img.subresource_layout(0, 1), Some(src));
    assert_eq!(img.layout(), read, "mip 0, layer 0 where the layers differ");
    assert_clean(&device);
}

/// Copies of single mip levels move those levels only: upload level 1, read level 0 and
/// level 1 back in one recording, each copy ordered after the write of its own level.
#[test]
fn per_level_copies_move_only_their_level() {
    let device = device();
    let img = device
        .image(&ImageDesc::texture("levels", 4, 4, RGBA8).mip_levels(3))
        .unwrap();
    let l0: Vec<u8> = (0..64).map(|i| i as u8).collect();
    let l1: Vec<u8> = (0..16).map(|i| 200 - i as u8).collect();
    let src0 = device
        .buffer_from_slice("l0", vk::BufferUsageFlags::TRANSFER_SRC, &l0)
        .unwrap();
    let src1 = device
        .buffer_from_slice("l1", vk::BufferUsageFlags::TRANSFER_SRC, &l1)
        .unwrap();
    let out0 = device.storage_buffer::<u8>("out0", 64).unwrap();
    let out1 = device.storage_buffer::<u8>("out1", 16).unwrap();
    let layouts = device
        .execute(|r| {
            r.copy_buffer_to_image(&src0, &img, 0)?;
            r.copy_buffer_to_image(&src1, &img, 1)?;
            r.copy_image_to_buffer(&img, 1, &out1)?;
            let mid = (0..3)
                .map(|m| r.subresource_layout(&img, m, 0))
                .collect::<Vec<_>>();
            r.copy_image_to_buffer(&img, 0, &out0)?;
            Ok(mid)
        })
        .unwrap();
    let (dst, src) = (
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
    );
    assert_eq!(
        layouts,
        vec![Some(dst), Some(src), Some(vk::ImageLayout::UNDEFINED)]
    );
    assert_eq!(out0.read::<u8>().unwrap(), l0);
    assert_eq!(out1.read::<u8>().unwrap(), l1);
    assert_eq!(img.subresource_layout(0, 0), Some(src));
    assert_eq!(
        img.subresource_layout(2, 0),
        Some(vk::ImageLayout::UNDEFINED)
    );
    assert_eq!(img.subresource_layout(3, 0), None);
    assert_clean(&device);
}

#[test]
fn a_range_past_the_image_is_refused() {
    let device = device();
    let img = device
        .image(&ImageDesc::texture("one", 4, 4, RGBA8))
        .unwrap();
    let general = vk::ImageLayout::GENERAL;
    for range in [
        Subresources::mip(1),
        Subresources::layer(1),
        Subresources::new(0..0, 0..1),
    ] {
        let r = device.execute(|r| Ok(r.transition_subresources(&img, range, general)?));
        assert_eq!(code(r), "KILN-E180", "{range:?}");
    }
    assert_eq!(img.layout(), vk::ImageLayout::UNDEFINED);
    assert_clean(&device);
}

/// One way to ask for a transition, in a recording.
type Transition = fn(&mut kiln::Recorder<'_, '_>, &kiln::Image) -> kiln::Result<()>;

/// A transition to (or, with `transition_from`, from) a layout the image's usage does not
/// allow, or to UNDEFINED/PREINITIALIZED, is KILN-E180 before any barrier: a texture
/// (SAMPLED, TRANSFER) is never a colour or depth attachment. Was: recorded as asked, a
/// validation error (VUID-VkImageMemoryBarrier2-oldLayout-01208 and its twins).
#[test]
fn a_layout_the_usage_forbids_is_refused() {
    let device = device();
    let img = device
        .image(&ImageDesc::texture("texture", 4, 4, RGBA8))
        .unwrap();
    let (undefined, general) = (vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL);
    let cases: [(&str, Transition); 6] = [
        ("to colour", |r, i| {
            Ok(r.transition(i, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)?)
        }),
        ("to UNDEFINED", |r, i| {
            Ok(r.transition(i, vk::ImageLayout::UNDEFINED)?)
        }),
        ("to PREINITIALIZED", |r, i| {
            Ok(r.transition(i, vk::ImageLayout::PREINITIALIZED)?)
        }),
        ("one mip to depth", |r, i| {
            Ok(r.transition_subresources(
                i,
                Subresources::mip(0),
                vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
            )?)
        }),
        ("from depth", |r, i| {
            Ok(r.transition_from(
                i,
                vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
                vk::ImageLayout::GENERAL,
            )?)
        }),
        ("from UNDEFINED to colour", |r, i| {
            Ok(r.transition_from(
                i,
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            )?)
        }),
    ];
    for (what, case) in cases {
        let r = device.execute(|r| {
            let before = r.barrier_count();
            let e = case(r, &img);
            assert_eq!(r.barrier_count(), before, "{what}: a barrier was recorded");
            e
        });
        let err = r.unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{what}: {err}");
        assert!(err.to_string().contains("texture"), "{what}: {err}");
    }
    assert_eq!(img.layout(), undefined);
    // Layouts the usage allows still move it, from whatever it was.
    device
        .execute(|r| {
            r.transition(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)?;
            Ok(r.transition_from(&img, undefined, general)?)
        })
        .unwrap();
    assert_eq!(img.layout(), general);
    assert_clean(&device);
}

/// Copies of single array layers: one layer is written while the other keeps its layout
/// and contents, each layer is read back alone; errors for layers the image lacks.
#[test]
fn per_layer_copies() {
    let device = device();
    let img = device
        .image(&ImageDesc::array("layers", 2, 2, 3, RGBA8))
        .unwrap();
    let upload: Vec<u8> = (0..3 * 16).map(|i| i as u8).collect();
    img.upload(&upload).unwrap();
    let read = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
    let new_layer: Vec<u8> = (0..16).map(|i| 250 - i as u8).collect();
    let src = device
        .buffer_from_slice("layer", vk::BufferUsageFlags::TRANSFER_SRC, &new_layer)
        .unwrap();
    let outs: Vec<kiln::Buffer> = (0..3)
        .map(|_| device.storage_buffer::<u8>("out", 16).unwrap())
        .collect();
    let two = device.storage_buffer::<u8>("two", 32).unwrap();
    let mid = device
        .execute(|r| {
            r.copy_buffer_to_image_layers(&src, &img, 0, 1..2)?;
            let mid = (0..3)
                .map(|l| r.subresource_layout(&img, 0, l))
                .collect::<Vec<_>>();
            for (l, out) in outs.iter().enumerate() {
                let l = l as u32;
                r.copy_image_layers_to_buffer(&img, 0, l..l + 1, out)?;
            }
            r.copy_image_layers_to_buffer(&img, 0, 1..3, &two)?;
            Ok(mid)
        })
        .unwrap();
    let dst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
    assert_eq!(mid, vec![Some(read), Some(dst), Some(read)]);
    assert_eq!(outs[0].read::<u8>().unwrap(), upload[..16]);
    assert_eq!(outs[1].read::<u8>().unwrap(), new_layer);
    assert_eq!(outs[2].read::<u8>().unwrap(), upload[32..]);
    let both: Vec<u8> = two.read().unwrap();
    assert_eq!(both[..16], new_layer[..]);
    assert_eq!(both[16..], upload[32..]);
    for layers in [2..4, 1..1, 3..4] {
        let r =
            device.execute(|r| Ok(r.copy_image_layers_to_buffer(&img, 0, layers.clone(), &two)?));
        assert_eq!(code(r), "KILN-E180", "{layers:?}");
    }
    let small = device.storage_buffer::<u8>("small", 8).unwrap();
    let r = device.execute(|r| Ok(r.copy_buffer_to_image_layers(&small, &img, 0, 0..1)?));
    assert_eq!(code(r), "KILN-E151");
    assert_clean(&device);
}
