//! Compiles `shaders/` to SPIR-V (glslc) into `$OUT_DIR/shaders/`, where
//! `kiln::include_spirv!` finds it. A failing shader is printed as
//! `file:line:column: error: ...` with its source line, every failing shader in one build.
fn main() {
    if let Err(e) = kiln_build::compile_dir("shaders") {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
