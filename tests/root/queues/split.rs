//! Large host-buffer copies split over queues (`TransferSplit`, issue 12 (a)): the parts
//! are the policy's (queues and byte ranges, odd sizes and offsets), the bytes exact both
//! ways, every wait (the transfer, host access, later users on other queues, deferred
//! destruction) covers every part; a device with one queue (lavapipe's plain device) keeps
//! one copy, and so does `TransferSplit::OFF`.

use common::gate::Gate;
use common::{assert_clean, device, device_with_desc};
use kiln::{Device, DeviceDesc, QueueKind, TransferSplit};

use common::gpu_buffer;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 9) as u8 ^ seed)
        .collect()
}

/// Splits from 256 KiB into up to `parts` parts, emulated queues where the device has none.
fn split_device(parts: u32) -> Device {
    device_with_desc(
        DeviceDesc::default()
            .emulate_queues(true)
            .transfer_split(Some(TransferSplit::new(256 << 10, parts))),
    )
}

/// The queues the policy gives a copy of `size` bytes on `queue` of `device`.
fn planned(device: &Device, queue: usize, upload: bool, size: u64) -> Vec<(usize, u64, u64)> {
    let kinds: Vec<QueueKind> = device.queue_infos().iter().map(|q| q.kind).collect();
    device
        .transfer_split()
        .plan(&kinds, queue, upload, size)
        .iter()
        .map(|p| (p.queue, p.offset, p.len))
        .collect()
}

/// An upload and a readback of an odd size at odd offsets, split in 2, 3 and 4 parts over
/// the emulated queues: one submission per part on the planned queues, bytes exact, a
/// kiln copy on the compute queue in between waits for every part, validation silent.
#[test]
fn split_copies_at_odd_offsets_are_byte_exact_on_the_planned_queues() {
    for parts in [2, 3, 4] {
        let device = split_device(parts);
        let len = (1 << 20) + 12_345;
        let (host_at, dev_at) = (333u64, 777u64);
        let data = pattern(len, parts as u8);
        let mut src = device.host_buffer("split src", len as u64 + 1000).unwrap();
        src.write(host_at, &data).unwrap();
        let mut dst = device.host_buffer("split dst", len as u64 + 1000).unwrap();
        let x = gpu_buffer(&device, "x", len as u64 + 2000);
        let y = gpu_buffer(&device, "y", len as u64 + 2000);
        let up = device.upload_queue();
        let down = device.readback_queue();
        let t = up
            .upload_from_host(&src, host_at, &x, dev_at, len as u64)
            .unwrap();
        let want = planned(&device, up.info().index, true, len as u64);
        assert!(
            want.len() >= 2,
            "{parts}: the emulated device has partners: {want:?}"
        );
        assert_eq!(want.len(), (parts as usize).min(device.queue_infos().len()));
        let got: Vec<usize> = t.parts().iter().map(|p| p.0).collect();
        let want_queues: Vec<usize> = want.iter().map(|p| p.0).collect();
        assert_eq!(got, want_queues, "{parts}: one submission per planned part");
        assert_eq!(want.iter().map(|p| p.2).sum::<u64>(), len as u64);
        // A copy on the compute queue reads x: it waits for every part on the GPU.
        let s = device
            .queue(QueueKind::Compute)
            .submit(|r| Ok(r.copy_buffer(&x, dev_at, &y, 5, len as u64)?))
            .unwrap();
        // Every queue idle again, so the readback gets every planned partner (busy ones
        // are passed over: `a_busy_partner_queue_is_passed_over`).
        s.wait().unwrap();
        assert!(
            t.is_done(),
            "the copy on the compute queue waited for every part"
        );
        let r = down
            .read_to_host(&y, 5, &mut dst, host_at, len as u64)
            .unwrap();
        let rparts = r.parts();
        assert_eq!(
            rparts.iter().map(|p| p.0).collect::<Vec<_>>(),
            planned(&device, down.info().index, false, len as u64)
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>(),
            "{parts}: readback parts"
        );
        // No wait: as_slice waits for every part of the readback into `dst`.
        let back = dst.as_slice().unwrap();
        assert!(
            back[host_at as usize..][..len] == data[..],
            "{parts}: round trip"
        );
        assert!(back[..host_at as usize].iter().all(|b| *b == 0));
        assert!(back[host_at as usize + len..].iter().all(|b| *b == 0));
        assert!(r.is_done() && t.is_done());
        drop((t, r));
        // as_mut_slice waits for every part of an upload from the buffer.
        let t = up
            .upload_from_host(&src, host_at, &x, dev_at, len as u64)
            .unwrap();
        assert_eq!(t.parts().len(), want.len());
        src.as_mut_slice().unwrap()[0] = 1;
        assert!(
            t.is_done(),
            "{parts}: host write access waited for every part"
        );
        assert_clean(&device);
    }
}

/// The target of a split upload, dropped while the parts wait behind a gated write of it
/// on the compute queue, is destroyed only after every part completed.
#[test]
fn a_buffer_dropped_during_a_split_copy_is_destroyed_after_every_part() {
    let device = split_device(2);
    let len = 1u64 << 20;
    let x = gpu_buffer(&device, "x", len);
    let gate = Gate::new(&device);
    let held = gate
        .submit_on(&device.queue(QueueKind::Compute), |r| {
            Ok(r.fill_buffer(&x, 0)?)
        })
        .unwrap();
    let src = device
        .host_buffer_from_slice("split src", &pattern(len as usize, 3))
        .unwrap();
    let t = device
        .upload_queue()
        .upload_from_host(&src, 0, &x, 0, len)
        .unwrap();
    assert_eq!(t.parts().len(), 2);
    drop(x);
    let pending = device.memory_report().allocations;
    assert!(!t.is_done(), "both parts wait for the gated fill of x");
    device.release_staging_memory();
    assert_eq!(device.memory_report().allocations, pending);
    gate.open();
    t.wait().unwrap();
    held.wait().unwrap();
    assert_eq!(
        device.memory_report().allocations,
        pending - 1,
        "x is freed once every part completed"
    );
    drop(gate);
    assert_clean(&device);
}

/// The plain test device: one copy where it has one queue (lavapipe), the policy's parts
/// where it has several (a GPU); `TransferSplit::OFF` and copies below `min_bytes` keep one
/// copy everywhere. Bytes exact in each case.
#[test]
fn one_queue_devices_small_copies_and_off_keep_one_copy() {
    let plain = device();
    let off = device_with_desc(
        DeviceDesc::default()
            .emulate_queues(true)
            .transfer_split(Some(TransferSplit::OFF)),
    );
    assert_eq!(plain.transfer_split(), TransferSplit::DEFAULT);
    let big = (64u64 << 20) + 4099;
    let small = (64u64 << 20) - 1;
    for (device, size) in [(&plain, big), (&off, big), (&split_device(2), 100_000)] {
        let data = pattern(size as usize, 7);
        let src = device.host_buffer_from_slice("one src", &data).unwrap();
        let mut dst = device.host_buffer("one dst", size).unwrap();
        let x = gpu_buffer(device, "x", size);
        let up = device.upload_queue();
        let t = up.upload_from_host(&src, 0, &x, 0, size).unwrap();
        let n = t.parts().len();
        let want = planned(device, up.info().index, true, size).len();
        assert_eq!(n, want);
        if device.queue_infos().len() == 1 || device.transfer_split() == TransferSplit::OFF {
            assert_eq!(n, 1, "one queue or OFF: one copy");
        }
        if size < device.transfer_split().min_bytes {
            assert_eq!(n, 1, "below min_bytes: one copy");
        }
        t.wait().unwrap();
        let r = device
            .readback_queue()
            .read_to_host(&x, 0, &mut dst, 0, size)
            .unwrap();
        assert_eq!(
            r.parts().len(),
            planned(device, device.readback_queue().info().index, false, size).len()
        );
        r.wait().unwrap();
        assert!(dst.as_slice().unwrap() == &data[..], "bytes exact");
        assert_clean(device);
    }
    // A copy just below the default threshold stays one copy on any device.
    let data = pattern(small as usize, 1);
    let src = plain.host_buffer_from_slice("below", &data).unwrap();
    let x = gpu_buffer(&plain, "x", small);
    let t = plain
        .upload_queue()
        .upload_from_host(&src, 0, &x, 0, small)
        .unwrap();
    assert_eq!(t.parts().len(), 1);
    t.wait().unwrap();
}

/// The stream example with every chunk's copies split over queues (what
/// `KILN_TRANSFER_SPLIT=2:8` does to the H200's 16 MiB chunks), overlapped and serial,
/// against the CPU reference; validation silent.
#[test]
fn a_stream_whose_chunk_copies_are_split_matches_the_cpu_reference() {
    let device = device_with_desc(
        DeviceDesc::default()
            .emulate_queues(true)
            .transfer_split(Some(TransferSplit::new(16 << 10, 2))),
    );
    // A chunk of one SPLIT_ALIGN unit (16 Ki u32s = 64 KiB) stays one copy; one of 256 KiB
    // (four units) is copied in two parts.
    let up = device.upload_queue().info().index;
    assert_eq!(planned(&device, up, true, 64 << 10).len(), 1);
    let chunk = kiln::SPLIT_ALIGN as usize;
    assert_eq!(planned(&device, up, true, (chunk * 4) as u64).len(), 2);
    let mut stream = kiln_examples::stream::Stream::new(&device, chunk, 5, 3).unwrap();
    for overlapped in [true, false] {
        stream.run(&device, overlapped).unwrap();
        assert_eq!(stream.check().unwrap(), None, "overlapped: {overlapped}");
    }
    assert_clean(&device);
}

/// The parts of one copy do not wait for each other (`Batch::siblings`), only for the
/// other queues' earlier uses of the buffers: counted on a fresh device with a main, a
/// compute and one or two transfer queues (emulated on lavapipe), where every wait is a
/// known stamp.
#[test]
fn the_parts_of_one_copy_wait_for_earlier_work_not_for_each_other() {
    let device = split_device(2);
    let kinds: Vec<QueueKind> = device.queue_infos().iter().map(|q| q.kind).collect();
    use QueueKind::{Compute, Main, Transfer};
    let two_transfer = kinds == [Main, Compute, Transfer, Transfer];
    assert!(
        two_transfer || kinds == [Main, Compute, Transfer],
        "{kinds:?}"
    );
    let len = 1u64 << 20;
    let x = gpu_buffer(&device, "x", len);
    let data = pattern(len as usize, 5);
    let src = device.host_buffer_from_slice("src", &data).unwrap();
    let mut dst = device.host_buffer("dst", len).unwrap();
    let waits = || device.debug_cross_queue_waits();
    let w0 = waits();
    // Upload: part 1 on transfer queue 2 (its first submission), part 2 on the main queue;
    // nothing used x or src before, and part 2 does not wait for part 1 (it would wait for
    // queue 2's value 1 if the sibling's stamps counted).
    let t = device
        .upload_queue()
        .upload_from_host(&src, 0, &x, 0, len)
        .unwrap();
    assert_eq!(t.parts(), vec![(2, 1), (0, 1)]);
    assert_eq!(waits() - w0, 0, "the upload's parts wait for nothing");
    // Idle again (a busy partner would be passed over).
    t.wait().unwrap();
    let w1 = waits();
    let r = device
        .readback_queue()
        .read_to_host(&x, 0, &mut dst, 0, len)
        .unwrap();
    if two_transfer {
        // Part 1 on transfer queue 3 waits for both upload parts (x written on 2 and 0);
        // part 2 on queue 2 for the main queue's part only (its own queue's is in queue
        // order; part 1's use of `dst` is a sibling's).
        assert_eq!(r.parts(), vec![(3, 1), (2, 2)]);
        assert_eq!(waits() - w1, 3, "2 waits for part 1, 1 for part 2");
    } else {
        // One transfer queue, so the readback's partner is the main queue: part 1 on
        // queue 2 waits for the upload's part on the main queue, part 2 on the main queue
        // for the upload's part on queue 2 (x written there): one wait each.
        assert_eq!(r.parts(), vec![(2, 2), (0, 2)]);
        assert_eq!(waits() - w1, 2, "one wait for each part");
    }
    r.wait().unwrap();
    assert!(dst.as_slice().unwrap() == &data[..]);
    assert_clean(&device);
}

/// A partner with a submission pending is passed over (a part never queues behind other
/// work): with the main queue held behind a gate, an upload's second part goes to the next
/// idle partner of the policy, and with every partner held it stays one copy; bytes exact
/// once the gate opens.
#[test]
fn a_busy_partner_queue_is_passed_over() {
    let device = split_device(2);
    let len = 1u64 << 20;
    let data = pattern(len as usize, 11);
    let src = device.host_buffer_from_slice("src", &data).unwrap();
    let x = gpu_buffer(&device, "x", len);
    let y = gpu_buffer(&device, "y", len);
    let up = device.upload_queue();
    let me = up.info().index;
    let infos = device.queue_infos();
    let kinds: Vec<QueueKind> = infos.iter().map(|q| q.kind).collect();
    let queue = |i: usize| {
        let kind = kinds[i];
        device
            .queues(kind)
            .into_iter()
            .find(|q| q.info().index == i)
            .unwrap()
    };
    let gate = Gate::new(&device);
    let mut held = vec![gate.hold(&device.queue(QueueKind::Main))];
    let mut idle = vec![true; kinds.len()];
    idle[0] = false;
    let split = device.transfer_split();
    let want: Vec<usize> = split
        .plan_among(&kinds, &idle, me, true, len)
        .iter()
        .map(|p| p.queue)
        .collect();
    assert_eq!(
        want.len(),
        2,
        "an idle partner besides the main queue: {kinds:?}"
    );
    assert_ne!(want[1], 0);
    let t = up.upload_from_host(&src, 0, &x, 0, len).unwrap();
    assert_eq!(t.parts().iter().map(|p| p.0).collect::<Vec<_>>(), want);
    // Every other queue held too: one copy.
    for i in 1..kinds.len() {
        if i != me {
            held.push(gate.hold(&queue(i)));
        }
    }
    let t2 = up.upload_from_host(&src, 0, &y, 0, len).unwrap();
    assert_eq!(
        t2.parts().iter().map(|p| p.0).collect::<Vec<_>>(),
        vec![me],
        "every partner busy: one copy"
    );
    gate.open();
    for w in [t, t2] {
        w.wait().unwrap();
    }
    for h in held {
        h.wait().unwrap();
    }
    let mut back = device.host_buffer("back", len).unwrap();
    for b in [&x, &y] {
        device
            .readback_queue()
            .read_to_host(b, 0, &mut back, 0, len)
            .unwrap()
            .wait()
            .unwrap();
        assert!(back.as_slice().unwrap() == &data[..]);
    }
    drop(gate);
    assert_clean(&device);
}
