//! `cargo +nightly fuzz run reflect -- -max_len=65536` (from the repository root).
//!
//! Feeds arbitrary bytes to SPIR-V checking, reflection and the pipeline-layout merge:
//! every input must give `Ok` or a coded `KILN-E…` error, never a panic, hang or abort.
//! Seed the corpus with real modules, e.g. `cp ../shared/corpus/**/*.spv fuzz/corpus/reflect/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match kiln::ShaderModule::from_bytes(data) {
        Ok(m) => {
            for ep in &m.reflection().entry_points {
                let _ = kiln::PipelineLayoutDesc::from_stages(&[(&m, ep.name.as_str())]);
            }
        }
        Err(e) => assert!(e.code().starts_with("KILN-E")),
    }
});
