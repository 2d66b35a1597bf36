//! RenderDoc captures (issue 27, part 2): `Device::capture` and `KILN_CAPTURE` write an
//! `.rdc` that RenderDoc's Python module (`python3-renderdoc`) opens and replays, holding
//! the dispatch, the draw and kiln's debug labels; without RenderDoc, or with a path that
//! cannot be written, the work runs and the report carries the coded warning.
//!
//! Loading RenderDoc hooks every instance the process makes afterwards, so each case runs
//! in a child process of this binary (`child_capture`, which does nothing unless
//! `KILN_TEST_CHILD` names it; `CAPTURE_CASE` says which case).
//!
//! Which path runs where: the real capture where `librenderdoc` loads (xtask installs it on
//! Debian 12; Debian 13 has no RenderDoc package, so there the test checks the `KILN-W018`
//! path and says so); the capture is opened where `python3-renderdoc` imports.
//! `KILN_REQUIRE_RENDERDOC=1` (set by `cargo xtask test` on Debian 12) fails instead.
//! Each test prints the path it took.

use std::path::{Path, PathBuf};
use std::process::Command;

use common::add::{self, storage};
use common::draw::{assert_quad_texels, target, texture_2x2, textured_pipeline};
use common::temp::TempDir;
use common::{assert_clean, device_with_desc};
use kiln::{vk, CaptureReport, ColorAttachment, Device, DeviceDesc, RenderingDesc, SamplerDesc};

/// The child test's name, as `--exact` wants it.
const CHILD: &str = "capture::child_capture";

fn required() -> bool {
    std::env::var("KILN_REQUIRE_RENDERDOC").as_deref() == Ok("1")
}

/// A fresh directory for one test's files, removed when the test ends.
fn temp_dir(name: &str) -> TempDir {
    TempDir::new(&format!("kiln-capture-{name}"))
}

/// What a child reported: the `CAPTURE` line's file and warning.
struct ChildReport {
    file: Option<PathBuf>,
    warning: Option<String>,
    output: String,
}

/// Runs the child with `vars`; it must exit successfully (its work checked, validation
/// clean) and print one `CAPTURE` line.
fn run_child(case: &str, vars: &[(&str, &str)]) -> ChildReport {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", CHILD, "--nocapture", "--test-threads=1"])
        .env("KILN_TEST_CHILD", CHILD)
        .env("CAPTURE_CASE", case);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the child test");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child `{case}` failed:\n{output}");
    let line = output
        .lines()
        .find_map(|l| l.split_once("CAPTURE file=").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("child `{case}` printed no CAPTURE line:\n{output}"));
    let (file, warning) = line.split_once(" warning=").expect("the CAPTURE line");
    let none = |s: &str| (s != "-").then(|| s.to_string());
    ChildReport {
        file: none(file).map(PathBuf::from),
        warning: none(warning),
        output,
    }
}

/// The compute dispatch and the draw, inside scopes, in two labelled submissions; their
/// results checked.
fn work(device: &Device) {
    let a: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let p = add::vector_add(device);
    let (ab, bb) = (storage(device, "a", &a), storage(device, "b", &a));
    let cb = device.storage_buffer::<f32>("c", 256).unwrap();
    let set = add::set(&p, &ab, &bb, &cb);
    device
        .execute_timed("capture compute", |r| {
            r.scope("add scope", |r| {
                r.bind_pipeline(&p)?;
                r.bind_set(0, &set)?;
                Ok(r.dispatch_threads(256)?)
            })
        })
        .unwrap();
    let c: Vec<f32> = cb.read().unwrap();
    assert_eq!(c[255], 510.0);
    let pipeline = textured_pipeline(device);
    let tex = texture_2x2(device);
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let mut tset = pipeline.descriptor_set(0).unwrap();
    tset.write_combined(0, &tex, &sampler).unwrap();
    let img = target(device, 8, 8);
    let quad: [[f32; 4]; 6] = [
        [-1.0, -1.0, 0.0, 0.0],
        [1.0, -1.0, 1.0, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [-1.0, -1.0, 0.0, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [-1.0, 1.0, 0.0, 1.0],
    ];
    let vb = device
        .buffer_from_slice("quad", vk::BufferUsageFlags::VERTEX_BUFFER, &quad)
        .unwrap();
    device
        .execute_timed("capture draw", |r| {
            r.scope("quad scope", |r| {
                r.begin_rendering(
                    &RenderingDesc::default()
                        .color(&[ColorAttachment::clear(&img, [0.0; 4])])
                        .depth(None),
                )?;
                r.bind_pipeline(&pipeline)?;
                r.bind_set(0, &tset)?;
                r.bind_vertex_buffer(0, &vb, 0)?;
                r.draw(6, 1, 0, 0)?;
                Ok(r.end_rendering()?)
            })
        })
        .unwrap();
    assert_quad_texels(&img.read().unwrap());
}

fn print_report(r: &CaptureReport) {
    println!(
        "CAPTURE file={} warning={}",
        r.file
            .as_ref()
            .map_or("-".into(), |f| f.display().to_string()),
        r.warning.as_deref().unwrap_or("-")
    );
}

/// The child: one case, by `CAPTURE_CASE`.
#[test]
fn child_capture() {
    if std::env::var("KILN_TEST_CHILD").as_deref() != Ok(CHILD) {
        return;
    }
    let case = std::env::var("CAPTURE_CASE").unwrap();
    let path = std::env::var("CAPTURE_PATH").unwrap_or_default();
    let device = device_with_desc(
        DeviceDesc::default()
            .validation(Some(true))
            .renderdoc((case != "env").then_some(true)),
    );
    if case == "env" {
        // KILN_CAPTURE: the whole run, ended when the device is dropped.
        work(&device);
        assert_clean(&device);
        drop(device);
        let file = Path::new(&path);
        print_report(&CaptureReport::default());
        println!("ENVFILE exists={}", file.is_file());
        return;
    }
    if case == "panic" {
        // A capture whose work panics (caught here), then another capture to the path.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            device.capture(&path, || panic!("the captured work panicked"))
        }));
        assert!(caught.is_err());
    }
    let ((), report) = device.capture(&path, || work(&device));
    print_report(&report);
    assert_clean(&device);
}

/// RenderDoc's Python module: opens the capture, replays it locally and prints every
/// action (`ACTION <depth> <name>`), a dispatch with its group counts (` groups=x,y,z`), a
/// draw with its vertex (or index) and instance counts (` draw=v,i`): RenderDoc 1.24 names
/// them `vkCmdDispatch()` and `vkCmdDraw()`, later versions with the counts.
const LIST_ACTIONS: &str = r#"
import sys
sys.path.append('/usr/lib/python3/dist-packages')
import renderdoc as rd
rd.InitialiseReplay(rd.GlobalEnvironment(), [])
cap = rd.OpenCaptureFile()
result = cap.OpenFile(sys.argv[1], '', None)
if not result.OK():
    sys.exit('OpenFile: ' + result.Message())
if not cap.LocalReplaySupport():
    sys.exit('no local replay support')
result, controller = cap.OpenCapture(rd.ReplayOptions(), None)
if not result.OK():
    sys.exit('OpenCapture: ' + result.Message())
sdfile = controller.GetStructuredFile()
def counts(a):
    if a.flags & rd.ActionFlags.Dispatch:
        return ' groups=%d,%d,%d' % tuple(a.dispatchDimension)
    if a.flags & rd.ActionFlags.Drawcall:
        return ' draw=%d,%d' % (a.numIndices, a.numInstances)
    return ''
def walk(actions, depth):
    for a in actions:
        print('ACTION', depth, a.GetName(sdfile) + counts(a))
        walk(a.children, depth + 1)
walk(controller.GetRootActions(), 0)
controller.Shutdown()
cap.Shutdown()
rd.ShutdownReplay()
"#;

/// The Python that imports RenderDoc's module: `KILN_RENDERDOC_PYTHON`, else
/// `/usr/bin/python3` (Debian's module is built for it). On a machine whose Python is
/// another version, Debian 12's `python3.11` beside it (`scripts/gpu/capture.sh`).
fn python() -> String {
    std::env::var("KILN_RENDERDOC_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into())
}

/// [`python()`] can import `renderdoc`.
fn python_renderdoc() -> Result<(), String> {
    let out = Command::new(python())
        .args([
            "-c",
            "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import renderdoc",
        ])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// The capture's actions, one line each, through RenderDoc's Python module; `None` (said
/// loudly) where the module is missing and not required.
fn actions(file: &Path) -> Option<String> {
    if let Err(why) = python_renderdoc() {
        assert!(
            !required(),
            "KILN_REQUIRE_RENDERDOC=1 but python3-renderdoc is missing: {why}"
        );
        println!(
            "capture: PATH capture written, NOT OPENED: python3-renderdoc is missing ({why}); \
             install python3-renderdoc"
        );
        return None;
    }
    let out = Command::new(python())
        .args(["-c", LIST_ACTIONS])
        .arg(file)
        .output()
        .expect("running python3");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "renderdoc could not open {}:\n{text}\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(text)
}

/// The real path is taken: RenderDoc loaded in the child (else `KILN-W018`, checked, and
/// the skip said).
fn real_path(r: &ChildReport, what: &str) -> bool {
    match &r.warning {
        Some(w) if w.starts_with("KILN-W018") => {
            assert!(
                !required(),
                "KILN_REQUIRE_RENDERDOC=1 but RenderDoc is missing: {w}\n{}",
                r.output
            );
            assert!(w.contains("librenderdoc"), "{w}");
            assert!(
                r.output.contains("ok\n") || r.output.contains(" ok"),
                "{}",
                r.output
            );
            println!(
                "{what}: PATH no RenderDoc (KILN-W018 checked, the work ran); the real capture \
                 needs librenderdoc: {w}"
            );
            false
        }
        _ => true,
    }
}

/// The capture's actions hold the dispatch of one group and the draw of 6 vertices, one
/// instance, with those counts (not only the names: RenderDoc 1.24 prints `vkCmdDispatch()`).
fn assert_counts(text: &str) {
    for (name, counts) in [
        ("vkCmdDispatch", " groups=1,1,1"),
        ("vkCmdDraw", " draw=6,1"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.contains(name) && l.ends_with(counts)),
            "no `{name}` action with `{counts}` in the capture's actions:\n{text}"
        );
    }
}

#[test]
fn a_capture_holds_the_dispatch_the_draw_and_the_labels() {
    let dir = temp_dir("api");
    let path = dir.join("work.rdc");
    let r = run_child("api", &[("CAPTURE_PATH", path.to_str().unwrap())]);
    if !real_path(&r, "capture") {
        assert_eq!(r.file, None);
        return;
    }
    assert_eq!(r.warning, None, "{}", r.output);
    assert_eq!(r.file.as_deref(), Some(path.as_path()), "{}", r.output);
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 1000, "{} is {len} bytes", path.display());
    let Some(text) = actions(&path) else { return };
    for want in ["capture compute", "add scope", "capture draw", "quad scope"] {
        assert!(
            text.contains(want),
            "no `{want}` in the capture's actions:\n{text}"
        );
    }
    assert_counts(&text);
    // The dispatch inside its scope's label region.
    let lines: Vec<&str> = text.lines().collect();
    let scope = lines
        .iter()
        .position(|l| l.ends_with(" add scope"))
        .unwrap();
    let dispatch = lines
        .iter()
        .position(|l| l.contains("vkCmdDispatch"))
        .unwrap();
    assert!(dispatch > scope, "{text}");
    println!("capture: PATH real: {len} bytes, opened by RenderDoc:\n{text}");
}

/// A `work` that panics ends its capture: the next `Device::capture` of the process is
/// made (before the fix RenderDoc stayed capturing and it was `KILN-W020`, another capture
/// running). The real path needs a RenderDoc that captures the device (a GPU).
#[test]
fn a_capture_whose_work_panics_ends_and_the_next_one_is_made() {
    let dir = temp_dir("panic");
    let path = dir.join("again.rdc");
    let r = run_child("panic", &[("CAPTURE_PATH", path.to_str().unwrap())]);
    assert!(
        r.output.contains("the captured work panicked"),
        "{}",
        r.output
    );
    if !real_path(&r, "capture after a panic") {
        assert_eq!(r.file, None);
        return;
    }
    assert_eq!(r.warning, None, "{}", r.output);
    assert_eq!(r.file.as_deref(), Some(path.as_path()), "{}", r.output);
    println!("capture after a panic: PATH real: the second capture was written");
}

#[test]
fn without_renderdoc_the_work_runs_and_warns_w018() {
    let dir = temp_dir("missing");
    let path = dir.join("work.rdc");
    let r = run_child(
        "api",
        &[
            ("CAPTURE_PATH", path.to_str().unwrap()),
            ("KILN_RENDERDOC_LIB", "/nonexistent/librenderdoc.so"),
        ],
    );
    let w = r.warning.unwrap_or_default();
    assert!(w.starts_with("KILN-W018"), "{w}\n{}", r.output);
    assert!(w.contains("/nonexistent/librenderdoc.so"), "{w}");
    assert!(w.contains("apt-get install librenderdoc"), "{w}");
    assert_eq!(r.file, None);
    assert!(!path.exists());
    // Logged too (stderr without a logger).
    assert!(r.output.matches("KILN-W018").count() >= 2, "{}", r.output);
}

#[test]
fn an_unwritable_capture_path_warns_w019() {
    let dir = temp_dir("unwritable");
    let path = dir.join("no-such-dir").join("work.rdc");
    let r = run_child("api", &[("CAPTURE_PATH", path.to_str().unwrap())]);
    let w = r.warning.unwrap_or_default();
    assert!(w.starts_with("KILN-W019"), "{w}\n{}", r.output);
    assert!(w.contains("no-such-dir/work.rdc"), "{w}");
    assert_eq!(r.file, None);
}

/// A capture path that exists and is no regular file: a FIFO (before the fix the writable
/// check opened it for writing and blocked until a reader came: the child hung) and
/// `/dev/null` (the capture's rename would have replaced the device node); both
/// `KILN-W019`, the work runs, nothing else is touched. Children bounded by 60 s.
#[test]
fn a_capture_path_that_is_no_regular_file_warns_w019_without_hanging() {
    let dir = temp_dir("special");
    let fifo = dir.join("fifo.rdc");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for path in [fifo.as_path(), Path::new("/dev/null")] {
        let exe = std::env::current_exe().unwrap();
        let mut child = Command::new(exe)
            .args(["--exact", CHILD, "--nocapture", "--test-threads=1"])
            .env("KILN_TEST_CHILD", CHILD)
            .env("CAPTURE_CASE", "api")
            .env("CAPTURE_PATH", path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(60) {
                child.kill().unwrap();
                let _ = child.wait();
                panic!(
                    "the capture to `{}` hung (killed after 60 s)",
                    path.display()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let output = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{output}");
        let line = output
            .lines()
            .find_map(|l| l.split_once("CAPTURE file=").map(|(_, r)| r.to_string()))
            .unwrap_or_else(|| panic!("no CAPTURE line:\n{output}"));
        assert!(line.starts_with("- warning=KILN-W019"), "{line}");
        assert!(line.contains("not a regular file"), "{line}");
    }
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(!meta.is_file(), "/dev/null is still a device node");
    println!("capture: PATH FIFO and /dev/null refused with KILN-W019");
}

#[test]
fn kiln_capture_captures_the_whole_run() {
    let dir = temp_dir("env");
    let path = dir.join("run.rdc");
    let r = run_child(
        "env",
        &[
            ("CAPTURE_PATH", path.to_str().unwrap()),
            ("KILN_CAPTURE", path.to_str().unwrap()),
        ],
    );
    if r.output.contains("KILN-W018") {
        assert!(!required(), "KILN_REQUIRE_RENDERDOC=1 but:\n{}", r.output);
        assert!(r.output.contains("ENVFILE exists=false"), "{}", r.output);
        println!("KILN_CAPTURE: PATH no RenderDoc (KILN-W018 checked, the work ran)");
        return;
    }
    assert!(r.output.contains("ENVFILE exists=true"), "{}", r.output);
    if let Some(text) = actions(&path) {
        assert!(text.contains("add scope"), "no `add scope` in:\n{text}");
        assert_counts(&text);
        println!("KILN_CAPTURE: PATH real, opened by RenderDoc");
    }
}

#[test]
fn a_bad_kiln_capture_value_warns_w021() {
    let r = run_child("env", &[("KILN_CAPTURE", "run.rdc:frames=0")]);
    assert!(r.output.contains("KILN-W021"), "{}", r.output);
    assert!(r.output.contains("frames="), "{}", r.output);
}
