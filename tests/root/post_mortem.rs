//! The post-mortem of a lost device or a hung submission (issue 27, part 1): breadcrumbs
//! name the last scope the GPU started and the first it did not finish, with the Rust line
//! that opened it, in `KILN-E105` / `KILN-E108` and `Device::breadcrumbs`; the driver's
//! fault report (`VK_EXT_device_fault`) joins them after a real loss.
//!
//! A real hang or fault runs in a child process of this binary ([`Child`]: `--exact` the
//! `child_*` test, which does nothing unless `KILN_TEST_CHILD` names it), which the parent
//! kills once it reported (a spinning GPU never lets its device be destroyed) or after
//! [`DEADLINE`]; the parent then creates a new device and runs correct work.
//!
//! Which path runs where:
//! - `a_hung_submission_names_its_scope`: real everywhere (lavapipe spins on the CPU).
//! - `a_page_fault_names_its_scope_and_the_driver_fault`: real (a write through an
//!   unmapped device address) where the device has `VK_EXT_device_fault` or
//!   `KILN_REQUIRE_DEVICE_FAULT=1` (which fails without the extension); else the fault
//!   injector drives the same report (a loss injected while the GPU spins).
//! - `a_scope_inside_a_rendering_scope_is_named_with_buffer_markers`: a draw that spins
//!   for about two seconds inside `frame/spin`, itself inside a rendering scope, read live
//!   with `Device::breadcrumbs`. Where the device has `VK_AMD_buffer_marker` (or
//!   `KILN_REQUIRE_BUFFER_MARKER=1`, which fails without it) the report names `frame/spin`;
//!   else (fills: no markers inside rendering) the enclosing `frame`.
//!
//! Each prints the path it took. On NVIDIA run the last one before the hang: the hung
//! child's spin outlives the killed child, and another process's draws wait for it
//! (H100, 580.159.04: the probes' first draw timed out after 30 s; `scripts/gpu/stacks.sh`
//! runs it first).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::draw::{pixel, target, RGBA8};
use common::{assert_clean, code, device_with_desc};
use kiln::hooks::{FaultInjector, FaultSite};
use kiln::{
    vk, Buffer, ColorAttachment, ComputePipeline, DescriptorSet, Device, DeviceDesc, Error,
    GraphicsPipeline, GraphicsPipelineDesc, Image, PostMortem, RenderingDesc,
};

/// The longest a child may run before the parent kills it.
const DEADLINE: Duration = Duration::from_secs(45);

/// Workgroups of the spin shader (65535 rounds each) in the injector test: long enough
/// (about a second on lavapipe) to be seen spinning, short enough for the device's
/// teardown to wait for.
const INJECTED_SPIN: u32 = 1024;
/// Workgroups of a spin that outlasts the tests' waits on lavapipe (minutes: llvmpipe ends
/// each invocation's loops after 65535 rounds, so the length is in the workgroups).
const LAVAPIPE_HANG: u32 = 65535;
/// How long the hung child's spin lasts elsewhere: far beyond its 1.5 s wait, and over by
/// itself. A spin that never ends outlives its killed process on NVIDIA (580.159.04, the
/// H200): the next processes' dispatches and draws then time out for minutes.
const HANG: Duration = Duration::from_secs(20);

/// The wait timeout of the in-scope breadcrumb test's device (its spin lasts ~2 s).
const WAIT: Duration = Duration::from_secs(30);

fn breadcrumb_device(desc: DeviceDesc) -> Device {
    device_with_desc(desc.breadcrumbs(Some(true)))
}

/// The test shaders' pipelines and buffers.
struct Work {
    spin: ComputePipeline,
    spin_set: DescriptorSet,
    fill: ComputePipeline,
    fill_set: DescriptorSet,
    out: Buffer,
}

fn work(device: &Device) -> Work {
    let spin = device
        .compute_pipeline(&kiln::include_spirv!("test/spin.comp").unwrap(), "main")
        .unwrap();
    let flag = device
        .buffer_from_slice("flag", vk::BufferUsageFlags::STORAGE_BUFFER, &[0u32; 2])
        .unwrap();
    let mut spin_set = spin.descriptor_set(0).unwrap();
    spin_set.write_buffer(0, &flag).unwrap();
    let fill = device
        .compute_pipeline(&kiln::include_spirv!("test/fill.comp").unwrap(), "main")
        .unwrap();
    let out = device.storage_buffer::<u32>("out", 64).unwrap();
    let mut fill_set = fill.descriptor_set(0).unwrap();
    fill_set.write_buffer(0, &out).unwrap();
    Work {
        spin,
        spin_set,
        fill,
        fill_set,
        out,
    }
}

/// Submits `before`, then `frame/<name>` running `inner`, then `after`; returns the line of
/// the inner scope.
fn submit_three<'a>(
    device: &'a Device,
    w: &'a Work,
    name: &str,
    inner: impl for<'r> FnOnce(&mut kiln::Recorder<'a, 'r>) -> kiln::Result<()>,
) -> (u32, kiln::Submission) {
    device
        .submit_labeled("three scopes", |r| {
            r.scope("before", |r| {
                r.bind_pipeline(&w.fill)?;
                r.bind_set(0, &w.fill_set)?;
                Ok(r.dispatch(2, 1, 1)?)
            })?;
            let line = line!() + 1;
            r.scope("frame", |r| r.scope(name, inner))?;
            r.scope("after", |r| {
                r.bind_pipeline(&w.fill)?;
                r.bind_set(0, &w.fill_set)?;
                Ok(r.dispatch(2, 1, 1)?)
            })?;
            Ok(line)
        })
        .unwrap()
}

/// `groups` workgroups of the spin shader, each of up to `rounds` rounds.
fn spin<'a>(
    w: &'a Work,
    (groups, rounds): (u32, u32),
) -> impl for<'r> FnOnce(&mut kiln::Recorder<'a, 'r>) -> kiln::Result<()> {
    move |r| {
        r.bind_pipeline(&w.spin)?;
        r.bind_set(0, &w.spin_set)?;
        r.push(0, &[rounds])?;
        Ok(r.dispatch(groups, 1, 1)?)
    }
}

/// The workgroups and rounds of a spin of about [`HANG`] (as many workgroups of every
/// round as can be on lavapipe). Elsewhere one workgroup, its rounds measured: spins of
/// 2^10, 2^11, ... rounds timed until one takes 100 ms (or 2^24 rounds), then as many
/// rounds as fill [`HANG`]. Each probe stays far inside the child's 1.5 s wait timeout
/// whatever a round costs (a fixed 2^20-round probe was an `unwrap`ped `KILN-E108` from
/// 1.4 µs a round on).
fn hang(device: &Device, w: &Work) -> (u32, u32) {
    if device.info().name.contains("llvmpipe") {
        return (LAVAPIPE_HANG, u32::MAX);
    }
    spin_of(device, w, HANG)
}

/// The spin of the injector test: [`INJECTED_SPIN`] workgroups of every round on lavapipe;
/// elsewhere (a GPU without `VK_EXT_device_fault`) one workgroup of about 3 s, which the
/// device's teardown waits for (1024 workgroups of 2^32 - 1 rounds of a global atomic each
/// would keep it waiting for hours).
fn injected_spin(device: &Device, w: &Work) -> (u32, u32) {
    if device.info().name.contains("llvmpipe") {
        return (INJECTED_SPIN, u32::MAX);
    }
    spin_of(device, w, Duration::from_secs(3))
}

/// One workgroup of the spin, of as many rounds as last about `length` (see [`hang`]).
fn spin_of(device: &Device, w: &Work, length: Duration) -> (u32, u32) {
    let rounds = rounds_of(length, |probe| {
        device.execute(spin(w, (1, probe))).unwrap();
    });
    (1, rounds)
}

/// How many rounds of `run` (one spin of that many rounds) last about `length`: spins of
/// 2^10, 2^11, ... rounds timed until one takes 100 ms (or 2^24 rounds), then scaled.
fn rounds_of(length: Duration, run: impl Fn(u32)) -> u32 {
    let mut probe = 1u32 << 10;
    let per_round = loop {
        let start = Instant::now();
        run(probe);
        let took = start.elapsed();
        if took >= Duration::from_millis(100) || probe >= 1 << 24 {
            break took.as_secs_f64() / f64::from(probe);
        }
        probe *= 2;
    };
    let rounds = (length.as_secs_f64() / per_round.max(1e-12)).min(f64::from(u32::MAX));
    println!(
        "spin: {:.1} ns a round ({probe} rounds timed), {rounds:.0} rounds",
        per_round * 1e9
    );
    rounds as u32
}

/// The post-mortem an error carries.
fn report(e: &Error) -> &PostMortem {
    match e {
        Error::DeviceLost {
            report: Some(r), ..
        }
        | Error::Timeout {
            report: Some(r), ..
        } => r,
        e => panic!("no post-mortem in {e}"),
    }
}

/// Asserts that `r` names `frame/<name>` at `line` of this file as the last scope started
/// and the first not finished, on kiln queue 0. With VK_AMD_buffer_marker (`amd`) a start
/// marker is written at TOP_OF_PIPE, when the command stream gets there: the last started
/// may then be the `after` scope, recorded after the unfinished one.
#[track_caller]
fn assert_names(r: &PostMortem, name: &str, line: u32, amd: bool) {
    let scope = format!("frame/{name}");
    assert_eq!(r.queue, Some(0), "{r:?}");
    assert_eq!(r.unfinished, vec!["three scopes".to_string()], "{r:?}");
    for (b, started) in [(&r.last_started, true), (&r.first_unfinished, false)] {
        let b = b.as_ref().unwrap_or_else(|| panic!("{r:?}"));
        assert_eq!(b.submission, "three scopes");
        assert!(b.file.ends_with("post_mortem.rs"), "{}", b.file);
        if started && amd && b.scope == "after" {
            continue;
        }
        assert_eq!(b.scope, scope, "{r:?}");
        assert_eq!(b.line, line, "{r:?}");
    }
}

/// Runs the child test `name` (with `vars`) and kills it once a line of its stdout starts
/// with `POSTMORTEM`, it exits, or [`DEADLINE`] passes; returns the line and what the child
/// wrote.
fn run_child(name: &str, vars: &[(&str, &str)]) -> (Option<String>, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("KILN_TEST_CHILD", name)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("running the child test");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        for l in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            s.push_str(&l);
            s.push('\n');
        }
        s
    });
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut seen = String::new();
    let mut found = None;
    while start.elapsed() < DEADLINE {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) => {
                seen.push_str(&l);
                seen.push('\n');
                if l.starts_with("POSTMORTEM") {
                    found = Some(l);
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // A child whose GPU still spins never finishes tearing its device down: kill it.
    let _ = child.kill();
    let _ = child.wait();
    let errs = err_thread.join().unwrap_or_default();
    (found, format!("{seen}\n--- stderr ---\n{errs}"))
}

fn is_child(name: &str) -> bool {
    std::env::var("KILN_TEST_CHILD").as_deref() == Ok(name)
}

/// After a child's loss or hang: a new device in this process runs correct work, clean.
fn new_device_works() {
    let device = common::device();
    let w = work(&device);
    device
        .execute(|r| {
            r.bind_pipeline(&w.fill)?;
            r.bind_set(0, &w.fill_set)?;
            Ok(r.dispatch(2, 1, 1)?)
        })
        .unwrap();
    let v = w.out.read::<u32>().unwrap();
    assert_eq!(v[0..4], [1, 4, 7, 10]);
    assert_eq!(v[63], 63 * 3 + 1);
    assert_clean(&device);
}

/// The child of [`a_hung_submission_names_its_scope`]: a shader that spins (practically)
/// forever; the wait times out (`KILN_WAIT_TIMEOUT_MS`) naming its scope.
#[test]
fn child_hang() {
    if !is_child("post_mortem::child_hang") {
        return;
    }
    let device = breadcrumb_device(DeviceDesc::default());
    let w = work(&device);
    let (line, sub) = submit_three(&device, &w, "spin", spin(&w, hang(&device, &w)));
    let e = Error::from(
        sub.wait()
            .expect_err("the spinning submission cannot finish"),
    );
    assert_eq!(e.code(), "KILN-E108", "{e}");
    let r = report(&e);
    println!("{e}");
    assert_names(r, "spin", line, device.features().buffer_marker);
    assert_eq!(r.fault, None);
    println!("POSTMORTEM ok {}", e.code());
    // The GPU spins on: the parent kills this process.
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[test]
fn a_hung_submission_names_its_scope() {
    let (line, out) = run_child(
        "post_mortem::child_hang",
        &[("KILN_WAIT_TIMEOUT_MS", "1500")],
    );
    println!("path: real hang in a child process (KILN_WAIT_TIMEOUT_MS=1500)");
    assert_eq!(line.as_deref(), Some("POSTMORTEM ok KILN-E108"), "{out}");
    assert!(out.contains("KILN-E108: timed out after 1500 ms"), "{out}");
    assert!(
        out.contains("first not finished: scope `frame/spin` of submission `three scopes`"),
        "{out}"
    );
    new_device_works();
}

/// Whether the page-fault test takes the real path (see the module docs).
fn real_fault_path(device: &Device) -> bool {
    let required = std::env::var("KILN_REQUIRE_DEVICE_FAULT").as_deref() == Ok("1");
    let has = device.features().device_fault;
    assert!(
        has || !required,
        "KILN_REQUIRE_DEVICE_FAULT=1 but `{}` lacks VK_EXT_device_fault",
        device.info().name
    );
    has
}

/// The child of [`a_page_fault_names_its_scope_and_the_driver_fault`]: a write through a
/// device address nothing is mapped at.
#[test]
fn child_page_fault() {
    if !is_child("post_mortem::child_page_fault") {
        return;
    }
    let device = breadcrumb_device(DeviceDesc::default());
    let w = work(&device);
    let m = kiln::include_spirv!("test/oob_address.comp").unwrap();
    let bad = device.compute_pipeline(&m, "main").unwrap();
    // Far beyond any allocation of this process (GPU virtual addresses are 49-bit on
    // NVIDIA; nothing is mapped this high).
    let address: u64 = 0x1fff_dead_0000;
    let (line, sub) = submit_three(&device, &w, "fault", |r| {
        r.bind_pipeline(&bad)?;
        r.push(0, &[address as u32, (address >> 32) as u32, 0])?;
        Ok(r.dispatch(1, 1, 1)?)
    });
    let e = Error::from(
        sub.wait()
            .expect_err("a write to an unmapped address loses the device"),
    );
    println!("{e}");
    assert_eq!(e.code(), "KILN-E105", "{e}");
    let r = report(&e);
    assert_names(r, "fault", line, device.features().buffer_marker);
    let fault = r.fault.as_ref().expect("VK_EXT_device_fault's report");
    println!("fault: {fault:?}");
    // Later calls are refused with the same report.
    let again = device.execute(|_| Ok(())).unwrap_err();
    assert_eq!(again.code(), "KILN-E105");
    assert_eq!(report(&again).fault.as_ref(), Some(fault));
    println!("POSTMORTEM ok {}", e.code());
}

#[test]
fn a_page_fault_names_its_scope_and_the_driver_fault() {
    let real = real_fault_path(&common::device());
    if real {
        println!("path: real page fault in a child process (VK_EXT_device_fault)");
        // A driver that hangs instead of losing the device still ends within the deadline
        // (KILN-E108, which the assertion below then shows).
        let (line, out) = run_child(
            "post_mortem::child_page_fault",
            &[("KILN_WAIT_TIMEOUT_MS", "20000")],
        );
        assert_eq!(line.as_deref(), Some("POSTMORTEM ok KILN-E105"), "{out}");
        assert!(out.contains("; device fault: driver: "), "{out}");
        new_device_works();
        return;
    }
    println!("path: fault injector (no VK_EXT_device_fault; KILN_REQUIRE_DEVICE_FAULT unset)");
    let faults = Arc::new(FaultInjector::new());
    let lost = {
        let device = breadcrumb_device(DeviceDesc::default().faults(Some(faults.clone())));
        let w = work(&device);
        let (line, sub) = submit_three(&device, &w, "spin", spin(&w, injected_spin(&device, &w)));
        // Where the GPU is, live: wait until it spins.
        let start = Instant::now();
        loop {
            let now = device.breadcrumbs();
            let at = now.last_started.as_ref().map(|b| b.scope.as_str());
            // With VK_AMD_buffer_marker the command stream may be past it (`assert_names`).
            let amd = device.features().buffer_marker;
            if at == Some("frame/spin") || (amd && at == Some("after")) {
                break;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the GPU never reached the spin: {now:?}"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        faults.fail_nth(FaultSite::Wait, 1, vk::Result::ERROR_DEVICE_LOST);
        let e = Error::from(sub.wait().unwrap_err());
        println!("{e}");
        assert_eq!(e.code(), "KILN-E105", "{e}");
        assert_names(report(&e), "spin", line, device.features().buffer_marker);
        assert_eq!(
            report(&e).fault,
            None,
            "lavapipe has no VK_EXT_device_fault"
        );
        assert!(
            e.to_string().contains(&format!(
                "first not finished: scope `frame/spin` of submission `three scopes` \
                 (tests/root/post_mortem.rs:{line})"
            )),
            "{e}"
        );
        // The device stays lost; the report comes with every refusal.
        let again = device.execute(|_| Ok(()));
        assert_eq!(code(again), "KILN-E105");
        assert_clean(&device);
        e
    };
    assert_eq!(lost.code(), "KILN-E105");
    new_device_works();
}

/// `test/fuzz_fullscreen.vert` + `test/spin.frag`: a draw whose fragments spin (a storage
/// buffer `flag`, nobody writes it; `rounds` read back), into an RGBA8 target.
struct DrawSpin {
    pipeline: GraphicsPipeline,
    set: DescriptorSet,
    flag: Buffer,
}

fn draw_spin(device: &Device) -> DrawSpin {
    let vs = kiln::include_spirv!("test/fuzz_fullscreen.vert").unwrap();
    let fs = kiln::include_spirv!("test/spin.frag").unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs);
    desc.color_formats = vec![RGBA8];
    let pipeline = device.graphics_pipeline(&desc).unwrap();
    let flag = device
        .buffer_from_slice("flag", vk::BufferUsageFlags::STORAGE_BUFFER, &[0u32; 2])
        .unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_buffer(0, &flag).unwrap();
    DrawSpin {
        pipeline,
        set,
        flag,
    }
}

/// A rendering scope into `img` around a scope `spin` that draws the spin.
fn spin_draw<'a>(
    d: &'a DrawSpin,
    img: &'a Image,
    rounds: u32,
) -> impl for<'r> FnOnce(&mut kiln::Recorder<'a, 'r>) -> kiln::Result<()> {
    move |r| {
        r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
            img, [0.0; 4],
        )]))?;
        r.scope("spin", |r| {
            r.bind_pipeline(&d.pipeline)?;
            r.bind_set(0, &d.set)?;
            r.push(0, &[rounds])?;
            Ok(r.draw(3, 1, 0, 0)?)
        })?;
        Ok(r.end_rendering()?)
    }
}

/// Whether markers are written inside rendering scopes (VK_AMD_buffer_marker) on
/// `device`; `KILN_REQUIRE_BUFFER_MARKER=1` fails a device without it.
fn buffer_marker_path(device: &Device) -> bool {
    let required = std::env::var("KILN_REQUIRE_BUFFER_MARKER").as_deref() == Ok("1");
    let has = device.features().buffer_marker;
    assert!(
        has || !required,
        "KILN_REQUIRE_BUFFER_MARKER=1 but `{}` lacks VK_AMD_buffer_marker (or \
         KILN_BREADCRUMB_MARKERS=fill is set)",
        device.info().name
    );
    has
}

#[test]
fn a_scope_inside_a_rendering_scope_is_named_with_buffer_markers() {
    // A GPU that never runs the probes (still busy with another process's spin) is a
    // `KILN-E108` with its breadcrumbs after 30 s, not the default two minutes' silence.
    let device = breadcrumb_device(DeviceDesc::default().wait_timeout(Some(WAIT)));
    let amd = buffer_marker_path(&device);
    let w = work(&device);
    let d = draw_spin(&device);
    // A spin of about two seconds: its rounds measured (`rounds_of`), bounded everywhere
    // (see `HANG`). Many fragments on lavapipe, whose llvmpipe 22.3 ends each invocation's
    // loops after 65535 rounds (25.0 does not); one fragment elsewhere.
    let size = if device.info().name.contains("llvmpipe") {
        96
    } else {
        1
    };
    let probe = target(&device, size, size);
    // The probes' own flag buffer: `rounds` below is the measured spin's alone.
    let probes = draw_spin(&device);
    // A first draw compiles llvmpipe's shader variant: not part of a round's cost.
    device.execute(spin_draw(&probes, &probe, 1)).unwrap();
    let rounds = rounds_of(Duration::from_secs(2), |n| {
        device.execute(spin_draw(&probes, &probe, n)).unwrap();
    });
    let img = target(&device, size, size);
    // `frame/pass` (opened at `line`) holds the rendering scope, which holds `…/spin`.
    let (line, sub) = submit_three(&device, &w, "pass", spin_draw(&d, &img, rounds));
    let want = if amd {
        println!("path: VK_AMD_buffer_marker (markers inside the rendering scope)");
        "frame/pass/spin"
    } else {
        println!("path: fills (no VK_AMD_buffer_marker): the enclosing scope");
        "frame/pass"
    };
    let start = Instant::now();
    let seen = loop {
        let now = device.breadcrumbs();
        let first = now.first_unfinished.as_ref().map(|b| b.scope.as_str());
        if first == Some(want) {
            break now;
        }
        assert!(
            start.elapsed() < DEADLINE && !sub.is_done(),
            "the GPU never was inside `{want}`: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    println!("live: {seen:?}");
    assert_eq!(seen.queue, Some(0), "{seen:?}");
    assert_eq!(
        seen.unfinished,
        vec!["three scopes".to_string()],
        "{seen:?}"
    );
    let first = seen.first_unfinished.as_ref().unwrap();
    assert!(first.file.ends_with("post_mortem.rs"), "{}", first.file);
    let started = seen.last_started.as_ref().map(|b| b.scope.as_str());
    if amd {
        // A start marker is written at TOP_OF_PIPE: the command stream may be past the
        // spin (the `after` scope's start) while it runs.
        assert!(
            matches!(started, Some("frame/pass/spin") | Some("after")),
            "{seen:?}"
        );
    } else {
        assert_eq!(started, Some(want), "{seen:?}");
        assert_eq!(first.line, line, "{seen:?}");
    }
    sub.wait().unwrap();
    println!("the spin ended {:?} after its submission", start.elapsed());
    assert_eq!(device.breadcrumbs().queue, None);
    let ran = d.flag.read::<u32>().unwrap();
    // Every round ran (nobody writes the flag), or llvmpipe 22.3's 65535.
    assert_eq!(ran[0], 0);
    assert!(
        ran[1] == rounds || (size > 1 && ran[1] == 65535),
        "{ran:?} {rounds}"
    );
    assert_eq!(pixel(&img.read().unwrap(), size, 0, 0), [255, 0, 0, 255]);
    assert_clean(&device);
}
