//! Application timeline semaphores (`Device::timeline_semaphore`, `Queue::submit_after`):
//! host signals, GPU waits before the commands, and their coded errors.

use std::time::Duration;

use kiln::{vk, BufferDesc, MemoryLocation, QueueKind, MAX_TIMELINE_WAITS};

use common::{assert_clean, code, device};

#[test]
fn a_submission_after_a_timeline_value_runs_only_once_the_host_signals_it() {
    let device = device();
    let s = device.timeline_semaphore("go", 5).unwrap();
    assert_eq!(s.value().unwrap(), 5);
    let buf = device
        .buffer(
            &BufferDesc::default()
                .label("out")
                .size(64)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuToCpu),
        )
        .unwrap();
    let main = device.queue(QueueKind::Main);
    let sub = main
        .submit_after(&[(&s, 7)], |r| Ok(r.fill_buffer(&buf, 0xC0FFEE)?))
        .unwrap();
    // Value 6 is not 7: still held.
    s.signal(6).unwrap();
    assert!(!s.wait(7, Duration::from_millis(20)).unwrap());
    assert!(!sub.is_done(), "the submission waits for value 7");
    s.signal(7).unwrap();
    assert!(s.wait(7, Duration::from_secs(5)).unwrap());
    sub.wait().unwrap();
    assert_eq!(buf.read::<u32>().unwrap(), vec![0xC0FFEE; 16]);
    assert_clean(&device);
}

#[test]
fn timeline_semaphore_misuse_is_coded() {
    let device = device();
    let s = device.timeline_semaphore("once", 3).unwrap();
    // A timeline only grows (VUID-VkSemaphoreSignalInfo-value-03258).
    let e = s.signal(3).unwrap_err();
    assert_eq!(e.code(), "KILN-E130", "{e}");
    assert!(
        e.to_string().contains("`once`") && e.to_string().contains('3'),
        "{e}"
    );
    // A semaphore of another device.
    let other = common::device();
    let foreign = other.timeline_semaphore("foreign", 0).unwrap();
    let main = device.queue(QueueKind::Main);
    assert_eq!(
        code(main.submit_after(&[(&foreign, 1)], |_| Ok(()))),
        "KILN-E109"
    );
    // More waits than one submission takes.
    let many: Vec<_> = (0..=MAX_TIMELINE_WAITS)
        .map(|i| device.timeline_semaphore(&format!("s{i}"), 1).unwrap())
        .collect();
    let waits: Vec<_> = many.iter().map(|s| (s, 1)).collect();
    assert_eq!(code(main.submit_after(&waits, |_| Ok(()))), "KILN-E131");
    // Within the limit, already reached: runs at once.
    main.submit_after(&waits[..MAX_TIMELINE_WAITS], |_| Ok(()))
        .unwrap()
        .wait()
        .unwrap();
    assert_clean(&device);
    assert_clean(&other);
}
