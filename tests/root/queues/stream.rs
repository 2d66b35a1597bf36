//! The stream example's pipeline (`kiln_examples::stream`: upload i+1 / compute i / readback
//! i-1 on three queues) against its CPU reference, all-DMA and with part of every chunk
//! written by the host through the ring buffer's mapping; the reference's closed form.

use common::{assert_clean, device, emulated_device};
use kiln::vk;

/// The stream example's pipeline (upload i+1 / compute i / readback i-1 on three queues)
/// over a small array, against the CPU reference; then the serial run of the same work.
#[test]
fn a_stream_over_three_queues_matches_the_cpu_reference() {
    for device in [device(), emulated_device()] {
        let mut stream = kiln_examples::stream::Stream::new(&device, 16_384, 7, 5).unwrap();
        // The warm-up's copies leave nothing behind that the check would see.
        stream
            .warm_up(&device, std::time::Duration::from_millis(20))
            .unwrap();
        for overlapped in [true, false, true] {
            stream.run(&device, overlapped).unwrap();
            assert_eq!(stream.check().unwrap(), None, "overlapped: {overlapped}");
        }
        // The check fails on wrong data: the same output checked against one iteration
        // more differs at the first element; output cleared by the check differs too.
        stream.run(&device, true).unwrap();
        stream.iters += 1;
        assert_eq!(stream.check().unwrap(), Some(0));
        stream.iters -= 1;
        assert_eq!(stream.check().unwrap(), Some(0), "the output was cleared");
        assert_clean(&device);
    }
}

/// The stream check's closed form (`f^n` as one multiply-add) equals the kernel's `n`
/// iterated LCG steps, for every count up to 1000 (the H200's calibration chose 208–668)
/// and for counts with high bits set.
#[test]
fn the_stream_check_closed_form_equals_the_iterated_steps() {
    use kiln_examples::stream::{closed_form, input_value, reference};
    let xs: Vec<u32> = (0..64).map(input_value).chain([0, 1, u32::MAX]).collect();
    for n in (0..=1000).chain([4095, 65_537, 1 << 20]) {
        let (a, c) = closed_form(n);
        for &x in &xs {
            assert_eq!(
                a.wrapping_mul(x).wrapping_add(c),
                reference(x, n),
                "{n} steps of x = {x}"
            );
        }
    }
    assert_eq!(closed_form(0), (1, 0));
    assert_eq!(closed_form(1), (1_664_525, 1_013_904_223));
}

/// The stream with part of every chunk written by the host through the ring buffer's
/// mapping (`Stream::with_host_writes`, the H200's second path into the device beside the
/// DMA copies): the ring's input is host-visible memory, the overlapped run (host part
/// first, then the DMA part into the same buffer on another queue) and the serial run both
/// match the CPU reference, with half, all and none of each chunk written by the host; a
/// stream made without host writes refuses a fraction.
#[test]
fn a_stream_with_host_written_chunks_matches_the_cpu_reference() {
    for device in [device(), emulated_device()] {
        let mut stream =
            kiln_examples::stream::Stream::with_host_writes(&device, 16_384, 7, 5, 0.5).unwrap();
        assert_eq!(stream.host_elements(), 8192);
        assert!(stream
            .ring_in_memory()
            .contains(vk::MemoryPropertyFlags::HOST_VISIBLE));
        for (fraction, host) in [(0.5, 8192), (1.0, 16_384), (0.0, 0), (0.3, 4096)] {
            assert!(stream.set_host_writes(fraction));
            assert_eq!(stream.host_elements(), host, "fraction {fraction}");
            for overlapped in [true, false] {
                stream.run(&device, overlapped).unwrap();
                assert_eq!(
                    stream.check().unwrap(),
                    None,
                    "fraction {fraction}, overlapped: {overlapped}"
                );
            }
        }
        // Five chunks in flight (a ring of five buffer pairs), 7 chunks: slots reused.
        let mut five =
            kiln_examples::stream::Stream::with_ring(&device, 16_384, 7, 5, 0.5, 5).unwrap();
        five.run(&device, true).unwrap();
        assert_eq!(five.check().unwrap(), None, "a ring of five");
        let mut plain = kiln_examples::stream::Stream::new(&device, 4096, 3, 2).unwrap();
        assert!(
            !plain.set_host_writes(0.5),
            "a GpuOnly ring takes no host writes"
        );
        assert_eq!(plain.host_elements(), 0);
        assert_clean(&device);
    }
}
