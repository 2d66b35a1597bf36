//! Shader hot reload in a compute loop: edit `examples/shaders/hot_fill.comp` (change the
//! value it writes, or a file it includes) while this runs and watch the result follow; a
//! compile error or a changed layout is reported and the old shader keeps running.
//!
//! `cargo run -p kiln-examples --features hot-reload --example hot_reload [-- SECONDS]`
//! (default 30 seconds; `-- 0` runs one step, as the tests do).
use std::time::{Duration, Instant};

use kiln::{HotComputePipeline, HotDesc, ReloadEvent};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let seconds: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(30);
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/hot_fill.comp");
    let device = kiln::Device::new()?;
    let mut hot = HotComputePipeline::new(&device, &HotDesc::new(source))?;
    let n = 256;
    let out = device.storage_buffer::<u32>("out", n)?;
    // Made once: a reloaded shader with the same layout keeps using it.
    let mut set = hot.pipeline().descriptor_set(0)?;
    set.write_buffer(0, &out)?;
    // The source and every file it `#include`s: editing any of them reloads.
    println!(
        "watching {:?} for {seconds} s: edit the value it writes",
        hot.watched()
    );
    let end = Instant::now() + Duration::from_secs(seconds);
    loop {
        // The safe point: no recording borrows the pipeline here.
        match hot.poll() {
            Some(ReloadEvent::Swapped) => println!("reloaded"),
            Some(ReloadEvent::LayoutChanged { diff }) => {
                println!("refused (layout changed), still running the old shader:\n{diff}")
            }
            Some(ReloadEvent::CompileFailed { message }) => {
                println!("compile error, still running the old shader:\n{message}")
            }
            _ => {}
        }
        device.execute(|r| {
            r.bind_pipeline(hot.pipeline())?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_threads(n as u32)?)
        })?;
        let v: Vec<u32> = out.read()?;
        println!("out[0] = {}", v[0]);
        if Instant::now() >= end {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    println!("ok");
    Ok(())
}
