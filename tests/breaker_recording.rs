//! Breaker probes of reusable recordings (`Device::record`).

mod common;

use ash::vk;
use common::{assert_clean, device};
use kiln::{BufferDesc, ImageDesc, MemoryLocation};

/// A recording that uses an image in the layout it already had (no transition recorded)
/// still depends on that layout: another submission moving the image must make the
/// recording refuse to run (KILN-E285), not submit a command buffer that reads the image
/// in the wrong layout.
#[test]
fn a_recording_checks_layouts_it_relies_on_without_transitioning() {
    let device = device();
    let usage = vk::ImageUsageFlags::SAMPLED;
    let img = device
        .create_image(&ImageDesc {
            usage,
            ..ImageDesc::texture("img", 4, 4, vk::Format::R8G8B8A8_UNORM)
        })
        .unwrap();
    let a: Vec<u8> = (0..64).collect();
    let b: Vec<u8> = (0..64).map(|x| 200 - x).collect();
    img.upload(&device, &a).unwrap();
    // read leaves the image in TRANSFER_SRC_OPTIMAL.
    assert_eq!(img.read(&device).unwrap(), a);
    assert_eq!(img.layout(), vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
    let out = device
        .create_buffer(&BufferDesc {
            label: "out",
            size: 64,
            usage: vk::BufferUsageFlags::TRANSFER_DST,
            location: MemoryLocation::GpuToCpu,
        })
        .unwrap();
    let mut rec = device
        .record(|r| r.copy_image_to_buffer(&img, 0, &out))
        .unwrap();
    rec.execute().unwrap();
    assert_eq!(out.read::<u8>(&device).unwrap(), a);
    // Someone else moves the image (upload ends in SHADER_READ_ONLY_OPTIMAL).
    img.upload(&device, &b).unwrap();
    assert_eq!(img.layout(), vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    let err = rec.submit().err().unwrap();
    assert_eq!(err.code(), "KILN-E285");
    device
        .execute(|r| r.transition(&img, vk::ImageLayout::TRANSFER_SRC_OPTIMAL))
        .unwrap();
    rec.execute().unwrap();
    assert_eq!(out.read::<u8>(&device).unwrap(), b);
    drop(rec);
    assert_clean(&device);
}
