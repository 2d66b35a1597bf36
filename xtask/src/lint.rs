//! `cargo xtask lint`: the checks CI runs before the tests, the same for developers.
//!
//! 1. `cargo fmt --all --check`;
//! 2. `cargo clippy --workspace --all-targets --all-features -- -D warnings`;
//! 3. `cargo doc --no-deps` of the published crates with the features docs.rs builds them
//!    with (`[package.metadata.docs.rs]`), `RUSTDOCFLAGS=-D warnings`;
//! 4. the MSRV build: `cargo check --workspace --all-targets --locked` with the MSRV
//!    compiler: the active one when `rustc --version` is the workspace's `rust-version`
//!    (`1.95` = `1.95.0`; then the check reuses what clippy checked), else rustup's
//!    toolchain of that version (`rustup run 1.95.0 cargo check …`; `rustup toolchain
//!    install 1.95.0` once); without rustup or that toolchain, the active rustc must be at
//!    least the MSRV and the check runs with it (which then says only that the workspace
//!    builds with a compiler no older than the MSRV).
//!
//! Every step runs, also after a failure; each one's time and result is printed, a summary
//! last. `--skip fmt,clippy,doc,msrv` leaves steps out.

use std::process::Command;
use std::time::Instant;

use crate::stack::cargo_bin;

/// The published crates and the features docs.rs documents them with.
const DOC_PACKAGES: &[&str] = &[
    "kiln",
    "kiln-macros",
    "kiln-build",
    "kiln-cli",
    "kiln-bench",
];

/// The workspace's `rust-version` (`[workspace.package]`).
pub fn msrv() -> Result<String, String> {
    let text = std::fs::read_to_string("Cargo.toml")
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    let doc: toml::Value = text
        .parse()
        .map_err(|e| format!("Cargo.toml does not parse: {e}"))?;
    doc.get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("rust-version"))
        .and_then(toml::Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "Cargo.toml has no [workspace.package] rust-version".into())
}

/// `1.95` or `1.95.0` as numbers, for comparing versions.
fn version_numbers(v: &str) -> Vec<u32> {
    v.split('.')
        .map(|p| {
            p.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap_or(0)
        })
        .collect()
}

/// Whether `have` (e.g. `1.95.0`) is at least `need` (e.g. `1.95`).
pub fn at_least(have: &str, need: &str) -> bool {
    let (mut h, mut n) = (version_numbers(have), version_numbers(need));
    let len = h.len().max(n.len());
    h.resize(len, 0);
    n.resize(len, 0);
    h >= n
}

/// The docs.rs features of `package` as `package/feature` (its
/// `[package.metadata.docs.rs] features`).
fn docs_rs_features(package: &str) -> Vec<String> {
    let manifest = if package == "kiln" {
        "Cargo.toml".to_string()
    } else {
        format!("{package}/Cargo.toml")
    };
    let Ok(text) = std::fs::read_to_string(&manifest) else {
        return Vec::new();
    };
    let Ok(doc) = text.parse::<toml::Value>() else {
        return Vec::new();
    };
    doc.get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("docs"))
        .and_then(|d| d.get("rs"))
        .and_then(|d| d.get("features"))
        .and_then(toml::Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(toml::Value::as_str)
                .map(|f| format!("{package}/{f}"))
                .collect()
        })
        .unwrap_or_default()
}

struct Step {
    name: &'static str,
    program: String,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
}

impl Step {
    fn new(name: &'static str, args: &[&str]) -> Step {
        Step {
            name,
            program: cargo_bin(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Vec::new(),
        }
    }
}

/// The MSRV step: rustup's toolchain of that version where it is installed, else the
/// active compiler after checking its version.
fn msrv_step() -> Result<Step, String> {
    let msrv = msrv()?;
    let check = ["check", "--workspace", "--all-targets", "--locked"];
    // The active compiler is the MSRV itself (1.95.0 for rust-version 1.95): the check
    // reuses what clippy checked instead of checking every dependency again.
    let active = active_rustc()?;
    if version_numbers(&active) == padded(&msrv) {
        eprintln!("xtask: lint: MSRV {msrv}: the active rustc {active} is that version");
        return Ok(Step::new("msrv", &check));
    }
    let toolchains = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let installed = toolchains.as_deref().and_then(|list| {
        list.lines()
            .filter_map(|l| l.split_whitespace().next())
            .find(|t| {
                let v = t.split('-').next().unwrap_or("");
                version_numbers(v) == version_numbers(&msrv)
                    || (v.starts_with(&msrv) && v[msrv.len()..].starts_with('.'))
            })
            .map(|t| t.split('-').next().unwrap_or(t).to_string())
    });
    if let Some(toolchain) = installed {
        eprintln!("xtask: lint: MSRV {msrv}: rustup toolchain {toolchain}");
        let mut step = Step::new("msrv", &[]);
        step.program = "rustup".into();
        step.args = ["run", &toolchain, "cargo"]
            .iter()
            .chain(&check)
            .map(|a| a.to_string())
            .collect();
        return Ok(step);
    }
    let have = active.as_str();
    if !at_least(have, &msrv) {
        return Err(format!(
            "rustc {have} is older than the MSRV {msrv} (rust-version in Cargo.toml)"
        ));
    }
    eprintln!(
        "xtask: lint: MSRV {msrv}: no rustup toolchain {msrv} (`rustup toolchain install \
         {msrv}` adds one); checking with rustc {have}, which is no older"
    );
    Ok(Step::new("msrv", &check))
}

/// `rustc --version`'s version (`1.95.0`).
fn active_rustc() -> Result<String, String> {
    let out = Command::new("rustc")
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout);
    Ok(version.split_whitespace().nth(1).unwrap_or("0").to_string())
}

/// `1.95` as `[1, 95, 0]`.
fn padded(v: &str) -> Vec<u32> {
    let mut n = version_numbers(v);
    n.resize(3, 0);
    n
}

fn steps(skip: &[&str]) -> Result<Vec<Step>, String> {
    let mut out = Vec::new();
    if !skip.contains(&"fmt") {
        out.push(Step::new("fmt", &["fmt", "--all", "--check"]));
    }
    if !skip.contains(&"clippy") {
        out.push(Step::new(
            "clippy",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ],
        ));
    }
    if !skip.contains(&"doc") {
        let mut args: Vec<String> = vec!["doc".into(), "--no-deps".into()];
        let mut features = Vec::new();
        for p in DOC_PACKAGES {
            args.push("-p".into());
            args.push(p.to_string());
            features.extend(docs_rs_features(p));
        }
        if !features.is_empty() {
            args.push("--features".into());
            args.push(features.join(","));
        }
        let mut step = Step::new("doc", &[]);
        step.args = args;
        step.env.push(("RUSTDOCFLAGS", "-D warnings".into()));
        out.push(step);
    }
    if !skip.contains(&"msrv") {
        out.push(msrv_step()?);
    }
    Ok(out)
}

/// Runs every step; the summary names the failed ones.
pub fn run(rest: &[&str]) -> bool {
    let skip: Vec<&str> = rest
        .iter()
        .position(|a| *a == "--skip")
        .and_then(|i| rest.get(i + 1))
        .map(|s| s.split(',').collect())
        .unwrap_or_default();
    let steps = match steps(&skip) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("xtask: lint: {e}");
            return false;
        }
    };
    let mut lines = Vec::new();
    let mut ok = true;
    let start = Instant::now();
    for step in &steps {
        eprintln!(
            "xtask: lint {}: {} {}",
            step.name,
            step.program,
            step.args.join(" ")
        );
        let t = Instant::now();
        let status = Command::new(&step.program)
            .args(&step.args)
            .envs(step.env.iter().map(|(k, v)| (*k, v.as_str())))
            .status();
        let passed = status.is_ok_and(|s| s.success());
        ok &= passed;
        lines.push(format!(
            "xtask: lint {}: {} ({:.1}s)",
            step.name,
            if passed { "ok" } else { "FAILED" },
            t.elapsed().as_secs_f64()
        ));
    }
    eprintln!("xtask: lint summary:");
    for l in &lines {
        eprintln!("{l}");
    }
    eprintln!(
        "xtask: lint: {} in {:.1}s",
        if ok { "ok" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_number() {
        assert!(at_least("1.95.0", "1.95"));
        assert!(at_least("1.100.0", "1.95"));
        assert!(!at_least("1.94.1", "1.95"));
        assert!(at_least("2.0.0", "1.95"));
    }
}
