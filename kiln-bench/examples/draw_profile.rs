//! The CPU cost of recording draws, for a profiler (`perf record`,
//! `valgrind --tool=callgrind`): the stream of the bench's `draw recording` row (10 000
//! draws of `draw.vert` + `draw.frag`, each binding one of 4 sets and pushing 32 bytes of
//! vertex push constants) inside one rendering scope, recorded by kiln in
//! automatic and manual mode, as one `draw_list`, and by raw `ash` calls on the same command buffer, with the
//! thread CPU time per draw of each (best of the rounds).
//!
//! `KILN_VALIDATION=0 cargo run --release -p kiln-bench --example draw_profile [rounds]`
//! (`DRAW_MODE=automatic|manual|list|raw`: one mode only, for instruction counts).

use ash::vk;
use kiln::{ColorAttachment, Device, GraphicsPipelineDesc, ImageDesc, ListDraw, RenderingDesc};

const SETS: usize = 4;
const DRAWS: usize = 10_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds = kiln_bench::rounds_arg(30);
    let device = Device::new()?;
    let vert = kiln::include_spirv!("draw.vert")?;
    let frag = kiln::include_spirv!("draw.frag")?;
    let rgba8 = vk::Format::R8G8B8A8_UNORM;
    let pipe = device
        .graphics_pipeline(&GraphicsPipelineDesc::new(&vert, &frag).color_formats(vec![rgba8]))?;
    let mut tints = Vec::new();
    let mut sets = Vec::new();
    for s in 0..SETS {
        let mut t = [1.0f32; 4];
        t[s % 3] = 0.5;
        let b = device.buffer_from_slice("tint", vk::BufferUsageFlags::UNIFORM_BUFFER, &t)?;
        let mut set = pipe.descriptor_set(0)?;
        set.write_buffer(0, &b)?;
        sets.push(set);
        tints.push(b);
    }
    let push: Vec<[f32; 8]> = (0..DRAWS)
        .map(|i| {
            let (x, y) = ((i % 100) as f32 / 50.0 - 1.0, (i / 100) as f32 / 50.0 - 1.0);
            [x, y, 0.02, 0.02, 1.0, (i % 7) as f32 / 6.0, 0.5, 1.0]
        })
        .collect();
    let list: Vec<ListDraw<'_, [f32; 8]>> = push
        .iter()
        .enumerate()
        .map(|(i, p)| ListDraw::new(&sets[i % SETS], *p, 3))
        .collect();
    let only = std::env::var("DRAW_MODE").ok();
    for mode in ["automatic", "manual", "list", "raw"] {
        if only.as_deref().is_some_and(|o| o != mode) {
            continue;
        }
        let mut best = f64::MAX;
        for _ in 0..rounds {
            let mut t = 0.0;
            let target = device.image(&ImageDesc::color_target("draws", 256, 256, rgba8))?;
            device.execute(|r| {
                if mode == "manual" {
                    r.manual_barriers();
                }
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    &target,
                    [0.0, 0.0, 0.0, 1.0],
                )]))?;
                r.bind_pipeline(&pipe)?;
                let t0 = kiln_bench::thread_cpu_ns();
                if mode == "raw" {
                    // SAFETY: the scope is open with `pipe` bound; the sets are of its
                    // layout, written and alive until the recording is dropped; 32 bytes
                    // of vertex push constants; nothing else is recorded meanwhile.
                    unsafe {
                        let cb = r.raw_using(&tints.iter().collect::<Vec<_>>())?;
                        let d = device.raw();
                        let layout = pipe.layout().raw();
                        for (i, p) in push.iter().enumerate() {
                            d.cmd_bind_descriptor_sets(
                                cb,
                                vk::PipelineBindPoint::GRAPHICS,
                                layout,
                                0,
                                &[sets[i % SETS].raw()],
                                &[],
                            );
                            d.cmd_push_constants(
                                cb,
                                layout,
                                vk::ShaderStageFlags::VERTEX,
                                0,
                                bytemuck::bytes_of(p),
                            );
                            d.cmd_draw(cb, 3, 1, 0, 0);
                        }
                    }
                } else if mode == "list" {
                    r.draw_list(0, 0, &list)?;
                } else {
                    for (i, p) in push.iter().enumerate() {
                        r.bind_set(0, &sets[i % SETS])?;
                        r.push(0, p)?;
                        r.draw(3, 1, 0, 0)?;
                    }
                }
                t = kiln_bench::thread_cpu_ns() - t0;
                Ok(r.end_rendering()?)
            })?;
            best = best.min(t / DRAWS as f64);
        }
        println!("{mode:10} {best:8.1} ns per draw (thread CPU, best of {rounds})");
    }
    Ok(())
}
