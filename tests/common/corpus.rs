//! Finding the third-party SPIR-V corpus (`$KILN_CORPUS` or `../shared/corpus`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The corpus root. Panics with a clear message when it is absent (CI always has it).
pub fn root() -> PathBuf {
    let p = match std::env::var_os("KILN_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    };
    assert!(
        p.join("spirv-reflect").is_dir() && p.join("saschawillems").is_dir(),
        "the SPIR-V corpus is missing at {}; set KILN_CORPUS to the folder holding \
         spirv-reflect/ and saschawillems/",
        p.display()
    );
    p
}

/// Every file under `dir` whose name ends with `suffix`, sorted.
pub fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
