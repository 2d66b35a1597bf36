//! Seeing what the GPU did (issue 13): GPU timing scopes and whole-submission timings
//! (timestamp queries from reused per-queue pools), timeouts that name the submission and
//! its scopes, validation errors that fail a submission (`DeviceDesc::validation_fail`) and
//! name the Rust line that recorded the offending command.
//!
//! The subprocess tests (stderr without a logger, the `KILN_*` variables, shader printf
//! through `KILN_VALIDATION=printf`) are in `tests/env.rs`.

use std::time::Duration;

use common::add::{self, storage};
use common::gate::Gate;
use common::{assert_clean, device, device_with_desc};
use kiln::{vk, DeviceDesc, GpuTimings};

/// vector_add over `n` elements, `times` dispatches in a row inside a scope named `name`.
fn timed_adds(device: &kiln::Device, n: usize, scopes: &[(&str, u32)], desc: &str) -> GpuTimings {
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let p = add::vector_add(device);
    let (ab, bb) = (storage(device, "a", &a), storage(device, "b", &a));
    let cb = device.storage_buffer::<f32>("c", n).unwrap();
    let set = add::set(&p, &ab, &bb, &cb);
    let ((), t) = device
        .execute_timed(desc, |r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            for (name, times) in scopes {
                r.scope(name, |r| {
                    for _ in 0..*times {
                        r.dispatch_threads(n as u32)?;
                    }
                    Ok(())
                })?;
            }
            Ok(())
        })
        .unwrap();
    let c: Vec<f32> = cb.read().unwrap();
    assert_eq!(c[n - 1], 2.0 * (n - 1) as f32);
    t
}

#[test]
fn scopes_are_timed_in_order_and_ten_times_the_work_takes_longer() {
    let device = device();
    let t = timed_adds(&device, 1 << 20, &[("1x", 1), ("10x", 10)], "adds");
    assert_eq!(t.label, "adds");
    let names: Vec<&str> = t.scopes.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["1x", "10x"]);
    let (one, ten) = (&t.scopes[0], &t.scopes[1]);
    assert!(one.duration_ns > 0 && ten.duration_ns > 0, "{t:?}");
    assert!(
        ten.start_ns >= one.start_ns + one.duration_ns,
        "scopes overlap: {t:?}"
    );
    assert!(ten.duration_ns > one.duration_ns, "10x not longer: {t:?}");
    assert!(
        t.gpu_ns >= one.duration_ns + ten.duration_ns,
        "submission shorter than its scopes: {t:?}"
    );
    assert_eq!((one.depth, ten.depth), (0, 0));
    assert_eq!(one.file, file!());
    assert!(one.line > 0);
    assert_clean(&device);
}

#[test]
fn whole_submissions_are_timed_and_nested_scopes_fit_inside() {
    let device = device_with_desc(DeviceDesc::default().timing(Some(true)));
    // A plain execute is timed as a whole.
    let sub = device
        .submit(|r| Ok(r.fill_buffer(&device.storage_buffer::<u32>("f", 1 << 16).unwrap(), 7)?))
        .unwrap();
    let t = sub.wait_timed().unwrap();
    assert!(t.gpu_ns > 0, "{t:?}");
    assert!(t.scopes.is_empty());

    let n = 1 << 18;
    let p = add::vector_add(&device);
    let a: Vec<f32> = vec![1.0; n];
    let (ab, bb) = (storage(&device, "a", &a), storage(&device, "b", &a));
    let cb = device.storage_buffer::<f32>("c", n).unwrap();
    let set = add::set(&p, &ab, &bb, &cb);
    let ((), t) = device
        .execute_timed("nested", |r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.begin_scope("outer")?;
            r.scope("inner-a", |r| Ok(r.dispatch_threads(n as u32)?))?;
            r.scope("inner-b", |r| Ok(r.dispatch_threads(n as u32)?))?;
            // A name again after another: each scope keeps its own.
            r.scope("inner-a", |r| Ok(r.dispatch_threads(n as u32)?))?;
            Ok(r.end_scope()?)
        })
        .unwrap();
    let names: Vec<(&str, u32)> = t
        .scopes
        .iter()
        .map(|s| (s.name.as_str(), s.depth))
        .collect();
    assert_eq!(
        names,
        [("outer", 0), ("inner-a", 1), ("inner-b", 1), ("inner-a", 1)]
    );
    let outer = t.scope("outer").unwrap();
    for inner in &t.scopes[1..] {
        assert!(inner.duration_ns > 0);
        assert!(inner.start_ns >= outer.start_ns, "{t:?}");
        assert!(
            inner.start_ns + inner.duration_ns <= outer.start_ns + outer.duration_ns,
            "{t:?}"
        );
    }
    assert!(t.gpu_ns >= outer.duration_ns, "{t:?}");
    assert_eq!(cb.read::<f32>().unwrap()[n - 1], 2.0);
    assert_clean(&device);
}

#[test]
fn query_pools_are_reused_not_leaked() {
    let device = device();
    let buf = device.storage_buffer::<u32>("b", 1024).unwrap();
    let run = || {
        device
            .execute_timed("fill", |r| {
                for i in 0..40 {
                    r.scope("fill", |r| Ok(r.fill_buffer(&buf, i)?))?;
                }
                Ok(())
            })
            .unwrap()
            .1
    };
    let first = run();
    // 40 scopes: 40 starts and 40 ends, 64 queries a pool.
    assert_eq!(first.scopes.len(), 40);
    let created = device.debug_query_pools_created();
    assert_eq!(created, 2);
    for _ in 0..20 {
        assert_eq!(run().scopes.len(), 40);
    }
    assert_eq!(device.debug_query_pools_created(), created, "pools leaked");
    assert_eq!(buf.read::<u32>().unwrap()[0], 39);
    assert_clean(&device);
    let watch = device.validation_watch();
    drop(buf);
    drop(device);
    common::assert_watch_clean(&watch);
}

#[test]
fn scope_mismatches_and_untimed_submissions_are_errors() {
    let device = device();
    let e = device.execute(|r| Ok(r.end_scope()?)).unwrap_err();
    assert_eq!(e.code(), "KILN-E123", "{e}");
    let e = device
        .execute(|r| Ok(r.begin_scope("left-open")?))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E123", "{e}");
    assert!(e.to_string().contains("left-open"), "{e}");
    let sub = device.submit(|_| Ok(())).unwrap();
    let e = sub.wait_timed().unwrap_err();
    assert_eq!(e.code(), "KILN-E124", "{e}");
    assert_clean(&device);
}

#[test]
fn a_reused_recording_is_timed_at_every_submission() {
    let device = device();
    let buf = device.storage_buffer::<u32>("b", 1 << 16).unwrap();
    let mut rec = device
        .record(|r| r.scope("fill", |r| Ok(r.fill_buffer(&buf, 5)?)))
        .unwrap();
    for _ in 0..3 {
        let t = rec.submit().unwrap().wait_timed().unwrap();
        assert_eq!(t.label, "recording");
        assert_eq!(t.scopes.len(), 1);
        assert!(t.scopes[0].duration_ns > 0);
    }
    // A submission read after the recording was submitted again: its queries were reset.
    let old = rec.submit().unwrap();
    old.wait_timed().unwrap();
    let first = rec.submit().unwrap();
    let second = rec.submit().unwrap();
    let e = first.wait_timed().unwrap_err();
    assert_eq!(e.code(), "KILN-E124", "{e}");
    second.wait_timed().unwrap();
    drop(rec);
    assert_eq!(buf.read::<u32>().unwrap()[100], 5);
    assert_clean(&device);
}

#[test]
fn a_timeout_names_the_submission_and_its_scopes() {
    let device =
        device_with_desc(DeviceDesc::default().wait_timeout(Some(Duration::from_millis(50))));
    let gate = Gate::new(&device);
    let sub = gate
        .submit_labeled(&device.queue(kiln::QueueKind::Main), "gated-work", |r| {
            r.scope("held", |_| Ok(()))
        })
        .unwrap();
    let e = sub.wait().unwrap_err();
    assert_eq!(e.code(), "KILN-E108", "{e}");
    let text = e.to_string();
    assert!(text.contains("50 ms"), "{text}");
    assert!(
        text.contains("gated-work") && text.contains("held"),
        "{text}"
    );
    gate.open();
    device.wait_idle().unwrap();
    drop(gate);
    assert_clean(&device);
}

#[test]
fn validation_errors_fail_the_submission_and_name_the_users_line() {
    let device = device_with_desc(DeviceDesc::default().validation_fail(Some(true)));
    let buf = device.storage_buffer::<u32>("target", 64).unwrap();
    // A valid submission passes.
    device.execute(|r| Ok(r.fill_buffer(&buf, 1)?)).unwrap();
    let mut line = 0;
    let e = device
        .execute(|r| {
            // SAFETY (test): only the overlapping copy is recorded through it, into a live
            // 256-byte buffer.
            let (cb, at_line) = (unsafe { r.raw() }, line!());
            line = at_line;
            unsafe { common::record_overlapping_copy(&device, cb, &buf) };
            Ok(())
        })
        .unwrap_err();
    let (text, at) = common::assert_overlapping_copy_reported(&e, file!(), line);
    // The layer names the objects by kiln's names: the buffer's label, the command
    // buffer's submission label.
    assert!(text.contains("name = target"), "{text}");
    assert!(text.contains("name = execute"), "{text}");
    assert!(text.contains("`execute`"), "{text}");
    // The report names it too, and the device keeps working.
    let r = device.validation_report();
    assert!(
        r.messages.iter().any(|m| m.contains(&at)),
        "{:?}",
        r.messages
    );
    device.execute(|r| Ok(r.fill_buffer(&buf, 2)?)).unwrap();
    assert_eq!(buf.read::<u32>().unwrap()[0], 2);
}

/// The events of a trace named `name`.
fn events<'j>(json: &'j serde_json::Value, name: &str) -> Vec<&'j serde_json::Value> {
    json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == name && e["ph"] == "X")
        .collect()
}

#[test]
fn the_trace_has_cpu_spans_and_gpu_scopes_with_positive_durations() {
    let device = device();
    device.start_trace();
    let t = timed_adds(&device, 1 << 18, &[("add-1x", 1), ("add-4x", 4)], "traced");
    let path = std::env::temp_dir().join(format!("kiln-trace-{}.json", std::process::id()));
    device.write_trace(&path).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("the trace is JSON");
    let _ = std::fs::remove_file(&path);
    // CPU spans of the timed submission, on a CPU thread's track.
    for name in ["record", "submit", "wait"] {
        let e = events(&json, name);
        let ours: Vec<_> = e
            .iter()
            .filter(|e| e["args"]["label"] == "traced")
            .collect();
        assert_eq!(ours.len(), 1, "{name}: {e:?}");
        assert!(
            ours[0]["dur"].as_f64().unwrap() > 0.0,
            "{name}: {:?}",
            ours[0]
        );
        assert!(
            ours[0]["tid"].as_u64().unwrap() < 1 << 20,
            "{name} not on a CPU track"
        );
    }
    // The submission and its scopes on the main queue's GPU track, nested in time.
    let sub = events(&json, "traced");
    assert_eq!(sub.len(), 1, "{sub:?}");
    let gpu_track = 1u64 << 20;
    assert_eq!(sub[0]["tid"].as_u64(), Some(gpu_track));
    let (s0, sd) = (
        sub[0]["ts"].as_f64().unwrap(),
        sub[0]["dur"].as_f64().unwrap(),
    );
    assert!(sd > 0.0);
    let mut last_end = s0;
    for name in ["add-1x", "add-4x"] {
        let e = events(&json, name);
        assert_eq!(e.len(), 1, "{name}: {e:?}");
        let (ts, dur) = (e[0]["ts"].as_f64().unwrap(), e[0]["dur"].as_f64().unwrap());
        assert!(dur > 0.0, "{name}: {:?}", e[0]);
        assert_eq!(e[0]["tid"].as_u64(), Some(gpu_track));
        assert!(
            ts >= last_end - 0.001 && ts + dur <= s0 + sd + 0.001,
            "{name}: {json}"
        );
        last_end = ts + dur;
    }
    assert_eq!(t.scopes.len(), 2);
    // The tracks are named.
    let names: Vec<&str> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert!(names.contains(&"GPU queue 0 (Main)"), "{names:?}");
    assert_clean(&device);
}

/// Printf and synchronization validation run together (the printf line itself is checked
/// in `tests/env.rs`, through `KILN_VALIDATION=printf`); printf with GPU-assisted validation
/// is refused. (GPU-assisted validation runs in `gpu_av.rs`.)
#[test]
fn layer_features_combine_where_the_layer_allows() {
    let device = device_with_desc(
        DeviceDesc::default().layer_features(Some(
            kiln::LayerFeatures::default()
                .shader_printf(true)
                .synchronization(true)
                .gpu_assisted(false),
        )),
    );
    add::run_and_check(&device, 1000);
    assert_clean(&device);
    assert!(device.validation_report().printf.is_empty());
    drop(device);
    let e = kiln::Device::with_desc(
        &DeviceDesc::default()
            .validation(Some(true))
            .layer_features(Some(
                kiln::LayerFeatures::default()
                    .gpu_assisted(true)
                    .shader_printf(true)
                    .synchronization(false),
            )),
    )
    .unwrap_err();
    assert_eq!(e.code(), "KILN-E126", "{e}");
}

/// A hazard the layer finds at submit time (two queues using one buffer only through raw
/// commands, which kiln cannot see) names the submission and the line of the `raw()` call.
#[test]
fn submit_time_hazards_name_the_submission_and_the_raw_calls_line() {
    let device = common::emulated_device();
    let (compute, transfer) = (
        device.queue(kiln::QueueKind::Compute),
        device.queue(kiln::QueueKind::Transfer),
    );
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let x = device.buffer_from_slice("x", usage, &[0u32; 1024]).unwrap();
    let y = device.buffer_from_slice("y", usage, &[0u32; 1024]).unwrap();
    let (xr, yr) = (x.raw(), y.raw());
    // Held until the copy is submitted (see queues::untracked_raw_copies_…).
    let gate = Gate::new(&device);
    let write = gate
        .submit_on(&compute, |r| {
            // SAFETY: a raw fill of a live buffer; waited for below, before the buffer drops.
            unsafe { device.raw().cmd_fill_buffer(r.raw(), xr, 0, 4096, 7) };
            Ok(())
        })
        .unwrap();
    let mut line = 0;
    let (_, read) = transfer
        .submit_labeled("raw-copy", |r| {
            let region = vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: 4096,
            };
            // SAFETY: only the copy below is recorded through it.
            let (cb, at_line) = (unsafe { r.raw() }, line!());
            line = at_line;
            // SAFETY: a raw copy between live buffers, in range; waited for below.
            unsafe { device.raw().cmd_copy_buffer(cb, xr, yr, &[region]) };
            Ok(())
        })
        .unwrap();
    gate.open();
    write.wait().unwrap();
    read.wait().unwrap();
    let at = format!(
        "submission `raw-copy`, raw commands recorded at `{}:{line}`",
        file!()
    );
    let report = device.validation_report();
    let found = report.messages.iter().any(|m| m.contains(&at));
    if common::proved_by_raw_batches_under_layer_1_4(&device, &report, found) {
        return;
    }
    assert!(
        report
            .messages
            .iter()
            // RACING where the kinds have queues of their own (the H200).
            .any(|m| (m.contains("SYNC-HAZARD-READ-AFTER-WRITE")
                || m.contains("SYNC-HAZARD-READ-RACING-WRITE"))
                && m.contains(&at)),
        "{at} not in {:?}",
        report.messages
    );
}
