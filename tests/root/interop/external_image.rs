//! Images shared by opaque fd between two kiln devices on one physical device
//! (`Device::exportable_image`, `Image::export_memory`, `Device::import_image`): texels
//! written by one device read by the other and back, the layout handed over with the fd;
//! and the coded errors (a handle type images cannot be shared as, an image not made
//! exportable, a size or description that does not fit, a pipe, `/dev/null`, a
//! `PREINITIALIZED` layout), the caller's fd open after every failure.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use common::{assert_clean, code, device};
use kiln::{vk, Device, ExternalHandle, ImageDesc};

const W: u32 = 16;
const H: u32 = 8;

fn desc(label: &str) -> ImageDesc<'_> {
    ImageDesc::texture(label, W, H, vk::Format::R8G8B8A8_UNORM)
}

fn texels(seed: u8) -> Vec<u8> {
    (0..W * H * 4)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
        .collect()
}

fn fd_is_open(fd: &impl AsRawFd) -> bool {
    std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd())).is_ok()
}

/// Whether `device` exports images by opaque fd; prints the path.
fn images_shared(device: &Device) -> bool {
    match device.exportable_image(&desc("probe"), ExternalHandle::OpaqueFd) {
        Ok(_) => true,
        Err(e) => {
            assert_eq!(e.code(), "KILN-E163", "{e}");
            println!(
                "path: {} cannot export images: E163 ({e})",
                device.info().name
            );
            false
        }
    }
}

#[test]
fn two_devices_share_an_image_by_fd() {
    let (a, b) = (device(), device());
    if !images_shared(&a) {
        return;
    }
    let image_a = a
        .exportable_image(&desc("shared"), ExternalHandle::OpaqueFd)
        .unwrap();
    image_a.upload(&texels(1)).unwrap();
    let (fd, memory) = image_a.export_memory().unwrap();
    assert_eq!(memory.handle, ExternalHandle::OpaqueFd);
    assert!(memory.allocation_size >= u64::from(W * H * 4));
    let image_b = b
        .import_image(
            &desc("shared (imported)"),
            fd.as_fd(),
            &memory,
            image_a.layout(),
        )
        .unwrap();
    drop(fd); // the caller's; B's import holds its own duplicate
    assert_eq!(image_b.external_memory(), Some(memory));
    assert_eq!(image_b.layout(), image_a.layout());
    assert_eq!(image_b.read().unwrap(), texels(1), "B reads what A wrote");
    // B writes; both uploads leave the image in the same layout, so A's view of it holds.
    image_b.upload(&texels(2)).unwrap();
    assert_eq!(image_b.layout(), image_a.layout());
    assert_eq!(image_a.read().unwrap(), texels(2), "A reads what B wrote");
    println!("path: an RGBA8 {W}x{H} image shared by opaque fd, texels checked both ways");
    drop((image_a, image_b));
    assert_clean(&a);
    assert_clean_but_the_acquire(&b);
}

/// `assert_clean`, except that validation layers before 1.4 (Debian 12's 1.3.239) track
/// an imported image's layout per `VkImage`, from `UNDEFINED`, and so report the acquire
/// from `VK_QUEUE_FAMILY_EXTERNAL` in the exporter's layout (the spec's way to keep the
/// texels, §7.7.4) as `InvalidImageLayout`; layer 1.4.309 accepts it. Only that message,
/// naming the imported image, is set aside, and only on those layers.
fn assert_clean_but_the_acquire(device: &Device) {
    let r = device.validation_report();
    if r.layer_version >= vk::make_api_version(0, 1, 4, 0) {
        assert_clean(device);
        return;
    }
    let (acquire, others): (Vec<_>, Vec<_>) = r.messages.iter().partition(|m| {
        m.contains("InvalidImageLayout")
            && m.contains("(imported)")
            && m.contains("current layout is VK_IMAGE_LAYOUT_UNDEFINED")
    });
    assert!(others.is_empty(), "{others:?}");
    assert!(acquire.len() <= 1, "{acquire:?}");
    println!(
        "layer {}: the acquire's layout message set aside ({})",
        vk::api_version_patch(r.layer_version),
        acquire.len()
    );
}

#[test]
fn external_image_misuse_is_coded() {
    let a = device();
    for handle in [ExternalHandle::DmaBuf, ExternalHandle::SyncFd] {
        let e = a.exportable_image(&desc("x"), handle).unwrap_err();
        assert_eq!(e.code(), "KILN-E163", "{e}");
    }
    let plain = a.image(&desc("plain")).unwrap();
    assert_eq!(code(plain.export_memory()), "KILN-E163");
    if !images_shared(&a) {
        return;
    }
    let b = device();
    let exported = a
        .exportable_image(&desc("shared"), ExternalHandle::OpaqueFd)
        .unwrap();
    let (fd, memory) = exported.export_memory().unwrap();
    let layout = vk::ImageLayout::UNDEFINED;
    // An image larger than the exported one: its memory does not fit (E164).
    let big = ImageDesc::texture("big", 256, 256, vk::Format::R8G8B8A8_UNORM);
    let e = b
        .import_image(&big, fd.as_fd(), &memory, layout)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E164", "{e}");
    let mut small = memory;
    small.allocation_size = 16;
    assert_eq!(
        code(b.import_image(&desc("x"), fd.as_fd(), &small, layout)),
        "KILN-E164"
    );
    let mut other_type = memory;
    other_type.memory_type_index = 31;
    assert_eq!(
        code(b.import_image(&desc("x"), fd.as_fd(), &other_type, layout)),
        "KILN-E164"
    );
    let e = b
        .import_image(
            &desc("x"),
            fd.as_fd(),
            &memory,
            vk::ImageLayout::PREINITIALIZED,
        )
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E180", "{e}");
    // A pipe: E165 before any Vulkan call; the caller's fd stays open.
    let (pipe, _writer) = std::io::pipe().unwrap();
    let e = b
        .import_image(&desc("x"), pipe.as_fd(), &memory, layout)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E165", "{e}");
    assert!(e.to_string().contains("a pipe"), "{e}");
    assert!(fd_is_open(&pipe));
    // An imported image cannot be exported again.
    let imported = b
        .import_image(&desc("imported"), fd.as_fd(), &memory, layout)
        .unwrap();
    assert_eq!(code(imported.export_memory()), "KILN-E163");
    drop(imported);
    assert_clean(&a);
    assert_clean(&b);
    driver_refuses(&fd, &memory);
}

/// `/dev/null` is no allocation, and another kind of file than the device's exports: E165
/// before the driver sees it (see `interop::external`'s `driver_refuses`), three times, the
/// caller's fd open after each; the export is still importable after. On a device of its
/// own, which learns its kind from a probe export.
fn driver_refuses(good: &OwnedFd, memory: &kiln::ExternalMemory) {
    let d = device();
    let not_memory: OwnedFd = std::fs::File::open("/dev/null").unwrap().into();
    let layout = vk::ImageLayout::UNDEFINED;
    for _ in 0..3 {
        let e = d
            .import_image(&desc("x"), not_memory.as_fd(), memory, layout)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E165", "{e}");
        assert!(
            e.to_string().contains("it is the character device 1:3"),
            "{e}"
        );
        assert!(
            fd_is_open(&not_memory),
            "a failed import closed the caller's fd"
        );
    }
    let ok = d
        .import_image(&desc("after"), good.as_fd(), memory, layout)
        .unwrap();
    drop(ok);
    // The driver never saw the fd: not even lavapipe's refusal message.
    assert_clean(&d);
}

/// An import whose `layout` the image's usage does not allow (a sampled texture said to be
/// in COLOR_ATTACHMENT_OPTIMAL, a depth layout, PRESENT_SRC_KHR, a value that is no
/// layout): `KILN-E180`, no acquire barrier recorded
/// (VUID-VkImageMemoryBarrier2-oldLayout-01208/01209), not a validation message
/// from the acquire barrier; the caller's fd stays open and a good import still works.
#[test]
fn an_import_in_a_layout_its_usage_forbids_is_e180() {
    let (a, b) = (device(), device());
    if !images_shared(&a) {
        return;
    }
    let image_a = a
        .exportable_image(&desc("shared"), ExternalHandle::OpaqueFd)
        .unwrap();
    image_a.upload(&texels(3)).unwrap();
    let (fd, memory) = image_a.export_memory().unwrap();
    for layout in [
        vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
        vk::ImageLayout::DEPTH_READ_ONLY_OPTIMAL,
        vk::ImageLayout::PRESENT_SRC_KHR,
        vk::ImageLayout::from_raw(12_345),
    ] {
        let e = b
            .import_image(&desc("x (imported)"), fd.as_fd(), &memory, layout)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E180", "{layout:?}: {e}");
        assert!(fd_is_open(&fd), "{layout:?}");
    }
    let image_b = b
        .import_image(
            &desc("good (imported)"),
            fd.as_fd(),
            &memory,
            image_a.layout(),
        )
        .unwrap();
    assert_eq!(image_b.read().unwrap(), texels(3));
    println!("path: layouts the usage forbids refused with E180, then a good import");
    drop((image_a, image_b));
    assert_clean(&a);
    assert_clean_but_the_acquire(&b);
}
