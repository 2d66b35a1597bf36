//! Same-device checks of the one recording path: every command that takes a buffer or an
//! image refuses one of another `VkDevice` (two kiln devices on one physical device) with
//! `KILN-E109` naming it, records nothing (the recording goes on after the error, its
//! barrier count unchanged, and is submitted), and neither device's validation layer
//! reports anything (VUID-…-commonparent would).

use common::add;
use common::draw::{flat_pipeline, RGBA8};
use common::{assert_clean, device};
use kiln::{vk, ColorAttachment, ImageDesc, PushWrite, Recorder, RenderingDesc};

/// An RGBA8 colour target of `size`² named `label`.
fn image(device: &kiln::Device, label: &str, size: u32) -> kiln::Image {
    device
        .image(&ImageDesc::color_target(label, size, size, RGBA8))
        .unwrap()
}

/// A case: the command under test, given the recorder.
type Case<'c, 'a> = (
    &'c str,
    &'c dyn Fn(&mut Recorder<'a, '_>) -> kiln::Result<()>,
);

/// Runs each case inside one recording of `a`: `KILN-E109` naming `b's`, nothing recorded
/// (the barrier count is unchanged; the recording goes on), then `after`.
fn refused_in_one_recording<'a>(
    a: &'a kiln::Device,
    cases: &[Case<'_, 'a>],
    after: &dyn Fn(&mut Recorder<'a, '_>) -> kiln::Result<()>,
) {
    a.execute(|r| {
        for (what, case) in cases {
            let before = r.barrier_count();
            let e = case(r).expect_err(what);
            assert_eq!(e.code(), "KILN-E109", "{what}: {e}");
            assert!(e.to_string().contains("b's"), "{what}: {e}");
            assert_eq!(r.barrier_count(), before, "{what} recorded a barrier");
        }
        after(r)
    })
    .unwrap();
}

#[test]
fn copies_fills_transitions_mips_and_dispatches_refuse_another_devices_objects() {
    let a = device();
    let b = device();
    let p = add::vector_add(&a);
    let one = add::storage(&a, "a's ones", &[1.0f32; 64]);
    let out = a.storage_buffer::<f32>("a's out", 64).unwrap();
    let set = add::set(&p, &one, &one, &out);
    let buf_a = a.storage_buffer::<u8>("a's texels", 64).unwrap();
    let buf_b = b.storage_buffer::<u8>("b's texels", 64).unwrap();
    let img_a = image(&a, "a's image", 4);
    let img_b = image(&b, "b's image", 4);
    let mips_b = b
        .image(&ImageDesc::texture("b's mips", 4, 4, vk::Format::R8G8B8A8_UNORM).full_mip_chain())
        .unwrap();
    let usage = vk::BufferUsageFlags::INDIRECT_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER;
    let groups_b = b
        .buffer_from_slice("b's groups", usage, &[1u32, 1, 1])
        .unwrap();
    let general = vk::ImageLayout::GENERAL;
    let cases: [Case<'_, '_>; 13] = [
        ("copy_buffer (source)", &|r| {
            Ok(r.copy_buffer(&buf_b, 0, &buf_a, 0, 16)?)
        }),
        ("copy_buffer (destination)", &|r| {
            Ok(r.copy_buffer(&buf_a, 0, &buf_b, 0, 16)?)
        }),
        ("fill_buffer", &|r| Ok(r.fill_buffer(&buf_b, 7)?)),
        ("copy_buffer_to_image (image)", &|r| {
            Ok(r.copy_buffer_to_image(&buf_a, &img_b, 0)?)
        }),
        ("copy_buffer_to_image (buffer)", &|r| {
            Ok(r.copy_buffer_to_image(&buf_b, &img_a, 0)?)
        }),
        ("copy_image_to_buffer (image)", &|r| {
            Ok(r.copy_image_to_buffer(&img_b, 0, &buf_a)?)
        }),
        ("copy_image_to_buffer (buffer)", &|r| {
            Ok(r.copy_image_to_buffer(&img_a, 0, &buf_b)?)
        }),
        ("copy_buffer_to_image_layers (image)", &|r| {
            Ok(r.copy_buffer_to_image_layers(&buf_a, &img_b, 0, 0..1)?)
        }),
        ("copy_image_layers_to_buffer (buffer)", &|r| {
            Ok(r.copy_image_layers_to_buffer(&img_a, 0, 0..1, &buf_b)?)
        }),
        ("transition_subresources", &|r| {
            Ok(r.transition_subresources(&img_b, kiln::Subresources::mip(0), general)?)
        }),
        ("generate_mips", &|r| Ok(r.generate_mips(&mips_b)?)),
        ("generate_mips (one level)", &|r| {
            Ok(r.generate_mips(&img_b)?)
        }),
        ("dispatch_indirect", &|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_indirect(&groups_b, 0)?)
        }),
    ];
    refused_in_one_recording(&a, &cases, &|r| {
        r.bind_pipeline(&p)?;
        r.bind_set(0, &set)?;
        Ok(r.dispatch_threads(64)?)
    });
    // Only the dispatch after the refused commands ran.
    assert_eq!(out.read::<f32>().unwrap(), vec![2.0; 64]);
    assert_eq!(buf_a.read::<u8>().unwrap(), vec![0; 64]);
    assert_clean(&a);
    assert_clean(&b);
}

#[test]
fn rendering_draws_and_pushes_refuse_another_devices_objects() {
    let a = device();
    let b = device();
    let pipe = flat_pipeline(&a, RGBA8).unwrap();
    let img_a = image(&a, "a's image", 8);
    let img_b = image(&b, "b's image", 8);
    let ms_a = a
        .image(
            &ImageDesc::color_target("a's 4x", 8, 8, RGBA8).samples(vk::SampleCountFlags::TYPE_4),
        )
        .unwrap();
    let depth_b = b
        .image(&ImageDesc::depth_target(
            "b's depth",
            8,
            8,
            vk::Format::D32_SFLOAT,
        ))
        .unwrap();
    let usage = vk::BufferUsageFlags::INDIRECT_BUFFER;
    let commands_b = b
        .buffer_from_slice("b's commands", usage, &[3u32, 1, 0, 0, 0, 1])
        .unwrap();
    let commands_a = a
        .buffer_from_slice("a's commands", usage, &[3u32, 1, 0, 0, 0, 1])
        .unwrap();
    let vb_b = b
        .buffer_from_slice(
            "b's vertices",
            vk::BufferUsageFlags::VERTEX_BUFFER,
            &[0f32; 8],
        )
        .unwrap();
    let ib_b = b
        .buffer_from_slice(
            "b's indices",
            vk::BufferUsageFlags::INDEX_BUFFER,
            &[0u32; 3],
        )
        .unwrap();
    let vb_a = a
        .buffer_from_slice(
            "a's triangle",
            vk::BufferUsageFlags::VERTEX_BUFFER,
            &[[-1.0f32, -1.0], [3.0, -1.0], [-1.0, 3.0]],
        )
        .unwrap();
    // Outside a scope: attachments, resolve targets and depth of another device.
    let scope_cases: [Case<'_, '_>; 3] = [
        ("begin_rendering (colour)", &|r| {
            let color = [ColorAttachment::clear(&img_b, [0.0; 4])];
            Ok(r.begin_rendering(&RenderingDesc::default().color(&color).depth(None))?)
        }),
        ("begin_rendering (resolve target)", &|r| {
            let color = [ColorAttachment::clear(&ms_a, [0.0; 4]).resolve_into(&img_b)];
            Ok(r.begin_rendering(&RenderingDesc::default().color(&color).depth(None))?)
        }),
        ("begin_rendering (depth)", &|r| {
            let color = [ColorAttachment::clear(&img_a, [0.0; 4])];
            let depth = kiln::DepthAttachment::clear(&depth_b, 1.0);
            Ok(r.begin_rendering(&RenderingDesc::default().color(&color).depth(Some(depth)))?)
        }),
    ];
    // Inside a scope with the pipeline bound: every draw that reads a buffer, and binds.
    let draw_cases: [Case<'_, '_>; 7] = [
        ("bind_vertex_buffer", &|r| {
            Ok(r.bind_vertex_buffer(0, &vb_b, 0)?)
        }),
        ("bind_index_buffer", &|r| {
            Ok(r.bind_index_buffer(&ib_b, 0, vk::IndexType::UINT32)?)
        }),
        ("draw_indirect", &|r| {
            Ok(r.draw_indirect(&commands_b, 0, 1, 16)?)
        }),
        ("draw_indexed_indirect", &|r| {
            Ok(r.draw_indexed_indirect(&commands_b, 0, 1, 20)?)
        }),
        ("draw_indirect_count (commands)", &|r| {
            Ok(r.draw_indirect_count(&commands_b, 0, &commands_a, 20, 1, 16)?)
        }),
        ("draw_indirect_count (count)", &|r| {
            Ok(r.draw_indirect_count(&commands_a, 0, &commands_b, 20, 1, 16)?)
        }),
        ("draw_indexed_indirect_count (count)", &|r| {
            Ok(r.draw_indexed_indirect_count(&commands_a, 0, &commands_b, 20, 1, 20)?)
        }),
    ];
    a.execute(|r| {
        for (what, case) in &scope_cases {
            let e = case(r).expect_err(what);
            assert_eq!(e.code(), "KILN-E109", "{what}: {e}");
            assert!(e.to_string().contains("b's"), "{what}: {e}");
        }
        let color = [ColorAttachment::clear(&img_a, [0.0; 4])];
        r.begin_rendering(&RenderingDesc::default().color(&color).depth(None))?;
        r.bind_pipeline(&pipe)?;
        r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
        r.bind_vertex_buffer(0, &vb_a, 0)?;
        for (what, case) in &draw_cases {
            let e = case(r).expect_err(what);
            assert_eq!(e.code(), "KILN-E109", "{what}: {e}");
            assert!(e.to_string().contains("b's"), "{what}: {e}");
        }
        // The vertex buffer bound before the refused binds is still the one drawn.
        r.draw(3, 1, 0, 0)?;
        Ok(r.end_rendering()?)
    })
    .unwrap();
    let data = img_a.read().unwrap();
    assert!(
        data.chunks(4).all(|p| p == [0, 255, 0, 255]),
        "{:?}",
        &data[..8]
    );
    // A push-descriptor set with a buffer of another device.
    let pushed = a
        .compute_pipeline_with(
            &kiln::ComputePipelineDesc::new(
                &kiln::include_spirv!("vector_add.comp").unwrap(),
                "main",
            )
            .push_descriptor_set(Some(0)),
        )
        .unwrap();
    let x = add::storage(&a, "a's x", &[1.0f32; 16]);
    let y = b.storage_buffer::<f32>("b's y", 16).unwrap();
    let e = a
        .execute(|r| {
            r.bind_pipeline(&pushed)?;
            let writes = [
                PushWrite::buffer(0, &x),
                PushWrite::buffer(1, &x),
                PushWrite::buffer(2, &y),
            ];
            Ok(r.push_descriptor_set(0, &writes)?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109", "{e}");
    assert_clean(&a);
    assert_clean(&b);
}

/// A descriptor set of another device, bound (`bind_set`) or in a draw list: `KILN-E109`
/// naming the set, not `KILN-E204` "incompatible layout" (the two layouts are equal, only
/// their devices differ); nothing recorded, and the recording goes on with a's own set.
#[test]
fn descriptor_sets_of_another_device_are_e109_in_bind_set_and_draw_list() {
    let a = device();
    let b = device();
    // Compute: vector_add's set 0 made on b, bound with a's pipeline.
    let (p_a, p_b) = (add::vector_add(&a), add::vector_add(&b));
    let one_b = add::storage(&b, "b's ones", &[1.0f32; 64]);
    let set_b = add::set(&p_b, &one_b, &one_b, &one_b);
    let one_a = add::storage(&a, "a's ones", &[1.0f32; 64]);
    let out_a = a.storage_buffer::<f32>("a's out", 64).unwrap();
    let set_a = add::set(&p_a, &one_a, &one_a, &out_a);
    a.execute(|r| {
        r.bind_pipeline(&p_a)?;
        let before = r.barrier_count();
        let e = r.bind_set(0, &set_b).unwrap_err();
        assert_eq!(e.code(), "KILN-E109", "{e}");
        assert!(e.to_string().contains("descriptor set"), "{e}");
        assert_eq!(r.barrier_count(), before);
        r.bind_set(0, &set_a)?;
        Ok(r.dispatch_threads(64)?)
    })
    .unwrap();
    assert_eq!(out_a.read::<f32>().unwrap(), vec![2.0f32; 64]);
    // Graphics: a draw list whose second draw's set is b's.
    let vs = kiln::include_spirv!("test/list_cell.vert").unwrap();
    let fs = kiln::include_spirv!("test/list_cell.frag").unwrap();
    let mut desc = kiln::GraphicsPipelineDesc::new(&vs, &fs);
    desc.color_formats = vec![RGBA8];
    let (g_a, g_b) = (
        a.graphics_pipeline(&desc).unwrap(),
        b.graphics_pipeline(&desc).unwrap(),
    );
    let uniform = |d: &kiln::Device, label: &str| {
        d.buffer_from_slice(
            label,
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[0.0f32, 1.0, 0.0, 1.0],
        )
        .unwrap()
    };
    let (green_a, green_b) = (uniform(&a, "a's green"), uniform(&b, "b's green"));
    let mut cell_a = g_a.descriptor_set(0).unwrap();
    cell_a.write_buffer(0, &green_a).unwrap();
    let mut cell_b = g_b.descriptor_set(0).unwrap();
    cell_b.write_buffer(0, &green_b).unwrap();
    let rect = [-1.0f32, -1.0, 2.0, 2.0];
    let mixed = [
        kiln::ListDraw::new(&cell_a, rect, 6),
        kiln::ListDraw::new(&cell_b, rect, 6),
    ];
    let img = image(&a, "a's target", 8);
    a.execute(|r| {
        let color = [ColorAttachment::clear(&img, [0.0; 4])];
        r.begin_rendering(&RenderingDesc::default().color(&color).depth(None))?;
        r.bind_pipeline(&g_a)?;
        let e = r.draw_list(0, 0, &mixed).unwrap_err();
        assert_eq!(e.code(), "KILN-E109", "{e}");
        assert!(e.to_string().contains("descriptor set"), "{e}");
        Ok(r.end_rendering()?)
    })
    .unwrap();
    // Nothing was drawn: the target holds the clear colour.
    assert!(img.read().unwrap().iter().all(|&x| x == 0));
    println!("path: b's sets refused with E109 in bind_set and draw_list");
    assert_clean(&a);
    assert_clean(&b);
}
