//! Settings read from the process environment, in a test binary of their own: the tests
//! set the variables, which no other test may read meanwhile (the loader and kiln read the
//! environment on every device creation), so each one takes [`ENV`] for its whole run.
//!
//! - `KILN_VALIDATION` turns the validation layer off and on; an explicit
//!   `DeviceDesc::validation` wins.
//! - The persisted `VkPipelineCache` (`KILN_PIPELINE_CACHE_DIR`, `KILN_PIPELINE_CACHE=0`):
//!   written on device drop with a valid `VkPipelineCacheHeaderVersionOne`, loaded by the
//!   next device, and a corrupt file ignored with a warning (never handed to the driver).
//!   Every cache test runs on a real device under validation and asserts it stayed silent.

use std::path::PathBuf;
use std::sync::Mutex;

use common::{assert_clean, assert_watch_clean, device};
use kiln::__private::{check_header, file_name};
use kiln::PipelineCacheStatus;
use kiln::{vk, Device};

/// Held by every test of this binary while it runs.
static ENV: Mutex<()> = Mutex::new(());

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-pc-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("KILN_PIPELINE_CACHE_DIR", &dir);
    std::env::remove_var("KILN_PIPELINE_CACHE");
    dir
}

fn props(device: &Device) -> vk::PhysicalDeviceProperties {
    // SAFETY: a plain query on the device's own instance and physical device.
    unsafe {
        device
            .raw_instance()
            .get_physical_device_properties(device.raw_physical_device())
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SaxpyParams {
    a: f32,
    n: u32,
}

/// Creates the saxpy pipeline through the cache and checks its results exactly.
fn run_saxpy(device: &Device) {
    let module = kiln::include_spirv!("saxpy.comp").unwrap();
    let pipeline = device.compute_pipeline(&module, "main").unwrap();
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let xb = device.buffer_from_slice("x", usage, &x).unwrap();
    let yb = device.buffer_from_slice("y", usage, &y).unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_named("X", &xb).unwrap();
    set.write_named("Y", &yb).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            r.push(
                0,
                &SaxpyParams {
                    a: 2.0,
                    n: n as u32,
                },
            )?;
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    let out: Vec<f32> = yb.read().unwrap();
    for i in 0..n {
        assert_eq!(out[i], 2.0 * x[i] + y[i], "element {i}");
    }
}

#[test]
fn cache_round_trips_through_disk() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let dir = fresh_dir("rt");
    let first = device();
    let p = props(&first);
    let path = dir.join(file_name(&p));
    assert_eq!(
        first.pipeline_cache_status(),
        &PipelineCacheStatus::Empty { path: path.clone() }
    );
    assert_eq!(first.pipeline_cache_path(), Some(path.as_path()));
    run_saxpy(&first);
    assert_clean(&first);
    let watch = first.validation_watch();
    drop(first);
    assert_watch_clean(&watch);

    let data = std::fs::read(&path).expect("the cache file is written when the device drops");
    assert_eq!(check_header(&data, &p), Ok(()));
    assert_eq!(u32::from_le_bytes(data[4..8].try_into().unwrap()), 1);
    assert_eq!(
        u32::from_le_bytes(data[8..12].try_into().unwrap()),
        p.vendor_id
    );
    assert_eq!(&data[16..32], &p.pipeline_cache_uuid);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "{names:?}");

    let second = device();
    assert_eq!(
        second.pipeline_cache_status(),
        &PipelineCacheStatus::Loaded {
            path: path.clone(),
            bytes: data.len()
        }
    );
    run_saxpy(&second);
    run_saxpy(&second);
    assert_clean(&second);
    let watch = second.validation_watch();
    drop(second);
    assert_watch_clean(&watch);
    assert_eq!(check_header(&std::fs::read(&path).unwrap(), &p), Ok(()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_cache_file_is_ignored_with_a_warning() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let dir = fresh_dir("corrupt");
    let first = device();
    let p = props(&first);
    let path = dir.join(file_name(&p));
    drop(first);

    // Garbage, a header for another device, and a truncated header.
    let mut other_uuid = std::fs::read(&path).unwrap();
    other_uuid[20] ^= 0xff;
    let cases: [(Vec<u8>, &str); 3] = [
        (vec![0xab; 100], "header length"),
        (other_uuid, "UUID"),
        (vec![32, 0, 0], "shorter"),
    ];
    for (bytes, why) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let d = device();
        match d.pipeline_cache_status() {
            PipelineCacheStatus::Ignored { path: p2, reason } => {
                assert_eq!(p2, &path);
                assert!(
                    reason.contains(why),
                    "reason `{reason}` should mention {why}"
                );
            }
            other => panic!("expected the file to be ignored, got {other:?}"),
        }
        run_saxpy(&d);
        assert_clean(&d);
        let watch = d.validation_watch();
        drop(d);
        assert_watch_clean(&watch);
        // The bad file was replaced by a valid one.
        assert_eq!(check_header(&std::fs::read(&path).unwrap(), &p), Ok(()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cache_can_be_disabled() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let dir = fresh_dir("off");
    std::env::set_var("KILN_PIPELINE_CACHE", "0");
    let d = device();
    assert_eq!(d.pipeline_cache_status(), &PipelineCacheStatus::Disabled);
    assert_eq!(d.pipeline_cache_path(), None);
    run_saxpy(&d);
    assert_clean(&d);
    drop(d);
    std::env::remove_var("KILN_PIPELINE_CACHE");
    assert!(
        !dir.exists(),
        "nothing may be written when the cache is disabled"
    );
}

/// `KILN_VALIDATION=0` turns the layer off (report says so, work still runs);
/// `KILN_VALIDATION=1` turns it on; an explicit `DeviceDesc::validation` wins over both.
#[test]
fn kiln_validation_env_overrides() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    // The default pipeline cache folder, as in a process of its own.
    std::env::remove_var("KILN_PIPELINE_CACHE_DIR");
    std::env::set_var("KILN_VALIDATION", "0");
    let off = kiln::Device::new().unwrap();
    assert!(!off.validation_report().enabled);
    let b = off.storage_buffer::<u32>("b", 4).unwrap();
    assert_eq!(b.read::<u32>().unwrap(), vec![0; 4]);
    drop(b);
    let forced = kiln::Device::with_desc(&kiln::DeviceDesc {
        validation: Some(true),
        ..Default::default()
    })
    .unwrap();
    assert!(forced.validation_report().enabled);
    drop((off, forced));
    std::env::set_var("KILN_VALIDATION", "1");
    let on = kiln::Device::new().unwrap();
    let r = on.validation_report();
    assert!(r.enabled);
    let b = on.storage_buffer::<u32>("b", 4).unwrap();
    assert_eq!(b.read::<u32>().unwrap(), vec![0; 4]);
    drop(b);
    let r2 = on.validation_report();
    assert!(r2.is_clean(), "{:?}", r2.messages);
    drop(on);
    std::env::remove_var("KILN_VALIDATION");
}
