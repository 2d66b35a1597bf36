//! The `kiln` binary end to end (one test binary, a module per command): `kiln reflect` on
//! the reflection fixtures (and byte-identical output on every run), `kiln diagnose` on
//! its fixtures (`tests/fixtures/diagnose/`: codes, JSON, exit status), `kiln bench --quick
//! --json` on the test device (feature `bench`, which `cargo xtask test` turns on; without
//! it, that `kiln bench` says how to get it).

#[cfg(feature = "bench")]
#[path = "../../../tests/common/corpus.rs"]
mod corpus;
/// Every reflection fixture and regression module, embedded (kiln-tests' `common::fixtures`).
#[path = "../../../tests/common/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

#[cfg(feature = "bench")]
mod bench;
mod diagnose;
mod reflect;

use std::path::PathBuf;

/// The reflection fixtures `kiln reflect` reads, embedded at build time.
const FIXTURES: &[(&str, &[u8])] = &[
    (
        "fn_params.comp.spv",
        include_bytes!("../../../tests/fixtures/fn_params.comp.spv"),
    ),
    (
        "multi_entry.wgsl.spv",
        include_bytes!("../../../tests/fixtures/multi_entry.wgsl.spv"),
    ),
    (
        "push_offset.frag.spv",
        include_bytes!("../../../tests/fixtures/push_offset.frag.spv"),
    ),
    (
        "push_offset.vert.spv",
        include_bytes!("../../../tests/fixtures/push_offset.vert.spv"),
    ),
    (
        "spec_arrays.frag.spv",
        include_bytes!("../../../tests/fixtures/spec_arrays.frag.spv"),
    ),
    (
        "texel_buffers.comp.spv",
        include_bytes!("../../../tests/fixtures/texel_buffers.comp.spv"),
    ),
    (
        "traps.comp.spv",
        include_bytes!("../../../tests/fixtures/diagnose/traps.comp.spv"),
    ),
    (
        "clean.comp.spv",
        include_bytes!("../../../tests/fixtures/diagnose/clean.comp.spv"),
    ),
    (
        "scene.vert.spv",
        include_bytes!("../../../tests/fixtures/diagnose/scene.vert.spv"),
    ),
    (
        "cull.comp.spv",
        include_bytes!("../../../tests/fixtures/diagnose/cull.comp.spv"),
    ),
];

/// The fixtures written to a temporary folder for one test (the tool reads files), removed
/// when dropped.
pub struct Fixtures(PathBuf);

impl Fixtures {
    pub fn new(test: &str) -> Fixtures {
        let dir = std::env::temp_dir().join(format!("kiln-cli-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in FIXTURES {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        Fixtures(dir)
    }

    /// The path of fixture `name` (e.g. `"fn_params.comp.spv"`).
    pub fn path(&self, name: &str) -> String {
        assert!(
            FIXTURES.iter().any(|(n, _)| *n == name),
            "no fixture {name}"
        );
        self.0.join(name).display().to_string()
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Built without feature `bench`, `kiln bench` is a usage error that names the feature
/// (exit status 2) instead of a missing command.
#[cfg(not(feature = "bench"))]
#[test]
fn bench_without_the_feature_names_it() {
    println!("kiln-cli built without feature `bench`: testing the message path");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("bench")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--features bench"), "{stderr}");
}
