//! `cargo xtask gpu-run <topic>`: device runs, one topic script each (`scripts/gpu/`).
//!
//! A topic needs release binaries in `.devbin/` (ignored by git, carried to the device
//! machine with the repository); `gpu-run` builds them (stripped, xz-compressed where the
//! script unpacks them), then runs `scripts/gpu/<topic>.sh` with `OUT` (default
//! `target/gpu-run/<topic>`). `--build-only` stops after the binaries (then, on a machine
//! without cargo, `OUT=… bash scripts/gpu/<topic>.sh` is the same run), `--no-build` runs
//! the script with what `.devbin/` holds. `cargo xtask gpu-run list` lists the topics.
//! The `.gl/` packages a script names (glvnd, Debian's loaders and layers) are fetched by
//! hand with `apt-get download` (`scripts/gpu/README.md`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::stack::cargo_bin;

/// A binary a topic needs.
#[derive(Clone, Copy)]
enum Build {
    /// The `root` test binary (`cargo test --release -p kiln-tests --test root --no-run`).
    Root,
    /// The `kiln` tool with these kiln-cli features.
    Kiln(&'static str),
    /// An example of `kiln-examples`.
    Example(&'static str),
    /// An example of `kiln-bench`, with its symbols (not stripped: a profiler names
    /// kiln's functions).
    BenchExample(&'static str),
}

pub struct Topic {
    pub name: &'static str,
    pub what: &'static str,
    /// `.devbin/<file>` and how it is built (`.xz`: compressed).
    needs: &'static [(&'static str, Build)],
}

pub const TOPICS: &[Topic] = &[
    Topic {
        name: "stacks",
        what: "the GPU tests (root) under Debian 12's and Debian 13's validation layers",
        needs: &[("root.xz", Build::Root)],
    },
    Topic {
        name: "draws",
        what: "the graphics rows of kiln bench (three runs and one --json run)",
        needs: &[("kiln-draws.xz", Build::Kiln("bench-wgpu"))],
    },
    Topic {
        name: "suite",
        what: "the core batch: tests, bench groups as JSON, GEMM and cuBLAS, CUDA references",
        needs: &[
            ("root", Build::Root),
            ("kiln", Build::Kiln("bench")),
            ("gemm", Build::Example("gemm")),
            ("trace", Build::Example("trace")),
            ("stream_overlap", Build::Example("stream_overlap")),
        ],
    },
    Topic {
        name: "gemm",
        what: "where the GEMM time goes, kernel statistics, occupancy shapes",
        needs: &[("gemm", Build::Example("gemm"))],
    },
    Topic {
        name: "sync",
        what: "the barrier sweep (kiln bench group barriers)",
        needs: &[("kiln", Build::Kiln("bench"))],
    },
    Topic {
        name: "interop",
        what: "issue 28 beside CUDA: interop tests, hand-off and pipeline rows, PyTorch script",
        needs: &[
            ("root", Build::Root),
            ("kiln", Build::Kiln("bench")),
            (
                "torch_interop_helper",
                Build::Example("torch_interop_helper"),
            ),
        ],
    },
    Topic {
        name: "capture",
        what: "issue 27's RenderDoc captures, opened with RenderDoc's Python module",
        needs: &[("root", Build::Root)],
    },
    Topic {
        name: "proof",
        what: "issues 26-28 after stacks: hand-off, pipeline and dispatch rows, PyTorch, RenderDoc, the real faults last",
        needs: &[
            ("root.xz", Build::Root),
            ("kiln.xz", Build::Kiln("bench")),
            (
                "torch_interop_helper.xz",
                Build::Example("torch_interop_helper"),
            ),
        ],
    },
    Topic {
        name: "markers",
        what: "issue 27's in-scope breadcrumbs on NVIDIA: alone, then after a hung child",
        needs: &[("root.xz", Build::Root)],
    },
    Topic {
        name: "profile",
        what: "where a dispatch's (or a set's) CPU time goes (perf): kiln and raw, per mode",
        needs: &[
            ("tracker_profile.xz", Build::BenchExample("tracker_profile")),
            ("raw_profile.xz", Build::BenchExample("raw_profile")),
            (
                "descriptor_profile.xz",
                Build::BenchExample("descriptor_profile"),
            ),
        ],
    },
    Topic {
        name: "transfers",
        what: "the stream's chunk-count sweep against CUDA's stream",
        needs: &[("stream_overlap", Build::Example("stream_overlap"))],
    },
];

/// Builds one binary (release) and returns its path, from cargo's JSON messages.
fn build(b: Build) -> Result<PathBuf, String> {
    let (args, target): (Vec<String>, &str) = match b {
        Build::Root => (
            [
                "test",
                "--release",
                "-p",
                "kiln-tests",
                "--test",
                "root",
                "--no-run",
            ]
            .map(String::from)
            .to_vec(),
            "root",
        ),
        Build::Kiln(features) => (
            vec![
                "build".into(),
                "--release".into(),
                "-p".into(),
                "kiln-cli".into(),
                "--features".into(),
                features.into(),
            ],
            "kiln",
        ),
        Build::Example(name) => (
            [
                "build",
                "--release",
                "-p",
                "kiln-examples",
                "--example",
                name,
            ]
            .map(String::from)
            .to_vec(),
            name,
        ),
        Build::BenchExample(name) => (
            ["build", "--release", "-p", "kiln-bench", "--example", name]
                .map(String::from)
                .to_vec(),
            name,
        ),
    };
    eprintln!("xtask: gpu-run: cargo {}", args.join(" "));
    let out = Command::new(cargo_bin())
        .args(&args)
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo {} failed", args.join(" ")));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m.pointer("/target/name").and_then(|n| n.as_str()) == Some(target))
        .filter_map(|m| m.get("executable")?.as_str().map(PathBuf::from))
        .next_back()
        .ok_or_else(|| format!("cargo built no executable `{target}`"))
}

/// Copies `exe` to `.devbin/<file>`, stripped where `strip`, xz-compressed when `file`
/// ends in `.xz`.
fn install(exe: &Path, file: &str, strip: bool) -> Result<(), String> {
    std::fs::create_dir_all(".devbin").map_err(|e| format!(".devbin: {e}"))?;
    let plain = Path::new(".devbin").join(file.trim_end_matches(".xz"));
    std::fs::copy(exe, &plain).map_err(|e| format!("{}: {e}", plain.display()))?;
    let run = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    let p = plain.display().to_string();
    if strip && !run("strip", &[&p]) {
        eprintln!("xtask: gpu-run: could not strip {p}; kept as built");
    }
    if file.ends_with(".xz") && !run("xz", &["-f", "-T0", &p]) {
        return Err(format!("xz of {p} failed"));
    }
    eprintln!("xtask: gpu-run: .devbin/{file}");
    Ok(())
}

/// `cargo xtask gpu-run <topic|list> [--build-only | --no-build]`.
pub fn run(rest: &[&str]) -> bool {
    let Some(name) = rest.first().filter(|a| !a.starts_with("--")) else {
        eprintln!("usage: cargo xtask gpu-run <topic|list> [--build-only | --no-build]");
        list();
        return false;
    };
    if *name == "list" {
        list();
        return true;
    }
    let Some(topic) = TOPICS.iter().find(|t| t.name == *name) else {
        eprintln!("xtask: gpu-run: no topic `{name}`");
        list();
        return false;
    };
    if !rest.contains(&"--no-build") {
        for (file, b) in topic.needs {
            let strip = !matches!(b, Build::BenchExample(_));
            if let Err(e) = build(*b).and_then(|exe| install(&exe, file, strip)) {
                eprintln!("xtask: gpu-run: {e}");
                return false;
            }
        }
    }
    if rest.contains(&"--build-only") {
        eprintln!(
            "xtask: gpu-run: built; on the device machine: OUT=<dir> bash scripts/gpu/{}.sh",
            topic.name
        );
        return true;
    }
    let out = std::env::var("OUT").unwrap_or_else(|_| format!("target/gpu-run/{}", topic.name));
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("xtask: gpu-run: {out}: {e}");
        return false;
    }
    let script = format!("scripts/gpu/{}.sh", topic.name);
    eprintln!("xtask: gpu-run: OUT={out} bash {script}");
    let ok = Command::new("bash")
        .arg(&script)
        .env("OUT", &out)
        .status()
        .is_ok_and(|s| s.success());
    eprintln!(
        "xtask: gpu-run {}: {} (results in {out}; `cargo xtask bench-import` takes a \
         `kiln bench --json` output from there)",
        topic.name,
        if ok { "ok" } else { "FAILED" }
    );
    ok
}

fn list() {
    eprintln!("topics (scripts/gpu/<topic>.sh):");
    for t in TOPICS {
        let needs: Vec<&str> = t.needs.iter().map(|(f, _)| *f).collect();
        eprintln!(
            "  {:<10} {} (.devbin/: {})",
            t.name,
            t.what,
            needs.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_topic_has_its_script_and_every_script_a_topic() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/gpu");
        for t in TOPICS {
            assert!(dir.join(format!("{}.sh", t.name)).is_file(), "{}", t.name);
        }
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".sh") {
                assert!(
                    stem == "lib" || TOPICS.iter().any(|t| t.name == stem),
                    "scripts/gpu/{name} is no topic of gpu-run"
                );
            }
        }
    }
}
