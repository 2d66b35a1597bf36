//! Device addresses and big buffers: a `buffer_reference` shader reading and writing
//! through addresses passed in push constants, the usage error, `maxBufferSize`, and a
//! buffer filled and summed through its address with 64-bit indices: 6 GiB where the
//! device allows it (`KILN_REQUIRE_BIG=1` makes that a requirement, for the H200 run),
//! else 160 MiB, which is beyond lavapipe's 128 MiB `maxStorageBufferRange`.

use common::{assert_clean, device};
use kiln::{vk, BufferDesc, MemoryLocation};

#[test]
fn buffer_reference_shader_reads_and_writes_through_push_constant_addresses() {
    let device = device();
    assert!(
        device.features().buffer_device_address,
        "{} lacks bufferDeviceAddress, which this test needs",
        device.info().name
    );
    let m = kiln::include_spirv!("test/address_scale.comp").unwrap();
    assert!(m
        .reflection()
        .capabilities
        .iter()
        .any(|c| c == "PhysicalStorageBufferAddresses"));
    let pipeline = device.compute_pipeline(&m, "main").unwrap();
    // No descriptor sets: everything goes through the push constants.
    assert!(pipeline.layout().set_layouts().is_empty());
    let n = 1000u32;
    let src_data: Vec<u32> = (0..n).map(|i| i * 3 + 7).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let src = device.buffer_from_slice("src", usage, &src_data).unwrap();
    let dst = device
        .buffer_from_slice("dst", usage, &vec![0u32; n as usize + 1])
        .unwrap();
    assert!(src
        .usage()
        .contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS));
    let (a, b) = (src.device_address().unwrap(), dst.device_address().unwrap());
    assert_ne!(a, 0);
    assert_ne!(a, b);
    let words = [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32, n];
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            r.push(0, &words)?;
            Ok(r.dispatch_threads(n)?)
        })
        .unwrap();
    let out: Vec<u32> = dst.read().unwrap();
    for i in 0..n as usize {
        assert_eq!(out[i], src_data[i] * 2 + 1, "element {i}");
    }
    assert_eq!(out[n as usize], 0, "element past n was written");
    assert_clean(&device);
}

#[test]
fn device_address_needs_the_usage_and_buffers_stay_within_max_buffer_size() {
    let device = device();
    let indirect_only = device
        .buffer(
            &BufferDesc::default()
                .label("args only")
                .size(64)
                .usage(vk::BufferUsageFlags::INDIRECT_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap();
    let e = indirect_only.device_address().unwrap_err();
    assert_eq!(e.code(), "KILN-E158", "{e}");
    assert!(e.to_string().contains("`args only`"), "{e}");
    assert!(e.to_string().contains("SHADER_DEVICE_ADDRESS"), "{e}");
    let max = device.compute_properties().max_buffer_size;
    if max < u64::MAX {
        let e = device
            .buffer(
                &BufferDesc::default()
                    .label("too big")
                    .size(max + 1)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                    .location(MemoryLocation::GpuOnly),
            )
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E159", "{e}");
        assert!(e.to_string().contains(&max.to_string()), "{e}");
    }
    assert_clean(&device);
}

/// Sum of `i >> 12` over `0..n`.
fn expected_sum(n: u64) -> u64 {
    let k = n >> 12;
    4096 * (k * k.saturating_sub(1) / 2) + (n - 4096 * k) * k
}

#[test]
fn a_buffer_beyond_the_descriptor_range_is_filled_and_summed_through_its_address() {
    let device = device();
    let p = device.compute_properties().clone();
    let big: u64 = 6 << 30;
    let require = std::env::var("KILN_REQUIRE_BIG").as_deref() == Ok("1");
    let largest_heap = device
        .heap_usage()
        .iter()
        .map(|h| h.size)
        .max()
        .unwrap_or(0);
    let can = p.buffer_device_address
        && p.max_buffer_size >= big
        && largest_heap >= big + (2 << 30)
        && !device.info().name.contains("llvmpipe");
    if require && !can {
        panic!(
            "KILN_REQUIRE_BIG=1 but {} cannot hold a 6 GiB buffer: bufferDeviceAddress {}, \
             maxBufferSize {}, largest heap {} bytes",
            device.info().name,
            p.buffer_device_address,
            p.max_buffer_size,
            largest_heap
        );
    }
    // 6 GiB is beyond the H200's maxMemoryAllocationSize (0xffe00000): refused by default
    // (E162), allowed with the documented opt-in (NVIDIA allocates beyond it).
    let device = if can && big > p.max_memory_allocation_size {
        let e = device
            .buffer(
                &BufferDesc::default()
                    .label("big")
                    .size(big)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                    .location(MemoryLocation::GpuOnly),
            )
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E162", "{e}");
        assert!(e.to_string().contains("allocations_beyond_limit"), "{e}");
        assert_clean(&device);
        common::device_with_desc(kiln::DeviceDesc::default().allocations_beyond_limit(true))
    } else {
        device
    };
    let bytes = if can { big } else { 160 << 20 };
    if !can {
        eprintln!(
            "device_address: {} gets a 160 MiB buffer (beyond maxStorageBufferRange {}), not \
             6 GiB; KILN_REQUIRE_BIG=1 requires 6 GiB",
            device.info().name,
            p.max_storage_buffer_range
        );
    }
    assert!(bytes > p.max_storage_buffer_range as u64);
    let n = bytes / 4;
    let data = device
        .buffer(
            &BufferDesc::default()
                .label("big")
                .size(bytes)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap();
    let groups = p.max_compute_work_group_count[0].min(2048);
    let threads = groups as usize * 256;
    let partials = device.storage_buffer::<u64>("partials", threads).unwrap();
    let fill = device
        .compute_pipeline(&kiln::include_spirv!("test/big_fill.comp").unwrap(), "main")
        .unwrap();
    let sum = device
        .compute_pipeline(&kiln::include_spirv!("test/big_sum.comp").unwrap(), "main")
        .unwrap();
    let (a, s) = (
        data.device_address().unwrap(),
        partials.device_address().unwrap(),
    );
    let probe = device.storage_buffer::<u32>("probe", 3).unwrap();
    // The last element, one in the middle, and (for 6 GiB) one beyond 4 GiB.
    let offsets = [bytes - 4, (bytes / 2) & !3, bytes.min(5 << 30) - 8];
    device
        .execute(|r| {
            r.bind_pipeline(&fill)?;
            r.push(0, &[a, n])?;
            r.dispatch(groups, 1, 1)?;
            r.bind_pipeline(&sum)?;
            r.push(0, &[a, s, n])?;
            r.dispatch(groups, 1, 1)?;
            // Automatic barriers: the sum reads through addresses what the fill wrote
            // through addresses (no binding names them): one barrier between the two.
            assert_eq!(r.barrier_count(), 1, "fill → sum through device addresses");
            r.full_barrier()?;
            for (k, off) in offsets.iter().enumerate() {
                r.copy_buffer(&data, *off, &probe, k as u64 * 4, 4)?;
            }
            Ok(())
        })
        .unwrap();
    let parts: Vec<u64> = partials.read().unwrap();
    let total: u64 = parts.iter().sum();
    assert_eq!(
        total,
        expected_sum(n),
        "sum of {n} elements ({bytes} bytes)"
    );
    let probed: Vec<u32> = probe.read().unwrap();
    for (k, off) in offsets.iter().enumerate() {
        assert_eq!(probed[k] as u64, (off / 4) >> 12, "element at byte {off}");
    }
    assert_clean(&device);
}

#[test]
fn expected_sum_matches_a_loop() {
    for n in [0u64, 1, 4095, 4096, 4097, 100_000] {
        assert_eq!(
            expected_sum(n),
            (0..n).map(|i| i >> 12).sum::<u64>(),
            "n = {n}"
        );
    }
}
