//! Reflection: SPIR-V in; bindings, blocks, push constants, stage interfaces,
//! specialization constants and workgroup sizes out. On the fixtures and kiln's own shaders,
//! on malformed and mutated modules, on the regressions of `fixtures/repros/` (and the
//! determinism of it all), and, in the corpus tier (`common::corpus`), against
//! SPIRV-Reflect's expected outputs and across the SaschaWillems samples. No GPU needed,
//! except where the SaschaWillems layouts and pipelines are created on the device.

mod corpus_sascha;
mod corpus_yaml;
mod fixtures;
mod forward;
mod fuzz;
mod malformed;
mod own;
mod repros;

use common::corpus;

/// The corpus tier's decision: run with the corpus, skip without it, fail without it when
/// `KILN_REQUIRE_CORPUS=1`, and fail on a `KILN_CORPUS` that is not the corpus.
#[test]
fn the_corpus_tier_runs_skips_or_fails() {
    let base = std::env::temp_dir().join(format!("kiln-corpus-tier-{}", std::process::id()));
    let here = base.join("corpus");
    let half = base.join("half");
    let missing = base.join("missing");
    for d in [
        here.join("spirv-reflect"),
        here.join("saschawillems"),
        half.join("spirv-reflect"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    assert!(corpus::is_corpus(&here) && !corpus::is_corpus(&half));
    for require in [false, true] {
        assert_eq!(corpus::locate(None, &here, require), Ok(Some(here.clone())));
        assert_eq!(
            corpus::locate(Some(&here), &missing, require),
            Ok(Some(here.clone()))
        );
        let e = corpus::locate(Some(&half), &here, require).unwrap_err();
        assert!(e.starts_with("KILN_CORPUS=") && e.contains("half"), "{e}");
    }
    assert_eq!(corpus::locate(None, &missing, false), Ok(None));
    assert_eq!(corpus::locate(None, &half, false), Ok(None));
    let e = corpus::locate(None, &missing, true).unwrap_err();
    assert!(e.contains("KILN_REQUIRE_CORPUS=1"), "{e}");
    assert!(e.contains(&missing.display().to_string()), "{e}");
    let line = corpus::skip_line(&missing);
    assert!(line.starts_with("skipped: "), "{line}");
    assert!(
        line.contains("set KILN_CORPUS=") && !line.contains('\n'),
        "{line}"
    );
    std::fs::remove_dir_all(&base).unwrap();
}
