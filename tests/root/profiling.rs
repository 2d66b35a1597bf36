//! Live GPU profiling (issue 27, part 3): the GPU zones kiln emits for every waited
//! submission (`kiln::ZoneSink`): names, nesting, queue tracks and monotonic calibrated
//! times, through a sink of the test's own; the Chrome trace still written beside them;
//! with kiln-tests' feature `profilers` (on by default: kiln's `tracy` and `puffin`), the
//! zones read back from puffin's frame, and Tracy's GPU contexts fed without a GUI.

use std::sync::{Arc, Mutex};

use common::{assert_clean, device_with_desc};
use kiln::{DeviceDesc, GpuZone, QueueKind, ZoneSink};

/// A track's name and its zones as (queue, name, depth).
type Track = (String, Vec<(usize, String, u32)>);

/// Keeps every zone it gets, with the queue's name.
#[derive(Default)]
struct Kept(Mutex<Vec<(String, Vec<GpuZone>)>>);

impl ZoneSink for Kept {
    fn submission(&self, _queue: usize, queue_name: &str, zones: &[GpuZone]) {
        self.0
            .lock()
            .unwrap()
            .push((queue_name.to_string(), zones.to_vec()));
    }
}

/// Two submissions on the main queue (the second after the first) and one on the
/// (emulated) compute queue, each with nested scopes; returns the scope line.
fn run_frames(device: &kiln::Device, prefix: &str) -> u32 {
    let m = kiln::include_spirv!("test/fill.comp").unwrap();
    let p = device.compute_pipeline(&m, "main").unwrap();
    let out = device.storage_buffer::<u32>("out", 64).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    let line = line!() + 7;
    for label in ["frame 1", "frame 2"] {
        device
            .execute_timed(&format!("{prefix}{label}"), |r| {
                r.bind_pipeline(&p)?;
                r.bind_set(0, &set)?;
                r.scope("shadow", |r| {
                    r.scope("cull", |r| Ok(r.dispatch(2, 1, 1)?))?;
                    r.scope("draw", |r| Ok(r.dispatch(2, 1, 1)?))
                })?;
                r.scope("light", |r| Ok(r.dispatch(2, 1, 1)?))
            })
            .unwrap();
    }
    let out2 = device.storage_buffer::<u32>("out2", 64).unwrap();
    let mut set2 = p.descriptor_set(0).unwrap();
    set2.write_buffer(0, &out2).unwrap();
    let compute = device.queue(QueueKind::Compute);
    compute
        .submit_labeled(&format!("{prefix}async"), |r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set2)?;
            r.scope("blur", |r| Ok(r.dispatch(2, 1, 1)?))
        })
        .unwrap()
        .1
        .wait()
        .unwrap();
    line
}

#[test]
fn waited_submissions_become_nested_zones_on_their_queues_tracks() {
    let device = device_with_desc(DeviceDesc::default().emulate_queues(true));
    let kept = Arc::new(Kept::default());
    device.add_zone_sink(kept.clone());
    device.start_trace();
    let line = run_frames(&device, "");
    // kiln's own submissions (the buffers' first contents) are zones too: left out here.
    let got: Vec<_> = (kept.0.lock().unwrap().iter())
        .filter(|(_, z)| z[0].name != "execute")
        .cloned()
        .collect();
    let compute = device.queue(QueueKind::Compute).info().index;
    let summary: Vec<Track> = got
        .iter()
        .map(|(q, z)| {
            (
                q.clone(),
                z.iter()
                    .map(|z| (z.queue, z.name.clone(), z.depth))
                    .collect(),
            )
        })
        .collect();
    let frame = |label: &str| {
        (
            summary[0].0.clone(),
            vec![
                (0, label.to_string(), 0),
                (0, "shadow".to_string(), 1),
                (0, "cull".to_string(), 2),
                (0, "draw".to_string(), 2),
                (0, "light".to_string(), 1),
            ],
        )
    };
    assert_eq!(summary.len(), 3, "{summary:?}");
    assert_eq!(summary[0], frame("frame 1"));
    assert_eq!(summary[1], frame("frame 2"));
    assert_eq!(summary[0].0, "kiln queue 0 (Main)");
    assert_eq!(
        summary[2].1,
        vec![
            (compute, "async".to_string(), 0),
            (compute, "blur".to_string(), 1),
        ]
    );
    assert_eq!(summary[2].0, format!("kiln queue {compute} (Compute)"));
    for (_, zones) in &got {
        // Each zone inside the one it is nested in, ends after it starts.
        for (i, z) in zones.iter().enumerate() {
            assert!(z.end >= z.start, "{z:?}");
            if z.depth > 0 {
                let parent = zones[..i].iter().rev().find(|p| p.depth < z.depth).unwrap();
                assert!(
                    parent.start <= z.start && z.end <= parent.end,
                    "{parent:?} {z:?}"
                );
            }
            if z.depth > 1 {
                assert!(z.file.ends_with("profiling.rs"), "{z:?}");
            }
        }
        // Siblings in order.
        let cull = zones.iter().find(|z| z.name == "cull");
        let draw = zones.iter().find(|z| z.name == "draw");
        if let (Some(c), Some(d)) = (cull, draw) {
            assert!(c.end <= d.start, "{c:?} {d:?}");
            assert_eq!(c.line, line);
        }
    }
    // Monotonic across submissions of one queue: frame 2 after frame 1.
    assert!(got[0].1[0].end <= got[1].1[0].start);
    // The Chrome trace keeps working beside the sinks.
    let path = std::env::temp_dir().join(format!("kiln-zones-{}.json", std::process::id()));
    device.write_trace(&path).unwrap();
    let json = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    for name in ["\"frame 2\"", "\"cull\"", "\"blur\""] {
        assert!(json.contains(name), "{name} not in the trace");
    }
    assert_clean(&device);
}

/// With kiln's features `puffin` and `tracy`: the same zones in puffin's next frame, on a
/// track per kiln queue, nested, at their start times; Tracy's GPU contexts fed (a client
/// runs, `ondemand`: no GUI needed, nothing kept; Tracy has no read-back API, so what
/// reaches it is checked through `kiln::begin_end_order`'s unit tests).
///
/// In a child process (`child_profilers`): a running Tracy client and puffin's scopes are
/// process-wide and would give every later device of this binary a sink and timing.
#[cfg(feature = "profilers")]
#[test]
fn zones_reach_puffin_and_tracy() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let name = "profiling::child_profilers";
    let out = std::process::Command::new(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("KILN_TEST_CHILD", name)
        .output()
        .expect("running the child test");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("PROFILERS ok"),
        "the child did not run:\n{text}"
    );
}

/// The child of [`zones_reach_puffin_and_tracy`].
#[cfg(feature = "profilers")]
#[test]
fn child_profilers() {
    if std::env::var("KILN_TEST_CHILD").as_deref() != Ok("profiling::child_profilers") {
        return;
    }
    use puffin::{GlobalProfiler, Reader, ScopeDetails};
    let _tracy = tracy_client::Client::start();
    puffin::set_scopes_on(true);
    let (tx, rx) = std::sync::mpsc::channel();
    let sink = GlobalProfiler::lock().add_sink(Box::new(move |f| {
        let _ = tx.send(f);
    }));
    let device = device_with_desc(DeviceDesc::default().emulate_queues(true));
    run_frames(&device, "pf ");
    GlobalProfiler::lock().new_frame();
    GlobalProfiler::lock().remove_sink(sink);
    let id = |name: &str| {
        GlobalProfiler::lock()
            .register_user_scopes(&[ScopeDetails::from_scope_name(name.to_string())])[0]
    };
    // (name, depth, start) of every scope of the queue's track, depth first.
    fn walk(
        s: &puffin::Stream,
        offset: u64,
        depth: u32,
        out: &mut Vec<(puffin::ScopeId, u32, i64, i64)>,
    ) {
        let scopes = Reader::with_offset(s, offset)
            .unwrap()
            .read_top_scopes()
            .unwrap();
        for sc in scopes {
            out.push((sc.id, depth, sc.record.start_ns, sc.record.duration_ns));
            walk(s, sc.child_begin_position, depth + 1, out);
        }
    }
    let mut main = Vec::new();
    let mut compute = Vec::new();
    for frame in rx.try_iter() {
        // puffin's error type here is uninhabited (`Never`).
        let Ok(unpacked) = frame.unpacked();
        for (thread, info) in &unpacked.thread_streams {
            let into = match thread.name.as_str() {
                "kiln queue 0 (Main)" => &mut main,
                n if n.ends_with("(Compute)") => &mut compute,
                _ => continue,
            };
            walk(&info.stream, 0, 0, into);
        }
    }
    let frame1 = id("pf frame 1");
    let start = main
        .iter()
        .position(|s| s.0 == frame1)
        .expect("frame 1 in puffin");
    let got: Vec<_> = main[start..start + 10].iter().map(|s| (s.0, s.1)).collect();
    let want = |label: &str| {
        vec![
            (id(label), 0),
            (id("shadow"), 1),
            (id("cull"), 2),
            (id("draw"), 2),
            (id("light"), 1),
        ]
    };
    assert_eq!(got, [want("pf frame 1"), want("pf frame 2")].concat());
    // Monotonic: each zone starts no earlier than the one before it, inside its parent.
    for w in main[start..start + 10].windows(2) {
        assert!(w[1].2 >= w[0].2, "{w:?}");
    }
    assert!(
        main[start + 5].2 >= main[start].2 + main[start].3,
        "frame 2 after frame 1"
    );
    let blur = compute
        .iter()
        .position(|s| s.0 == id("pf async"))
        .expect("async in puffin");
    assert_eq!((compute[blur + 1].0, compute[blur + 1].1), (id("blur"), 1));
    assert!(tracy_client::Client::is_running());
    assert_clean(&device);
    println!("PROFILERS ok");
}
