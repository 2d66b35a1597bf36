//! The transfer layer's edges (review of issue 26 part 2): transfers and host buffers that
//! outlive their device, split and shader copies whose submission fails halfway (the fault
//! injector), and the transfer options given both as `DeviceDesc::transfers` and as its
//! shorthands.

use std::sync::Arc;

use common::{assert_clean, assert_watch_clean, code, device_with_desc, gpu_buffer, pattern};
use kiln::hooks::{FaultInjector, FaultSite};
use kiln::{vk, Device, DeviceDesc, ReadbackQueue, TransferDesc, TransferSplit, UploadQueue};

/// Copies from 256 KiB are split in up to 3 parts.
const SPLIT: TransferSplit = TransferSplit::new(256 << 10, 3);

/// Emulated queues (a transfer queue of their own on lavapipe), copies split from
/// [`SPLIT`], and a fault injector to fail their submissions.
fn split_device_with_faults() -> (Device, Arc<FaultInjector>) {
    let faults = Arc::new(FaultInjector::new());
    let device = device_with_desc(
        DeviceDesc::default()
            .emulate_queues(true)
            .transfer_split(Some(SPLIT))
            .faults(Some(faults.clone())),
    );
    (device, faults)
}

/// A staged readback still draining and a split upload from a host buffer, both pending
/// when the last `Device` and `Queue` handle is dropped: the transfers finish with exact
/// bytes afterwards, and the device is torn down (staging cache, copy contexts, queues)
/// only once the last transfer, buffer and host buffer is gone, with nothing reported.
#[test]
fn transfers_and_host_buffers_outlive_their_device() {
    let device = device_with_desc(
        DeviceDesc::default()
            .emulate_queues(true)
            .transfer_split(Some(SPLIT)),
    );
    device.debug_force_staging(true);
    device.debug_set_staging_chunk(1 << 20);
    let watch = device.validation_watch();
    let len = (3 << 20) + 4100;
    let data = pattern(len, 7);
    let x = gpu_buffer(&device, "x", len as u64);
    x.upload(&data).unwrap();
    let y = gpu_buffer(&device, "y", len as u64);
    let src = device.host_buffer_from_slice("src", &data).unwrap();
    let mut out = vec![0u8; len];
    let (down, up) = (device.readback_queue(), device.upload_queue());
    let staged = down.read_into(&x, 0, &mut out[..]).unwrap();
    let split = up.upload_from_host(&src, 0, &y, 0, len as u64).unwrap();
    println!(
        "staged readback parts {:?}, split upload parts {:?}",
        staged.parts(),
        split.parts()
    );
    drop((device, down, up));
    assert!(!watch.torn_down(), "transfers hold the device");
    split.wait().unwrap();
    staged.wait().unwrap();
    assert!(out == data, "the staged readback's bytes");
    assert!(y.read::<u8>().unwrap() == data, "the split upload's bytes");
    drop((x, y));
    assert!(!watch.torn_down(), "the host buffer holds the device");
    drop(src);
    assert!(watch.torn_down(), "the last holder dropped");
    assert_watch_clean(&watch);
}

/// The `n`th part of a split host-buffer copy fails at submission: the copy is `KILN-E106`,
/// the parts submitted before it still finish (host access waits for them), the same copy
/// succeeds next with exact bytes both ways, and the device tears down clean.
#[test]
fn a_split_host_copy_whose_later_part_fails_recovers() {
    let (device, faults) = split_device_with_faults();
    let watch = device.validation_watch();
    let len = (1 << 20) + 333;
    let data = pattern(len, 3);
    let mut src = device.host_buffer_from_slice("src", &data).unwrap();
    let mut back = device.host_buffer("back", len as u64).unwrap();
    let x = gpu_buffer(&device, "x", len as u64);
    let (up, down) = (device.upload_queue(), device.readback_queue());
    for nth in [1, 2, 3] {
        faults.fail_nth(
            FaultSite::QueueSubmit,
            nth,
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        );
        let r = up.upload_from_host(&src, 0, &x, 0, len as u64);
        assert_eq!(code(r), "KILN-E106", "upload part {nth}");
        assert_eq!(faults.pending(), 0, "upload part {nth} was submitted");
        // Host access waits for the parts submitted before the failure.
        src.write(0, &data[..]).unwrap();
        up.upload_from_host(&src, 0, &x, 0, len as u64)
            .unwrap()
            .wait()
            .unwrap();
        faults.fail_nth(
            FaultSite::QueueSubmit,
            nth,
            vk::Result::ERROR_OUT_OF_HOST_MEMORY,
        );
        let r = down.read_to_host(&x, 0, &mut back, 0, len as u64);
        assert_eq!(code(r), "KILN-E106", "readback part {nth}");
        back.as_mut_slice().unwrap().fill(0);
        down.read_to_host(&x, 0, &mut back, 0, len as u64)
            .unwrap()
            .wait()
            .unwrap();
        assert!(back.as_slice().unwrap() == &data[..], "after part {nth}");
    }
    assert_eq!(faults.injected(), 6);
    assert_clean(&device);
    drop((src, back, x, up, down, device));
    assert_watch_clean(&watch);
}

/// Uploads and readbacks by kiln's copy shader (`UploadQueue::ComputeShader`,
/// `ReadbackQueue::ComputeShader`, given as `TransferDesc` and as shorthands) whose
/// submission fails: `KILN-E106`, no shader copy counted, the context and the copy
/// pipeline reused by the next copy, which is byte-exact; teardown clean. Where the copy
/// shader cannot run (no push descriptors) the copy-engine path runs and says so.
#[test]
fn a_shader_copy_whose_submission_fails_recovers() {
    let faults = Arc::new(FaultInjector::new());
    let device = device_with_desc(
        DeviceDesc::default()
            .transfers(TransferDesc::default().upload_queue(UploadQueue::ComputeShader))
            .readback_queue(ReadbackQueue::ComputeShader)
            .faults(Some(faults.clone())),
    );
    let watch = device.validation_watch();
    let len = 64 << 10;
    let data = pattern(len, 9);
    let src = device.host_buffer_from_slice("src", &data).unwrap();
    let mut back = device.host_buffer("back", len as u64).unwrap();
    let x = gpu_buffer(&device, "x", len as u64);
    let (up, down) = (device.upload_queue(), device.readback_queue());
    let shader = device.features().push_descriptor;
    println!(
        "path: {}",
        if shader {
            "copy shader"
        } else {
            "copy engine (no VK_KHR_push_descriptor)"
        }
    );
    for round in 0..2 {
        faults.fail_nth(
            FaultSite::QueueSubmit,
            1,
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        );
        let before = device.debug_shader_copies();
        assert_eq!(
            code(up.upload_from_host(&src, 0, &x, 0, len as u64)),
            "KILN-E106"
        );
        assert_eq!(
            device.debug_shader_copies(),
            before,
            "a failed copy is not counted"
        );
        up.upload_from_host(&src, 0, &x, 0, len as u64)
            .unwrap()
            .wait()
            .unwrap();
        faults.fail_nth(
            FaultSite::QueueSubmit,
            1,
            vk::Result::ERROR_OUT_OF_HOST_MEMORY,
        );
        assert_eq!(
            code(down.read_to_host(&x, 0, &mut back, 0, len as u64)),
            "KILN-E106"
        );
        down.read_to_host(&x, 0, &mut back, 0, len as u64)
            .unwrap()
            .wait()
            .unwrap();
        assert!(back.as_slice().unwrap() == &data[..], "round {round}");
        let want = if shader { 2 * (round + 1) } else { 0 };
        assert_eq!(device.debug_shader_copies(), want, "round {round}");
    }
    assert_clean(&device);
    drop((src, back, x, up, down, device));
    assert_watch_clean(&watch);
}

/// The child of [`the_desc_wins_over_the_environment_in_either_order`] (does nothing unless
/// `KILN_TEST_CHILD` names it): run with `KILN_READBACK_QUEUE=main`, `KILN_UPLOAD_QUEUE=main`
/// and `KILN_TRANSFER_SPLIT=off` on an emulated device (queue 0 main, a transfer queue of
/// its own).
#[test]
fn child_transfer_env() {
    if std::env::var("KILN_TEST_CHILD").as_deref() != Ok("transfer_edges::child_transfer_env") {
        return;
    }
    let make = |d: DeviceDesc| device_with_desc(d.emulate_queues(true));
    let queues = |d: &Device| {
        (
            d.upload_queue().info().index,
            d.readback_queue().info().index,
        )
    };
    // Uploads go to the first transfer queue, readbacks to the last (the same one on
    // lavapipe's emulated queues; two on the H200, whose device has two transfer queues).
    let transfers: Vec<usize> = make(DeviceDesc::default())
        .queue_infos()
        .iter()
        .filter(|q| q.kind == kiln::QueueKind::Transfer)
        .map(|q| q.index)
        .collect();
    let transfer = (
        *transfers.first().expect("an emulated transfer queue"),
        *transfers.last().expect("an emulated transfer queue"),
    );
    // Nothing in the desc: the environment.
    let d = make(DeviceDesc::default());
    assert_eq!(queues(&d), (0, 0), "the environment's main queues");
    assert_eq!(d.transfer_split(), TransferSplit::OFF);
    // What the desc names wins, given as TransferDesc or as shorthands, in either order.
    let explicit = TransferDesc::default()
        .upload_queue(UploadQueue::Transfer)
        .readback_queue(ReadbackQueue::Transfer)
        .transfer_split(Some(SPLIT));
    for desc in [
        DeviceDesc::default().transfers(explicit.clone()),
        DeviceDesc::default()
            .upload_queue(UploadQueue::Main)
            .transfers(explicit.clone()),
        DeviceDesc::default()
            .transfers(TransferDesc::default().upload_queue(UploadQueue::Transfer))
            .readback_queue(ReadbackQueue::Transfer)
            .transfer_split(Some(SPLIT)),
    ] {
        let d = make(desc.clone());
        assert_eq!(queues(&d), transfer, "{desc:?}");
        assert_eq!(d.transfer_split(), SPLIT, "{desc:?}");
    }
    // A later `transfers` replaces what shorthands set before it: the environment again.
    let d = make(
        DeviceDesc::default()
            .readback_queue(ReadbackQueue::Transfer)
            .transfer_split(Some(SPLIT))
            .transfers(TransferDesc::default()),
    );
    assert_eq!(queues(&d), (0, 0));
    assert_eq!(d.transfer_split(), TransferSplit::OFF);
    println!("CHILD ok");
}

/// `KILN_READBACK_QUEUE`, `KILN_UPLOAD_QUEUE` and `KILN_TRANSFER_SPLIT` stand in only for
/// what the device's `TransferDesc` leaves to them, whether it was given whole
/// (`DeviceDesc::transfers`) or by shorthands, in either order (in a child process: the
/// variables are the process's).
#[test]
fn the_desc_wins_over_the_environment_in_either_order() {
    let name = "transfer_edges::child_transfer_env";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("KILN_TEST_CHILD", name)
        .env("KILN_READBACK_QUEUE", "main")
        .env("KILN_UPLOAD_QUEUE", "main")
        .env("KILN_TRANSFER_SPLIT", "off")
        .output()
        .expect("running the child test");
    let text = format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && text.contains("CHILD ok"), "{text}");
}

/// A split transfer whose wait times out returns `KILN-E108` after the device's wait
/// timeout, once: was the timeout again for every other part (dropping the consumed
/// transfer waited for each part `wait` had not reached), so a 3-part copy took up to
/// three times the timeout to report it. Its parts still run once the GPU can.
#[test]
fn a_split_transfer_that_times_out_reports_once() {
    let timeout = std::time::Duration::from_millis(800);
    let device = device_with_desc(
        DeviceDesc::default()
            .emulate_queues(true)
            .transfer_split(Some(SPLIT))
            .wait_timeout(Some(timeout)),
    );
    let watch = device.validation_watch();
    let len = 1 << 20;
    let data = pattern(len, 5);
    let src = device.host_buffer_from_slice("src", &data).unwrap();
    let x = gpu_buffer(&device, "x", len as u64);
    let z = gpu_buffer(&device, "z", 16);
    let compute = device.queue(kiln::QueueKind::Compute);
    let up = device.upload_queue();
    assert_ne!(compute.info().index, up.info().index);
    // A held read of `x` on the compute queue: the upload's parts wait for it (and the
    // compute queue, busy, takes no part).
    let gate = common::gate::Gate::new(&device);
    let held = gate
        .submit_on(&compute, |r| Ok(r.copy_buffer(&x, 0, &z, 0, 16)?))
        .unwrap();
    let t = up.upload_from_host(&src, 0, &x, 0, len as u64).unwrap();
    let parts = t.parts();
    assert!(parts.len() >= 2, "a split copy: {parts:?}");
    let start = std::time::Instant::now();
    assert_eq!(code(t.wait()), "KILN-E108");
    let took = start.elapsed();
    assert!(
        took < timeout * 3 / 2,
        "{} parts: wait reported the timeout after {took:?} (timeout {timeout:?})",
        parts.len()
    );
    gate.open();
    held.wait().unwrap();
    assert!(
        x.read::<u8>().unwrap() == data,
        "the parts ran once the gate opened"
    );
    drop((gate, src, x, z, compute, up));
    assert_clean(&device);
    drop(device);
    assert_watch_clean(&watch);
}

/// A staged asynchronous readback (`Queue::read_into`, six 1 MiB chunks) whose `n`th chunk
/// copy fails at submission, whether `read_into` submits it or `Transfer::wait` does: the
/// error is `KILN-E106`, the staging buffers go back (at most two chunks idle per
/// direction), the next
/// readback is exact, and the device tears down clean.
#[test]
fn a_staged_readback_whose_chunk_fails_in_wait_recovers() {
    let faults = Arc::new(FaultInjector::new());
    let device = common::faulty_device(&faults);
    device.debug_force_staging(true);
    device.debug_set_staging_chunk(1 << 20);
    let watch = device.validation_watch();
    let len = 6 << 20;
    let data = pattern(len, 11);
    let x = gpu_buffer(&device, "x", len as u64);
    x.upload(&data).unwrap();
    let q = device.readback_queue();
    for nth in 1..=6 {
        faults.fail_nth(
            FaultSite::QueueSubmit,
            nth,
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        );
        let mut out = vec![0u8; len];
        let r = q.read_into(&x, 0, &mut out[..]).and_then(|t| t.wait());
        assert_eq!(code(r), "KILN-E106", "chunk {nth}");
        assert_eq!(faults.pending(), 0, "chunk {nth} was not submitted");
        let idle = device.staging_usage().bytes;
        assert!(idle <= 4 << 20, "chunk {nth}: {idle} idle staging bytes");
        q.read_into(&x, 0, &mut out[..]).unwrap().wait().unwrap();
        assert!(out == data, "after chunk {nth} failed");
    }
    assert_eq!(faults.injected(), 6);
    assert_clean(&device);
    drop((x, q, device));
    assert_watch_clean(&watch);
}

/// The device is lost (injected) at the second part's submission of a split host copy:
/// the copy is `KILN-E105`, every later transfer is refused with `KILN-E105` before any
/// Vulkan call, the transfers and host buffers still held are dropped without hanging,
/// and the device tears down with no command pool, staging buffer or host buffer leaked.
#[test]
fn a_device_lost_in_a_split_copy_refuses_later_transfers_and_tears_down() {
    let (device, faults) = split_device_with_faults();
    device.debug_force_staging(true);
    device.debug_set_staging_chunk(1 << 20);
    let watch = device.validation_watch();
    let len = 3 << 20;
    let data = pattern(len, 13);
    let src = device.host_buffer_from_slice("src", &data).unwrap();
    let mut back = device.host_buffer("back", len as u64).unwrap();
    let x = gpu_buffer(&device, "x", len as u64);
    x.upload(&data).unwrap();
    let (up, down) = (device.upload_queue(), device.readback_queue());
    faults.fail_nth(FaultSite::QueueSubmit, 2, vk::Result::ERROR_DEVICE_LOST);
    assert_eq!(
        code(up.upload_from_host(&src, 0, &x, 0, len as u64)),
        "KILN-E105"
    );
    let mut out = vec![0u8; len];
    assert_eq!(code(down.read_into(&x, 0, &mut out[..])), "KILN-E105");
    assert_eq!(
        code(down.read_to_host(&x, 0, &mut back, 0, len as u64)),
        "KILN-E105"
    );
    assert_eq!(code(x.upload(&data)), "KILN-E105");
    assert_eq!(
        faults.injected(),
        1,
        "later transfers made no Vulkan submission"
    );
    drop((src, back, x, up, down, device));
    assert!(watch.torn_down());
    assert_watch_clean(&watch);
}
