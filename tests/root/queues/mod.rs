//! Queues: which queue each kind gets (a queue of its own where the device has one, else
//! the main queue: asserted from the device's queue families, so neither path passes as the
//! other), cross-queue ordering derived from the resources submissions use (correct values,
//! waits only where work depends, synchronization validation silent), deferred destruction,
//! set stamps and image layouts across queues, commands a queue cannot run, two threads on
//! two queues, memory limits, and the chunked stream over three queues.
//!
//! Most tests run twice: on the plain test device (lavapipe: one queue, every kind falls
//! back to the main queue; the H200: dedicated queues) and on `emulated_device` (lavapipe:
//! a compute and a transfer queue with timelines of their own on the one `VkQueue`, so
//! the cross-queue waits are really made and validated).

mod host_memory;
mod split;
mod stream;

use common::add;
use common::gate::Gate;
use common::gpu_buffer;
use common::{assert_clean, device, emulated_device};
use kiln::{vk, BufferDesc, Device, MemoryLocation, QueueKind, QueueSource};

/// The plain and the emulated test device, with staging forced (lavapipe maps device-local
/// memory; staged transfers are the ones that run on transfer queues).
fn both_devices() -> [Device; 2] {
    [device(), emulated_device()].map(|d| {
        d.debug_force_staging(true);
        d
    })
}

/// What the device's queue families promise for `kind`: a family of its own (compute
/// without graphics, or transfer without both).
fn has_dedicated_family(device: &Device, kind: QueueKind) -> bool {
    // SAFETY: a plain query on the device's own instance and physical device.
    let families = unsafe {
        device
            .raw_instance()
            .get_physical_device_queue_family_properties(device.raw_physical_device())
    };
    use vk::QueueFlags as F;
    families.iter().any(|f| match kind {
        QueueKind::Compute => {
            f.queue_flags.contains(F::COMPUTE) && !f.queue_flags.contains(F::GRAPHICS)
        }
        QueueKind::Transfer => {
            f.queue_flags.contains(F::TRANSFER)
                && !f.queue_flags.intersects(F::GRAPHICS | F::COMPUTE)
        }
        QueueKind::Main => true,
        other => panic!("a queue kind this test does not know: {other:?}"),
    })
}

#[test]
fn each_kind_is_a_queue_of_its_own_where_the_device_has_one() {
    let device = device();
    let main = device.queue(QueueKind::Main);
    assert_eq!(main.info().index, 0);
    assert_eq!(main.info().source, QueueSource::Dedicated);
    assert!(main.info().flags.contains(vk::QueueFlags::COMPUTE));
    for (kind, needs) in [
        (QueueKind::Compute, vk::QueueFlags::COMPUTE),
        (QueueKind::Transfer, vk::QueueFlags::TRANSFER),
    ] {
        let q = device.queue(kind);
        let info = q.info();
        assert_eq!(info.kind, kind);
        if has_dedicated_family(&device, kind) {
            // The real path (the H200: 8 compute-only, 2 transfer-only queues).
            assert_eq!(info.source, QueueSource::Dedicated, "{kind:?}: {info:?}");
            assert_ne!(q, main);
            assert!(info.flags.contains(needs) && !info.flags.contains(vk::QueueFlags::GRAPHICS));
            assert_ne!(info.family, main.info().family);
        } else {
            // The fallback (lavapipe: one queue): the main queue itself.
            assert_eq!(info.source, QueueSource::Main, "{kind:?}: {info:?}");
            assert_eq!(q, main);
            assert_eq!(info.index, 0);
        }
        assert!(!device.queues(kind).is_empty());
    }
    let infos = device.queue_infos();
    let dedicated = [QueueKind::Compute, QueueKind::Transfer]
        .iter()
        .filter(|k| has_dedicated_family(&device, **k))
        .count();
    assert_eq!(infos.len() > 1, dedicated > 0, "{infos:?}");
    assert_eq!(infos[0].kind, QueueKind::Main);
    // Emulation adds queues only where the device has none of its own.
    let emulated = emulated_device();
    for kind in [QueueKind::Compute, QueueKind::Transfer] {
        let info = emulated.queue(kind).info();
        let want = if has_dedicated_family(&emulated, kind) {
            QueueSource::Dedicated
        } else {
            QueueSource::Emulated
        };
        assert_eq!(info.source, want, "{kind:?}");
        assert_ne!(info.index, 0);
    }
    assert_clean(&device);
    assert_clean(&emulated);
}

/// Upload on the transfer queue, c = a + b on the compute queue, readback on the transfer
/// queue; no host wait between them. Round after round into the same buffers, so each
/// round's upload also waits for the previous dispatch's reads (write after read).
#[test]
fn uploads_dispatches_and_readbacks_on_three_queues_are_ordered() {
    for device in both_devices() {
        let n = 1 << 16;
        let p = add::vector_add(&device);
        let (a, b, c) = (
            gpu_buffer(&device, "a", n as u64 * 4),
            gpu_buffer(&device, "b", n as u64 * 4),
            gpu_buffer(&device, "c", n as u64 * 4),
        );
        let set = add::set(&p, &a, &b, &c);
        let transfer = device.queue(QueueKind::Transfer);
        let compute = device.queue(QueueKind::Compute);
        let readback = device.queues(QueueKind::Transfer).pop().unwrap();
        let bs: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
        transfer.upload(&b, 0, &bs).unwrap().wait().unwrap();
        let mut outs = vec![vec![0f32; n]; 4];
        let mut pending = Vec::new();
        let mut subs = Vec::new();
        for (round, out) in outs.iter_mut().enumerate() {
            let a_data: Vec<f32> = (0..n).map(|i| (i * (round + 1)) as f32).collect();
            pending.push(transfer.upload(&a, 0, &a_data).unwrap());
            subs.push(
                compute
                    .submit(|r| add::dispatch(r, &p, &set, n as u32))
                    .unwrap(),
            );
            pending.push(readback.read_into(&c, 0, out).unwrap());
        }
        for t in pending {
            t.wait().unwrap();
        }
        for s in subs {
            s.wait().unwrap();
        }
        for (round, out) in outs.iter().enumerate() {
            let bad = (0..n)
                .filter(|&i| out[i] != (i * (round + 1)) as f32 + bs[i])
                .count();
            assert_eq!(
                bad,
                0,
                "round {round}: {bad} wrong elements ({:?})",
                device.queue_infos()
            );
        }
        assert_clean(&device);
    }
}

/// A submission waits on another queue's timeline only for work it depends on: an upload
/// into a buffer a gated dispatch uses waits for it; an upload into another buffer, and a
/// readback of a buffer the dispatch only reads, do not. On a device with dedicated queues
/// the independent transfers also finish while the compute queue is still held.
#[test]
fn only_dependent_work_waits_on_another_queue() {
    for device in both_devices() {
        let separate = device.queue(QueueKind::Compute) != device.queue(QueueKind::Transfer);
        let n = 4096usize;
        let p = add::vector_add(&device);
        let a = add::storage(&device, "a", &vec![1.0f32; n]);
        let c = gpu_buffer(&device, "c", n as u64 * 4);
        let other = gpu_buffer(&device, "other", n as u64 * 4);
        let set = add::set(&p, &a, &a, &c);
        let gate = Gate::new(&device);
        let compute = device.queue(QueueKind::Compute);
        let transfer = device.queue(QueueKind::Transfer);
        let held = gate
            .submit_on(&compute, |r| add::dispatch(r, &p, &set, n as u32))
            .unwrap();
        let before = device.debug_cross_queue_waits();
        // Independent: another buffer.
        let independent = transfer.upload(&other, 0, &vec![7.0f32; n]).unwrap();
        assert_eq!(
            device.debug_cross_queue_waits(),
            before,
            "independent upload waited"
        );
        let dedicated = transfer.info().source == QueueSource::Dedicated
            && compute.info().source == QueueSource::Dedicated;
        let independent = if dedicated {
            // Real concurrency: the transfer queue runs while the compute queue is held.
            independent.wait().unwrap();
            assert!(!held.is_done());
            None
        } else {
            // One `VkQueue`: it runs after the held dispatch (waiting now would hang).
            Some(independent)
        };
        // Dependent: `c` is written by the held dispatch (write after write).
        let dependent = transfer.upload(&c, 0, &vec![3.0f32; n]).unwrap();
        let waited = device.debug_cross_queue_waits() - before;
        assert_eq!(waited, u64::from(separate), "{:?}", device.queue_infos());
        assert!(!dependent.is_done());
        gate.open();
        dependent.wait().unwrap();
        if let Some(t) = independent {
            t.wait().unwrap();
        }
        held.wait().unwrap();
        // The upload ran after the dispatch: c holds its data, not the sums.
        assert_eq!(c.read::<f32>().unwrap(), vec![3.0; n]);
        assert_eq!(other.read::<f32>().unwrap(), vec![7.0; n]);
        drop(gate);
        assert_clean(&device);
    }
}

/// A buffer dropped while a copy on the transfer queue still has to run (held behind a
/// gated submission that uses it) is destroyed only once the copy completed.
#[test]
fn a_buffer_dropped_while_a_transfer_queue_copy_uses_it_is_destroyed_after_it() {
    for device in both_devices() {
        let n = 1 << 16;
        let x = gpu_buffer(&device, "x", n * 4);
        let gate = Gate::new(&device);
        let held = gate
            .submit_on(&device.queue(QueueKind::Compute), |r| {
                Ok(r.fill_buffer(&x, 0)?)
            })
            .unwrap();
        let data = vec![0xABu8; n as usize * 4];
        let upload = device
            .queue(QueueKind::Transfer)
            .upload(&x, 0, &data)
            .unwrap();
        drop(x);
        let pending = device.memory_report().allocations;
        assert!(!upload.is_done());
        // Nothing can be collected while the copy waits behind the gate.
        device.release_staging_memory();
        assert_eq!(device.memory_report().allocations, pending);
        gate.open();
        upload.wait().unwrap();
        held.wait().unwrap();
        let after = device.memory_report().allocations;
        assert_eq!(after, pending - 1, "x is freed once the copy completed");
        drop(gate);
        assert_clean(&device);
    }
}

/// A descriptor set bound by a pending submission on the compute queue is rewritten only
/// after it (VUID-vkUpdateDescriptorSets-None-03047): the write blocks until the gate opens.
#[test]
fn a_set_bound_on_another_queue_is_rewritten_only_after_that_submission() {
    use std::sync::atomic::{AtomicBool, Ordering};
    for device in both_devices() {
        let n = 1024usize;
        let p = add::vector_add(&device);
        let one = add::storage(&device, "one", &vec![1.0f32; n]);
        let two = add::storage(&device, "two", &vec![2.0f32; n]);
        let c = gpu_buffer(&device, "c", n as u64 * 4);
        let mut set = add::set(&p, &one, &one, &c);
        let gate = Gate::new(&device);
        let held = gate
            .submit_on(&device.queue(QueueKind::Compute), |r| {
                add::dispatch(r, &p, &set, n as u32)
            })
            .unwrap();
        let opened = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                opened.store(true, Ordering::SeqCst);
                gate.open();
            });
            set.write_buffer(1, &two).unwrap();
            assert!(
                opened.load(Ordering::SeqCst),
                "the set was rewritten while in use"
            );
        });
        assert!(held.is_done());
        held.wait().unwrap();
        assert_eq!(
            c.read::<f32>().unwrap(),
            vec![2.0; n],
            "the held dispatch ran with the old set"
        );
        device
            .execute(|r| add::dispatch(r, &p, &set, n as u32))
            .unwrap();
        assert_eq!(c.read::<f32>().unwrap(), vec![3.0; n]);
        drop(gate);
        assert_clean(&device);
    }
}

/// An image moves through layouts on three queues: uploaded on the main queue
/// (SHADER_READ_ONLY), copied out on the transfer queue (TRANSFER_SRC), overwritten from a
/// buffer on the compute queue (TRANSFER_DST, then SHADER_READ_ONLY: stages the compute
/// queue lacks are masked), read back on the main queue. Validation checks every layout.
#[test]
fn image_layouts_follow_an_image_across_queues() {
    for device in both_devices() {
        let (w, h) = (16u32, 8u32);
        let format = vk::Format::R8G8B8A8_UNORM;
        let texels: Vec<u8> = (0..w * h * 4).map(|i| (i * 7) as u8).collect();
        let img = device
            .texture_from_bytes("img", w, h, format, &texels)
            .unwrap();
        assert_eq!(img.layout(), vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
        let out = device
            .buffer(
                &BufferDesc::default()
                    .label("out")
                    .size((w * h * 4) as u64)
                    .usage(vk::BufferUsageFlags::TRANSFER_DST)
                    .location(MemoryLocation::GpuToCpu),
            )
            .unwrap();
        let transfer = device.queue(QueueKind::Transfer);
        let copied = transfer
            .submit(|r| Ok(r.copy_image_to_buffer(&img, 0, &out)?))
            .unwrap();
        let new: Vec<u8> = texels.iter().map(|t| t ^ 0xFF).collect();
        let src = device
            .buffer_from_slice("src", vk::BufferUsageFlags::TRANSFER_SRC, &new)
            .unwrap();
        // Depends on the copy above (it reads the image this writes): waits for it.
        let overwritten = device
            .queue(QueueKind::Compute)
            .submit(|r| {
                r.copy_buffer_to_image(&src, &img, 0)?;
                Ok(r.transition(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)?)
            })
            .unwrap();
        copied.wait().unwrap();
        assert_eq!(
            out.read::<u8>().unwrap(),
            texels,
            "the copy saw the old texels"
        );
        overwritten.wait().unwrap();
        assert_eq!(img.layout(), vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
        assert_eq!(img.read().unwrap(), new);
        assert_clean(&device);
    }
}

/// Two transitions of one image in one recording on a transfer queue, the first to a shader
/// layout whose stages the queue lacks: the second barrier names only accesses its stages
/// perform (was VUID-VkImageMemoryBarrier2-srcAccessMask-03908/-07454 and -03905, a shader
/// read beside BOTTOM_OF_PIPE; found by the API fuzzer). The texels survive both.
#[test]
fn transitions_on_a_transfer_queue_name_only_its_accesses() {
    let device = emulated_device();
    let (w, h) = (8u32, 8u32);
    let texels: Vec<u8> = (0..w * h * 4).map(|i| (i * 5) as u8).collect();
    let img = device
        .texture_from_bytes("img", w, h, vk::Format::R8G8B8A8_UNORM, &texels)
        .unwrap();
    device
        .queue(QueueKind::Transfer)
        .execute(|r| {
            r.transition(&img, vk::ImageLayout::TRANSFER_SRC_OPTIMAL)?;
            r.transition(&img, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)?;
            Ok(r.transition(&img, vk::ImageLayout::GENERAL)?)
        })
        .unwrap();
    assert_eq!(img.layout(), vk::ImageLayout::GENERAL);
    assert_eq!(img.read().unwrap(), texels);
    assert_clean(&device);
}

/// A transfer queue cannot bind a compute pipeline, a compute queue cannot render: coded
/// errors, nothing submitted. Where the kind falls back to the main queue, the same
/// commands run there.
#[test]
fn commands_a_queue_cannot_run_are_e120() {
    for device in [device(), emulated_device()] {
        let p = add::vector_add(&device);
        let a = add::storage(&device, "a", &[1.0f32; 64]);
        let c = gpu_buffer(&device, "c", 256);
        let set = add::set(&p, &a, &a, &c);
        let transfer = device.queue(QueueKind::Transfer);
        let r = transfer.execute(|r| add::dispatch(r, &p, &set, 64));
        if transfer.info().flags.contains(vk::QueueFlags::COMPUTE) {
            assert_eq!(transfer.info().source, QueueSource::Main);
            r.unwrap();
            assert_eq!(c.read::<f32>().unwrap(), vec![2.0; 64]);
        } else {
            let e = r.unwrap_err();
            assert_eq!(e.code(), "KILN-E120", "{e}");
            assert!(e.to_string().contains("compute pipeline"), "{e}");
        }
        // Copies and fills run everywhere.
        transfer
            .execute(|r| Ok(r.fill_buffer(&c, 0x4040_0000)?))
            .unwrap();
        assert_eq!(c.read::<f32>().unwrap(), vec![3.0; 64]);
        let compute = device.queue(QueueKind::Compute);
        let target = device
            .image(&kiln::ImageDesc::color_target(
                "target",
                4,
                4,
                vk::Format::R8G8B8A8_UNORM,
            ))
            .unwrap();
        let r = compute.execute(|r| {
            r.begin_rendering(&kiln::RenderingDesc::new(&[kiln::ColorAttachment::clear(
                &target, [0.0; 4],
            )]))?;
            Ok(r.end_rendering()?)
        });
        if compute.info().flags.contains(vk::QueueFlags::GRAPHICS) {
            r.unwrap();
        } else {
            let e = r.unwrap_err();
            assert_eq!(e.code(), "KILN-E120", "{e}");
        }
        assert_clean(&device);
    }
}

/// Two threads, one dispatching on the compute queue, one uploading and reading back on the
/// transfer queue, each with its own buffers, at once; every result exact.
#[test]
fn two_threads_on_two_queues_at_once() {
    for device in both_devices() {
        let p = add::vector_add(&device);
        std::thread::scope(|s| {
            let (device, p) = (&device, &p);
            s.spawn(move || {
                let compute = device.queue(QueueKind::Compute);
                for k in 0..20u32 {
                    let a = add::storage(device, "a", &[k as f32; 512]);
                    let c = gpu_buffer(device, "c", 512 * 4);
                    let set = add::set(p, &a, &a, &c);
                    compute.execute(|r| add::dispatch(r, p, &set, 512)).unwrap();
                    assert_eq!(c.read::<f32>().unwrap(), vec![2.0 * k as f32; 512]);
                }
            });
            s.spawn(move || {
                let transfer = device.queue(QueueKind::Transfer);
                let buf = gpu_buffer(device, "t", 300_000);
                let mut back = vec![0u8; 300_000];
                for k in 0..20u8 {
                    let data: Vec<u8> = (0..300_000u32).map(|i| (i as u8) ^ k).collect();
                    transfer.upload(&buf, 0, &data).unwrap().wait().unwrap();
                    transfer
                        .read_into(&buf, 0, &mut back)
                        .unwrap()
                        .wait()
                        .unwrap();
                    assert!(back == data, "round {k}");
                }
            });
        });
        assert_clean(&device);
    }
}

/// More than the device's free memory: coded errors (`KILN-E154`), no abort, no Vulkan
/// call; the device keeps working. Sizes come from kiln's heap budget.
#[test]
fn a_transfer_of_more_than_free_memory_is_a_coded_error() {
    let device = device();
    let free = device
        .heap_usage()
        .iter()
        .map(|h| h.size - h.used)
        .max()
        .unwrap();
    let too_big = free + (1 << 20);
    // The first limit the size passes: maxBufferSize (E159), maxMemoryAllocationSize
    // (E162), the heap (E154). Mesa 25's lavapipe has a host-sized heap and a 4 GiB
    // maxBufferSize; Mesa 22.3's a 2 GiB heap.
    let props = device.compute_properties();
    let want = if too_big > props.max_buffer_size {
        "KILN-E159"
    } else if too_big > props.max_memory_allocation_size {
        "KILN-E162"
    } else {
        "KILN-E154"
    };
    if too_big > 16 << 30 {
        // A slice this large would not fit this machine (lavapipe's heaps are 2 GiB); the
        // buffer alone must still be refused.
        let err = device.buffer(
            &BufferDesc::default()
                .label("too big")
                .size(too_big)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuOnly),
        );
        assert_eq!(err.unwrap_err().code(), want);
    } else {
        // calloc'd: no page is touched before the buffer is refused.
        let data = vec![0u8; too_big as usize];
        let err = device
            .buffer_from_slice("too big", vk::BufferUsageFlags::STORAGE_BUFFER, &data)
            .unwrap_err();
        assert_eq!(err.code(), want, "{err}");
        assert!(err.to_string().contains("too big"), "{err}");
    }
    let err = device.host_buffer("too big host", too_big).unwrap_err();
    assert_eq!(err.code(), want, "{err}");
    // A transfer past a buffer's end is refused before anything is staged.
    let small = gpu_buffer(&device, "small", 1024);
    let q = device.queue(QueueKind::Transfer);
    let err = q.upload(&small, 512, &[0u8; 1024]).unwrap_err();
    assert_eq!(err.code(), "KILN-E151");
    let mut back = [0u8; 2048];
    assert_eq!(
        q.read_into(&small, 0, &mut back).unwrap_err().code(),
        "KILN-E151"
    );
    add::still_works(&device);
    assert_clean(&device);
}

/// The validation this module relies on is really on: submissions on two queues that use
/// one buffer only through raw commands (which kiln cannot see, so it places no wait) are
/// reported by synchronization validation's submit-time checks (`VK_LAYER_ENABLES` in
/// `.cargo/config.toml`). Without them every cross-queue test above would pass even if
/// kiln placed no wait at all.
#[test]
fn untracked_raw_copies_on_two_queues_are_reported_by_synchronization_validation() {
    let device = emulated_device();
    let (compute, transfer) = (
        device.queue(QueueKind::Compute),
        device.queue(QueueKind::Transfer),
    );
    assert_ne!(compute, transfer);
    let x = gpu_buffer(&device, "x", 4096);
    let y = gpu_buffer(&device, "y", 4096);
    let (xr, yr) = (x.raw(), y.raw());
    // The fill is held behind a gate until the copy is submitted: a layer that sees the
    // fill complete first (kiln polls its timelines; layer 1.4 then retires the batch, as
    // after a host wait) would have nothing left to check against.
    let gate = Gate::new(&device);
    let write = gate
        .submit_on(&compute, |r| {
            // SAFETY: a raw fill of a live buffer of this device, outside any rendering
            // scope; the submission is waited for below, before the buffer drops.
            unsafe { device.raw().cmd_fill_buffer(r.raw(), xr, 0, 4096, 7) };
            Ok(())
        })
        .unwrap();
    let read = transfer
        .submit(|r| {
            let region = vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: 4096,
            };
            // SAFETY: a raw copy between live buffers of this device, in range; waited for
            // below, before the buffers drop.
            unsafe { device.raw().cmd_copy_buffer(r.raw(), xr, yr, &[region]) };
            Ok(())
        })
        .unwrap();
    gate.open();
    write.wait().unwrap();
    read.wait().unwrap();
    let report = device.validation_report();
    // One `VkQueue` (emulated queues): the copy follows the fill in submission order with
    // no memory dependency, READ_AFTER_WRITE; two real queues (the H200): the fill is in
    // another queue's batch that this one never waited for, READ_RACING_WRITE. Either way
    // the hazard is the copy's read of the fill's write.
    let hazard = |m: &&String| {
        (m.contains("SYNC-HAZARD-READ-AFTER-WRITE") || m.contains("SYNC-HAZARD-READ-RACING-WRITE"))
            && m.contains("SYNC_COPY_TRANSFER_READ")
            && m.contains("vkCmdFillBuffer")
    };
    let found = report.messages.iter().any(|m| hazard(&m));
    if common::proved_by_raw_batches_under_layer_1_4(&device, &report, found) {
        return;
    }
    assert!(
        found,
        "submit-time synchronization validation is off (a layer without VK_EXT_layer_settings \
         needs VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT, \
         which `cargo xtask test` sets): {:?}",
        report.messages
    );
}

/// The validation false positive `assert_clean` sets aside (`common::syncval_self_race`)
/// is recognised only in its exact shape: a `RACING` hazard of a submission on a queue
/// against an access of that same queue. The same hazard against another queue (the real
/// one the test above provokes on two real queues), or a non-racing hazard, is not.
#[test]
fn only_racing_hazards_against_the_submitting_queue_itself_are_set_aside() {
    let msg = |hazard: &str, prior_queue: &str| {
        format!(
            "SYNC-HAZARD-{hazard}: Validation Error: [ SYNC-HAZARD-{hazard} ] Object 0: handle \
             = 0x55d0c8a1b2c0, type = VK_OBJECT_TYPE_QUEUE; | MessageID = 0xe4d96472 | \
             vkQueueSubmit2: Hazard {} for entry 0, VkCommandBuffer 0x55d0c9f1c8f0[], \
             Submitted access info (recorded_usage: SYNC_COPY_TRANSFER_READ, command: \
             vkCmdCopyBuffer, seq_no: 1, reset_no: 3). Access info (prior_usage: \
             SYNC_COPY_TRANSFER_WRITE, write_barriers: SYNC_HOST_HOST_READ|SYNC_HOST_HOST_WRITE, \
             queue: VkQueue {prior_queue}[], submit: 0, batch: 0, batch_tag: 1, command: \
             vkCmdCopyBuffer, seq_no: 1, command_buffer: VkCommandBuffer 0x55d0c9f1c8f0[], \
             reset_no: 1).",
            hazard.replace('-', "_")
        )
    };
    assert!(common::syncval_self_race(&msg(
        "READ-RACING-WRITE",
        "0x55d0c8a1b2c0"
    )));
    assert!(common::syncval_self_race(&msg(
        "WRITE-RACING-WRITE",
        "0x55d0c8a1b2c0"
    )));
    assert!(!common::syncval_self_race(&msg(
        "READ-RACING-WRITE",
        "0x55d0c8a1f000"
    )));
    assert!(!common::syncval_self_race(&msg(
        "READ-AFTER-WRITE",
        "0x55d0c8a1b2c0"
    )));
    assert!(!common::syncval_self_race(
        "SYNC-HAZARD-READ-RACING-WRITE: no queue named"
    ));
    // A report of one such message and one other is still not clean.
    let report = kiln::ValidationReport {
        enabled: true,
        errors: 2,
        warnings: 0,
        messages: vec![
            msg("READ-RACING-WRITE", "0x55d0c8a1b2c0"),
            msg("READ-RACING-WRITE", "0x55d0c8a1f000"),
        ],
        ..Default::default()
    };
    let r = std::panic::catch_unwind(|| common::assert_report_clean(&report));
    assert!(r.is_err(), "a real hazard beside the known one must fail");
    let report = kiln::ValidationReport {
        errors: 1,
        messages: vec![msg("READ-RACING-WRITE", "0x55d0c8a1b2c0")],
        ..report
    };
    common::assert_report_clean(&report);
    // Past the 64 kept texts, the messenger's count of messages it marked as ordered by
    // kiln's timeline waits decides: all of them, or it is not clean.
    let many = kiln::ValidationReport {
        enabled: true,
        errors: 70,
        ordered: 70,
        messages: vec![msg("READ-AFTER-WRITE", "0x55d0c8a1f000"); 64],
        ..Default::default()
    };
    common::assert_report_clean(&many);
    let one_not = kiln::ValidationReport {
        ordered: 69,
        ..many
    };
    let r = std::panic::catch_unwind(|| common::assert_report_clean(&one_not));
    assert!(r.is_err(), "one unmarked message among 70 must fail");
}

/// The emulated queues have the H200's families' capabilities (transfer: TRANSFER only, like
/// its copy-engine family 1; compute: no GRAPHICS, like family 2), and a recording on them
/// sees those, so a test's own raw commands are checked as there: the gate's
/// `vkCmdWaitEvents` (graphics or compute only) is refused on the transfer queue, and
/// `Gate::hold` holds it through the main queue instead.
#[test]
fn emulated_queues_have_the_capabilities_of_dedicated_families() {
    let device = emulated_device();
    let transfer = device.queue(QueueKind::Transfer);
    let compute = device.queue(QueueKind::Compute);
    let seen = |q: &kiln::Queue| q.execute(|r| Ok(r.queue_flags())).unwrap();
    // Transfer only: no graphics or compute (a real transfer family may add SPARSE_BINDING,
    // as the H200's does).
    let work = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
    assert_eq!(seen(&transfer) & work, vk::QueueFlags::TRANSFER);
    assert_eq!(transfer.info().flags & work, vk::QueueFlags::TRANSFER);
    let c = seen(&compute);
    assert!(c.contains(vk::QueueFlags::COMPUTE) && !c.contains(vk::QueueFlags::GRAPHICS));
    let gate = Gate::new(&device);
    let held = gate.hold(&transfer);
    let x = gpu_buffer(&device, "x", 256);
    let after = transfer.submit(|r| Ok(r.fill_buffer(&x, 1)?)).unwrap();
    assert!(
        !held.is_done() && !after.is_done(),
        "the gate holds the transfer queue"
    );
    gate.open();
    held.wait().unwrap();
    after.wait().unwrap();
    assert_eq!(x.read::<u32>().unwrap(), vec![1u32; 64]);
    drop(gate);
    assert_clean(&device);
}

/// `DeviceDesc::readback_queue` chooses where kiln's readbacks run (`Device::readback_queue`,
/// the staged `Buffer::read_into` chunks, the stream example's readbacks): `Auto` and
/// `Transfer` the last transfer queue, `Main` the main queue, `Compute` the async-compute
/// queue, `ComputeShader` the main queue (beside the one async-compute queue) with readbacks
/// into host buffers done by kiln's copy shader (counted; an unaligned one falls back to a
/// copy); uploads stay on the first
/// transfer queue. On emulated queues (lavapipe) each is a queue of its own, so every choice
/// runs the cross-queue paths, byte-exact.
#[test]
fn the_readback_queue_follows_the_device_description() {
    use kiln::{DeviceDesc, ReadbackQueue};
    for which in [
        ReadbackQueue::Auto,
        ReadbackQueue::Transfer,
        ReadbackQueue::Main,
        ReadbackQueue::Compute,
        ReadbackQueue::ComputeShader,
    ] {
        let device = common::device_with_desc(
            DeviceDesc::default()
                .emulate_queues(true)
                .readback_queue(which),
        );
        device.debug_force_staging(true);
        device.debug_set_staging_chunk(64 << 10);
        let transfer = device.queues(QueueKind::Transfer);
        let want = match which {
            ReadbackQueue::Auto | ReadbackQueue::Transfer => transfer.last().unwrap().clone(),
            ReadbackQueue::Main | ReadbackQueue::ComputeShader => device.queue(QueueKind::Main),
            ReadbackQueue::Compute => device.queue(QueueKind::Compute),
            other => panic!("a readback queue this test does not know: {other:?}"),
        };
        assert_eq!(device.readback_queue(), want, "{which:?}");
        assert_eq!(device.readback_queue().info().index, want.info().index);
        assert_eq!(device.upload_queue(), transfer[0], "{which:?}");
        if which == ReadbackQueue::Compute {
            assert_ne!(device.readback_queue(), device.queue(QueueKind::Main));
        }
        // Staged chunks (64 KiB) through the chosen queue, after an upload on the first
        // transfer queue and a dispatch-free copy on the main queue.
        let data: Vec<u32> = (0..100_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let x = gpu_buffer(&device, "x", 400_000);
        let y = gpu_buffer(&device, "y", 400_000);
        x.upload(&data).unwrap();
        device
            .execute(|r| Ok(r.copy_buffer(&x, 0, &y, 0, 400_000)?))
            .unwrap();
        let mut back = vec![0u32; data.len()];
        y.read_into(&mut back).unwrap();
        assert!(back == data, "{which:?}: staged readback");
        let mut stream = kiln_examples::stream::Stream::new(&device, 4096, 5, 3).unwrap();
        stream.run(&device, true).unwrap();
        assert_eq!(stream.check().unwrap(), None, "{which:?}: stream");
        let shader = which == ReadbackQueue::ComputeShader;
        assert_eq!(
            device.debug_shader_copies(),
            if shader { 5 } else { 0 },
            "{which:?}: one shader readback per chunk"
        );
        // Into a host buffer at an unaligned offset (a copy) and an aligned one (a shader
        // copy with `ComputeShader`), byte-exact both.
        let mut host = device.host_buffer("back", 400_016).unwrap();
        let q = device.readback_queue();
        q.read_to_host(&y, 0, &mut host, 4, 400_000)
            .unwrap()
            .wait()
            .unwrap();
        assert!(
            host.as_slice().unwrap()[4..400_004] == *bytemuck_bytes(&data),
            "{which:?}: unaligned"
        );
        // 256: a multiple of every minStorageBufferOffsetAlignment Vulkan allows.
        q.read_to_host(&y, 256, &mut host, 256, 399_744)
            .unwrap()
            .wait()
            .unwrap();
        assert!(
            host.as_slice().unwrap()[256..256 + 399_744]
                == bytemuck_bytes(&data)[256..256 + 399_744],
            "{which:?}: aligned"
        );
        assert_eq!(
            device.debug_shader_copies(),
            if shader { 6 } else { 0 },
            "{which:?}: only the aligned readback is a shader copy"
        );
        assert_clean(&device);
    }
}

fn bytemuck_bytes(words: &[u32]) -> &[u8] {
    kiln::bytemuck::cast_slice(words)
}
