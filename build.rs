//! Compiles `shaders/` to SPIR-V with glslc (through kiln-build) for examples and tests;
//! embedded with `kiln::include_spirv!`.
fn main() {
    if let Err(e) = kiln_build::compile_dir("shaders") {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
