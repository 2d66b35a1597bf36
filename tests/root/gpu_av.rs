//! GPU-assisted validation in the suite (`LayerFeatures::gpu_assisted`, `KILN_VALIDATION=gpu`):
//! an out-of-bounds write through a storage-buffer descriptor and one through a device
//! address, each caught by the layer on the GPU and reported with the shader's file and
//! line, which the SPIR-V carries because kiln-build compiled it with `// kiln: debug-info`
//! (`glslc -g`). The same pipelines writing in bounds run clean: the errors are the
//! shader's, not kiln's.

use common::{assert_report_clean, device_with_desc, semaphore_state_timeout};
use kiln::{vk, Device, DeviceDesc, LayerFeatures};

fn gpu_av_device() -> Device {
    device_with_desc(
        DeviceDesc::default().layer_features(Some(
            LayerFeatures::default()
                .gpu_assisted(true)
                .shader_printf(false)
                .synchronization(true),
        )),
    )
}

/// The 1-based line of `source` holding `marker`.
fn line_of(source: &str, marker: &str) -> usize {
    1 + source
        .lines()
        .position(|l| l.contains(marker))
        .expect("the marker is in the shader")
}

/// The layer's errors and warnings since the device was made, less layer 1.3.239's
/// `UNASSIGNED-VkSemaphore-state-timeout` (see `common::semaphore_state_timeout`). Layer
/// 1.4 reports GPU-AV's findings from a thread of its own shortly after the host wait (as
/// it does shader printf): up to 5 s are waited for a first error.
fn reported(device: &Device) -> Vec<String> {
    let start = std::time::Instant::now();
    while device.validation_report().errors == 0
        && start.elapsed() < std::time::Duration::from_secs(5)
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let r = device.validation_report();
    assert_eq!(
        r.messages.len(),
        (r.errors + r.warnings) as usize,
        "every message is kept"
    );
    r.messages
        .iter()
        .filter(|m| !semaphore_state_timeout(&r, m))
        .cloned()
        .collect()
}

/// One message, naming `file` at `line`.
#[track_caller]
fn assert_names_line(messages: &[String], file: &str, line: usize) {
    assert_eq!(messages.len(), 1, "one report: {messages:#?}");
    let m = &messages[0];
    println!("gpu_av: {m}");
    assert!(m.contains(file), "names {file}: {m}");
    assert!(
        m.contains(&format!("line {line}")) || m.contains(&format!("{file}:{line}")),
        "names line {line}: {m}"
    );
}

#[test]
fn an_out_of_bounds_descriptor_write_is_caught_with_file_and_line() {
    let device = gpu_av_device();
    let m = kiln::include_spirv!("test/oob_descriptor.comp").unwrap();
    let pipeline = device.compute_pipeline(&m, "main").unwrap();
    let data = device
        .buffer_from_slice("data", vk::BufferUsageFlags::STORAGE_BUFFER, &[0u32; 16])
        .unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_buffer(0, &data).unwrap();
    let run = |index: u32| {
        device
            .execute(|r| {
                r.bind_pipeline(&pipeline)?;
                r.bind_set(0, &set)?;
                r.push(0, &index)?;
                Ok(r.dispatch(1, 1, 1)?)
            })
            .unwrap()
    };
    run(15);
    assert_eq!(
        data.read::<u32>().unwrap()[15],
        7,
        "the in-bounds write landed"
    );
    assert_report_clean(&device.validation_report());
    // One element past the 16: see the device-address test for why no further.
    run(16);
    let line = line_of(
        include_str!("../shaders/oob_descriptor.comp"),
        "the write GPU-AV names",
    );
    assert_names_line(&reported(&device), "oob_descriptor.comp", line);
}

#[test]
fn an_out_of_bounds_device_address_write_is_caught_with_file_and_line() {
    let device = gpu_av_device();
    let m = kiln::include_spirv!("test/oob_address.comp").unwrap();
    let pipeline = device.compute_pipeline(&m, "main").unwrap();
    let words = device
        .buffer_from_slice("words", vk::BufferUsageFlags::STORAGE_BUFFER, &[0u32; 16])
        .unwrap();
    let a = words.device_address().unwrap();
    let run = |index: u32| {
        device
            .execute(|r| {
                r.bind_pipeline(&pipeline)?;
                r.push(0, &[a as u32, (a >> 32) as u32, index])?;
                Ok(r.dispatch(1, 1, 1)?)
            })
            .unwrap()
    };
    run(3);
    assert_eq!(
        words.read::<u32>().unwrap()[3],
        9,
        "the in-bounds write landed"
    );
    assert_report_clean(&device.validation_report());
    // The first word past the buffer's 64 bytes: outside every buffer the layer knows, yet
    // inside the memory block gpu-allocator placed the buffer in, so a GPU on which the
    // layer misses the write does not fault. (Writing 64 MiB past, as this test first did,
    // page-faulted the H200 when layer 1.4.309's GPU-AV let the write through, and every
    // later process's work there timed out for minutes: 2026-12-05.)
    run(16);
    let line = line_of(
        include_str!("../shaders/oob_address.comp"),
        "the write GPU-AV names",
    );
    assert_names_line(&reported(&device), "oob_address.comp", line);
}
