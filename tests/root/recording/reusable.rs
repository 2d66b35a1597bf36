//! Reusable recordings (`Device::record`): recorded once, submitted many times, under the
//! validation layer (a command buffer pending twice, a stale layout or a leak would report);
//! the image layouts a recording starts from and relies on; and how a recording lists the
//! sets it binds for its submission to stamp.

use common::add;
use common::add::vector_add;
use common::{assert_clean, device};
use kiln::{vk, BufferDesc, ImageDesc, MemoryLocation};

const N: usize = 4096;

/// `acc += step` per submission: c = acc + step, then copy c → acc.
struct Accumulator {
    acc: kiln::Buffer,
    c: kiln::Buffer,
    set: kiln::DescriptorSet,
}

fn accumulator(device: &kiln::Device, p: &kiln::ComputePipeline) -> Accumulator {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::TRANSFER_SRC;
    let acc = device
        .buffer_from_slice("acc", usage, &vec![0.0f32; N])
        .unwrap();
    let step = device
        .buffer_from_slice("step", usage, &vec![1.5f32; N])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", N).unwrap();
    let set = add::set(p, &acc, &step, &c);
    Accumulator { acc, c, set }
}

fn step<'a>(
    r: &mut kiln::Recorder<'a, '_>,
    p: &'a kiln::ComputePipeline,
    a: &'a Accumulator,
) -> kiln::Result<()> {
    r.bind_pipeline(p)?;
    r.bind_set(0, &a.set)?;
    r.dispatch_threads(N as u32)?;
    r.copy_buffer(&a.c, 0, &a.acc, 0, (N * 4) as u64)?;
    Ok(())
}

#[test]
fn a_recording_runs_again_and_again() {
    let device = device();
    let p = vector_add(&device);
    let a = accumulator(&device, &p);
    let mut rec = device.record(|r| step(r, &p, &a)).unwrap();
    // Nothing runs at record time.
    assert_eq!(a.acc.read::<f32>().unwrap(), vec![0.0; N]);
    for k in 1..=3 {
        rec.execute().unwrap();
        assert_eq!(a.acc.read::<f32>().unwrap(), vec![1.5 * k as f32; N]);
    }
    // Interleaved with one-off work on the same buffers: ordered by the timeline.
    device.execute(|r| step(r, &p, &a)).unwrap();
    rec.execute().unwrap();
    assert_eq!(a.acc.read::<f32>().unwrap(), vec![7.5; N]);
    drop(rec);
    assert_clean(&device);
}

/// Two submissions of one recording without waiting: the second waits for the first
/// (else VUID-vkQueueSubmit-pCommandBuffers-00071, a command buffer pending twice).
#[test]
fn resubmitting_while_pending_waits_for_the_previous_run() {
    let device = device();
    let p = vector_add(&device);
    let a = accumulator(&device, &p);
    let mut rec = device.record(|r| step(r, &p, &a)).unwrap();
    let first = rec.submit().unwrap();
    let second = rec.submit().unwrap();
    assert!(first.value() < second.value());
    second.wait().unwrap();
    assert!(first.is_done());
    first.wait().unwrap();
    assert_eq!(a.acc.read::<f32>().unwrap(), vec![3.0; N]);
    assert_clean(&device);
}

/// Dropped while its submission runs: the command pool is recycled after it completes,
/// and the context is reused by later work (no leak at vkDestroyDevice).
#[test]
fn dropping_a_running_recording_is_safe() {
    let device = device();
    let p = vector_add(&device);
    let a = accumulator(&device, &p);
    let mut rec = device.record(|r| step(r, &p, &a)).unwrap();
    let sub = rec.submit().unwrap();
    drop(rec);
    for _ in 0..3 {
        device.execute(|r| step(r, &p, &a)).unwrap();
    }
    sub.wait().unwrap();
    assert_eq!(a.acc.read::<f32>().unwrap(), vec![6.0; N]);
    // A recording that fails records nothing and returns its context too.
    let err = device
        .record(|r| {
            r.bind_pipeline(&p)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .err()
        .unwrap();
    assert_eq!(err.code(), "KILN-E254");
    assert_clean(&device);
    drop(device);
}

#[test]
fn image_layouts_must_come_back() {
    let device = device();
    let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
    let img = device
        .image(&ImageDesc::texture("tex", 4, 4, vk::Format::R8G8B8A8_UNORM).usage(usage))
        .unwrap();
    // UNDEFINED → SHADER_READ_ONLY: a second run would start from the wrong layout.
    let err = device
        .record(|r| Ok(r.transition(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)?))
        .err()
        .unwrap();
    assert_eq!(err.code(), "KILN-E284");
    assert!(err.to_string().contains("`tex`"), "{err}");
    assert_eq!(img.layout(), vk::ImageLayout::UNDEFINED);
    // Round trip GENERAL → TRANSFER_DST → GENERAL: reusable.
    device
        .execute(|r| Ok(r.transition(&img, vk::ImageLayout::GENERAL)?))
        .unwrap();
    let mut rec = device
        .record(|r| {
            r.transition(&img, vk::ImageLayout::TRANSFER_DST_OPTIMAL)?;
            Ok(r.transition(&img, vk::ImageLayout::GENERAL)?)
        })
        .unwrap();
    rec.execute().unwrap();
    rec.execute().unwrap();
    assert_eq!(img.layout(), vk::ImageLayout::GENERAL);
    // Someone else moves the image: the recording refuses to run from the wrong layout.
    device
        .execute(|r| Ok(r.transition(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)?))
        .unwrap();
    let err = rec.submit().err().unwrap();
    assert_eq!(err.code(), "KILN-E285");
    device
        .execute(|r| Ok(r.transition(&img, vk::ImageLayout::GENERAL)?))
        .unwrap();
    rec.execute().unwrap();
    drop(rec);
    assert_clean(&device);
}

/// (Was a unit test of `commands`.) `bind_set` lists a set's stamp once per recording
/// however often it is bound, lists it again in a recording that binds it after another
/// (nested) one did, and the submission stamps every listed set.
#[test]
fn each_set_is_listed_once_per_recording_and_stamped() {
    let device =
        kiln::Device::with_desc(&kiln::DeviceDesc::default().validation(Some(true))).unwrap();
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let p = device.compute_pipeline(&m, "main").unwrap();
    let buf = device.storage_buffer::<f32>("b", 4).unwrap();
    let new_set = || {
        let mut s = p.descriptor_set(0).unwrap();
        for b in 0..3 {
            s.write_buffer(b, &buf).unwrap();
        }
        s
    };
    let (s1, s2) = (new_set(), new_set());
    let stamp = |s: &kiln::DescriptorSet| s.debug_last_used();
    let mut inner_stamp = 0;
    let sub = device
        .submit(|r| {
            r.bind_pipeline(&p)?;
            for s in [&s1, &s2, &s1, &s2, &s1] {
                r.bind_set(0, s)?;
            }
            assert_eq!(r.debug_used_set_count(), 2);
            device.execute(|inner| {
                inner.bind_pipeline(&p)?;
                for s in [&s1, &s2, &s1] {
                    inner.bind_set(0, s)?;
                }
                assert_eq!(inner.debug_used_set_count(), 2);
                Ok(())
            })?;
            inner_stamp = stamp(&s1);
            assert!(inner_stamp > 0 && stamp(&s2) == inner_stamp);
            // The nested recording took over both sets' `listed_by`: listed again.
            r.bind_set(0, &s2)?;
            r.bind_set(0, &s1)?;
            assert_eq!(r.debug_used_set_count(), 4);
            Ok(())
        })
        .unwrap();
    sub.wait().unwrap();
    assert!(stamp(&s1) > inner_stamp && stamp(&s2) == stamp(&s1));
    let report = device.validation_report();
    assert!(report.is_clean(), "{:?}", report.messages);
}

/// A recording that uses an image in the layout it already had (no transition recorded)
/// still depends on that layout: another submission moving the image must make the
/// recording refuse to run (KILN-E285), not submit a command buffer that reads the image
/// in the wrong layout.
#[test]
fn a_recording_checks_layouts_it_relies_on_without_transitioning() {
    let device = device();
    let usage = vk::ImageUsageFlags::SAMPLED;
    let img = device
        .image(&ImageDesc::texture("img", 4, 4, vk::Format::R8G8B8A8_UNORM).usage(usage))
        .unwrap();
    let a: Vec<u8> = (0..64).collect();
    let b: Vec<u8> = (0..64).map(|x| 200 - x).collect();
    img.upload(&a).unwrap();
    // read leaves the image in TRANSFER_SRC_OPTIMAL.
    assert_eq!(img.read().unwrap(), a);
    assert_eq!(img.layout(), vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
    let out = device
        .buffer(
            &BufferDesc::default()
                .label("out")
                .size(64)
                .usage(vk::BufferUsageFlags::TRANSFER_DST)
                .location(MemoryLocation::GpuToCpu),
        )
        .unwrap();
    let mut rec = device
        .record(|r| Ok(r.copy_image_to_buffer(&img, 0, &out)?))
        .unwrap();
    rec.execute().unwrap();
    assert_eq!(out.read::<u8>().unwrap(), a);
    // Someone else moves the image (upload ends in SHADER_READ_ONLY_OPTIMAL).
    img.upload(&b).unwrap();
    assert_eq!(img.layout(), vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    let err = rec.submit().err().unwrap();
    assert_eq!(err.code(), "KILN-E285");
    device
        .execute(|r| Ok(r.transition(&img, vk::ImageLayout::TRANSFER_SRC_OPTIMAL)?))
        .unwrap();
    rec.execute().unwrap();
    assert_eq!(out.read::<u8>().unwrap(), b);
    drop(rec);
    assert_clean(&device);
}

/// The layout a recording starts from is the one the image had when the recording first
/// used it, even if a nested submission moves the image back before the recording ends:
/// the recording must not be accepted as starting (and ending) in the final layout.
#[test]
fn a_recording_starts_from_the_layout_it_first_saw() {
    let device = device();
    let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::STORAGE;
    let img = device
        .image(&ImageDesc::texture("img", 4, 4, vk::Format::R8G8B8A8_UNORM).usage(usage))
        .unwrap();
    device
        .execute(|r| Ok(r.transition(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)?))
        .unwrap();
    let rec = device.record(|r| {
        // SHADER_READ_ONLY → GENERAL: the recording starts from SHADER_READ_ONLY.
        r.transition(&img, vk::ImageLayout::GENERAL)?;
        // Someone moves the image to GENERAL meanwhile (a nested submission).
        device.execute(|n| Ok(n.transition(&img, vk::ImageLayout::GENERAL)?))?;
        Ok(())
    });
    // Either refused at record time (it ends in GENERAL, started in SHADER_READ_ONLY) or,
    // if accepted, it must refuse to run from GENERAL.
    match rec {
        Err(e) => assert_eq!(e.code(), "KILN-E284"),
        Ok(mut rec) => {
            let err = rec.submit().err().expect("ran from the wrong layout");
            assert_eq!(err.code(), "KILN-E285");
        }
    }
    assert_clean(&device);
}
