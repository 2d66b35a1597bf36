//! Copies between devices through pinned host memory (`copy_between_devices`,
//! `copy_between_devices_in_chunks`): on lavapipe two devices on the one CPU device, a
//! copy of several chunks (readbacks and uploads overlapped over two slots, a short last
//! chunk, unaligned offsets) and of one; every byte checked, the bytes beside the range
//! untouched; the coded errors. The two-GPU test takes its real path only where two
//! physical GPUs exist (`KILN_REQUIRE_GPUS=2` makes their absence a failure) and prints
//! which path ran.

use common::{add, assert_clean, code, device, device_with_desc};
use kiln::{copy_between_devices, copy_between_devices_in_chunks, vk, Device, DeviceDesc};

fn pattern(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed))
        .collect()
}

#[test]
fn a_buffer_is_copied_between_two_devices_in_overlapped_chunks() {
    let (a, b) = (device(), device());
    let n = 20_000; // 80 000 bytes
    let src_data = pattern(n, 7);
    let src = add::storage(&a, "src on a", &src_data);
    let dst = b.storage_buffer::<u32>("dst on b", n).unwrap();
    b.execute(|r| Ok(r.fill_buffer(&dst, 0xDEAD_BEEF)?))
        .unwrap();
    // Words 3.. of src into words 5.. of dst: 19 990 words in chunks of 16 KiB (5 chunks,
    // the last short).
    let words = n - 10;
    copy_between_devices_in_chunks(&src, 12, &dst, 20, (words * 4) as u64, 16 << 10).unwrap();
    let got = dst.read::<u32>().unwrap();
    assert_eq!(&got[..5], &[0xDEAD_BEEF; 5]);
    assert_eq!(&got[5..5 + words], &src_data[3..3 + words]);
    assert_eq!(&got[5 + words..], &[0xDEAD_BEEF; 5]);
    // The whole buffer back from b to a, in one default chunk.
    let back = a.storage_buffer::<u32>("back on a", n).unwrap();
    copy_between_devices(&dst, 0, &back, 0, (n * 4) as u64).unwrap();
    assert_eq!(back.read::<u32>().unwrap(), got);
    // b's copy is usable by b's work at once (the upload is ordered before it).
    add::still_works(&b);
    println!(
        "path: {} chunks of 16 KiB, then one default chunk, between two devices",
        5
    );
    assert_clean(&a);
    assert_clean(&b);
}

#[test]
fn copies_between_devices_refuse_bad_ranges() {
    let (a, b) = (device(), device());
    let src = a.storage_buffer::<u32>("src", 16).unwrap();
    let dst = b.storage_buffer::<u32>("dst", 8).unwrap();
    assert_eq!(code(copy_between_devices(&src, 0, &dst, 0, 0)), "KILN-E155");
    assert_eq!(
        code(copy_between_devices(&src, 0, &dst, 0, 64)),
        "KILN-E151"
    );
    assert_eq!(
        code(copy_between_devices(&src, 60, &dst, 0, 8)),
        "KILN-E151"
    );
    assert_eq!(
        code(copy_between_devices(&src, 0, &dst, 30, 4)),
        "KILN-E151"
    );
    assert_clean(&a);
    assert_clean(&b);
}

/// The physical GPUs (not CPU devices), by index.
fn gpus() -> Vec<usize> {
    Device::enumerate()
        .unwrap()
        .iter()
        .filter(|d| d.device_type != vk::PhysicalDeviceType::CPU)
        .map(|d| d.index)
        .collect()
}

/// Two physical GPUs: a buffer copied from the first to the second and back, 256 MiB in
/// the default chunks, every word checked. Elsewhere it prints that it did not run;
/// `KILN_REQUIRE_GPUS=2` makes that a failure.
#[test]
fn two_gpus_copy_between_them_when_two_exist() {
    let found = gpus();
    let required = std::env::var("KILN_REQUIRE_GPUS").ok().as_deref() == Some("2");
    if found.len() < 2 {
        assert!(
            !required,
            "KILN_REQUIRE_GPUS=2 but {} GPU(s) found: {found:?}",
            found.len()
        );
        println!(
            "PATH NOT TAKEN: {} physical GPU(s) ({found:?}); the two-GPU copy runs where two \
             exist (KILN_REQUIRE_GPUS=2 makes this a failure)",
            found.len()
        );
        return;
    }
    let open = |i: usize| device_with_desc(DeviceDesc::default().device(Some(i.to_string())));
    let (g0, g1) = (open(found[0]), open(found[1]));
    assert_ne!(g0.info().device_uuid, g1.info().device_uuid);
    let n = 64 << 20; // words: 256 MiB
    let data = pattern(n, 11);
    let src = add::storage(&g0, "src on gpu 0", &data);
    let dst = g1.storage_buffer::<u32>("dst on gpu 1", n).unwrap();
    let t = std::time::Instant::now();
    copy_between_devices(&src, 0, &dst, 0, (n * 4) as u64).unwrap();
    let s = t.elapsed().as_secs_f64();
    assert!(
        dst.read::<u32>().unwrap() == data,
        "gpu 1 holds gpu 0's words"
    );
    println!(
        "path: two GPUs ({} -> {}), 256 MiB in {:.1} ms ({:.1} GB/s)",
        g0.info().name,
        g1.info().name,
        s * 1e3,
        (n * 4) as f64 / s / 1e9
    );
    assert_clean(&g0);
    assert_clean(&g1);
}

/// Odd sizes on one device and between two: 1 byte, 3 bytes at unaligned offsets, a size
/// one past a chunk (a 1-byte last chunk), a chunk asked smaller than 4 KiB; the same
/// device as source and destination; every byte checked, the bytes beside untouched.
#[test]
fn copies_between_devices_of_odd_sizes_and_the_same_device() {
    let (a, b) = (device(), device());
    let bytes: Vec<u8> = (0..12_345u32).map(|i| (i * 7 + 3) as u8).collect();
    let src = add::storage(&a, "odd src", &bytes);
    for (dev, name) in [(&a, "same device"), (&b, "other device")] {
        for &(so, d_o, n, chunk) in &[
            (0u64, 0u64, 1u64, 4096u64),
            (5, 7, 1, 4096),
            (1, 2, 3, 4096),
            (3, 1, 4097, 4096),
            (11, 13, 9_001, 1),
            (0, 0, 12_345, 4096),
        ] {
            let dst = dev
                .buffer_from_slice(
                    "odd dst",
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                    &[0xAAu8; 12_360],
                )
                .unwrap();
            copy_between_devices_in_chunks(&src, so, &dst, d_o, n, chunk).unwrap();
            let got = dst.read::<u8>().unwrap();
            let (so, d_o, n) = (so as usize, d_o as usize, n as usize);
            assert_eq!(
                &got[d_o..d_o + n],
                &bytes[so..so + n],
                "{name}: {so} {d_o} {n}"
            );
            assert!(got[..d_o].iter().all(|&x| x == 0xAA), "{name}: before");
            assert!(got[d_o + n..].iter().all(|&x| x == 0xAA), "{name}: after");
        }
    }
    // Offsets whose end overflows u64: refused, not wrapped.
    let dst = b.storage_buffer::<u32>("dst", 8).unwrap();
    assert_eq!(
        code(copy_between_devices(&src, u64::MAX, &dst, 0, 4)),
        "KILN-E151"
    );
    assert_eq!(
        code(copy_between_devices(&src, 0, &dst, u64::MAX - 1, 4)),
        "KILN-E151"
    );
    println!("path: odd sizes within a and from a to b");
    assert_clean(&a);
    assert_clean(&b);
}

/// One buffer as its own source and destination: overlapping ranges (forward and
/// backward, by more than a chunk and by one byte) are refused with `KILN-E155` before any
/// work (before the fix, a forward overlap by more than a chunk silently read bytes its own
/// earlier chunks had overwritten); ranges that do not overlap copy, in several chunks.
#[test]
fn a_copy_between_devices_within_one_buffer_refuses_overlap_and_copies_disjoint_ranges() {
    let a = device();
    let n = 40_000usize;
    let bytes: Vec<u8> = (0..n as u32).map(|i| (i * 13 + 1) as u8).collect();
    let buf = add::storage(&a, "self", &bytes);
    for (so, d_o, len) in [
        (0u64, 5_000u64, 20_000u64),
        (5_000, 0, 20_000),
        (100, 101, 2),
        (101, 100, 2),
    ] {
        let e = copy_between_devices_in_chunks(&buf, so, &buf, d_o, len, 4096).unwrap_err();
        assert_eq!(e.code(), "KILN-E155", "{so} -> {d_o}: {e}");
        assert!(e.to_string().contains("overlap"), "{e}");
    }
    assert_eq!(
        buf.read::<u8>().unwrap(),
        bytes,
        "refused copies wrote nothing"
    );
    // Disjoint ranges of the one buffer, touching: [0, 20 000) -> [20 000, 40 000).
    copy_between_devices_in_chunks(&buf, 0, &buf, 20_000, 20_000, 4096).unwrap();
    let mut want = bytes.clone();
    want.copy_within(0..20_000, 20_000);
    assert!(buf.read::<u8>().unwrap() == want, "the disjoint copy");
    // Another buffer of the same size on the same device: any ranges.
    let other = add::storage(&a, "other", &bytes);
    copy_between_devices_in_chunks(&buf, 0, &other, 5_000, 20_000, 4096).unwrap();
    want = bytes.clone();
    want[5_000..25_000].copy_from_slice(&buf.read::<u8>().unwrap()[..20_000]);
    assert!(
        other.read::<u8>().unwrap() == want,
        "another buffer, same offsets"
    );
    println!("path: one buffer, overlap refused (E155), disjoint ranges copied");
    assert_clean(&a);
}
