//! Staged upload and readback through the device's reusable staging buffers: byte-exact
//! results across growing and shrinking sizes, chunked transfers, fresh data after GPU
//! writes, concurrent transfers, and a clean teardown with a populated cache (no validation
//! message, no gpu-allocator leak report).

use std::sync::{Mutex, Once};

use common::{assert_clean, assert_watch_clean};
use kiln::device::STAGING_CHUNK;
use kiln::{vk, Buffer, BufferDesc, Device, MemoryLocation};

/// Warnings and errors gpu-allocator logged (its leak report at allocator drop is one).
static ALLOCATOR_WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record) {
        if r.level() <= log::Level::Warn && r.target().starts_with("gpu_allocator") {
            let line = format!("{}: {}", r.target(), r.args());
            ALLOCATOR_WARNINGS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(line);
        }
    }
    fn flush(&self) {}
}

/// Chunk size in these tests: small, so chunked (double-buffered) transfers stay cheap.
const CHUNK: u64 = 1 << 20;

/// The validated test device, with gpu-allocator's warnings captured. Staging is forced:
/// lavapipe maps device-local memory, where kiln would otherwise write it directly. The
/// staging chunk is [`CHUNK`].
fn device() -> Device {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        static CAPTURE: Capture = Capture;
        log::set_logger(&CAPTURE).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Warn);
    });
    let device = common::device();
    device.debug_force_staging(true);
    device.debug_set_staging_chunk(CHUNK);
    device
}

/// At most two chunks of idle staging memory per direction.
#[track_caller]
fn assert_staging_bounded(device: &Device) {
    let (_, idle) = device.staging_usage();
    assert!(idle <= 4 * CHUNK, "{idle} idle staging bytes");
}

fn gpu_buffer(device: &Device, label: &str, size: u64) -> Buffer {
    device
        .create_buffer(&BufferDesc {
            label,
            size,
            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
            location: MemoryLocation::GpuOnly,
        })
        .unwrap()
}

/// Bytes that differ with `seed` and with position, with no period (a misplaced chunk of
/// any power-of-two size shows).
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64)
        .map(|i| {
            let z =
                (i ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            (z ^ (z >> 31) ^ (z >> 47)) as u8
        })
        .collect()
}

#[track_caller]
fn assert_bytes_eq(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: first difference at byte {i}: {} != {}",
            got[i], want[i]
        );
    }
}

#[test]
fn growing_and_shrinking_sizes_read_back_byte_exact() {
    let device = device();
    let chunk = CHUNK as usize;
    let sizes = [
        1,
        3,
        4096,
        65_537,
        1 << 20,
        chunk,
        chunk + 4097,
        7,
        2 * chunk + 1,
        5 * chunk + 3,
        (1 << 20) + 3,
        12,
    ];
    for (n, &size) in sizes.iter().enumerate() {
        let buf = gpu_buffer(&device, "target", size as u64);
        let data = pattern(size, n as u64 + 1);
        buf.upload(&device, &data).unwrap();
        let got: Vec<u8> = buf.read(&device).unwrap();
        assert_bytes_eq(&got, &data, &format!("read of {size} bytes"));
        // The same bytes through read_into, into a dirty destination.
        let mut into = vec![0xAAu8; size];
        buf.read_into(&device, &mut into).unwrap();
        assert_bytes_eq(&into, &data, &format!("read_into of {size} bytes"));
        assert_staging_bounded(&device);
    }
    assert_clean(&device);
}

#[test]
fn ranges_at_offsets_touch_only_their_bytes() {
    let device = device();
    let size = 3 * CHUNK as usize + 10_000;
    let buf = gpu_buffer(&device, "target", size as u64);
    let mut want = pattern(size, 7);
    buf.upload(&device, &want).unwrap();
    // A chunked range starting at an odd offset, and a small one near the end.
    for (offset, len, seed) in [(3usize, 2 * CHUNK as usize + 5, 8u64), (size - 9, 9, 9)] {
        let part = pattern(len, seed);
        buf.upload_at(&device, offset as u64, &part).unwrap();
        want[offset..offset + len].copy_from_slice(&part);
        let mut got = vec![0u8; len];
        buf.read_into_at(&device, offset as u64, &mut got).unwrap();
        assert_bytes_eq(&got, &part, &format!("range at {offset}"));
    }
    let all: Vec<u8> = buf.read(&device).unwrap();
    assert_bytes_eq(&all, &want, "whole buffer");
    // Out of range: coded errors, nothing transferred.
    let err = buf
        .upload_at(&device, size as u64 - 1, &[0u8; 2])
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E151", "{err}");
    let mut two = [0u8; 2];
    let err = buf
        .read_into_at(&device, size as u64 - 1, &mut two)
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E151", "{err}");
    assert_clean(&device);
}

#[test]
fn a_readback_after_gpu_writes_returns_the_new_bytes() {
    let device = device();
    let n = 4096usize;
    let pipeline = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a = device
        .buffer_from_slice("a", usage, &vec![1.0f32; n])
        .unwrap();
    let b = device
        .buffer_from_slice("b", usage, &vec![2.0f32; n])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", n).unwrap();
    let mut set = pipeline.new_set(0).unwrap();
    set.write_buffer(0, &a).unwrap();
    set.write_buffer(1, &b).unwrap();
    set.write_buffer(2, &c).unwrap();
    // The staging buffer that reads c now holds zeros; a later read must not return them.
    assert_eq!(c.read::<f32>(&device).unwrap(), vec![0.0; n]);
    for round in 1..=3 {
        a.upload(&device, &vec![round as f32 * 10.0; n]).unwrap();
        device
            .execute(|r| {
                r.bind_pipeline(&pipeline);
                r.bind_set(0, &set)?;
                r.dispatch_threads(n as u32)
            })
            .unwrap();
        let want = round as f32 * 10.0 + 2.0;
        assert_eq!(
            c.read::<f32>(&device).unwrap(),
            vec![want; n],
            "round {round}"
        );
    }
    // A submission not waited for: the readback is ordered after it on the queue.
    let big = gpu_buffer(&device, "big", 3 * CHUNK + 4096);
    let sub = device
        .submit(|r| {
            r.fill_buffer(&big, 0x0102_0304);
            Ok(())
        })
        .unwrap();
    let got: Vec<u32> = big.read(&device).unwrap();
    assert!(
        got.iter().all(|v| *v == 0x0102_0304),
        "stale staged readback"
    );
    sub.wait().unwrap();
    // And an upload is ordered after a pending fill of the same buffer.
    let sub = device
        .submit(|r| {
            r.fill_buffer(&big, 0);
            Ok(())
        })
        .unwrap();
    let data = pattern(big.size() as usize, 99);
    big.upload(&device, &data).unwrap();
    drop(sub);
    let got: Vec<u8> = big.read(&device).unwrap();
    assert_bytes_eq(&got, &data, "upload after a pending fill");
    assert_clean(&device);
}

#[test]
fn concurrent_uploads_and_readbacks_on_one_device_are_byte_exact() {
    let device = device();
    let sizes = [100usize, 70_001, 3 * CHUNK as usize + 12_345, 3 << 20];
    std::thread::scope(|scope| {
        for (t, &size) in sizes.iter().enumerate() {
            let device = device.clone();
            scope.spawn(move || {
                let buf = gpu_buffer(&device, "per thread", size as u64);
                let mut back = vec![0u8; size];
                for round in 0..6u64 {
                    let data = pattern(size, t as u64 * 1000 + round);
                    buf.upload(&device, &data).unwrap();
                    buf.read_into(&device, &mut back).unwrap();
                    assert_bytes_eq(&back, &data, &format!("thread {t} round {round}"));
                }
            });
        }
    });
    assert_staging_bounded(&device);
    assert_clean(&device);
}

#[test]
fn repeated_transfers_reuse_the_staging_buffers() {
    let device = device();
    // One piece (one buffer per direction), then chunked (two per direction).
    for (size, per_direction) in [(600 << 10, 1), (3 * CHUNK as usize + 1, 2)] {
        device.release_staging_memory();
        let buf = gpu_buffer(&device, "target", size as u64);
        let data = pattern(size, 5);
        buf.upload(&device, &data).unwrap();
        let _: Vec<u8> = buf.read(&device).unwrap();
        let after_first = (device.staging_usage(), device.memory_report().0);
        for _ in 0..4 {
            buf.upload(&device, &data).unwrap();
            let got: Vec<u8> = buf.read(&device).unwrap();
            assert_bytes_eq(&got, &data, "repeat");
        }
        // The same buffers again: no new allocation.
        assert_eq!(
            (device.staging_usage(), device.memory_report().0),
            after_first
        );
        assert_eq!(device.staging_usage().0, 2 * per_direction, "{size} bytes");
    }
    assert_clean(&device);
}

#[test]
fn the_default_chunk_stages_a_large_transfer_in_one_piece() {
    let device = device();
    device.debug_set_staging_chunk(STAGING_CHUNK);
    let size = 40 << 20;
    let buf = gpu_buffer(&device, "target", size as u64);
    let data = pattern(size, 11);
    buf.upload(&device, &data).unwrap();
    let mut back = vec![0u8; size];
    buf.read_into(&device, &mut back).unwrap();
    assert_bytes_eq(&back, &data, "40 MiB");
    // One 64 MiB (power-of-two class) buffer per direction.
    assert_eq!(device.staging_usage(), (2, 2 * (64 << 20)));
    assert_clean(&device);
}

#[test]
fn short_of_memory_a_transfer_uses_smaller_chunks_instead_of_failing() {
    let device = device();
    device.debug_set_staging_chunk(16 << 20);
    let size = 40usize << 20;
    let buf = gpu_buffer(&device, "target", size as u64);
    let biggest = device.heap_usage().iter().map(|(_, s)| *s).max().unwrap();
    if biggest > 8 << 30 {
        // Filling a heap this large would take the machine's memory (lavapipe has 2 GiB).
        eprintln!("skipped: heaps of {biggest} bytes are too large to fill in a test");
        return;
    }
    // Fill the heap the staging memory comes from, leaving about 3 MiB.
    let mut filler = Vec::new();
    for step in [64u64 << 20, 1 << 20] {
        loop {
            let free = device
                .heap_usage()
                .iter()
                .map(|(u, s)| s - u)
                .max()
                .unwrap();
            if free < step + (3 << 20) {
                break;
            }
            let b = device.create_buffer(&BufferDesc {
                label: "filler",
                size: step,
                usage: vk::BufferUsageFlags::STORAGE_BUFFER,
                location: MemoryLocation::GpuToCpu,
            });
            match b {
                Ok(b) => filler.push(b),
                Err(_) => break,
            }
        }
    }
    let data = pattern(size, 21);
    buf.upload(&device, &data).unwrap();
    let mut back = vec![0u8; size];
    buf.read_into(&device, &mut back).unwrap();
    assert_bytes_eq(&back, &data, "with little memory left");
    let (_, idle) = device.staging_usage();
    assert!(
        idle < 16 << 20,
        "staging should have shrunk, holds {idle} bytes"
    );
    drop(filler);
    assert_clean(&device);
}

#[test]
fn a_device_dropped_with_a_populated_staging_cache_tears_down_cleanly() {
    let device = device();
    let watch = device.validation_watch();
    let big = gpu_buffer(&device, "big", 2 * CHUNK + 5);
    let data = pattern(big.size() as usize, 3);
    big.upload(&device, &data).unwrap();
    let got: Vec<u8> = big.read(&device).unwrap();
    assert_bytes_eq(&got, &data, "before teardown");
    let small = gpu_buffer(&device, "small", 100);
    small.upload(&device, &[1u8; 100]).unwrap();
    let (buffers, bytes) = device.staging_usage();
    assert!(
        buffers >= 2 && bytes > 0,
        "{buffers} buffers, {bytes} bytes"
    );
    drop((big, small));
    drop(device);
    assert_watch_clean(&watch);
    let warnings = ALLOCATOR_WARNINGS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    assert!(
        warnings.is_empty(),
        "gpu-allocator reported:\n{}",
        warnings.join("\n")
    );
}
