//! Transfers. Staged upload and readback through the device's reusable staging buffers:
//! byte-exact results across growing and shrinking sizes, chunked transfers, fresh data
//! after GPU writes, concurrent transfers, and a clean teardown with a populated cache (no
//! validation message, no gpu-allocator leak report). Image uploads and readbacks of every
//! mip level. Host access to mapped memory ordered against pending submissions.

use common::add;
use common::add::vector_add;
use common::draw::RGBA8;
use common::gpu_buffer;
use common::{assert_clean, assert_watch_clean, device};
use kiln::hooks::STAGING_CHUNK;
use kiln::{vk, BufferDesc, Device, ImageDesc, MemoryLocation};

/// Chunk size in these tests: small, so chunked (double-buffered) transfers stay cheap.
const CHUNK: u64 = 1 << 20;

/// The validated test device with staging forced: lavapipe maps device-local memory, where
/// kiln would otherwise write it directly. The staging chunk is [`CHUNK`].
fn staged_device() -> Device {
    let device = common::device();
    device.debug_force_staging(true);
    device.debug_set_staging_chunk(CHUNK);
    device
}

/// At most two chunks of idle staging memory per direction.
#[track_caller]
fn assert_staging_bounded(device: &Device) {
    let idle = device.staging_usage().bytes;
    assert!(idle <= 4 * CHUNK, "{idle} idle staging bytes");
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
    let device = staged_device();
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
        buf.upload(&data).unwrap();
        let got: Vec<u8> = buf.read().unwrap();
        assert_bytes_eq(&got, &data, &format!("read of {size} bytes"));
        // The same bytes through read_into, into a dirty destination.
        let mut into = vec![0xAAu8; size];
        buf.read_into(&mut into).unwrap();
        assert_bytes_eq(&into, &data, &format!("read_into of {size} bytes"));
        assert_staging_bounded(&device);
    }
    assert_clean(&device);
}

#[test]
fn ranges_at_offsets_touch_only_their_bytes() {
    let device = staged_device();
    let size = 3 * CHUNK as usize + 10_000;
    let buf = gpu_buffer(&device, "target", size as u64);
    let mut want = pattern(size, 7);
    buf.upload(&want).unwrap();
    // A chunked range starting at an odd offset, and a small one near the end.
    for (offset, len, seed) in [(3usize, 2 * CHUNK as usize + 5, 8u64), (size - 9, 9, 9)] {
        let part = pattern(len, seed);
        buf.upload_at(offset as u64, &part).unwrap();
        want[offset..offset + len].copy_from_slice(&part);
        let mut got = vec![0u8; len];
        buf.read_into_at(offset as u64, &mut got).unwrap();
        assert_bytes_eq(&got, &part, &format!("range at {offset}"));
    }
    let all: Vec<u8> = buf.read().unwrap();
    assert_bytes_eq(&all, &want, "whole buffer");
    // Out of range: coded errors, nothing transferred.
    let err = buf.upload_at(size as u64 - 1, &[0u8; 2]).unwrap_err();
    assert_eq!(err.code(), "KILN-E151", "{err}");
    let mut two = [0u8; 2];
    let err = buf.read_into_at(size as u64 - 1, &mut two).unwrap_err();
    assert_eq!(err.code(), "KILN-E151", "{err}");
    assert_clean(&device);
}

#[test]
fn a_readback_after_gpu_writes_returns_the_new_bytes() {
    let device = staged_device();
    let n = 4096usize;
    let pipeline = add::vector_add(&device);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a = device
        .buffer_from_slice("a", usage, &vec![1.0f32; n])
        .unwrap();
    let b = device
        .buffer_from_slice("b", usage, &vec![2.0f32; n])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", n).unwrap();
    let set = add::set(&pipeline, &a, &b, &c);
    // The staging buffer that reads c now holds zeros; a later read must not return them.
    assert_eq!(c.read::<f32>().unwrap(), vec![0.0; n]);
    for round in 1..=3 {
        a.upload(&vec![round as f32 * 10.0; n]).unwrap();
        device
            .execute(|r| add::dispatch(r, &pipeline, &set, n as u32))
            .unwrap();
        let want = round as f32 * 10.0 + 2.0;
        assert_eq!(c.read::<f32>().unwrap(), vec![want; n], "round {round}");
    }
    // A submission not waited for: the readback is ordered after it on the queue.
    let big = gpu_buffer(&device, "big", 3 * CHUNK + 4096);
    let sub = device
        .submit(|r| {
            r.fill_buffer(&big, 0x0102_0304)?;
            Ok(())
        })
        .unwrap();
    let got: Vec<u32> = big.read().unwrap();
    assert!(
        got.iter().all(|v| *v == 0x0102_0304),
        "stale staged readback"
    );
    sub.wait().unwrap();
    // And an upload is ordered after a pending fill of the same buffer.
    let sub = device
        .submit(|r| {
            r.fill_buffer(&big, 0)?;
            Ok(())
        })
        .unwrap();
    let data = pattern(big.size() as usize, 99);
    big.upload(&data).unwrap();
    drop(sub);
    let got: Vec<u8> = big.read().unwrap();
    assert_bytes_eq(&got, &data, "upload after a pending fill");
    assert_clean(&device);
}

#[test]
fn concurrent_uploads_and_readbacks_on_one_device_are_byte_exact() {
    let device = staged_device();
    let sizes = [100usize, 70_001, 3 * CHUNK as usize + 12_345, 3 << 20];
    std::thread::scope(|scope| {
        for (t, &size) in sizes.iter().enumerate() {
            let device = device.clone();
            scope.spawn(move || {
                let buf = gpu_buffer(&device, "per thread", size as u64);
                let mut back = vec![0u8; size];
                for round in 0..6u64 {
                    let data = pattern(size, t as u64 * 1000 + round);
                    buf.upload(&data).unwrap();
                    buf.read_into(&mut back).unwrap();
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
    let device = staged_device();
    // One piece (one buffer per direction), then chunked (two per direction).
    for (size, per_direction) in [(600 << 10, 1), (3 * CHUNK as usize + 1, 2)] {
        device.release_staging_memory();
        let buf = gpu_buffer(&device, "target", size as u64);
        let data = pattern(size, 5);
        buf.upload(&data).unwrap();
        let _: Vec<u8> = buf.read().unwrap();
        let after_first = (device.staging_usage(), device.memory_report().allocations);
        for _ in 0..4 {
            buf.upload(&data).unwrap();
            let got: Vec<u8> = buf.read().unwrap();
            assert_bytes_eq(&got, &data, "repeat");
        }
        // The same buffers again: no new allocation.
        assert_eq!(
            (device.staging_usage(), device.memory_report().allocations),
            after_first
        );
        assert_eq!(
            device.staging_usage().buffers,
            2 * per_direction,
            "{size} bytes"
        );
    }
    assert_clean(&device);
}

/// The default chunk (32 MiB since issue 12: chunks pipeline the host's copies with the
/// DMA engine's) stages a 40 MiB transfer as two chunks through two chunk-sized buffers per
/// direction (before, one 256 MiB chunk took it in one piece through one 64 MiB buffer).
#[test]
fn the_default_chunk_stages_a_large_transfer_through_two_chunk_buffers() {
    let device = staged_device();
    device.debug_set_staging_chunk(STAGING_CHUNK);
    assert_eq!(STAGING_CHUNK, 32 << 20);
    let size = 40 << 20;
    let buf = gpu_buffer(&device, "target", size as u64);
    let data = pattern(size, 11);
    buf.upload(&data).unwrap();
    let mut back = vec![0u8; size];
    buf.read_into(&mut back).unwrap();
    assert_bytes_eq(&back, &data, "40 MiB");
    // Two 32 MiB buffers per direction.
    assert_eq!(
        device.staging_usage(),
        kiln::StagingUsage {
            buffers: 4,
            bytes: 4 * (32 << 20)
        }
    );
    assert_clean(&device);
}

#[test]
fn short_of_memory_a_transfer_uses_smaller_chunks_instead_of_failing() {
    let device = staged_device();
    device.debug_set_staging_chunk(16 << 20);
    let size = 40usize << 20;
    let buf = gpu_buffer(&device, "target", size as u64);
    let biggest = device.heap_usage().iter().map(|h| h.size).max().unwrap();
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
                .map(|h| h.size - h.used)
                .max()
                .unwrap();
            if free < step + (3 << 20) {
                break;
            }
            let b = device.buffer(
                &BufferDesc::default()
                    .label("filler")
                    .size(step)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                    .location(MemoryLocation::GpuToCpu),
            );
            match b {
                Ok(b) => filler.push(b),
                Err(_) => break,
            }
        }
    }
    let data = pattern(size, 21);
    buf.upload(&data).unwrap();
    let mut back = vec![0u8; size];
    buf.read_into(&mut back).unwrap();
    assert_bytes_eq(&back, &data, "with little memory left");
    let idle = device.staging_usage().bytes;
    assert!(
        idle < 16 << 20,
        "staging should have shrunk, holds {idle} bytes"
    );
    drop(filler);
    assert_clean(&device);
}

#[test]
fn a_device_dropped_with_a_populated_staging_cache_tears_down_cleanly() {
    let device = staged_device();
    let watch = device.validation_watch();
    let big = gpu_buffer(&device, "big", 2 * CHUNK + 5);
    let data = pattern(big.size() as usize, 3);
    big.upload(&data).unwrap();
    let got: Vec<u8> = big.read().unwrap();
    assert_bytes_eq(&got, &data, "before teardown");
    let small = gpu_buffer(&device, "small", 100);
    small.upload(&[1u8; 100]).unwrap();
    let kiln::StagingUsage { buffers, bytes } = device.staging_usage();
    assert!(
        buffers >= 2 && bytes > 0,
        "{buffers} buffers, {bytes} bytes"
    );
    drop((big, small));
    drop(device);
    assert_watch_clean(&watch);
    // gpu-allocator's leak report (and any other warning of it) in this whole test binary.
    let warnings = common::allocator_warnings();
    assert!(
        warnings.is_empty(),
        "gpu-allocator reported:\n{}",
        warnings.join("\n")
    );
}

#[test]
fn image_upload_and_readback_every_mip() {
    let device = device();
    let img = device
        .image(&ImageDesc::texture("mips", 8, 4, RGBA8).mip_levels(3))
        .unwrap();
    assert_eq!(img.level_size(0), 8 * 4 * 4);
    assert_eq!(img.level_size(1), 4 * 2 * 4);
    assert_eq!(img.level_size(2), 2 * 4);
    for level in 0..3 {
        let data: Vec<u8> = (0..img.level_size(level) as usize)
            .map(|i| (i * 7 + level as usize * 31) as u8)
            .collect();
        img.upload_level(level, &data).unwrap();
        assert_eq!(img.read_level(level).unwrap(), data, "mip {level}");
    }
    let err = img.upload_level(1, &[0u8; 3]).unwrap_err();
    assert_eq!(err.code(), "KILN-E181", "{err}");
    let err = img.read_level(3).unwrap_err();
    assert_eq!(err.code(), "KILN-E180", "{err}");
    for bad in [
        ImageDesc::texture("zero", 0, 4, RGBA8),
        ImageDesc::texture("too many mips", 8, 4, RGBA8).mip_levels(5),
        ImageDesc::depth_target("depth as rgba8", 4, 4, vk::Format::R8G8B8A8_SINT),
    ] {
        let err = device.image(&bad).unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{}: {err}", bad.label);
        assert!(err.to_string().contains(bad.label), "{err}");
    }
    assert_clean(&device);
}

fn mapped(device: &kiln::Device, label: &str, location: MemoryLocation, n: usize) -> kiln::Buffer {
    device
        .buffer(
            &BufferDesc::default()
                .label(label)
                .size((n * 4) as u64)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(location),
        )
        .unwrap()
}

/// Reading a mapped buffer while a submission that writes it is pending: was a host read
/// racing the device write (no wait; stale zeros). `read` now waits for pending submissions.
#[test]
fn reading_mapped_memory_while_a_submission_writes_it_sees_the_result() {
    let device = device();
    let p = vector_add(&device);
    let n = 1 << 22;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a = add::storage(&device, "a", &input);
    for round in 0..3 {
        let out = mapped(&device, "out", MemoryLocation::GpuToCpu, n);
        let set = add::set(&p, &a, &a, &out);
        let sub = device
            .submit(|r| add::dispatch(r, &p, &set, n as u32))
            .unwrap();
        // No wait on `sub` before reading.
        let got: Vec<f32> = out.read().unwrap();
        let bad = got
            .iter()
            .enumerate()
            .filter(|(i, v)| **v != 2.0 * *i as f32)
            .count();
        assert_eq!(
            bad, 0,
            "round {round}: {bad} of {n} elements not yet written"
        );
        sub.wait().unwrap();
    }
    assert_clean(&device);
}

/// Uploading to mapped memory that a pending submission reads: the upload waits, so the
/// submission sees the old contents (not a torn mix).
#[test]
fn uploading_mapped_memory_while_a_submission_reads_it_waits() {
    let device = device();
    let p = vector_add(&device);
    let n = 1 << 22;
    let a = mapped(&device, "a", MemoryLocation::CpuToGpu, n);
    a.upload(&vec![1.0f32; n]).unwrap();
    let out = device.storage_buffer::<f32>("out", n).unwrap();
    let set = add::set(&p, &a, &a, &out);
    let sub = device
        .submit(|r| add::dispatch(r, &p, &set, n as u32))
        .unwrap();
    a.upload(&vec![5.0f32; n]).unwrap();
    sub.wait().unwrap();
    let got: Vec<f32> = out.read().unwrap();
    assert!(
        got.iter().all(|v| *v == 2.0),
        "the dispatch saw the new upload"
    );
    assert_clean(&device);
}
