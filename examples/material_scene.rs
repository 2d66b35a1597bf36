//! The seed scene, rendered offscreen at 512×512 and written to `material_scene.png`
//! (or the path given as the first argument).
//!
//! A chair and a desk are drawn by two graphics pipelines whose fragment shaders differ
//! (`examples/shaders/scene/chair.frag`, `desk.frag`) but declare the same material set 1
//! (texture, sampler, uniform `gloss`). kiln derives both pipeline layouts by reflection;
//! because set layouts are interned by content, both pipelines get the same set-1 layout and
//! one descriptor set serves both. Run: `cargo run -p kiln-examples --example
//! material_scene`.

use kiln_examples::scene;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "material_scene.png".into());
    let device = kiln::Device::new()?;
    println!("device: {}", device.info());

    let s = scene::Scene::new(&device, scene::COLOR_FORMAT)?;
    let chair_set1 = &s.chair.layout().set_layouts()[1];
    let desk_set1 = &s.desk.layout().set_layouts()[1];
    assert_eq!(
        chair_set1.id(),
        desk_set1.id(),
        "material set layouts differ"
    );
    println!(
        "material set layout: id {} shared by both pipelines ({} bindings)",
        chair_set1.id(),
        chair_set1.desc().bindings().len()
    );
    drop(s);

    let (w, h) = (512, 512);
    let pixels = scene::render_offscreen(&device, w, h)?;
    image::save_buffer(&out, &pixels, w, h, image::ExtendedColorType::Rgba8)?;
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
