//! Compiles `shaders/` (the examples' shaders) to SPIR-V with glslc, through kiln-build;
//! embedded with `kiln::include_spirv!("vector_add.comp")`, `"scene/chair.frag"`, ….
fn main() {
    if let Err(e) = kiln_build::compile_dir("shaders") {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
