//! Compiles the shaders the tests embed to SPIR-V (glslc, and naga for WGSL, through
//! kiln-build):
//!
//! - `shaders/`, the tests' own: `include_spirv!("test/<name>")`;
//! - `../examples/shaders/`, the examples' (vector_add, saxpy, the scene, the material
//!   pair), which the tests exercise too: `include_spirv!("<name>")`, as in the examples;
//!
//! then the typed bindings of all of them (`$OUT_DIR/kiln_bindings.rs`,
//! `kiln::include_bindings!()`, tests/root/typed_bindings.rs).
use std::path::{Path, PathBuf};

fn main() {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        eprintln!("OUT_DIR is not set: run this through cargo");
        std::process::exit(1);
    };
    let out = out.join("shaders");
    println!("cargo:rerun-if-env-changed=KILN_GLSLC");
    let mut spv = Vec::new();
    for (dir, into) in [
        ("shaders", out.join("test")),
        ("../examples/shaders", out.clone()),
    ] {
        println!("cargo:rerun-if-changed={dir}");
        match kiln_build::compile_dir_to(Path::new(dir), &into) {
            Ok(written) => spv.extend(written),
            Err(e) => {
                kiln_build::print_cargo_warnings(&e);
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    let bindings = out.with_file_name("kiln_bindings.rs");
    if let Err(e) = kiln_build::bindings::write_to(&spv, &out, &bindings) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
