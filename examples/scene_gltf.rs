//! A glTF 2.0 scene (`examples/assets/scene.gltf`, made by `make_scene_assets`) rendered
//! with GPU culling, a shadow map and 4× MSAA (`examples/common/gltf_render.rs`), offscreen
//! to a PNG or in a window.
//!
//! ```sh
//! cargo run -p kiln-examples --example scene_gltf                  # scene_gltf.png, 640x480
//! cargo run -p kiln-examples --example scene_gltf -- out.png path/to/other.gltf
//! cargo run -p kiln-examples --example scene_gltf -- --window      # orbiting camera
//! ```
//!
//! The window takes `window`'s variables: `KILN_WINDOW_FRAMES=N`, `KILN_WINDOW_SECONDS=S`,
//! `KILN_WINDOW_SCREENSHOT=path.png`, `KILN_WINDOW_STATIC=1` (the offscreen view).

use std::path::PathBuf;

use kiln::vk;
use kiln_examples::{gltf_render, gltf_scene};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let window = args.iter().any(|a| a == "--window");
    let mut rest = args.iter().filter(|a| *a != "--window");
    let out = rest
        .next()
        .cloned()
        .unwrap_or_else(|| "scene_gltf.png".into());
    let gltf = rest
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/scene.gltf"));
    let scene = gltf_scene::load_dir(&gltf).map_err(|e| format!("{}: {e}", gltf.display()))?;
    println!(
        "{}: {} objects, {} vertices, {} indices, {} materials, {}+{} texture layers",
        gltf.display(),
        scene.objects.len(),
        scene.vertices.len(),
        scene.indices.len(),
        scene.materials.len(),
        scene.base_layers.len(),
        scene.normal_layers.len()
    );
    if window {
        return run_window(scene);
    }
    let device = kiln::Device::new()?;
    println!("device: {}", device.info());
    let (w, h) = (640, 480);
    let view = gltf_render::View::new(w, h);
    let r =
        gltf_render::render_offscreen(&device, &scene, w, h, vk::SampleCountFlags::TYPE_4, view)?;
    println!(
        "samples: {:?}; indirect path: {}; culling kept {} of {} objects for the camera, {} for the shadow map",
        r.samples,
        path_name(r.path),
        r.counts[0],
        scene.objects.len(),
        r.counts[1]
    );
    image::save_buffer(&out, &r.pixels, w, h, image::ExtendedColorType::Rgba8)?;
    let report = device.validation_report();
    println!(
        "wrote {out} ({w}x{h}); validation: {} error(s), {} warning(s)",
        report.errors, report.warnings
    );
    if !report.is_clean() {
        return Err(format!("validation messages:\n{}", report.messages.join("\n")).into());
    }
    Ok(())
}

fn path_name(p: gltf_render::IndirectPath) -> &'static str {
    match p {
        gltf_render::IndirectPath::Count => "draw_indexed_indirect_count",
        gltf_render::IndirectPath::Full => {
            "draw_indexed_indirect over every object (no drawIndirectCount)"
        }
    }
}

#[cfg(feature = "window")]
fn run_window(scene: gltf_scene::SceneData) -> Result<(), Box<dyn std::error::Error>> {
    use kiln_examples::gltf_window;
    let s = gltf_window::run(gltf_window::Config::from_env(), scene)?;
    println!("device: {}", s.device);
    println!(
        "presented {} frame(s) at {}x{} ({:?}, {:?}); indirect path: {}",
        s.presented,
        s.extent[0],
        s.extent[1],
        s.format,
        s.samples,
        s.path.map_or("none", path_name)
    );
    if let Some(r) = &s.validation {
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

#[cfg(not(feature = "window"))]
fn run_window(_: gltf_scene::SceneData) -> Result<(), Box<dyn std::error::Error>> {
    Err("built without the `window` feature of kiln-examples".into())
}
