//! Host memory at bus speed: host buffers (pinned memory) copied to and from device buffers
//! with one DMA copy each, host access ordered against pending copies by the buffer's
//! stamps, imported user memory (`VK_EXT_external_memory_host`, which lavapipe has) or its
//! coded error, and the errors of each.

use std::sync::atomic::{AtomicBool, Ordering};

use common::gate::Gate;
use common::{assert_clean, device, emulated_device};
use kiln::{vk, QueueKind};

use common::{gpu_buffer, pattern};

/// Page-aligned host memory of `len` bytes (what importing needs), freed on drop.
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(len: usize, align: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len, align).unwrap();
        // SAFETY: a non-zero size (the tests never ask for 0).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Aligned { ptr, layout }
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` is a live allocation of `layout.size()` bytes owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// Host → device → host through two host buffers, at offsets, on every queue kind; the
/// device copy in between is a kiln copy, so each stage depends on the one before.
#[test]
fn a_host_buffer_round_trip_through_the_device_is_byte_exact() {
    for device in [device(), emulated_device()] {
        let len = 3 << 20;
        let data = pattern(len, 1);
        let src = device.host_buffer_from_slice("pinned src", &data).unwrap();
        assert_eq!(src.len(), len as u64);
        assert!(!src.is_imported());
        let mut dst = device.host_buffer("pinned dst", len as u64 + 4096).unwrap();
        let (x, y) = (
            gpu_buffer(&device, "x", len as u64),
            gpu_buffer(&device, "y", len as u64),
        );
        let up = device.queue(QueueKind::Transfer);
        let down = device.queues(QueueKind::Transfer).pop().unwrap();
        let t1 = up.upload_from_host(&src, 0, &x, 0, len as u64).unwrap();
        let s = device
            .queue(QueueKind::Compute)
            .submit(|r| Ok(r.copy_buffer(&x, 0, &y, 0, len as u64)?))
            .unwrap();
        let t2 = down
            .read_to_host(&y, 0, &mut dst, 4096, len as u64)
            .unwrap();
        // No wait: as_slice waits for the pending readback into `dst` itself.
        let got = dst.as_slice().unwrap();
        assert!(got[4096..] == data[..], "round trip");
        assert!(
            got[..4096].iter().all(|b| *b == 0),
            "bytes before the offset untouched"
        );
        assert!(t2.is_done());
        drop((t1, s, t2));
        // A range in the middle, both ways.
        let part = pattern(1000, 9);
        let mut small = device.host_buffer_from_slice("part", &part).unwrap();
        up.upload_from_host(&small, 0, &x, 12_345, 1000)
            .unwrap()
            .wait()
            .unwrap();
        small.write(0, &[0u8; 1000]).unwrap();
        down.read_to_host(&x, 12_345, &mut small, 0, 1000)
            .unwrap()
            .wait()
            .unwrap();
        let mut back = vec![0u8; 1000];
        small.read_into(0, &mut back).unwrap();
        assert_eq!(back, part);
        assert_clean(&device);
    }
}

/// `as_slice` waits for a readback into the buffer that is still held behind a gate;
/// `as_mut_slice` for an upload from it. Neither returns before the gate opens.
#[test]
fn host_access_waits_for_pending_copies_of_the_buffer() {
    for device in [device(), emulated_device()] {
        let n = 1 << 16;
        let x = gpu_buffer(&device, "x", n);
        device
            .queue(QueueKind::Main)
            .execute(|r| Ok(r.fill_buffer(&x, 0x0101_0101)?))
            .unwrap();
        let mut host = device.host_buffer("host", n).unwrap();
        for upload in [false, true] {
            let gate = Gate::new(&device);
            let transfer = device.queue(QueueKind::Transfer);
            // The gate holds the transfer queue (and on one `VkQueue`, everything); a
            // transfer-only family cannot wait for events itself, so `hold` gates it
            // through the main queue.
            let held = gate.hold(&transfer);
            let t = if upload {
                transfer.upload_from_host(&host, 0, &x, 0, n).unwrap()
            } else {
                transfer.read_to_host(&x, 0, &mut host, 0, n).unwrap()
            };
            let opened = AtomicBool::new(false);
            std::thread::scope(|s| {
                s.spawn(|| {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    opened.store(true, Ordering::SeqCst);
                    gate.open();
                });
                if upload {
                    host.as_mut_slice().unwrap().fill(2);
                } else {
                    assert!(host.as_slice().unwrap().iter().all(|b| *b == 1));
                }
                assert!(
                    opened.load(Ordering::SeqCst),
                    "host access raced a pending copy"
                );
            });
            drop((t, held, gate));
        }
        // The upload copied the 1s (read before the 2s were written).
        assert_eq!(x.read::<u8>().unwrap(), vec![1u8; n as usize]);
        assert_clean(&device);
    }
}

#[test]
fn host_buffer_errors_are_coded() {
    let device = device();
    assert_eq!(
        device.host_buffer("empty", 0).unwrap_err().code(),
        "KILN-E152"
    );
    let mut host = device.host_buffer("host", 100).unwrap();
    let x = gpu_buffer(&device, "x", 64);
    let q = device.queue(QueueKind::Transfer);
    let code = |r: kiln::Result<kiln::Transfer<'_>>| r.map(|t| t.wait()).unwrap_err().code();
    assert_eq!(code(q.upload_from_host(&host, 90, &x, 0, 20)), "KILN-E151");
    assert_eq!(code(q.upload_from_host(&host, 0, &x, 60, 20)), "KILN-E151");
    assert_eq!(code(q.read_to_host(&x, 0, &mut host, 0, 0)), "KILN-E155");
    assert_eq!(code(q.read_to_host(&x, 0, &mut host, 0, 65)), "KILN-E151");
    assert_eq!(host.write(99, &[1u8, 2]).unwrap_err().code(), "KILN-E151");
    let other = common::device();
    let foreign = gpu_buffer(&other, "foreign", 64);
    assert_eq!(
        code(q.upload_from_host(&host, 0, &foreign, 0, 8)),
        "KILN-E109"
    );
    let theirs = other.host_buffer("theirs", 8).unwrap();
    assert_eq!(code(q.upload_from_host(&theirs, 0, &x, 0, 8)), "KILN-E109");
    assert_clean(&device);
}

/// Imported memory (lavapipe has `VK_EXT_external_memory_host`): uploads from and readbacks
/// into the caller's own page-aligned bytes; misaligned memory is `KILN-E160`, host access
/// through the import and its use after the scope `KILN-E161`. Without the extension the
/// import is `KILN-E107`.
#[test]
fn imported_memory_round_trips_or_reports_a_clear_error() {
    let device = device();
    let len = 1 << 20;
    let mut src = Aligned::new(len, 1 << 16);
    let data = pattern(len, 5);
    src.bytes().copy_from_slice(&data);
    let x = gpu_buffer(&device, "x", len as u64);
    let q = device.queue(QueueKind::Transfer);
    let r = device.import_host_memory("imported src", src.bytes(), |host| {
        assert!(host.is_imported());
        assert!(host.is_caller_memory());
        assert_eq!(host.len(), len as u64);
        assert_eq!(host.as_slice().unwrap_err().code(), "KILN-E161");
        // Forgotten, never waited for: the scope's end still waits for the copy before
        // the memory is the caller's again.
        std::mem::forget(q.upload_from_host(host, 0, &x, 0, len as u64)?);
        Ok(7)
    });
    if !device.features().external_memory_host {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        assert!(e.to_string().contains("VK_EXT_external_memory_host"), "{e}");
        assert_clean(&device);
        return;
    }
    assert_eq!(r.unwrap(), 7);
    assert!(
        x.read::<u8>().unwrap() == data,
        "upload from imported memory"
    );
    // Readback into imported memory; the bytes are the caller's after the scope.
    let mut dst = Aligned::new(len, 1 << 16);
    device
        .import_host_memory("imported dst", dst.bytes(), |host| {
            q.read_to_host(&x, 0, host, 0, len as u64)?.wait()
        })
        .unwrap();
    assert!(dst.bytes() == &data[..], "readback into imported memory");
    // Misaligned address, misaligned length, empty.
    let mut buf = Aligned::new(3 << 16, 1 << 16);
    for (range, what) in [
        (1..(1 << 16) + 1, "address"),
        (0..1000, "length"),
        (0..0, "empty"),
    ] {
        let e = device
            .import_host_memory("bad", &mut buf.bytes()[range], |_| Ok(()))
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E160", "{what}: {e}");
    }
    // A handle moved out of the scope (swapped with another host buffer) is dead after it.
    let mut escaped = device.host_buffer("decoy", 8).unwrap();
    device
        .import_host_memory("escapes", &mut buf.bytes()[..1 << 16], |host| {
            std::mem::swap(host, &mut escaped);
            Ok(())
        })
        .unwrap();
    assert!(escaped.is_imported());
    let e = q.upload_from_host(&escaped, 0, &x, 0, 8).unwrap_err();
    assert_eq!(e.code(), "KILN-E161", "{e}");
    assert!(e.to_string().contains("scope has ended"), "{e}");
    drop(escaped);
    assert_clean(&device);
}

/// The end of an import's scope outwaits the device's wait timeout: a readback into the
/// import held behind a gate for 4 timeouts still lands in the caller's memory before
/// `import_host_memory` returns, with no `KILN-E108` (which returned the memory to the
/// caller while the GPU could still write it), also when the scope's closure panics (the
/// import then ends as it unwinds).
#[test]
fn an_imports_scope_waits_past_the_wait_timeout() {
    let timeout = std::time::Duration::from_millis(250);
    let device = common::device_with_desc(kiln::DeviceDesc::default().wait_timeout(Some(timeout)));
    if !device.features().external_memory_host {
        println!("path: no VK_EXT_external_memory_host (KILN-E107, checked above)");
        return;
    }
    let n = 1 << 16;
    let x = gpu_buffer(&device, "x", n);
    device
        .queue(QueueKind::Main)
        .execute(|r| Ok(r.fill_buffer(&x, 0x0303_0303)?))
        .unwrap();
    let transfer = device.queue(QueueKind::Transfer);
    for panics in [false, true] {
        let mut dst = Aligned::new(n as usize, 1 << 16);
        let gate = Gate::new(&device);
        let held = gate.hold(&transfer);
        let opened = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(timeout * 4);
                opened.store(true, Ordering::SeqCst);
                gate.open();
            });
            let scope = std::panic::AssertUnwindSafe(|| {
                device.import_host_memory("gated dst", dst.bytes(), |host| {
                    // Not waited for: the scope's end waits for it.
                    std::mem::forget(transfer.read_to_host(&x, 0, host, 0, n)?);
                    assert!(!panics, "the scope's closure panicked");
                    Ok(())
                })
            });
            match std::panic::catch_unwind(scope) {
                Ok(r) => r.unwrap(),
                Err(_) => assert!(panics, "an unexpected panic"),
            }
            // Before the spawned thread is joined: the scope ended only once the gate opened.
            assert!(
                opened.load(Ordering::SeqCst),
                "panics {panics}: the import ended before its readback"
            );
        });
        assert!(
            dst.bytes().iter().all(|b| *b == 3),
            "panics {panics}: the readback landed"
        );
        drop((held, gate));
    }
    assert_clean(&device);
}

/// Host buffers in host pages kiln maps and imports (`HostBufferMemory::Imported`; lavapipe
/// has `VK_EXT_external_memory_host`) behave as driver-memory ones: zero-filled, host-visible
/// and coherent, byte-exact round trips at offsets on every queue kind; a buffer dropped
/// while a gated transfer-queue copy still reads it is unmapped only after the copy ran (the
/// copy's bytes arrive); `is_imported` is true for them (false for `Driver` memory), and
/// `is_caller_memory` false. `Driver` gives driver memory; `Auto` is `Driver` for now.
#[test]
fn host_buffers_in_kiln_mapped_imported_memory_round_trip() {
    use kiln::{DeviceDesc, HostBufferMemory};
    for emulate_queues in [false, true] {
        let desc = |host_buffer_memory| {
            DeviceDesc::default()
                .validation(Some(true))
                .emulate_queues(emulate_queues)
                .host_buffer_memory(host_buffer_memory)
        };
        let device = common::device_with_desc(desc(HostBufferMemory::Imported));
        if !device.features().external_memory_host {
            let e = device.host_buffer("needs import", 4096).unwrap_err();
            assert_eq!(e.code(), "KILN-E107", "{e}");
            continue;
        }
        let len = (2 << 20) + 12_345; // not a multiple of the 2 MiB mapping
        let mut host = device.host_buffer("mapped", len as u64).unwrap();
        assert!(host.is_imported(), "kiln's own pages, imported");
        assert!(
            !host.is_caller_memory(),
            "kiln's own memory has host access"
        );
        let flags = host.memory_properties();
        assert!(
            flags.contains(
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT
            ),
            "{flags:?}"
        );
        assert_eq!(host.len(), len as u64);
        assert!(
            host.as_slice().unwrap().iter().all(|b| *b == 0),
            "zero-filled"
        );
        let data = pattern(len, 3);
        host.write(0, &data).unwrap();
        let x = gpu_buffer(&device, "x", len as u64 + 512);
        let up = device.queue(QueueKind::Transfer);
        let down = device.queues(QueueKind::Transfer).pop().unwrap();
        up.upload_from_host(&host, 0, &x, 512, len as u64)
            .unwrap()
            .wait()
            .unwrap();
        let mut back = device.host_buffer("mapped back", len as u64).unwrap();
        down.read_to_host(&x, 512, &mut back, 0, len as u64)
            .unwrap()
            .wait()
            .unwrap();
        assert!(back.as_slice().unwrap() == &data[..], "round trip");
        let main = device.queue(QueueKind::Main);
        main.read_to_host(&x, 512 + 100, &mut back, 7, 1000)
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(&back.as_slice().unwrap()[7..1007], &data[100..1100]);

        // Dropped while a gated copy from it is pending: unmapped after the copy.
        let gate = Gate::new(&device);
        let held = gate.hold(&up);
        let y = gpu_buffer(&device, "y", len as u64);
        // Forgotten (a dropped transfer waits for its copy, which the gate holds).
        std::mem::forget(up.upload_from_host(&host, 0, &y, 0, len as u64).unwrap());
        drop(host);
        gate.open();
        drop((held, gate));
        assert!(
            y.read::<u8>().unwrap() == data,
            "copy from a dropped host buffer"
        );
        assert_clean(&device);

        let device = common::device_with_desc(desc(HostBufferMemory::Driver));
        let host = device.host_buffer("driver", 4096).unwrap();
        assert!(
            !host.is_imported() && !host.is_caller_memory(),
            "driver memory"
        );
        assert!(host
            .memory_properties()
            .contains(vk::MemoryPropertyFlags::HOST_VISIBLE));
        assert!(host.as_slice().unwrap().iter().all(|b| *b == 0));
    }
}

/// `UploadQueue::ComputeShader`: uploads from host buffers on the queue it names (the main
/// queue beside the emulated device's one async-compute queue, or the second async-compute
/// queue where kiln created two) are dispatches of kiln's copy shader where the copy is
/// aligned, copy-engine copies where not; the stream example with its uploads there matches
/// the CPU reference; bytes exact throughout.
#[test]
fn uploads_by_the_copy_shader_follow_the_upload_queue() {
    use kiln::{DeviceDesc, UploadQueue};
    for compute_queues in [1, 2] {
        let device = common::device_with_desc(
            DeviceDesc::default()
                .emulate_queues(true)
                .compute_queues(compute_queues)
                .upload_queue(UploadQueue::ComputeShader),
        );
        let computes = device.queues(QueueKind::Compute);
        let want = if computes.len() >= 2 && computes[1] != device.queue(QueueKind::Main) {
            computes[1].clone()
        } else {
            device.queue(QueueKind::Main)
        };
        assert_eq!(
            device.upload_queue(),
            want,
            "{compute_queues} compute queue(s)"
        );
        let len = 400_000usize;
        let data = pattern(len, 3);
        let src = device.host_buffer_from_slice("src", &data).unwrap();
        let x = gpu_buffer(&device, "x", len as u64);
        let before = device.debug_shader_copies();
        // Aligned (offsets 0 and 256, size a multiple of 16): a shader copy.
        device
            .upload_queue()
            .upload_from_host(&src, 256, &x, 256, 399_616)
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(device.debug_shader_copies(), before + 1, "aligned: shader");
        // Unaligned offset: a copy-engine copy.
        device
            .upload_queue()
            .upload_from_host(&src, 4, &x, 4, 252)
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(
            device.debug_shader_copies(),
            before + 1,
            "unaligned: a copy"
        );
        let mut back = device.host_buffer("back", len as u64).unwrap();
        device
            .readback_queue()
            .read_to_host(&x, 4, &mut back, 4, 399_868)
            .unwrap()
            .wait()
            .unwrap();
        assert!(back.as_slice().unwrap()[4..399_872] == data[4..399_872]);
        let mut stream = kiln_examples::stream::Stream::new(&device, 4096, 5, 3).unwrap();
        stream.run(&device, true).unwrap();
        assert_eq!(stream.check().unwrap(), None, "stream with shader uploads");
        assert_eq!(
            device.debug_shader_copies(),
            before + 1 + 5,
            "one shader upload per chunk"
        );
        assert_clean(&device);
    }
}
