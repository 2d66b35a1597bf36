//! GPU timing scopes and a Chrome-trace / Perfetto profile of a small compute workload:
//! vector_add over N floats, once and ten times in a row, in named scopes, for a few
//! frames; prints each scope's GPU time and writes the trace.
//!
//! Usage: `cargo run --release -p kiln-examples --example trace [OUT.json] [N]`
//! (default `trace.json`, N = 1<<22). Open the file in ui.perfetto.dev or chrome://tracing:
//! one track per CPU thread (record, submit, wait) and one per GPU queue (each submission
//! and its scopes). `KILN_TRACE=path.json` gives any kiln program the same file.
use kiln::vk;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let mut args = std::env::args().skip(1);
    let out = args.next().unwrap_or_else(|| "trace.json".into());
    let n: usize = match args.next() {
        Some(s) => s.parse()?,
        None => 1 << 22,
    };
    let device = kiln::Device::new()?;
    device.start_trace();
    let pipeline = device.compute_pipeline(&kiln::include_spirv!("vector_add.comp")?, "main")?;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a_buf = device.buffer_from_slice("a", usage, &a)?;
    let b_buf = device.buffer_from_slice("b", usage, &a)?;
    let c_buf = device.storage_buffer::<f32>("c", n)?;
    let mut set = pipeline.descriptor_set(0)?;
    set.write_buffer(0, &a_buf)?;
    set.write_buffer(1, &b_buf)?;
    set.write_buffer(2, &c_buf)?;
    println!("device: {}  N: {n}", device.info());
    println!("frame  submission_us  add-1x_us  add-10x_us  fill_us  calibrated");
    for frame in 0..5 {
        let ((), t) = device.execute_timed(&format!("frame {frame}"), |r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            r.scope("add-1x", |r| Ok(r.dispatch_threads(n as u32)?))?;
            r.scope("add-10x", |r| {
                for _ in 0..10 {
                    r.dispatch_threads(n as u32)?;
                }
                Ok(())
            })?;
            r.scope("fill", |r| Ok(r.fill_buffer(&c_buf, 0)?))
        })?;
        let us = |name: &str| t.scope(name).map_or(0.0, |s| s.duration_ns as f64 / 1e3);
        println!(
            "{frame:>5}  {:>13.1}  {:>9.1}  {:>10.1}  {:>7.1}  {}",
            t.gpu_ns as f64 / 1e3,
            us("add-1x"),
            us("add-10x"),
            us("fill"),
            t.calibrated
        );
    }
    let c: Vec<f32> = c_buf.read()?;
    assert!(c.iter().all(|&v| v == 0.0), "the last fill left c zeroed");
    device.write_trace(&out)?;
    println!("wrote {out}: open it in ui.perfetto.dev or chrome://tracing");
    Ok(())
}
