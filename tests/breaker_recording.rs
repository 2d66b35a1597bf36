//! Breaker probes of reusable recordings (`Device::record`) and staged transfers.

use common::{assert_clean, device};
use kiln::vk;
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

fn vector_add(device: &kiln::Device) -> kiln::ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap()
}

const N: usize = 1024;

/// Two threads, each with its own reusable recording (`acc += 1.5`, then `acc` copied
/// from `c`), submit without waiting, drop submissions unwaited, re-record halfway
/// (dropping the old recording while it runs), and read back through the staging path
/// (forced) after every submission: every read sees exactly the submissions made before
/// it, and the device tears down without a leaked command pool.
#[test]
fn threads_resubmitting_recordings_and_reading_back_see_every_submission() {
    let device = device();
    device.debug_force_staging(true);
    let watch = device.validation_watch();
    let p = vector_add(&device);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::TRANSFER_SRC;
    std::thread::scope(|s| {
        for t in 0..2 {
            let (device, p) = (&device, &p);
            s.spawn(move || {
                let acc = device
                    .buffer_from_slice("acc", usage, &vec![t as f32; N])
                    .unwrap();
                let step = device
                    .buffer_from_slice("step", usage, &vec![1.5f32; N])
                    .unwrap();
                let c = device.storage_buffer::<f32>("c", N).unwrap();
                let mut set = p.new_set(0).unwrap();
                set.write_buffer(0, &acc).unwrap();
                set.write_buffer(1, &step).unwrap();
                set.write_buffer(2, &c).unwrap();
                let record = || {
                    device
                        .record(|r| {
                            r.bind_pipeline(p);
                            r.bind_set(0, &set)?;
                            r.dispatch_threads(N as u32)?;
                            r.copy_buffer(&c, 0, &acc, 0, (N * 4) as u64);
                            Ok(())
                        })
                        .unwrap()
                };
                let mut rec = record();
                let mut runs = 0u32;
                let mut out = vec![0.0f32; N];
                let mut held = Vec::new();
                for k in 0..40 {
                    let sub = rec.submit().unwrap();
                    runs += 1;
                    match k % 3 {
                        0 => drop(sub),
                        1 => sub.wait().unwrap(),
                        _ => held.push(sub),
                    }
                    if k == 20 {
                        // Dropped while (possibly) running; a fresh recording takes over.
                        rec = record();
                    }
                    acc.read_into(device, &mut out).unwrap();
                    let want = t as f32 + 1.5 * runs as f32;
                    assert!(
                        out.iter().all(|&x| x == want),
                        "thread {t} run {runs}: {} != {want}",
                        out[0]
                    );
                }
                drop(rec);
                drop(held);
            });
        }
    });
    assert_clean(&device);
    drop((p, device));
    common::assert_watch_clean(&watch);
}

/// The layout a recording starts from is the one the image had when the recording first
/// used it, even if a nested submission moves the image back before the recording ends:
/// the recording must not be accepted as starting (and ending) in the final layout.
#[test]
fn a_recording_starts_from_the_layout_it_first_saw() {
    let device = device();
    let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::STORAGE;
    let img = device
        .create_image(&ImageDesc {
            usage,
            ..ImageDesc::texture("img", 4, 4, vk::Format::R8G8B8A8_UNORM)
        })
        .unwrap();
    device
        .execute(|r| r.transition(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL))
        .unwrap();
    let rec = device.record(|r| {
        // SHADER_READ_ONLY → GENERAL: the recording starts from SHADER_READ_ONLY.
        r.transition(&img, vk::ImageLayout::GENERAL)?;
        // Someone moves the image to GENERAL meanwhile (a nested submission).
        device.execute(|n| n.transition(&img, vk::ImageLayout::GENERAL))?;
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

/// Every way a reusable recording can end without running (a panic in its closure, a
/// nested recording that panics and is caught inside it, a deferred copy error, an image
/// left in another layout, dropped unsubmitted or dropped while pending) returns its
/// command pool: the device keeps working and tears down with nothing leaked
/// (VUID-vkDestroyDevice-device-00378).
#[test]
fn recordings_that_never_run_or_die_pending_leak_no_command_pool() {
    let device = device();
    let watch = device.validation_watch();
    let p = vector_add(&device);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::TRANSFER_SRC;
    let a = device
        .buffer_from_slice("a", usage, &vec![1.0f32; N])
        .unwrap();
    let b = device
        .buffer_from_slice("b", usage, &vec![2.0f32; N])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", N).unwrap();
    let mut set = p.new_set(0).unwrap();
    set.write_buffer(0, &a).unwrap();
    set.write_buffer(1, &b).unwrap();
    set.write_buffer(2, &c).unwrap();
    let img = device
        .create_image(&ImageDesc::texture("img", 4, 4, vk::Format::R8G8B8A8_UNORM))
        .unwrap();
    for _ in 0..2 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = device.record(|r| -> kiln::Result<()> {
                r.bind_pipeline(&p);
                r.bind_set(0, &set)?;
                panic!("user code panics while recording");
            });
        }));
        assert!(r.is_err());
    }
    // A nested recording panics; the outer one catches it and carries on.
    let mut rec = device
        .record(|r| {
            let inner = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = device.execute(|_| -> kiln::Result<()> { panic!("inner") });
            }));
            assert!(inner.is_err());
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(N as u32)
        })
        .unwrap();
    rec.execute().unwrap();
    assert_eq!(c.read::<f32>(&device).unwrap(), vec![3.0; N]);
    let err = device
        .record(|r| {
            r.copy_buffer(&a, 4, &c, 0, (N * 4) as u64);
            Ok(())
        })
        .err()
        .unwrap();
    assert_eq!(err.code(), "KILN-E151");
    let err = device
        .record(|r| r.transition(&img, vk::ImageLayout::TRANSFER_DST_OPTIMAL))
        .err()
        .unwrap();
    assert_eq!(err.code(), "KILN-E284");
    drop(device.record(|r| {
        r.fill_buffer(&c, 0);
        Ok(())
    }));
    let _pending = rec.submit().unwrap();
    drop(rec);
    let _also = device.submit(|r| {
        r.fill_buffer(&c, 7);
        Ok(())
    });
    drop((_pending, _also));
    assert_eq!(c.read::<u32>(&device).unwrap(), vec![7; N]);
    assert_clean(&device);
    drop((set, a, b, c, img, p, device));
    common::assert_watch_clean(&watch);
}

/// Staged transfers (small chunks, so every transfer above 64 KiB alternates two staging
/// buffers) from two threads while a third keeps releasing the idle staging memory: each
/// transfer keeps the buffers it leased, every byte comes back, nothing leaks.
#[test]
fn staged_transfers_survive_concurrent_release_of_staging_memory() {
    let device = device();
    device.debug_force_staging(true);
    device.debug_set_staging_chunk(64 << 10);
    let watch = device.validation_watch();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let (device, stop) = (&device, &stop);
        s.spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                device.release_staging_memory();
                std::thread::yield_now();
            }
        });
        let workers: Vec<_> = (0..2u32)
            .map(|t| {
                s.spawn(move || {
                    let size = 300_000 + 4 * t as usize;
                    let buf = device
                        .create_buffer(&BufferDesc {
                            label: "gpu",
                            size: size as u64,
                            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
                            location: MemoryLocation::GpuOnly,
                        })
                        .unwrap();
                    let mut out = vec![0u8; size];
                    for k in 0..12u32 {
                        let data: Vec<u8> = (0..size as u32)
                            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 ^ (k * 7 + t) as u8)
                            .collect();
                        buf.upload(device, &data).unwrap();
                        let at = (k as usize * 4099) % (size / 2);
                        buf.read_into_at(device, at as u64, &mut out[..size - at])
                            .unwrap();
                        assert!(out[..size - at] == data[at..], "thread {t} round {k}");
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert_clean(&device);
    drop(device);
    common::assert_watch_clean(&watch);
}
