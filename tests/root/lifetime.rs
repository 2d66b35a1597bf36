//! Lifetime: nothing is freed while the GPU may use it (resources, sets and the device itself
//! dropped before their submission completes), objects of one device refused by another,
//! recordings that panic, fail or die pending return their command pools, and teardown
//! leaves no object and no allocation behind. Where the device is dropped, every test checks
//! that it really was torn down (`ValidationWatch::torn_down`).

use common::add;
use common::add::{run_and_check, still_works, vector_add};
use common::{assert_clean, assert_watch_clean, device};
use kiln::{vk, ImageDesc};

const N: usize = 1024;

#[test]
fn resources_dropped_right_after_submit_live_until_the_gpu_is_done() {
    let device = device();
    let n = 1 << 20;
    let out = device.storage_buffer::<f32>("out", n).unwrap();
    let submission = {
        let p = vector_add(&device);
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let a = add::storage(&device, "a", &a);
        let set = add::set(&p, &a, &a, &out);
        let s = device
            .submit(|r| add::dispatch(r, &p, &set, n as u32))
            .unwrap();
        // Pipeline, set, input buffer and (through the pipeline) its layouts are dropped
        // here, while the dispatch may still run. Destroying them now would be
        // VUID-vkDestroyBuffer-buffer-00922 / VUID-vkDestroyPipeline-pipeline-00765.
        s
    };
    submission.wait().unwrap();
    let got: Vec<f32> = out.read().unwrap();
    assert!(got.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
    assert_clean(&device);
}

#[test]
fn rewriting_a_set_waits_for_the_submission_using_it() {
    let device = device();
    let p = vector_add(&device);
    let one = add::storage(&device, "one", &[1.0f32; 64]);
    let two = add::storage(&device, "two", &[2.0f32; 64]);
    let out = device.storage_buffer::<f32>("out", 64).unwrap();
    let mut set = add::set(&p, &one, &one, &out);
    let s = device.submit(|r| add::dispatch(r, &p, &set, 64)).unwrap();
    // Updating a set in use is VUID-vkUpdateDescriptorSets-None-03047; kiln waits instead.
    set.write_buffer(1, &two).unwrap();
    assert!(s.is_done());
    s.wait().unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![2.0; 64]);
    assert_clean(&device);
}

/// A pipeline's reflected access is plain data: a clone kept after the pipeline and the
/// device are dropped keeps no device alive (its interned set lists hold their interner,
/// not the device), and still compares equal to the access it was cloned from.
#[test]
fn a_kept_pipeline_access_does_not_keep_the_device() {
    let device = device();
    let watch = device.validation_watch();
    let p = vector_add(&device);
    let access = p.access().clone();
    assert_eq!(&access, p.access());
    let written: Vec<u32> = access
        .set(0)
        .iter()
        .filter(|b| b.access.write)
        .map(|b| b.binding)
        .collect();
    assert_eq!(written, [2]);
    drop(p);
    drop(device);
    assert!(
        watch.torn_down(),
        "a PipelineAccess clone kept the device alive"
    );
    assert_eq!(access.set(0).len(), 3);
    assert_watch_clean(&watch);
}

/// Everything (set, pipeline, layouts, buffers, even the `Device`) dropped while the
/// submission runs; the submission is dropped last, on another thread. The device must be
/// destroyed then (no Arc cycle through the graveyard), with no validation message.
#[test]
fn device_dropped_before_its_pending_submission_is_torn_down_after_it() {
    let device = device();
    let watch = device.validation_watch();
    let n = 1 << 20;
    let sub = {
        let p = vector_add(&device);
        let a = add::storage(&device, "a", &vec![1.0f32; n]);
        let out = device.storage_buffer::<f32>("out", n).unwrap();
        let set = add::set(&p, &a, &a, &out);
        device
            .submit(|r| add::dispatch(r, &p, &set, n as u32))
            .unwrap()
    };
    drop(device);
    assert!(
        !watch.torn_down(),
        "the pending submission must keep the device alive"
    );
    std::thread::spawn(move || drop(sub)).join().unwrap();
    assert_watch_clean(&watch);
}

/// Sets bound in a pending submission are dropped (freed back to the pool) and new ones
/// allocated from the same pools before the submission is waited on.
#[test]
fn sets_freed_while_pending_are_recycled_only_after_the_submission() {
    let device = device();
    let p = vector_add(&device);
    let k = 40;
    let one = add::storage(&device, "one", &[1.0f32; 16]);
    let outs: Vec<kiln::Buffer> = (0..k)
        .map(|_| device.storage_buffer::<f32>("out", 16).unwrap())
        .collect();
    let sets: Vec<kiln::DescriptorSet> = outs.iter().map(|o| add::set(&p, &one, &one, o)).collect();
    let sub = device
        .submit(|r| {
            r.bind_pipeline(&p)?;
            for s in &sets {
                r.bind_set(0, s)?;
                r.dispatch_threads(16)?;
            }
            Ok(())
        })
        .unwrap();
    drop(sets);
    // New sets while the old ones may still be in use: they must not get the old handles
    // (a write to one would then change a set the GPU is reading).
    let mut again: Vec<kiln::DescriptorSet> =
        (0..k).map(|_| p.descriptor_set(0).unwrap()).collect();
    let zero = device.storage_buffer::<f32>("zero", 16).unwrap();
    for s in &mut again {
        s.write_buffer(0, &zero).unwrap();
        s.write_buffer(1, &zero).unwrap();
        s.write_buffer(2, &zero).unwrap();
    }
    sub.wait().unwrap();
    for o in &outs {
        assert_eq!(o.read::<f32>().unwrap(), vec![2.0; 16]);
    }
    drop(again);
    assert_clean(&device);
}

/// Review of the recycled slot's fast path and `write_buffers`' plan check: a layout of
/// device B holding a freed set's slot is still `KILN-E109` for device A (the slot stays
/// B's, and B's next set takes it), and a planned `write_buffers` (whole buffers, layout
/// order: the update template's case) with a buffer of B is `KILN-E109` with nothing
/// written.
#[test]
fn a_foreign_layout_with_a_spare_slot_and_planned_foreign_writes_are_e109() {
    let a = device();
    let b = device();
    let pa = vector_add(&a);
    let pb = vector_add(&b);
    let layout_b = pb.layout().set_layouts()[0].clone();
    let freed = pb.descriptor_set(0).unwrap();
    let old = freed.raw();
    drop(freed);
    let e = a.descriptor_set(&layout_b, 0).unwrap_err();
    assert_eq!(e.code(), "KILN-E109", "{e}");
    let again = b.descriptor_set(&layout_b, 0).unwrap();
    assert_eq!(again.raw(), old, "B's freed slot is B's next set's");
    drop(again);

    let (x_a, y_a) = (
        a.storage_buffer::<f32>("x", 4).unwrap(),
        a.storage_buffer::<f32>("y", 4).unwrap(),
    );
    let out_b = b.storage_buffer::<f32>("b's out", 4).unwrap();
    let mut set = pa.descriptor_set(0).unwrap();
    let e = set
        .write_buffers(&[(0, &x_a), (1, &y_a), (2, &out_b)])
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109", "{e}");
    assert!(e.to_string().contains("b's out"), "{e}");
    assert_eq!(
        set.first_unwritten(),
        Some(0),
        "nothing of the call is written"
    );
    drop(set);
    assert_clean(&a);
    assert_clean(&b);
}

/// Objects of one device given to another: was SIGSEGV (allocate_set with a foreign layout,
/// write of a foreign buffer) or VUID-*-commonparent; now `KILN-E109` and both devices clean.
#[test]
fn objects_of_another_device_are_e109() {
    let a = device();
    let b = device();
    let pa = vector_add(&a);
    let pb = vector_add(&b);
    let buf_b = b.storage_buffer::<f32>("b's buffer", 4).unwrap();
    let buf_a = a.storage_buffer::<f32>("a's buffer", 4).unwrap();

    let layout_b = pb.layout().set_layouts()[0].clone();
    let e = a.descriptor_set(&layout_b, 0).unwrap_err();
    assert_eq!(e.code(), "KILN-E109");

    let mut set = pa.descriptor_set(0).unwrap();
    let e = set.write_buffer(0, &buf_b).unwrap_err();
    assert_eq!(e.code(), "KILN-E109");
    assert!(e.to_string().contains("b's buffer"), "{e}");

    let e = a
        .execute(|r| {
            r.copy_buffer(&buf_b, 0, &buf_a, 0, 16)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109");
    let e = a
        .execute(|r| {
            r.fill_buffer(&buf_b, 7)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109");
    let e = a
        .execute(|r| {
            r.bind_pipeline(&pb)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109");

    // Images, vertex and index buffers, through every command that takes one (the
    // commands used to check no image's device at all).
    let img_b = b
        .image(&ImageDesc::color_target(
            "b's image",
            4,
            4,
            vk::Format::R8G8B8A8_UNORM,
        ))
        .unwrap();
    let img_a = a
        .image(&ImageDesc::color_target(
            "a's image",
            4,
            4,
            vk::Format::R8G8B8A8_UNORM,
        ))
        .unwrap();
    let staging_a = a.storage_buffer::<u8>("a's texels", 64).unwrap();
    let texels_b = b.storage_buffer::<u8>("b's texels", 64).unwrap();
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
            &[0u32; 4],
        )
        .unwrap();
    let foreign = |e: kiln::Error, what: &str| {
        assert_eq!(e.code(), "KILN-E109", "{what}: {e}");
        assert!(e.to_string().contains("b's"), "{what}: {e}");
    };
    let general = vk::ImageLayout::GENERAL;
    type Case<'c> = &'c dyn Fn(&mut kiln::Recorder) -> kiln::Result<()>;
    let cases: [(&str, Case); 6] = [
        ("transition", &|r| Ok(r.transition(&img_b, general)?)),
        ("transition_from", &|r| {
            Ok(r.transition_from(&img_b, vk::ImageLayout::UNDEFINED, general)?)
        }),
        ("copy_buffer_to_image (image)", &|r| {
            Ok(r.copy_buffer_to_image(&staging_a, &img_b, 0)?)
        }),
        ("copy_image_to_buffer (image)", &|r| {
            Ok(r.copy_image_to_buffer(&img_b, 0, &staging_a)?)
        }),
        ("copy_buffer_to_image (buffer)", &|r| {
            Ok(r.copy_buffer_to_image(&texels_b, &img_a, 0)?)
        }),
        ("begin_rendering", &|r| {
            Ok(
                r.begin_rendering(&kiln::RenderingDesc::new(&[kiln::ColorAttachment::clear(
                    &img_b, [0.0; 4],
                )]))?,
            )
        }),
    ];
    for (what, case) in cases {
        foreign(a.execute(|r| case(r)).unwrap_err(), what);
    }
    let e = a
        .execute(|r| Ok(r.bind_vertex_buffer(0, &vb_b, 0)?))
        .unwrap_err();
    foreign(e, "bind_vertex_buffer");
    let e = a
        .execute(|r| Ok(r.bind_index_buffer(&ib_b, 0, vk::IndexType::UINT32)?))
        .unwrap_err();
    foreign(e, "bind_index_buffer");
    let e = a
        .execute(|r| {
            // SAFETY (test): refused before any command buffer is handed out.
            unsafe { r.raw_using(&[&buf_b]) }?;
            Ok(())
        })
        .unwrap_err();
    foreign(e, "raw_using");
    let sampler_b = b.sampler(&kiln::SamplerDesc::nearest_clamp()).unwrap();
    let texture_a = a
        .texture_from_bytes("a's texture", 1, 1, vk::Format::R8G8B8A8_UNORM, &[0u8; 4])
        .unwrap();
    let textured = common::draw::textured_pipeline(&a);
    let mut tset = textured.descriptor_set(0).unwrap();
    let e = tset.write_combined(0, &texture_a, &sampler_b).unwrap_err();
    assert_eq!(e.code(), "KILN-E109", "{e}");
    assert!(e.to_string().contains("sampler"), "{e}");
    let texture_b = b
        .texture_from_bytes("b's texture", 1, 1, vk::Format::R8G8B8A8_UNORM, &[0u8; 4])
        .unwrap();
    let sampler_a = a.sampler(&kiln::SamplerDesc::nearest_clamp()).unwrap();
    foreign(
        tset.write_combined(0, &texture_b, &sampler_a)
            .unwrap_err()
            .into(),
        "image",
    );
    drop(tset);

    // Both devices still work.
    for (d, p, buf) in [(&a, &pa, &buf_a), (&b, &pb, &buf_b)] {
        let one = add::storage(d, "one", &[1.0f32; 4]);
        let s = add::set(p, &one, &one, buf);
        d.execute(|r| add::dispatch(r, p, &s, 4)).unwrap();
        assert_eq!(buf.read::<f32>().unwrap(), vec![2.0; 4]);
    }
    assert_eq!(buf_b.read::<f32>().unwrap(), vec![2.0; 4]);
    drop(set);
    assert_clean(&a);
    assert_clean(&b);
}

/// A panic inside the recording closure: was a leaked command pool, command buffer and
/// fence (VUID-vkDestroyDevice-device-00378 at teardown). The context is now recycled and
/// the device still works and tears down clean.
#[test]
fn a_panic_while_recording_leaks_nothing() {
    let device = device();
    let watch = device.validation_watch();
    for _ in 0..3 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = device.execute(|r| -> kiln::Result<()> {
                r.full_barrier()?;
                panic!("user code panics while recording");
            });
        }));
        assert!(r.is_err());
    }
    let b = add::storage(&device, "b", &[3u32; 4]);
    assert_eq!(b.read::<u32>().unwrap(), vec![3; 4]);
    drop(b);
    assert_clean(&device);
    drop(device);
    assert_watch_clean(&watch);
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
    let set = add::set(&p, &a, &b, &c);
    let img = device
        .image(&ImageDesc::texture("img", 4, 4, vk::Format::R8G8B8A8_UNORM))
        .unwrap();
    for _ in 0..2 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = device.record(|r| -> kiln::Result<()> {
                r.bind_pipeline(&p)?;
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
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap();
    rec.execute().unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![3.0; N]);
    let err = device
        .record(|r| {
            r.copy_buffer(&a, 4, &c, 0, (N * 4) as u64)?;
            Ok(())
        })
        .err()
        .unwrap();
    assert_eq!(err.code(), "KILN-E151");
    let err = device
        .record(|r| Ok(r.transition(&img, vk::ImageLayout::TRANSFER_DST_OPTIMAL)?))
        .err()
        .unwrap();
    assert_eq!(err.code(), "KILN-E284");
    drop(device.record(|r| {
        r.fill_buffer(&c, 0)?;
        Ok(())
    }));
    let _pending = rec.submit().unwrap();
    drop(rec);
    let _also = device.submit(|r| {
        r.fill_buffer(&c, 7)?;
        Ok(())
    });
    drop((_pending, _also));
    assert_eq!(c.read::<u32>().unwrap(), vec![7; N]);
    assert_clean(&device);
    drop((set, a, b, c, img, p, device));
    common::assert_watch_clean(&watch);
}

#[test]
fn teardown_with_everything_dropped_is_silent() {
    let device = device();
    let watch = device.validation_watch();
    run_and_check(&device, 1000);
    drop(device);
    // The object tracker reports leaked objects at vkDestroyDevice / vkDestroyInstance.
    assert_watch_clean(&watch);
    assert!(watch.report().enabled);
}

#[test]
fn teardown_frees_every_allocation_and_object() {
    // Breadcrumbs' marker rings (one 16 KiB allocation per queue, `device/breadcrumbs.rs`)
    // live as long as the device: off here, so that every allocation left is a leak.
    let device = common::device_with_desc(kiln::DeviceDesc::default().breadcrumbs(Some(false)));
    let watch = device.validation_watch();
    still_works(&device);
    // Staged transfers keep their staging buffers for reuse; freeing them leaves nothing.
    let staging_bytes = device.staging_usage().bytes;
    assert_eq!(device.release_staging_memory(), staging_bytes);
    assert_eq!(
        device.staging_usage(),
        kiln::StagingUsage {
            buffers: 0,
            bytes: 0
        }
    );
    let kiln::MemoryReport {
        allocations,
        allocated_bytes: bytes,
        ..
    } = device.memory_report();
    assert_eq!(
        (allocations, bytes),
        (0, 0),
        "gpu-allocator still holds memory"
    );
    assert!(device.heap_usage().iter().all(|h| h.used == 0));
    drop(device);
    assert_watch_clean(&watch);
}
