//! The seed scene in a window (feature `window`, on by default): winit 0.30's
//! `ApplicationHandler`, a surface from ash-window, a swapchain with frames in flight,
//! recreated on resize and when out of date; minimising skips frames.
//!
//! `cargo run -p kiln-examples --example window`. Environment:
//! - `KILN_WINDOW_FRAMES=N` exit after N presented frames,
//! - `KILN_WINDOW_SECONDS=S` exit after S seconds,
//! - `KILN_WINDOW_SCREENSHOT=path.png` save the last presented frame (with FRAMES),
//! - `KILN_WINDOW_STATIC=1` keep the camera still.
//!
//! Under Xvfb with lavapipe:
//! `xvfb-run -a env KILN_WINDOW_FRAMES=60 cargo run -p kiln-examples --example window`.

use kiln_examples::window_app;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let summary = window_app::run(window_app::Config::from_env())?;
    println!("device: {}", summary.device);
    println!(
        "presented {} frame(s) at {}x{} ({:?}); {} skipped (minimised), {} out-of-date/suboptimal, {} swapchain(s) created",
        summary.presented,
        summary.extent[0],
        summary.extent[1],
        summary.format,
        summary.skipped,
        summary.recreated_or_suboptimal,
        summary.swapchains_created
    );
    if let Some(r) = &summary.validation {
        println!(
            "validation: {} error(s), {} warning(s)",
            r.errors, r.warnings
        );
        if !r.is_clean() {
            return Err(format!("validation messages:\n{}", r.messages.join("\n")).into());
        }
    }
    Ok(())
}
