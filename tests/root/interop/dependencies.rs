//! Explicit dependencies (`Queue::after`, `After::timeline`) and host waits with a deadline
//! (`Submission::wait_for`, `TimelineSemaphore::wait_for`).
//!
//! Run on `emulated_device` (lavapipe: a compute and a transfer queue with timelines of
//! their own on the one `VkQueue`; the H200: its real queues), so the waits are real
//! cross-queue waits that submit-time synchronization validation checks. Each form is
//! shown to hold the later work (it is not done while the earlier work is gated), to give
//! the right bytes, and to leave validation silent; the same work without the dependency
//! is reported by the layer, and with `validation_fail` that report is the `Err` of the
//! wait (`KILN-E121`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::gate::Gate;
use common::gpu_buffer;
use common::{assert_clean, code, device_with_desc, emulated_device};
use kiln::{vk, Buffer, Device, DeviceDesc, QueueKind, Submission};

/// A raw fill of `x` with 7 on `compute`, held behind `gate`.
fn gated_raw_fill(gate: &Gate, device: &Device, compute: &kiln::Queue, x: &Buffer) -> Submission {
    let xr = x.raw();
    gate.submit_labeled(compute, "raw fill", |r| {
        // SAFETY: a raw fill of a live buffer of this device, outside any rendering scope;
        // the submission is waited for before the buffer drops.
        unsafe { device.raw().cmd_fill_buffer(r.raw(), xr, 0, 4096, 7) };
        Ok(())
    })
    .unwrap()
}

/// Records a raw copy of the first 4 KiB of `x` into `y`.
fn raw_copy(device: &Device, r: &mut kiln::Recorder<'_, '_>, x: &Buffer, y: &Buffer) {
    let region = vk::BufferCopy {
        src_offset: 0,
        dst_offset: 0,
        size: 4096,
    };
    // SAFETY: a raw copy between live buffers of this device, in range; the caller waits
    // for the submission before the buffers drop.
    unsafe {
        device
            .raw()
            .cmd_copy_buffer(r.raw(), x.raw(), y.raw(), &[region])
    };
}

/// The case: raw commands on two queues, which kiln cannot see (so it derives no
/// wait), ordered by `after`. The copy is held while the fill is gated, copies the fill's
/// bytes, and synchronization validation (submit-time checks on) stays silent; one wait is
/// made.
#[test]
fn raw_commands_on_two_queues_are_ordered_by_after() {
    let device = emulated_device();
    let (compute, transfer) = (
        device.queue(QueueKind::Compute),
        device.queue(QueueKind::Transfer),
    );
    let x = gpu_buffer(&device, "x", 4096);
    let y = gpu_buffer(&device, "y", 4096);
    let gate = Gate::new(&device);
    let fill = gated_raw_fill(&gate, &device, &compute, &x);
    let waits = device.debug_cross_queue_waits();
    let copy = transfer
        .after(&[&fill])
        .submit(|r| {
            raw_copy(&device, r, &x, &y);
            Ok(())
        })
        .unwrap();
    let cross = device.debug_cross_queue_waits() - waits;
    // Emulated queues are queues of their own: one wait on the compute queue's timeline.
    let separate = compute != transfer;
    assert_eq!(cross, u64::from(separate), "one explicit wait");
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !fill.is_done() && !copy.is_done(),
        "the copy waits for the gated fill"
    );
    gate.open();
    copy.wait().unwrap();
    fill.wait().unwrap();
    assert_eq!(y.read::<u32>().unwrap(), vec![7u32; 1024]);
    println!("explicit dependency ran across separate queues: {separate}");
    drop(gate);
    assert_clean(&device);
}

/// Without the dependency the same raw work is a hazard the layer reports, and with
/// `validation_fail` the report is the copy's `Err` (`KILN-E121`, naming the fill). (A
/// layer 1.4 reports no submit-time hazard between kiln's gated submissions: see
/// `common::proved_by_raw_batches_under_layer_1_4`, which then proves its checks on raw
/// batches instead.)
#[test]
fn the_same_raw_work_without_after_is_reported_and_fails_the_wait() {
    let device = device_with_desc(
        DeviceDesc::default()
            .emulate_queues(true)
            .validation_fail(Some(true)),
    );
    let (compute, transfer) = (
        device.queue(QueueKind::Compute),
        device.queue(QueueKind::Transfer),
    );
    let x = gpu_buffer(&device, "x", 4096);
    let y = gpu_buffer(&device, "y", 4096);
    let gate = Gate::new(&device);
    let fill = gated_raw_fill(&gate, &device, &compute, &x);
    let copy = transfer
        .submit(|r| {
            raw_copy(&device, r, &x, &y);
            Ok(())
        })
        .unwrap();
    gate.open();
    let waited = copy.wait();
    let _ = fill.wait();
    let report = device.validation_report();
    let hazard = |m: &String| {
        (m.contains("SYNC-HAZARD-READ-AFTER-WRITE") || m.contains("SYNC-HAZARD-READ-RACING-WRITE"))
            && m.contains("vkCmdFillBuffer")
    };
    let found = report.messages.iter().any(hazard);
    if common::proved_by_raw_batches_under_layer_1_4(&device, &report, found) {
        println!("layer 1.4: the hazard was proved on raw batches");
        return;
    }
    assert!(found, "{:?}", report.messages);
    let e = waited.unwrap_err();
    assert_eq!(e.code(), "KILN-E121", "{e}");
    assert!(e.to_string().contains("vkCmdFillBuffer"), "{e}");
    let v = report.layer_version;
    println!(
        "layer {}.{}.{}: the missing dependency was reported and failed the wait: KILN-E121",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    );
}

/// Derived and explicit waits on one queue's timeline are one wait: a kiln copy of a buffer
/// a kiln fill wrote on another queue derives the wait; naming the fill with `after` too
/// adds none. A dependency on the submitting queue's own work adds none either (each
/// submission waits for its queue's previous value).
#[test]
fn derived_and_explicit_waits_are_not_duplicated() {
    let device = emulated_device();
    let (compute, transfer) = (
        device.queue(QueueKind::Compute),
        device.queue(QueueKind::Transfer),
    );
    if compute == transfer {
        panic!("emulated_device gives the compute and transfer kinds queues of their own");
    }
    let x = gpu_buffer(&device, "x", 4096);
    let y = gpu_buffer(&device, "y", 4096);
    let z = gpu_buffer(&device, "z", 4096);
    let fill = compute.submit(|r| Ok(r.fill_buffer(&x, 9)?)).unwrap();
    let before = device.debug_cross_queue_waits();
    let copy = transfer
        .after(&[&fill, &fill])
        .submit(|r| Ok(r.copy_buffer(&x, 0, &y, 0, 4096)?))
        .unwrap();
    assert_eq!(device.debug_cross_queue_waits() - before, 1, "one wait");
    // On the fill's own queue: ordered already, no wait.
    let before = device.debug_cross_queue_waits();
    let again = compute
        .after(&[&fill])
        .submit(|r| Ok(r.fill_buffer(&z, 3)?))
        .unwrap();
    assert_eq!(device.debug_cross_queue_waits() - before, 0, "no wait");
    copy.wait().unwrap();
    again.wait().unwrap();
    fill.wait().unwrap();
    assert_eq!(y.read::<u32>().unwrap(), vec![9u32; 1024]);
    assert_eq!(z.read::<u32>().unwrap(), vec![3u32; 1024]);
    assert_clean(&device);
}

/// `after` with a timeline value and a submission together: the work waits for both.
#[test]
fn after_a_submission_and_a_timeline_value_waits_for_both() {
    let device = emulated_device();
    let (compute, main) = (
        device.queue(QueueKind::Compute),
        device.queue(QueueKind::Main),
    );
    let x = gpu_buffer(&device, "x", 4096);
    let y = gpu_buffer(&device, "y", 4096);
    let gate = Gate::new(&device);
    let go = device.timeline_semaphore("go", 0).unwrap();
    let fill = gated_raw_fill(&gate, &device, &compute, &x);
    let copy = main
        .after(&[&fill])
        .timeline(&go, 2)
        .timeline(&go, 1)
        .submit_labeled("copy after both", |r| {
            raw_copy(&device, r, &x, &y);
            Ok(())
        })
        .unwrap()
        .1;
    gate.open();
    fill.wait().unwrap();
    // The fill is done; the copy still waits for value 2 (the larger of the two named).
    go.signal(1).unwrap();
    let e = copy.wait_for(Duration::from_millis(50)).unwrap_err();
    assert_eq!(e.code(), "KILN-E108", "{e}");
    assert!(e.to_string().contains("copy after both"), "{e}");
    go.signal(2).unwrap();
    copy.wait_for(Duration::from_secs(30)).unwrap();
    assert!(copy.is_done());
    copy.wait().unwrap();
    assert_eq!(y.read::<u32>().unwrap(), vec![7u32; 1024]);
    drop(gate);
    assert_clean(&device);
}

/// Host waits with a deadline: a submission not done in time is `KILN-E108` and stays
/// usable (waited again, or named by `after`); a timeline value not reached is
/// `KILN-E132` naming the semaphore, its value and the value waited for.
#[test]
fn host_waits_with_a_deadline_are_coded() {
    let device = emulated_device();
    let main = device.queue(QueueKind::Main);
    let gate = Gate::new(&device);
    let held = gate.hold(&main);
    let e = held.wait_for(Duration::from_millis(20)).unwrap_err();
    assert_eq!(e.code(), "KILN-E108", "{e}");
    let s = device.timeline_semaphore("ready", 4).unwrap();
    let e = s.wait_for(6, Duration::from_millis(20)).unwrap_err();
    assert_eq!(e.code(), "KILN-E132", "{e}");
    let text = e.to_string();
    assert!(
        text.contains("`ready`") && text.contains('6') && text.contains("at 4"),
        "{text}"
    );
    s.wait_for(4, Duration::ZERO).unwrap();
    gate.open();
    held.wait_for(Duration::from_secs(30)).unwrap();
    held.wait().unwrap();
    drop(gate);
    assert_clean(&device);
}

/// Bad dependencies are coded before anything is recorded: a submission or a timeline
/// semaphore of another device (`KILN-E109`), more distinct semaphores than one
/// submission waits for (`KILN-E131`; a semaphore named twice counts once). A cycle
/// cannot be written: `after` names submissions, which exist only once submitted.
#[test]
fn bad_dependencies_are_coded_before_recording() {
    let device = emulated_device();
    let other = emulated_device();
    let theirs = other.submit(|_| Ok(())).unwrap();
    let recorded = AtomicBool::new(false);
    let main = device.queue(QueueKind::Main);
    let r = main.after(&[&theirs]).submit(|_| {
        recorded.store(true, Ordering::Relaxed);
        Ok(())
    });
    let Err(e) = r else {
        panic!("a dependency on another device's submission was accepted");
    };
    assert_eq!(e.code(), "KILN-E109", "{e}");
    assert!(e.to_string().contains("submission `submit`"), "{e}");
    let foreign = other.timeline_semaphore("foreign", 0).unwrap();
    let e = main.after(&[]).timeline(&foreign, 1).execute(|_| {
        recorded.store(true, Ordering::Relaxed);
        Ok(())
    });
    assert_eq!(code(e), "KILN-E109");
    let many: Vec<_> = (0..=kiln::MAX_TIMELINE_WAITS)
        .map(|i| device.timeline_semaphore(&format!("s{i}"), 1).unwrap())
        .collect();
    let mut a = main.after(&[]);
    for s in &many {
        a = a.timeline(s, 1);
    }
    assert_eq!(code(a.execute(|_| Ok(()))), "KILN-E131");
    assert!(!recorded.load(Ordering::Relaxed), "nothing was recorded");
    // Within the limit, one semaphore named many times: one wait.
    let mut a = main.after(&[]);
    for v in 0..10 {
        a = a.timeline(&many[0], v % 2);
    }
    a.execute(|_| Ok(())).unwrap();
    theirs.wait().unwrap();
    assert_clean(&device);
    assert_clean(&other);
}

/// `After::signal`: the work's completion raises an application timeline (the host sees
/// the value once the GPU is done), and the signals Vulkan would reject are coded before
/// recording: a value that does not make the timeline grow (also against a pending kiln
/// signal: `KILN-E130`), a semaphore of another device (`KILN-E109`), more semaphores than
/// one submission signals (`KILN-E133`).
#[test]
fn signals_raise_the_timeline_and_bad_ones_are_coded() {
    let device = emulated_device();
    let compute = device.queue(QueueKind::Compute);
    let x = gpu_buffer(&device, "x", 4096);
    let gate = Gate::new(&device);
    let done = device.timeline_semaphore("done", 2).unwrap();
    let held = gate.hold(&compute);
    let fill = compute
        .after(&[])
        .signal(&done, 5)
        .signal(&done, 4)
        .submit(|r| Ok(r.fill_buffer(&x, 11)?))
        .unwrap();
    assert_eq!(done.value().unwrap(), 2, "not before the work ran");
    // 5 is pending: the host cannot signal 5, nor can another submission.
    assert_eq!(code(done.signal(5)), "KILN-E130");
    let e = compute.after(&[]).signal(&done, 3).submit(|_| Ok(()));
    assert_eq!(code(e), "KILN-E130");
    gate.open();
    done.wait_for(5, Duration::from_secs(30)).unwrap();
    assert_eq!(
        done.value().unwrap(),
        5,
        "the larger of the two values named"
    );
    fill.wait().unwrap();
    held.wait().unwrap();
    assert_eq!(x.read::<u32>().unwrap(), vec![11u32; 1024]);
    let other = emulated_device();
    let foreign = other.timeline_semaphore("foreign", 0).unwrap();
    assert_eq!(
        code(compute.after(&[]).signal(&foreign, 1).submit(|_| Ok(()))),
        "KILN-E109"
    );
    let many: Vec<_> = (0..=kiln::MAX_TIMELINE_WAITS)
        .map(|i| device.timeline_semaphore(&format!("s{i}"), 0).unwrap())
        .collect();
    let mut a = compute.after(&[]);
    for s in &many {
        a = a.signal(s, 1);
    }
    assert_eq!(code(a.submit(|_| Ok(()))), "KILN-E133");
    drop(gate);
    assert_clean(&device);
    assert_clean(&other);
}
