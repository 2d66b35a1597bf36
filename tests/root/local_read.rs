//! Input attachments with dynamic rendering local read (VK_KHR_dynamic_rendering_local_read,
//! core in Vulkan 1.4): a draw reads, through `subpassInput`, the colour attachment an
//! earlier draw of the same rendering scope wrote, after a by-region barrier inside the
//! scope. lavapipe 25.0.7 has the extension (the real path); lavapipe 22.3 does not (the
//! coded errors). The test prints which path ran.

use common::draw::RGBA8;
use common::{assert_clean, code, device};
use kiln::{vk, ColorAttachment, GraphicsPipelineDesc, ImageDesc, RenderingDesc};

#[test]
fn a_draw_reads_what_the_draw_before_it_wrote() {
    let device = device();
    let vs = kiln::include_spirv!("test/fuzz_fullscreen.vert").unwrap();
    let fill = kiln::include_spirv!("test/local_read_fill.frag").unwrap();
    let double = kiln::include_spirv!("test/local_read_double.frag").unwrap();
    let img =
        device
            .image(&ImageDesc::color_target("target", 8, 8, RGBA8).usage(
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::INPUT_ATTACHMENT,
            ))
            .unwrap();
    let writer = device
        .graphics_pipeline(&GraphicsPipelineDesc::new(&vs, &fill).targets(&[&img], None))
        .unwrap();
    let reader =
        device.graphics_pipeline(&GraphicsPipelineDesc::new(&vs, &double).targets(&[&img], None));
    let color = [ColorAttachment::clear(&img, [0.0; 4]).local_read()];
    let scope = RenderingDesc::new(&color);
    // Outside a local-read scope there is no local-read barrier.
    let e = device.execute(|r| Ok(r.local_read_barrier()?)).unwrap_err();
    assert_eq!(e.code(), "KILN-E283", "{e}");
    if !device.features().dynamic_rendering_local_read {
        println!(
            "local read: {} lacks dynamicRenderingLocalRead; the coded-error path ran",
            device.info().name
        );
        let e = reader.unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        assert!(e.to_string().contains("dynamicRenderingLocalRead"), "{e}");
        let e = device
            .execute(|r| Ok(r.begin_rendering(&scope)?))
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        assert_clean(&device);
        return;
    }
    println!(
        "local read: {} has dynamicRenderingLocalRead; the real path ran",
        device.info().name
    );
    let reader = reader.unwrap();
    let mut set = reader.descriptor_set(0).unwrap();
    // Type and usage checks of the descriptor write.
    let sampled = device
        .image(&ImageDesc::color_target("no input usage", 8, 8, RGBA8))
        .unwrap();
    assert_eq!(code(set.write_input_attachment(0, &sampled)), "KILN-E182");
    assert_eq!(code(set.write_image(0, &sampled)), "KILN-E182");
    assert_eq!(code(set.write_input_attachment(3, &img)), "KILN-E200");
    set.write_input_attachment(0, &img).unwrap();
    device
        .execute(|r| {
            r.begin_rendering(&scope)?;
            r.bind_pipeline(&writer)?;
            r.draw(3, 1, 0, 0)?;
            r.local_read_barrier()?;
            r.bind_pipeline(&reader)?;
            r.bind_set(0, &set)?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()?;
            // The input attachment read is the scope's: no KILN-W005.
            assert_eq!(r.debug_uncovered(), 0);
            Ok(())
        })
        .unwrap();
    let texels = img.read().unwrap();
    for (i, px) in texels.chunks(4).enumerate() {
        assert_eq!(px, [64, 128, 32, 255], "pixel {i}");
    }
    // A scope without a local-read attachment has no local-read barrier.
    let plain = [ColorAttachment::clear(&img, [0.0; 4])];
    let e = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&plain))?;
            r.local_read_barrier()?;
            Ok(r.end_rendering()?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E283", "{e}");
    assert_clean(&device);
}

/// A draw that reads, through a descriptor set, what an earlier draw of a local-read scope
/// wrote makes kiln split the scope (`commands/split.rs`); the split's barrier also orders
/// the earlier draw's colour writes before the later one's input-attachment reads, and the
/// scope is begun again with the attachment in RENDERING_LOCAL_READ_KHR. Validation layer
/// 1.4.309 reports neither a missing ordering of a local-read scope's input-attachment
/// reads (a scope without `local_read_barrier` passes it too) nor a resumed scope in
/// COLOR_ATTACHMENT_OPTIMAL (both tried): `commands::split`'s unit tests check the
/// barrier's masks and the resumed layout; this test checks the values and the split.
#[test]
fn a_split_local_read_scope_orders_input_attachment_reads() {
    let device = device();
    let vs = kiln::include_spirv!("test/fuzz_fullscreen.vert").unwrap();
    let write = kiln::include_spirv!("test/local_read_split_write.frag").unwrap();
    let read = kiln::include_spirv!("test/local_read_split_read.frag").unwrap();
    let img =
        device
            .image(&ImageDesc::color_target("target", 8, 8, RGBA8).usage(
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::INPUT_ATTACHMENT,
            ))
            .unwrap();
    let writer = device
        .graphics_pipeline(&GraphicsPipelineDesc::new(&vs, &write).targets(&[&img], None))
        .unwrap();
    let reader =
        device.graphics_pipeline(&GraphicsPipelineDesc::new(&vs, &read).targets(&[&img], None));
    if !device.features().dynamic_rendering_local_read {
        println!(
            "local read split: {} lacks dynamicRenderingLocalRead; the coded-error path ran",
            device.info().name
        );
        let e = reader.unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        assert_clean(&device);
        return;
    }
    println!(
        "local read split: {} has dynamicRenderingLocalRead; the real path ran",
        device.info().name
    );
    let reader = reader.unwrap();
    let words = device.storage_buffer::<u32>("words", 64).unwrap();
    let mut a = writer.descriptor_set(0).unwrap();
    a.write_buffer(0, &words).unwrap();
    let mut b = reader.descriptor_set(0).unwrap();
    b.write_input_attachment(0, &img).unwrap();
    b.write_buffer(1, &words).unwrap();
    let color = [ColorAttachment::clear(&img, [0.0; 4]).local_read()];
    let (splits, uncovered) = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&color))?;
            r.bind_pipeline(&writer)?;
            r.bind_set(0, &a)?;
            r.draw(3, 1, 0, 0)?;
            // No local_read_barrier: the storage-buffer hazard splits the scope.
            r.bind_pipeline(&reader)?;
            r.bind_set(0, &b)?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()?;
            Ok((r.debug_scope_splits(), r.debug_uncovered()))
        })
        .unwrap();
    assert_eq!((splits, uncovered), (1, 0));
    assert_eq!(words.read::<u32>().unwrap(), (0..64).collect::<Vec<u32>>());
    let texels = img.read().unwrap();
    for (i, px) in texels.chunks(4).enumerate() {
        assert_eq!(px, [64, 128, i as u8, 255], "pixel {i}");
    }
    assert_clean(&device);
}

/// A local-read colour attachment needs INPUT_ATTACHMENT (or STORAGE) usage besides
/// COLOR_ATTACHMENT (RENDERING_LOCAL_READ_KHR; VUID-VkImageMemoryBarrier2-srcQueueFamilyIndex-09550;
/// SAMPLED is not enough, layer 1.4.309):
/// KILN-E182 before Vulkan sees it; KILN-E107 first on a device without local read.
#[test]
fn a_local_read_attachment_needs_input_attachment_usage() {
    let device = device();
    // A colour target: COLOR_ATTACHMENT and SAMPLED.
    let plain = device
        .image(&ImageDesc::color_target("colour only", 8, 8, RGBA8))
        .unwrap();
    let scope = |img| {
        device.execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                img,
                [0.25, 0.6, 0.75, 1.0],
            )
            .local_read()]))?;
            Ok(r.end_rendering()?)
        })
    };
    let e = scope(&plain).unwrap_err();
    if !device.features().dynamic_rendering_local_read {
        println!(
            "local read usage: {} lacks dynamicRenderingLocalRead; the KILN-E107 path ran",
            device.info().name
        );
        assert_eq!(e.code(), "KILN-E107", "{e}");
        assert_clean(&device);
        return;
    }
    println!(
        "local read usage: {} has dynamicRenderingLocalRead; the KILN-E182 path ran",
        device.info().name
    );
    assert_eq!(e.code(), "KILN-E182", "{e}");
    assert!(e.to_string().contains("`colour only`"), "{e}");
    // With INPUT_ATTACHMENT the scope clears it.
    let input =
        device
            .image(&ImageDesc::color_target("input", 8, 8, RGBA8).usage(
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::INPUT_ATTACHMENT,
            ))
            .unwrap();
    scope(&input).unwrap();
    // 0.6 · 255 = 153 exactly (0.5 would be 127.5, which a device may round either way:
    // the H200 gives 127, lavapipe 128).
    for (i, px) in input.read().unwrap().chunks(4).enumerate() {
        assert_eq!(px, [64, 153, 191, 255], "pixel {i}");
    }
    // A multisampled local-read attachment: its resolve target is only written by the
    // resolve, in COLOR_ATTACHMENT_OPTIMAL.
    let msaa = device
        .image(
            &ImageDesc::color_target("msaa", 8, 8, RGBA8)
                .samples(vk::SampleCountFlags::TYPE_4)
                .usage(
                    vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::INPUT_ATTACHMENT,
                ),
        )
        .unwrap();
    let layouts = device
        .execute(|r| {
            let color = [ColorAttachment::clear(&msaa, [1.0, 0.0, 0.6, 1.0])
                .local_read()
                .resolve_into(&input)];
            r.begin_rendering(&RenderingDesc::new(&color))?;
            let layouts = (r.image_layout(&msaa), r.image_layout(&input));
            r.end_rendering()?;
            Ok(layouts)
        })
        .unwrap();
    assert_eq!(
        layouts,
        (
            vk::ImageLayout::RENDERING_LOCAL_READ_KHR,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL
        )
    );
    for (i, px) in input.read().unwrap().chunks(4).enumerate() {
        assert_eq!(px, [255, 0, 153, 255], "resolved pixel {i}");
    }
    assert_clean(&device);
}
