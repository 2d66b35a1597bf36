//! The window example's code under a real X server: `window_presents_under_xvfb` re-runs
//! this test binary inside `xvfb-run -a` (Debian package `xvfb`) with lavapipe, where
//! `window_child` opens the window, presents frames through a swapchain, saves a
//! screenshot of the last presented frame and checks the validation layer stayed silent.
//! The parent then checks the screenshot is not blank and matches the offscreen golden
//! image.

#[path = "../examples/common/scene.rs"]
mod scene;
#[path = "../examples/common/window_app.rs"]
mod window_app;

use std::process::Command;

const FRAMES: u64 = 30;

#[test]
fn window_presents_under_xvfb() {
    let which = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .expect("sh");
    assert!(
        which.status.success(),
        "xvfb-run is missing: the window test needs it (`apt-get install xvfb`, or \
         `cargo xtask test`, which installs it)"
    );
    let exe = std::env::current_exe().unwrap();
    let shot = std::env::temp_dir().join(format!("kiln-window-{}.png", std::process::id()));
    let _ = std::fs::remove_file(&shot);
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .arg(&exe)
        .args(["--exact", "window_child", "--ignored", "--nocapture"])
        .env("KILN_WINDOW_CHILD", "1")
        .env("KILN_WINDOW_FRAMES", FRAMES.to_string())
        .env("KILN_WINDOW_SCREENSHOT", &shot)
        .env("KILN_WINDOW_STATIC", "1")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("running xvfb-run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("--- child stdout ---\n{stdout}\n--- child stderr ---\n{stderr}");
    assert!(
        out.status.success(),
        "the window child failed: {}",
        out.status
    );
    assert!(
        stdout.contains("test window_child ... ok"),
        "the child test did not run"
    );
    let img = image::open(&shot)
        .unwrap_or_else(|e| panic!("screenshot {}: {e}", shot.display()))
        .to_rgba8();
    let _ = std::fs::remove_file(&shot);
    let (w, h) = img.dimensions();
    assert!(w > 0 && h > 0);
    // Not blank: many distinct colours, most pixels not the clear colour.
    let px = img.as_raw();
    let mut colours: Vec<[u8; 4]> = px.chunks(4).map(|p| [p[0], p[1], p[2], p[3]]).collect();
    let bg = [46u8, 56, 77];
    let non_bg = colours
        .iter()
        .filter(|p| p.iter().zip(bg).any(|(a, b)| a.abs_diff(b) > 2))
        .count();
    colours.sort_unstable();
    colours.dedup();
    println!(
        "screenshot {w}x{h}: {} distinct colours, {non_bg} non-background pixels",
        colours.len()
    );
    assert!(colours.len() > 50, "screenshot looks blank");
    assert!(
        non_bg > (w * h / 5) as usize,
        "screenshot is mostly background"
    );
    // Same camera and size as the offscreen golden image: the presented frame matches it.
    if (w, h) == (512, 512) {
        let golden = image::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/golden/material_scene.png"
        ))
        .unwrap()
        .to_rgba8();
        let max = px
            .iter()
            .zip(golden.as_raw())
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap_or(0);
        println!("screenshot vs offscreen golden: max per-channel difference {max}");
        assert!(
            max <= 8,
            "presented frame differs from the offscreen render by {max}"
        );
    } else {
        panic!("the window is {w}x{h}, not the requested 512x512");
    }
}

#[test]
#[ignore = "runs inside xvfb-run, started by window_presents_under_xvfb"]
fn window_child() {
    assert_eq!(
        std::env::var("KILN_WINDOW_CHILD").as_deref(),
        Ok("1"),
        "window_child is run by window_presents_under_xvfb inside xvfb-run"
    );
    let mut config = window_app::Config::from_env();
    config.validation = Some(true);
    config.any_thread = true;
    let summary = window_app::run(config).expect("window app");
    println!("device: {}", summary.device);
    println!(
        "presented {} frames at {:?} ({:?}), {} skipped, {} recreated",
        summary.presented,
        summary.extent,
        summary.format,
        summary.skipped,
        summary.recreated_or_suboptimal
    );
    assert_eq!(summary.presented, FRAMES);
    assert!(summary.screenshot.is_some(), "no screenshot was captured");
    let report = summary.validation.expect("validation report");
    assert!(report.enabled, "validation layer not enabled");
    assert!(
        report.is_clean(),
        "validation: {} error(s), {} warning(s):\n{}",
        report.errors,
        report.warnings,
        report.messages.join("\n")
    );
}
