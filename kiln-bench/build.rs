//! Compiles `shaders/` (the bench's compute shaders) to SPIR-V with glslc, through
//! kiln-build; embedded with `kiln::include_spirv!("six.comp")` etc.
fn main() {
    if let Err(e) = kiln_build::compile_dir("shaders") {
        eprintln!("{e}");
        std::process::exit(1);
    }
    // Feature `bench-wgpu`: the wgpu version the bench links, from the workspace's
    // Cargo.lock, for its notes.
    if std::env::var_os("CARGO_FEATURE_BENCH_WGPU").is_some() {
        println!("cargo:rerun-if-changed=../Cargo.lock");
        let lock = std::fs::read_to_string("../Cargo.lock").unwrap_or_default();
        let version = lock
            .split("[[package]]")
            .find_map(|p| {
                let mut lines = p.lines().map(str::trim);
                lines.find(|l| *l == "name = \"wgpu\"")?;
                lines.find_map(|l| l.strip_prefix("version = \"")?.strip_suffix('"'))
            })
            .unwrap_or("unknown");
        println!("cargo:rustc-env=KILN_WGPU_VERSION={version}");
    }
}
