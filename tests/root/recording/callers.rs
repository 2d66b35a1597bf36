//! Every public recorder command names the user's line: after each one, the location a
//! validation message would name (`Recorder::debug_caller`, what the messenger appends as
//! "recorded at file:line") is the line of that call in this file, not a line of kiln's
//! own (a command calling another public command through kiln's code, or one that set no
//! caller, named kiln's file or the previous command's line). One real validation message,
//! raised by raw commands after `raw_using`, closes the loop.

use common::add;
use common::draw::{flat_pipeline, target, RGBA8};
use common::{device, device_with_desc};
use kiln::{vk, ColorAttachment, DeviceDesc, PushWrite, Recorder, RenderingDesc};

/// Asserts that the last command was recorded at a line of the `named!` invocation that
/// starts at line `from` of this file (rustfmt may split one over up to 6 lines); the
/// previous command's line is before it.
#[track_caller]
fn named_from(r: &Recorder, what: &str, from: u32) {
    let (file, line) = r
        .debug_caller()
        .unwrap_or_else(|| panic!("{what}: no caller (validation is on in the tests)"));
    assert_eq!(file, file!(), "{what} named {file}:{line}");
    assert!(
        (from..from + 6).contains(&line),
        "{what} named line {line}, not one of the call's from line {from}"
    );
}

/// Records `$call` and checks that it named its own line.
macro_rules! named {
    ($r:ident, $what:literal, $call:expr) => {{
        $call?;
        named_from($r, $what, line!());
    }};
}

#[test]
fn compute_and_transfer_commands_name_the_users_line() {
    let device = device();
    let p = add::vector_add(&device);
    let x = add::storage(&device, "x", &[1.0f32; 256]);
    let out = device.storage_buffer::<f32>("out", 256).unwrap();
    let set = add::set(&p, &x, &x, &out);
    let indirect = device
        .buffer_from_slice(
            "groups",
            vk::BufferUsageFlags::INDIRECT_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER,
            &[1u32, 1, 1],
        )
        .unwrap();
    let img = target(&device, 4, 4);
    let texels = device.storage_buffer::<u8>("texels", 64).unwrap();
    let pushed = device
        .compute_pipeline_with(
            &kiln::ComputePipelineDesc::new(
                &kiln::include_spirv!("vector_add.comp").unwrap(),
                "main",
            )
            .push_descriptor_set(Some(0)),
        )
        .unwrap();
    device
        .execute(|r| {
            named!(r, "bind_pipeline", r.bind_pipeline(&p));
            named!(r, "bind_set", r.bind_set(0, &set));
            named!(r, "dispatch", r.dispatch(1, 1, 1));
            named!(r, "dispatch_threads", r.dispatch_threads(256));
            named!(r, "dispatch_threads_2d", r.dispatch_threads_2d(256, 1));
            named!(r, "dispatch_threads_3d", r.dispatch_threads_3d(256, 1, 1));
            named!(r, "dispatch_indirect", r.dispatch_indirect(&indirect, 0));
            named!(r, "barrier", r.barrier());
            named!(r, "copy_buffer", r.copy_buffer(&x, 0, &out, 0, 64));
            named!(r, "fill_buffer", r.fill_buffer(&texels, 0));
            named!(
                r,
                "copy_buffer_to_image",
                r.copy_buffer_to_image(&texels, &img, 0)
            );
            named!(
                r,
                "copy_image_to_buffer",
                r.copy_image_to_buffer(&img, 0, &texels)
            );
            named!(
                r,
                "copy_buffer_to_image_layers",
                r.copy_buffer_to_image_layers(&texels, &img, 0, 0..1)
            );
            named!(
                r,
                "copy_image_layers_to_buffer",
                r.copy_image_layers_to_buffer(&img, 0, 0..1, &texels)
            );
            named!(
                r,
                "transition",
                r.transition(&img, vk::ImageLayout::GENERAL)
            );
            named!(
                r,
                "transition_subresources",
                r.transition_subresources(
                    &img,
                    kiln::Subresources::mip(0),
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL
                )
            );
            named!(
                r,
                "transition_from",
                r.transition_from(&img, vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL)
            );
            named!(r, "full_barrier", r.full_barrier());
            named!(r, "begin_scope", r.begin_scope("outer"));
            named!(r, "end_scope", r.end_scope());
            named!(r, "scope", r.scope("inner", |_| Ok(())));
            named!(r, "bind_pipeline (push set)", r.bind_pipeline(&pushed));
            let writes = [
                PushWrite::buffer(0, &x),
                PushWrite::buffer(1, &x),
                PushWrite::buffer(2, &out),
            ];
            named!(r, "push_descriptor_set", r.push_descriptor_set(0, &writes));
            // SAFETY (test): nothing is recorded through the command buffers.
            named!(r, "raw", Ok::<_, kiln::Error>(unsafe { r.raw() }));
            // SAFETY (test): as above.
            named!(r, "raw_using", unsafe { r.raw_using(&[&out]) });
            Ok(())
        })
        .unwrap();
    // The dispatches wrote 2.0 everywhere, then the copy 16 floats of 1.0.
    let mut expected = vec![1.0f32; 16];
    expected.resize(256, 2.0);
    assert_eq!(out.read::<f32>().unwrap(), expected);
    common::assert_clean(&device);
}

#[test]
fn graphics_commands_name_the_users_line() {
    let device = device();
    let p = flat_pipeline(&device, RGBA8).unwrap();
    let img = target(&device, 8, 8);
    let vb = device
        .buffer_from_slice(
            "triangle",
            vk::BufferUsageFlags::VERTEX_BUFFER,
            &[[-1.0f32, -1.0], [3.0, -1.0], [-1.0, 3.0]],
        )
        .unwrap();
    let ib = device
        .buffer_from_slice("indices", vk::BufferUsageFlags::INDEX_BUFFER, &[0u32, 1, 2])
        .unwrap();
    // A VkDrawIndexedIndirectCommand (its first 16 bytes are also a VkDrawIndirectCommand
    // of 3 vertices, one instance, from vertex 0), then a draw count of 1.
    let commands = device
        .buffer_from_slice(
            "commands",
            vk::BufferUsageFlags::INDIRECT_BUFFER,
            &[3u32, 1, 0, 0, 0, 1],
        )
        .unwrap();
    let full = vk::Rect2D {
        offset: vk::Offset2D::default(),
        extent: vk::Extent2D {
            width: 8,
            height: 8,
        },
    };
    let viewport = vk::Viewport {
        width: 8.0,
        height: 8.0,
        max_depth: 1.0,
        ..Default::default()
    };
    device
        .execute(|r| {
            let color = [ColorAttachment::clear(&img, [0.0; 4])];
            let desc = RenderingDesc::new(&color);
            named!(r, "begin_rendering", r.begin_rendering(&desc));
            // Refused (no local-read attachment in this scope), and still names its line.
            let refused = r.local_read_barrier().map_err(|e| e.code());
            named_from(r, "local_read_barrier", line!() - 1);
            assert_eq!(refused, Err("KILN-E283"));
            named!(r, "set_viewport", r.set_viewport(viewport));
            named!(r, "set_scissor", r.set_scissor(full));
            named!(r, "bind_pipeline", r.bind_pipeline(&p));
            named!(r, "push_constants", r.push_constants(0, &[0u8; 16]));
            named!(r, "push", r.push(0, &[0.0f32, 1.0, 0.0, 1.0]));
            named!(r, "bind_vertex_buffer", r.bind_vertex_buffer(0, &vb, 0));
            named!(r, "draw", r.draw(3, 1, 0, 0));
            named!(
                r,
                "bind_index_buffer",
                r.bind_index_buffer(&ib, 0, vk::IndexType::UINT32)
            );
            named!(r, "draw_indexed", r.draw_indexed(3, 1, 0, 0, 0));
            named!(r, "draw_indirect", r.draw_indirect(&commands, 0, 1, 16));
            named!(
                r,
                "draw_indexed_indirect",
                r.draw_indexed_indirect(&commands, 0, 1, 20)
            );
            named!(
                r,
                "draw_indirect_count",
                r.draw_indirect_count(&commands, 0, &commands, 20, 1, 16)
            );
            named!(
                r,
                "draw_indexed_indirect_count",
                r.draw_indexed_indirect_count(&commands, 0, &commands, 20, 1, 20)
            );
            named!(r, "end_rendering", r.end_rendering());
            Ok(())
        })
        .unwrap();
    // The triangle covers every pixel green.
    let data = img.read().unwrap();
    assert!(
        data.chunks(4).all(|p| p == [0, 255, 0, 255]),
        "{:?}",
        &data[..8]
    );
    common::assert_clean(&device);
}

/// The case the issue found as a new user would: a validation message for raw commands
/// recorded after `raw_using` named the line of the command before it.
#[test]
fn a_message_for_raw_using_commands_names_its_line() {
    let device = device_with_desc(DeviceDesc::default().validation_fail(Some(true)));
    let buf = device.storage_buffer::<u32>("target", 64).unwrap();
    let mut line = 0;
    let e = device
        .execute(|r| {
            r.fill_buffer(&buf, 1)?;
            // SAFETY (test): only the overlapping copy is recorded through it, into a live
            // 256-byte buffer.
            let (cb, at_line) = (unsafe { r.raw_using(&[&buf]) }?, line!());
            line = at_line;
            unsafe { common::record_overlapping_copy(&device, cb, &buf) };
            Ok(())
        })
        .unwrap_err();
    common::assert_overlapping_copy_reported(&e, file!(), line);
}

/// The commands the two tests above do not record: a draw list, the dynamic state, mips
/// and the switch to manual barriers (which records a full barrier) name the user's line.
#[test]
fn draw_lists_dynamic_state_mips_and_manual_mode_name_the_users_line() {
    let device = device();
    let vs = kiln::include_spirv!("test/list_cell.vert").unwrap();
    let fs = kiln::include_spirv!("test/list_cell.frag").unwrap();
    let mut desc = kiln::GraphicsPipelineDesc::new(&vs, &fs);
    desc.color_formats = vec![RGBA8];
    let p = device.graphics_pipeline(&desc).unwrap();
    let green = device
        .buffer_from_slice(
            "green",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[0.0f32, 1.0, 0.0, 1.0],
        )
        .unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &green).unwrap();
    // One draw over the whole target (clip-space rectangle x, y, width, height).
    let list = [kiln::ListDraw::new(&set, [-1.0f32, -1.0, 2.0, 2.0], 6)];
    let img = target(&device, 8, 8);
    let filled = device.storage_buffer::<u32>("filled", 4).unwrap();
    let mips = device
        .image(&kiln::ImageDesc::texture("mips", 4, 4, vk::Format::R8G8B8A8_UNORM).full_mip_chain())
        .unwrap();
    device
        .execute(|r| {
            let color = [ColorAttachment::clear(&img, [0.0; 4])];
            let desc = RenderingDesc::default().color(&color).depth(None);
            r.begin_rendering(&desc)?;
            named!(r, "bind_pipeline", r.bind_pipeline(&p));
            named!(r, "set_cull_mode", r.set_cull_mode(vk::CullModeFlags::NONE));
            named!(
                r,
                "set_front_face",
                r.set_front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            );
            named!(
                r,
                "set_primitive_topology",
                r.set_primitive_topology(vk::PrimitiveTopology::TRIANGLE_LIST)
            );
            named!(
                r,
                "set_stencil_reference",
                r.set_stencil_reference(vk::StencilFaceFlags::FRONT_AND_BACK, 0)
            );
            named!(r, "draw_list", r.draw_list(0, 0, &list));
            named!(r, "end_rendering", r.end_rendering());
            named!(r, "generate_mips", r.generate_mips(&mips));
            r.manual_barriers();
            named_from(r, "manual_barriers", line!() - 1);
            named!(r, "fill_buffer (manual)", r.fill_buffer(&filled, 7));
            Ok(())
        })
        .unwrap();
    let data = img.read().unwrap();
    assert!(
        data.chunks(4).all(|p| p == [0, 255, 0, 255]),
        "{:?}",
        &data[..8]
    );
    assert_eq!(filled.read::<u32>().unwrap(), vec![7; 4]);
    common::assert_clean(&device);
}
