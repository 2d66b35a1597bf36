//! The holes of issue 17 part 2, each with a test that fails without its fix (the
//! presenter's failed submissions are tested under xvfb in `tests/window.rs`, with faults
//! injected into a real swapchain's frames).

use common::add::{self, vector_add};
use common::draw::{pixel, target, RGBA8};
use common::gate::Gate;
use common::{assert_clean, device};
use kiln::{
    vk, BufferDesc, ColorAttachment, DepthAttachment, ImageDesc, MemoryLocation, RenderingDesc,
};

/// An image with transfer usage only gets no view (a view of it is invalid,
/// VUID-VkImageViewCreateInfo-image-04441, which the validation layer reported before the
/// fix); uploads and readbacks of it still work.
#[test]
fn a_transfer_only_image_has_no_view_and_still_copies() {
    let device = device();
    for usage in [
        vk::ImageUsageFlags::TRANSFER_DST,
        vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST,
        vk::ImageUsageFlags::empty(),
    ] {
        let img = device
            .image(&ImageDesc::texture("copies only", 4, 2, RGBA8).usage(usage))
            .unwrap();
        assert_eq!(img.view(), vk::ImageView::null(), "{usage:?}");
        let texels: Vec<u8> = (0..32).map(|i| i * 7).collect();
        img.upload(&texels).unwrap();
        assert_eq!(img.read().unwrap(), texels);
    }
    // Images with a viewable usage keep their view.
    let sampled = device
        .image(&ImageDesc::texture("sampled", 4, 2, RGBA8))
        .unwrap();
    assert_ne!(sampled.view(), vk::ImageView::null());
    assert_clean(&device);
}

/// A reusable recording that clears a depth attachment (a transition from UNDEFINED,
/// valid from every layout) is accepted and runs again and again; before the fix it was
/// refused with KILN-E284 because the image ends in DEPTH_ATTACHMENT_OPTIMAL after starting
/// in UNDEFINED. Each run draws a red quad at depth 0 over a depth cleared to 0.5, then a
/// green one at the same depth (LESS fails): every run must end red, which it only does if
/// the depth was cleared again on that run.
#[test]
fn a_reusable_recording_may_clear_depth_from_undefined() {
    let device = device();
    let color = target(&device, 8, 8);
    let depth = device
        .image(&ImageDesc::depth_target(
            "depth",
            8,
            8,
            vk::Format::D32_SFLOAT,
        ))
        .unwrap();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let desc = kiln::GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(kiln::VertexBufferLayout::packed(&[(
            0,
            vk::Format::R32G32_SFLOAT,
        )]))
        .targets(&[&color], Some(&depth));
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    let quad: [[f32; 2]; 6] = [
        [-1.0, -1.0],
        [1.0, -1.0],
        [1.0, 1.0],
        [-1.0, -1.0],
        [1.0, 1.0],
        [-1.0, 1.0],
    ];
    let vb = device
        .buffer_from_slice("quad", vk::BufferUsageFlags::VERTEX_BUFFER, &quad)
        .unwrap();
    let mut rec = device
        .record(|r| {
            r.begin_rendering(
                &RenderingDesc::new(&[ColorAttachment::clear(&color, [0.0; 4])]).depth(Some(
                    DepthAttachment::clear(&depth, 0.5).stencil_clear(None),
                )),
            )?;
            r.bind_pipeline(&pipeline)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.push(0, &[1.0f32, 0.0, 0.0, 1.0])?;
            r.draw(6, 1, 0, 0)?;
            r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
            r.draw(6, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .expect("a depth clear from UNDEFINED is valid on every run");
    for run in 0..3 {
        rec.execute().unwrap();
        assert_eq!(
            depth.layout(),
            vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
            "run {run}"
        );
        // The readback moves the colour target to TRANSFER_SRC: the recording's colour
        // clear discards from whatever layout it finds (it first saw the image UNDEFINED).
        let px = color.read().unwrap();
        for (x, y) in [(0, 0), (4, 4), (7, 7)] {
            assert_eq!(
                pixel(&px, 8, x, y),
                [255, 0, 0, 255],
                "run {run} ({x}, {y})"
            );
        }
    }
    drop(rec);
    // A transition that only found the image UNDEFINED (not an explicit discard) is still
    // refused: a second run would start from the wrong layout.
    let fresh = target(&device, 4, 4);
    let err = device
        .record(|r| Ok(r.transition(&fresh, vk::ImageLayout::GENERAL)?))
        .err()
        .unwrap();
    assert_eq!(err.code(), "KILN-E284");
    assert_clean(&device);
}

/// Host access to a mapped buffer waits for the submissions that use it, not for every
/// pending submission: with a submission held on the GPU by a gate, a buffer it does not
/// use is written and read at once (before the fix: after waiting for the gated
/// submission, i.e. `KILN-E108` after 120 s here), while a read of a buffer it writes
/// waits for it and sees its results. (Every storage binding counts as written: kiln
/// cannot tell a `readonly` one, so `a` would wait too.)
#[test]
fn mapped_host_access_waits_only_for_the_submissions_using_the_buffer() {
    let device = device();
    let gate = Gate::new(&device);
    let p = vector_add(&device);
    let mapped = |label: &str| {
        device
            .buffer(
                &BufferDesc::default()
                    .label(label)
                    .size(16)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                    .location(MemoryLocation::CpuToGpu),
            )
            .unwrap()
    };
    let (a, c, other) = (mapped("a"), mapped("c"), mapped("other"));
    a.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let set = add::set(&p, &a, &a, &c);
    let held = gate
        .submit_on(&device.queue(kiln::QueueKind::Main), |r| {
            add::dispatch(r, &p, &set, 4)
        })
        .unwrap();
    other.upload(&[7u32, 8, 9, 10]).unwrap();
    assert_eq!(other.read::<u32>().unwrap(), vec![7, 8, 9, 10]);
    assert!(!held.is_done(), "the gate holds the submission");
    gate.open();
    // `c` is written by the held submission: the read waits for it.
    assert_eq!(c.read::<f32>().unwrap(), vec![2.0, 4.0, 6.0, 8.0]);
    held.wait().unwrap();
    assert_clean(&device);
}

/// A submission with raw commands (whose uses kiln cannot see) still makes host access to
/// mapped buffers wait for it: a raw fill of a mapped buffer is read back complete.
#[test]
fn raw_commands_make_host_access_wait() {
    let device = device();
    let buf = device
        .buffer(
            &BufferDesc::default()
                .label("raw filled")
                .size(4096)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST)
                .location(MemoryLocation::GpuToCpu),
        )
        .unwrap();
    for value in [0xABCD_0123u32, 0x0F0F_F0F0] {
        let sub = device
            .submit(|r| {
                // SAFETY: the command buffer is recording outside a rendering scope; the
                // buffer has TRANSFER_DST usage and outlives the submission (waited below
                // through the host read, dropped after `sub`).
                unsafe {
                    device
                        .raw()
                        .cmd_fill_buffer(r.raw(), buf.raw(), 0, vk::WHOLE_SIZE, value)
                };
                Ok(())
            })
            .unwrap();
        assert_eq!(buf.read::<u32>().unwrap(), vec![value; 1024]);
        assert!(sub.is_done());
        sub.wait().unwrap();
    }
    assert_clean(&device);
}

/// Device creation requires timeline semaphores (Vulkan 1.3): there is no path without
/// them to test. Every device kiln creates has the feature, and every submission signals
/// its queue's timeline.
#[test]
fn every_device_has_timeline_semaphores() {
    let device = device();
    assert!(device.features().timeline_semaphore);
    let sub = device.submit(|r| Ok(r.barrier()?)).unwrap();
    let v = sub.value();
    sub.wait().unwrap();
    let next = device.submit(|r| Ok(r.barrier()?)).unwrap();
    assert_eq!(next.value(), v + 1);
    next.wait().unwrap();
    assert_clean(&device);
}
