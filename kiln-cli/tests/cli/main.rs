//! The `kiln` binary end to end (one test binary, a module per command): `kiln reflect` on
//! the reflection fixtures, `kiln bench --quick --json` on the test device.

#[path = "../../../tests/common/corpus.rs"]
mod corpus;

mod bench;
mod reflect;

use std::path::PathBuf;
use std::sync::OnceLock;

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
];

/// The path of fixture `name`, written (once per test binary) to a temporary folder: the
/// command line tool reads files.
pub fn fixture(name: &str) -> String {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kiln-cli-fixtures-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (n, bytes) in FIXTURES {
            std::fs::write(dir.join(n), bytes).unwrap();
        }
        dir
    });
    assert!(
        FIXTURES.iter().any(|(n, _)| *n == name),
        "no fixture {name}"
    );
    dir.join(name).display().to_string()
}
