//! The third-party SPIR-V corpus (SPIRV-Reflect's test modules with their expected YAML,
//! SaschaWillems' compiled samples). It stays outside the repository: `$KILN_CORPUS`, else
//! `../shared/corpus` beside the checkout (CI has it there). The tests that need it form a
//! tier:
//!
//! - corpus present: they run;
//! - absent: they pass, and the first of them in a test binary prints one line saying that
//!   they were skipped and how to run them;
//! - absent with `KILN_REQUIRE_CORPUS=1` (set by `.ci/run`): they fail.
//!
//! `KILN_CORPUS` naming a folder that is not the corpus fails either way: a typo must not
//! skip the tier silently.
// Also compiled into kiln-cli's test binary (by `#[path]`), which uses only `root`.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Whether `dir` holds the corpus (its two halves).
pub fn is_corpus(dir: &Path) -> bool {
    dir.join("spirv-reflect").is_dir() && dir.join("saschawillems").is_dir()
}

/// `../shared/corpus` beside the checkout: the checkout is the nearest folder above this
/// crate that holds `Cargo.lock`.
pub fn default_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let checkout = here
        .ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(here);
    match checkout.parent() {
        Some(beside) => beside.join("shared/corpus"),
        None => checkout.join("../shared/corpus"),
    }
}

/// The tier's decision, without touching the environment: `Ok(Some(root))` to run,
/// `Ok(None)` to skip, `Err(why)` to fail.
pub fn locate(
    env: Option<&Path>,
    default: &Path,
    require: bool,
) -> Result<Option<PathBuf>, String> {
    let what = "the SPIR-V corpus (the folder holding spirv-reflect/ and saschawillems/)";
    if let Some(dir) = env {
        return if is_corpus(dir) {
            Ok(Some(dir.to_path_buf()))
        } else {
            Err(format!("KILN_CORPUS={} is not {what}", dir.display()))
        };
    }
    if is_corpus(default) {
        Ok(Some(default.to_path_buf()))
    } else if require {
        Err(format!(
            "KILN_REQUIRE_CORPUS=1 but {what} is missing at {}; set KILN_CORPUS",
            default.display()
        ))
    } else {
        Ok(None)
    }
}

/// The line printed (once per test binary) when the tier is skipped.
pub fn skip_line(default: &Path) -> String {
    format!(
        "skipped: the tests that need the SPIR-V corpus (not found at {}); set \
         KILN_CORPUS=/path/to/corpus to run them",
        default.display()
    )
}

/// The corpus root, or `None` when the tier is skipped (see the module doc). Panics when it
/// must fail.
pub fn root() -> Option<PathBuf> {
    static SKIP_NOTICE: std::sync::Once = std::sync::Once::new();
    let env = std::env::var_os("KILN_CORPUS").filter(|v| !v.is_empty());
    let require = std::env::var("KILN_REQUIRE_CORPUS").as_deref() == Ok("1");
    let default = default_dir();
    match locate(env.as_deref().map(Path::new), &default, require) {
        Ok(Some(root)) => Some(root),
        Ok(None) => {
            // Straight to the process's stderr: the test harness captures `eprintln!` of
            // passing tests, and this line is for the person running them.
            SKIP_NOTICE.call_once(|| {
                let _ = writeln!(std::io::stderr(), "{}", skip_line(&default));
            });
            None
        }
        Err(why) => panic!("{why}"),
    }
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
