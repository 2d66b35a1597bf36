//! Regression tests for what the API-sequence fuzzer (`fuzz`) found, each the shrunk
//! program turned into exact asserts; synchronization validation reported each before its
//! fix (`common::assert_clean` fails on the hazard).

use common::add::{self, vector_add};
use common::{assert_clean, device};
use kiln::{vk, Buffer, Device, Image, ImageDesc};

const N: usize = 64;

fn storage(device: &Device, label: &str, v: f32) -> Buffer {
    add::storage(device, label, &[v; N])
}

fn image(device: &Device) -> Image {
    let img = device
        .image(
            &ImageDesc::texture("img", 8, 8, vk::Format::R8G8B8A8_UNORM)
                .usage(vk::ImageUsageFlags::SAMPLED),
        )
        .unwrap();
    img.upload(&bytes(&[9.0; N])).unwrap();
    img
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_ne_bytes()).collect()
}

/// A dispatch, then an image copied into the buffer the dispatch wrote (write after write)
/// or read (write after read): the copy must wait for the dispatch. It did not (the image's
/// own transition orders only the image).
#[test]
fn an_image_to_buffer_copy_waits_for_earlier_dispatches() {
    let device = device();
    let p = vector_add(&device);
    let (a, b, c) = (
        storage(&device, "a", 1.0),
        storage(&device, "b", 2.0),
        storage(&device, "c", 0.0),
    );
    let set = add::set(&p, &a, &b, &c);
    let img = image(&device);
    device
        .execute(|r| {
            add::dispatch(r, &p, &set, N as u32)?;
            r.copy_image_to_buffer(&img, 0, &c)?;
            Ok(r.copy_image_to_buffer(&img, 0, &a)?)
        })
        .unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![9.0; N]);
    assert_eq!(a.read::<f32>().unwrap(), vec![9.0; N]);
    assert_clean(&device);
}

/// A dispatch writes a buffer, which is then copied into an image, and the buffer is
/// filled afterwards: the image copy must wait for the dispatch (read after write) and the
/// fill for the image copy (write after read). Neither did.
#[test]
fn a_buffer_to_image_copy_is_ordered_both_ways() {
    let device = device();
    let p = vector_add(&device);
    let (a, b, c) = (
        storage(&device, "a", 1.0),
        storage(&device, "b", 2.0),
        storage(&device, "c", 0.0),
    );
    let set = add::set(&p, &a, &b, &c);
    let img = image(&device);
    device
        .execute(|r| {
            add::dispatch(r, &p, &set, N as u32)?;
            r.copy_buffer_to_image(&c, &img, 0)?;
            Ok(r.fill_buffer(&c, 5.0f32.to_bits())?)
        })
        .unwrap();
    assert_eq!(img.read().unwrap(), bytes(&[3.0; N]));
    assert_eq!(c.read::<f32>().unwrap(), vec![5.0; N]);
    assert_clean(&device);
}

/// With manual barriers, `barrier()` after a dispatch used to order only later dispatches,
/// while clearing the flag that makes copies and fills wait: a fill of the buffer the
/// dispatch read (write after read) and a copy of the one it wrote (read after write) raced
/// it.
#[test]
fn a_fill_or_copy_after_barrier_waits_for_the_dispatch() {
    let device = device();
    let p = vector_add(&device);
    let (a, b, c) = (
        storage(&device, "a", 1.0),
        storage(&device, "b", 2.0),
        storage(&device, "c", 0.0),
    );
    let d = storage(&device, "d", 0.0);
    let set = add::set(&p, &a, &b, &c);
    device
        .execute(|r| {
            r.manual_barriers();
            add::dispatch(r, &p, &set, N as u32)?;
            r.barrier()?;
            r.fill_buffer(&a, 7.0f32.to_bits())?;
            Ok(r.copy_buffer(&c, 0, &d, 0, (4 * N) as u64)?)
        })
        .unwrap();
    assert_eq!(a.read::<f32>().unwrap(), vec![7.0; N]);
    assert_eq!(d.read::<f32>().unwrap(), vec![3.0; N]);
    assert_clean(&device);
}

/// Switching to manual barriers in the middle of a recording: what automatic mode recorded
/// before (an image copied into a buffer, no barrier yet) is ordered before what comes
/// after (a dispatch reading that buffer, after the caller's compute barrier). It was not.
#[test]
fn switching_to_manual_barriers_orders_what_came_before() {
    let device = device();
    let p = vector_add(&device);
    let (a, b, c) = (
        storage(&device, "a", 1.0),
        storage(&device, "b", 2.0),
        storage(&device, "c", 0.0),
    );
    let set = add::set(&p, &a, &b, &c);
    let img = image(&device);
    device
        .execute(|r| {
            r.copy_image_to_buffer(&img, 0, &a)?;
            r.manual_barriers();
            r.barrier()?;
            add::dispatch(r, &p, &set, N as u32)
        })
        .unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![11.0; N]);
    assert_clean(&device);
}

/// An image written by a copy, dropped, and new images made in its memory: the new
/// images' transitions from UNDEFINED write memory the earlier copy wrote. The timeline
/// wait orders that; validation layer 1.3.239's submit-time checks do not see the wait and
/// reported a write-after-write hazard until the transition from UNDEFINED also names the
/// earlier writes (all stages, memory writes) in its source scope.
#[test]
fn a_new_image_in_the_memory_of_a_dropped_one_is_clean() {
    let device = device();
    let c = storage(&device, "c", 4.0);
    let img = image(&device);
    device
        .execute(|r| Ok(r.copy_buffer_to_image(&c, &img, 0)?))
        .unwrap();
    // As the fuzzer's program: the next image is made while the first still exists, then
    // the first is dropped and one more made (in its memory).
    let again = image(&device);
    drop(img);
    let more = image(&device);
    assert_eq!(again.read().unwrap(), bytes(&[9.0; N]));
    assert_eq!(more.read().unwrap(), bytes(&[9.0; N]));
    assert_clean(&device);
}

/// `barrier()` on a transfer queue records nothing (no dispatch runs there); with the
/// transfer stages added to its destination it recorded shader accesses with only the
/// transfer stage left (VUID-VkMemoryBarrier2-dstAccessMask-03908), which the fuzzer
/// found on an emulated transfer queue. The fill after it still runs.
#[test]
fn a_barrier_on_a_transfer_queue_is_valid() {
    let device = common::emulated_device();
    let buf = storage(&device, "buf", 0.0);
    let q = device.queue(kiln::QueueKind::Transfer);
    q.execute(|r| {
        r.barrier()?;
        r.fill_buffer(&buf, 6.0f32.to_bits())?;
        Ok(r.barrier()?)
    })
    .unwrap();
    assert_eq!(buf.read::<f32>().unwrap(), vec![6.0; N]);
    assert_clean(&device);
}
