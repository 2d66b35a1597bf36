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
//! - Nothing vanishes (issue 13): without a `log` logger, validation errors and shader
//!   printf go to stderr; `KILN_VALIDATION_FAIL=1` turns a submission's validation errors
//!   into `KILN-E121`; `KILN_VALIDATION=printf` captures `debugPrintfEXT` output;
//!   `KILN_WAIT_TIMEOUT_MS` and bad `KILN_VALIDATION` values are checked. These run in a
//!   child process of this binary ([`child`]: one test, no logger installed), entered
//!   through the `child_*` tests, which do nothing unless `KILN_TEST_CHILD` names them.

use std::sync::Mutex;

use common::temp::TempDir;
use common::{assert_clean, assert_watch_clean, device};
use kiln::hooks::{check_header, file_name};
use kiln::PipelineCacheStatus;
use kiln::{vk, Device};

/// Held by every test of this binary while it runs.
static ENV: Mutex<()> = Mutex::new(());

/// The pipeline cache's directory of one test: `KILN_PIPELINE_CACHE_DIR` names it (not
/// made: kiln makes it) until the test ends, then both go (a later device of the process
/// would make it again).
struct CacheDir(TempDir);

impl std::ops::Deref for CacheDir {
    type Target = TempDir;
    fn deref(&self) -> &TempDir {
        &self.0
    }
}

impl Drop for CacheDir {
    fn drop(&mut self) {
        std::env::remove_var("KILN_PIPELINE_CACHE_DIR");
    }
}

fn fresh_dir(name: &str) -> CacheDir {
    let dir = TempDir::new(&format!("kiln-pc-test-{name}"));
    let _ = std::fs::remove_dir(dir.path());
    std::env::set_var("KILN_PIPELINE_CACHE_DIR", dir.path());
    std::env::remove_var("KILN_PIPELINE_CACHE");
    CacheDir(dir)
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
            Ok(r.dispatch_threads(n as u32)?)
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
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
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
    let forced =
        kiln::Device::with_desc(&kiln::DeviceDesc::default().validation(Some(true))).unwrap();
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

/// `KILN_READBACK_QUEUE` chooses where kiln's readbacks run while
/// `DeviceDesc::readback_queue` is `Auto`; an explicit description wins; a value kiln does
/// not know is logged (`KILN-W012`) and kiln's policy (the last transfer queue) is used.
/// Emulated queues: on lavapipe every kind is a queue of its own, so the choices differ.
#[test]
fn kiln_readback_queue_env_chooses_the_readback_queue() {
    use kiln::{QueueKind, ReadbackQueue};
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let desc = |readback_queue| {
        kiln::DeviceDesc::default()
            .validation(Some(true))
            .emulate_queues(true)
            .readback_queue(readback_queue)
    };
    let last_transfer = |d: &Device| d.queues(QueueKind::Transfer).pop().unwrap();
    std::env::set_var("KILN_READBACK_QUEUE", "main");
    let d = Device::with_desc(&desc(ReadbackQueue::Auto)).unwrap();
    assert_eq!(d.readback_queue(), d.queue(QueueKind::Main));
    assert_ne!(d.readback_queue(), last_transfer(&d));
    let d = Device::with_desc(&desc(ReadbackQueue::Compute)).unwrap();
    assert_eq!(
        d.readback_queue(),
        d.queue(QueueKind::Compute),
        "the description wins"
    );
    std::env::set_var("KILN_READBACK_QUEUE", "compute-shader");
    let d = Device::with_desc(&desc(ReadbackQueue::Auto)).unwrap();
    // Beside the one async-compute queue: the main queue.
    assert_eq!(d.readback_queue(), d.queue(QueueKind::Main));
    std::env::set_var("KILN_READBACK_QUEUE", "sideways");
    let d = Device::with_desc(&desc(ReadbackQueue::Auto)).unwrap();
    assert_eq!(
        d.readback_queue(),
        last_transfer(&d),
        "unknown value: kiln's policy"
    );
    std::env::remove_var("KILN_READBACK_QUEUE");
    let d = Device::with_desc(&desc(ReadbackQueue::Auto)).unwrap();
    assert_eq!(d.readback_queue(), last_transfer(&d));
    assert!(d.validation_report().is_clean());
}

/// Runs this test binary again for the one test `name` (with `KILN_TEST_CHILD=name` and
/// `vars`), and returns whether it passed and its stdout and stderr.
fn child(name: &str, vars: &[(&str, &str)]) -> (bool, String, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("KILN_TEST_CHILD", name)
        .env_remove("RUST_LOG");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the child test");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether this process is the child run for `name`.
fn is_child(name: &str) -> bool {
    std::env::var("KILN_TEST_CHILD").as_deref() == Ok(name)
}

/// A device under validation, without installing a logger (the child tests).
fn bare_device() -> Device {
    Device::with_desc(&kiln::DeviceDesc::default().validation(Some(true)))
        .expect("a Vulkan device under validation")
}

/// The child of [`validation_errors_reach_stderr_without_a_logger`].
#[test]
fn child_no_logger() {
    if !is_child("child_no_logger") {
        return;
    }
    assert_eq!(
        log::max_level(),
        log::LevelFilter::Off,
        "no logger in the child"
    );
    let device = bare_device();
    // SAFETY (test): a deliberately invalid call: a buffer of size 0 violates
    // VUID-VkBufferCreateInfo-size-00912. lavapipe tolerates it.
    unsafe {
        let info = vk::BufferCreateInfo::default()
            .size(0)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        if let Ok(b) = device.raw().create_buffer(&info, None) {
            device.raw().destroy_buffer(b, None);
        }
    }
    assert!(device.validation_report().errors >= 1);
}

#[test]
fn validation_errors_reach_stderr_without_a_logger() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let (ok, stdout, stderr) = child("child_no_logger", &[]);
    assert!(ok, "child failed:\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("kiln: ERROR kiln::validation:")
            && stderr.contains("VUID-VkBufferCreateInfo-size-00912"),
        "the validation error is not on stderr:\n{stderr}"
    );
}

/// The child of [`kiln_validation_fail_turns_errors_into_err`].
#[test]
fn child_validation_fail() {
    if !is_child("child_validation_fail") {
        return;
    }
    let device = bare_device();
    let buf = device.storage_buffer::<u32>("target", 16).unwrap();
    device.execute(|r| Ok(r.fill_buffer(&buf, 3)?)).unwrap();
    let e = device
        .execute(|r| {
            // SAFETY (test): a fill of size 0 (VUID-vkCmdFillBuffer-size-00026) of a live
            // buffer: invalid, harmless on lavapipe.
            unsafe { device.raw().cmd_fill_buffer(r.raw(), buf.raw(), 0, 0, 9) };
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E121", "{e}");
    assert!(
        e.to_string().contains("VUID-vkCmdFillBuffer-size-00026"),
        "{e}"
    );
    println!("child: {e}");
}

#[test]
fn kiln_validation_fail_turns_errors_into_err() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let (ok, stdout, stderr) = child("child_validation_fail", &[("KILN_VALIDATION_FAIL", "1")]);
    assert!(ok, "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("child: KILN-E121"), "{stdout}");
    // Without the variable the same submission returns Ok (and the error is on stderr).
    let (ok, stdout, stderr) = child("child_validation_fail", &[("KILN_VALIDATION_FAIL", "0")]);
    assert!(
        !ok,
        "the child should fail without KILN_VALIDATION_FAIL:\n{stdout}"
    );
    assert!(
        stderr.contains("VUID-vkCmdFillBuffer-size-00026"),
        "{stderr}"
    );
}

/// The child of [`shader_printf_is_captured`].
#[test]
fn child_printf() {
    if !is_child("child_printf") {
        return;
    }
    let device = bare_device();
    let module = kiln::include_spirv!("test/printf.comp").unwrap();
    let pipeline = device.compute_pipeline(&module, "main").unwrap();
    let out = device.storage_buffer::<u32>("out", 64).unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_threads(64)?)
        })
        .unwrap();
    assert_eq!(out.read::<u32>().unwrap()[63], 189);
    // Layer 1.4 hands printf output over from a thread of its own after the wait: give it
    // up to 5 s to arrive (1.3.239 delivers it inside the wait).
    let start = std::time::Instant::now();
    while device.validation_report().printf.is_empty()
        && start.elapsed() < std::time::Duration::from_secs(5)
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let report = device.validation_report();
    println!("printf lines: {:?}", report.printf);
    assert!(
        report
            .printf
            .iter()
            .any(|l| l.ends_with("kiln printf test: value 42 of 64")),
        "{:?}",
        report.printf
    );
    let name = format!("{}:main", module.label());
    assert!(
        report.printf.iter().any(|l| l.starts_with(&name)),
        "{name}: {:?}",
        report.printf
    );
    assert!(report.is_clean(), "{:?}", report.messages);
}

#[test]
fn shader_printf_is_captured() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let (ok, stdout, stderr) = child("child_printf", &[("KILN_VALIDATION", "printf")]);
    assert!(ok, "child failed:\n{stdout}\n{stderr}");
    // No logger in the child: the printf line went to stderr too.
    assert!(
        stderr.contains("kiln: INFO kiln::printf:")
            && stderr.contains("kiln printf test: value 42 of 64"),
        "{stderr}"
    );
}

#[test]
fn bad_observe_settings_are_coded_errors() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("KILN_WAIT_TIMEOUT_MS", "soon");
    let e = kiln::Device::new().unwrap_err();
    assert_eq!(e.code(), "KILN-E128", "{e}");
    std::env::set_var("KILN_WAIT_TIMEOUT_MS", "250");
    std::env::set_var("KILN_VALIDATION", "1,loud");
    let e = kiln::Device::new().unwrap_err();
    assert_eq!(e.code(), "KILN-E127", "{e}");
    assert!(e.to_string().contains("`loud`"), "{e}");
    std::env::set_var("KILN_VALIDATION", "printf,gpu");
    let e = kiln::Device::new().unwrap_err();
    assert_eq!(e.code(), "KILN-E126", "{e}");
    std::env::remove_var("KILN_VALIDATION");
    // A good value is taken: a gated submission times out after it.
    let device = device();
    let gate = common::gate::Gate::new(&device);
    let sub = gate.submit_on(&device.queue(kiln::QueueKind::Main), |_| Ok(()));
    let e = sub.unwrap().wait().unwrap_err();
    std::env::remove_var("KILN_WAIT_TIMEOUT_MS");
    assert_eq!(e.code(), "KILN-E108", "{e}");
    assert!(
        e.to_string().contains("250 ms") && e.to_string().contains("`submit`"),
        "{e}"
    );
    gate.open();
    drop(gate);
    assert_clean(&device);
}

/// The child of [`kiln_trace_writes_a_trace_when_the_device_drops`].
#[test]
fn child_trace() {
    if !is_child("child_trace") {
        return;
    }
    let device = bare_device();
    let buf = device.storage_buffer::<u32>("b", 4096).unwrap();
    // No scope: KILN_TRACE times every submission.
    device.execute(|r| Ok(r.fill_buffer(&buf, 5)?)).unwrap();
    assert_eq!(buf.read::<u32>().unwrap()[4095], 5);
    assert!(device.validation_report().is_clean());
}

#[test]
fn kiln_trace_writes_a_trace_when_the_device_drops() {
    let _g = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let path = std::env::temp_dir().join(format!("kiln-env-trace-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let (ok, stdout, stderr) = child("child_trace", &[("KILN_TRACE", path.to_str().unwrap())]);
    assert!(ok, "child failed:\n{stdout}\n{stderr}");
    let text = std::fs::read_to_string(&path).expect("KILN_TRACE wrote the file");
    let _ = std::fs::remove_file(&path);
    let json: serde_json::Value = serde_json::from_str(&text).expect("the trace is JSON");
    let events = json["traceEvents"].as_array().unwrap();
    let named = |name: &str, cat: &str| {
        events
            .iter()
            .filter(|e| e["name"] == name && e["cat"] == cat && e["ph"] == "X")
            .count()
    };
    // The fill's execute (and the zero-fill of storage_buffer): record, submit, wait on
    // the CPU and the submission on the GPU, each with a positive duration.
    for name in ["record", "submit", "wait"] {
        assert!(named(name, "cpu") >= 2, "{name}: {text}");
    }
    assert!(named("execute", "gpu") >= 2, "{text}");
    assert!(events
        .iter()
        .filter(|e| e["ph"] == "X")
        .all(|e| e["dur"].as_f64().unwrap() > 0.0));
}
