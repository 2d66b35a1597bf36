//! The current-stack tier: the workspace's test binaries, as built for `cargo test`, run
//! again on Debian 13's Vulkan stack (loader and validation layer 1.4.309, lavapipe 25.0.7,
//! glslc 2025.2) inside the chroot of [`crate::chroot`].
//!
//! The binaries come from `cargo test --workspace --no-run --message-format=json…` (the
//! `compiler-artifact` messages with `profile.test` and an `executable`; xtask's own are
//! skipped) and run one after the other, each with libtest's default parallelism, as
//! `cargo test` runs them: the package's folder as the current folder, cargo's
//! `CARGO_MANIFEST_DIR`, `CARGO_PKG_*` and `LD_LIBRARY_PATH`, the `[env]` section of
//! `.cargo/config.toml`, and the caller's `KILN_*`, `RUST_*`, `VK_*`, `MESA_*`, `LP_*` and
//! `GALLIUM_*` variables. Nothing else of the caller's environment goes in (no host
//! `TMPDIR` or `PATH` that means nothing inside the chroot). The repository, the corpus
//! (`$KILN_CORPUS`, else `../shared/corpus`), a target folder outside the repository and
//! rustc's `target-libdir` (the `libstd` that proc-macro crates' test binaries load) appear
//! at the same absolute paths inside the chroot.
//!
//! Compared with running a binary by hand (`chroot DIR env -C … BINARY`), the `[env]`
//! section matters: `VK_LAYER_ENABLES` turns on queue-submit synchronization validation,
//! which some tests expect and which changes results on validation layer 1.4.309.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::chroot;
use crate::results::{self, Counts};
use serde_json::Value;

pub const LABEL: &str = "Debian 13";

/// The packages whose versions name a stack.
const VERSIONED: &[(&str, &str)] = &[
    ("loader", "libvulkan1"),
    ("layer", "vulkan-validationlayers"),
    ("driver", "mesa-vulkan-drivers"),
    ("compiler", "glslc"),
];

/// Prefixes of the caller's variables passed to the test binaries.
const PASSED_PREFIXES: &[&str] = &["KILN_", "RUST_", "VK_", "MESA_", "LP_", "GALLIUM_"];

/// How a stack's tier went: its summary line, and whether xtask may still succeed.
pub struct Outcome {
    pub line: String,
    pub ok: bool,
}

/// `loader libvulkan1 1.4.309.0-1, layer …` for the host (`None`) or the chroot `root`.
pub fn describe(root: Option<&Path>) -> String {
    let names: Vec<&str> = VERSIONED.iter().map(|(_, p)| *p).collect();
    let versions = chroot::versions(root, &names);
    VERSIONED
        .iter()
        .zip(versions)
        .map(|((role, _), (pkg, v))| format!("{role} {pkg} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

struct Workspace {
    root: PathBuf,
    target: PathBuf,
    packages: Vec<Value>,
    /// `rustc --print target-libdir`: `libstd-….so`, which proc-macro crates' test
    /// binaries link dynamically (cargo puts it on `LD_LIBRARY_PATH`).
    rust_libdir: Option<PathBuf>,
}

/// The cargo that runs xtask (`$CARGO`), else `cargo`.
/// `--features kiln-cli/bench` for a whole-workspace test build (so `kiln bench` is
/// tested end to end), nothing when the arguments pick packages or features themselves.
pub fn bench_feature(cargo_args: &[&str]) -> Vec<&'static str> {
    let picks = cargo_args.iter().any(|a| {
        matches!(
            *a,
            "-p" | "--package" | "--features" | "-F" | "--all-features"
        ) || a.starts_with("--package=")
            || a.starts_with("--features=")
            || (a.starts_with("-p") && a.len() > 2)
    });
    if picks {
        Vec::new()
    } else {
        vec!["--features", "kiln-cli/bench"]
    }
}

pub fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn workspace() -> Result<Workspace, String> {
    let out = Command::new(cargo_bin())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err("cargo metadata failed".into());
    }
    let meta = serde_json::from_slice::<Value>(&out.stdout)
        .map_err(|e| format!("cannot read cargo metadata's output: {e}"))?;
    let path = |k: &str| {
        meta.get(k)
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .ok_or(format!("cargo metadata gave no {k}"))
    };
    Ok(Workspace {
        root: path("workspace_root")?,
        target: path("target_directory")?,
        packages: meta
            .get("packages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        rust_libdir: rust_libdir(),
    })
}

fn rust_libdir() -> Option<PathBuf> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc)
        .args(["--print", "target-libdir"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    dir.is_dir().then_some(dir)
}

/// One test binary of the workspace.
struct TestBin {
    exe: PathBuf,
    manifest: PathBuf,
    package: Value,
    crate_name: String,
    src: String,
}

fn artifact(msg: &Value, ws: &Workspace) -> Option<TestBin> {
    if msg.get("reason").and_then(Value::as_str) != Some("compiler-artifact")
        || msg.pointer("/profile/test").and_then(Value::as_bool) != Some(true)
    {
        return None;
    }
    let exe = msg.get("executable").and_then(Value::as_str)?;
    let id = msg.get("package_id").and_then(Value::as_str)?;
    let package = ws
        .packages
        .iter()
        .find(|p| p.get("id").and_then(Value::as_str) == Some(id))?;
    if package.get("name").and_then(Value::as_str) == Some("xtask") {
        return None;
    }
    let src = msg.pointer("/target/src_path").and_then(Value::as_str)?;
    let src = Path::new(src)
        .strip_prefix(&ws.root)
        .unwrap_or(Path::new(src));
    Some(TestBin {
        exe: PathBuf::from(exe),
        manifest: PathBuf::from(msg.get("manifest_path").and_then(Value::as_str)?),
        package: package.clone(),
        crate_name: msg.pointer("/target/name")?.as_str()?.replace('-', "_"),
        src: src.display().to_string(),
    })
}

/// Builds the test binaries (`cargo test --workspace --no-run`, diagnostics shown as
/// usual) and lists them.
fn test_binaries(ws: &Workspace, cargo_args: &[&str]) -> Result<Vec<TestBin>, String> {
    let mut args = vec![
        "test",
        "--workspace",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ];
    args.extend(bench_feature(cargo_args));
    args.extend(cargo_args);
    eprintln!("xtask: cargo {}", args.join(" "));
    let out = Command::new(cargo_bin())
        .args(&args)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err("building the test binaries failed".into());
    }
    let mut bins: Vec<TestBin> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(bin) = artifact(&msg, ws) {
            if !bins.iter().any(|b| b.exe == bin.exe) {
                bins.push(bin);
            }
        }
    }
    // In cargo test's order: by package, then by target.
    bins.sort_by(|a, b| {
        let name = |t: &TestBin| {
            t.package
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        (name(a), &a.src).cmp(&(name(b), &b.src))
    });
    Ok(bins)
}

/// The `[env]` section of the workspace's `.cargo/config.toml`, as cargo applies it: a
/// variable the caller already has wins unless the entry says `force = true`.
fn config_env(root: &Path) -> Vec<(String, String)> {
    let path = root.join(".cargo/config.toml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    match env_entries(&text, root) {
        Ok(entries) => entries
            .into_iter()
            .map(|(k, v, force)| match std::env::var(&k) {
                Ok(caller) if !force => (k, caller),
                _ => (k, v),
            })
            .collect(),
        Err(e) => {
            eprintln!(
                "xtask: warning: cannot read the [env] of {}: {e}",
                path.display()
            );
            Vec::new()
        }
    }
}

/// The `[env]` entries of a cargo config: `KEY = "v"` or `KEY = { value = "v", force = true,
/// relative = true }`, as (key, value, force); relative values are joined to `root`.
fn env_entries(text: &str, root: &Path) -> Result<Vec<(String, String, bool)>, String> {
    let config: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let Some(env) = config.get("env").and_then(toml::Value::as_table) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (k, entry) in env {
        let (value, force, relative) = match entry {
            toml::Value::String(v) => (v.clone(), false, false),
            toml::Value::Table(t) => {
                let flag = |f: &str| t.get(f).and_then(toml::Value::as_bool) == Some(true);
                let v = t
                    .get("value")
                    .and_then(toml::Value::as_str)
                    .ok_or(format!("{k} has no string value"))?;
                (v.to_string(), flag("force"), flag("relative"))
            }
            _ => return Err(format!("{k} is neither a string nor a table")),
        };
        let value = if relative {
            root.join(value).display().to_string()
        } else {
            value
        };
        out.push((k.clone(), value, force));
    }
    Ok(out)
}

/// The environment of one test binary (see the module's documentation).
fn test_env(bin: &TestBin, ws: &Workspace, config: &[(String, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = vec![
        (
            "PATH".into(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
        ),
        ("HOME".into(), "/root".into()),
        ("USER".into(), "root".into()),
        ("LOGNAME".into(), "root".into()),
    ];
    for (k, v) in std::env::vars() {
        if k == "TERM" || PASSED_PREFIXES.iter().any(|p| k.starts_with(p)) {
            env.push((k, v));
        }
    }
    env.extend(config.iter().cloned());
    let field = |k: &str| bin.package.get(k).and_then(Value::as_str).unwrap_or("");
    let version = field("version");
    let (core, pre) = version.split_once('-').unwrap_or((version, ""));
    let mut parts = core.split('.');
    let mut cargo = vec![
        ("CARGO_MANIFEST_DIR", dir_of(&bin.manifest)),
        ("CARGO_MANIFEST_PATH", bin.manifest.display().to_string()),
        ("CARGO_PKG_NAME", field("name").into()),
        ("CARGO_PKG_VERSION", version.into()),
        ("CARGO_PKG_VERSION_MAJOR", parts.next().unwrap_or("").into()),
        ("CARGO_PKG_VERSION_MINOR", parts.next().unwrap_or("").into()),
        ("CARGO_PKG_VERSION_PATCH", parts.next().unwrap_or("").into()),
        ("CARGO_PKG_VERSION_PRE", pre.into()),
        ("CARGO_PKG_DESCRIPTION", field("description").into()),
        ("CARGO_PKG_LICENSE", field("license").into()),
        ("CARGO_PKG_RUST_VERSION", field("rust_version").into()),
        ("CARGO_CRATE_NAME", bin.crate_name.clone()),
    ];
    if let Some(deps) = bin.exe.parent() {
        let profile = deps.parent().unwrap_or(deps);
        let mut paths = format!("{}:{}", deps.display(), profile.display());
        if let Some(lib) = &ws.rust_libdir {
            paths = format!("{paths}:{}", lib.display());
        }
        cargo.push(("LD_LIBRARY_PATH", paths));
    }
    env.extend(cargo.into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

fn dir_of(manifest: &Path) -> String {
    manifest.parent().unwrap_or(manifest).display().to_string()
}

/// The folders bind-mounted at their own paths: the repository, the corpus, and the
/// target folder when it is outside the repository.
fn binds(ws: &Workspace) -> Vec<PathBuf> {
    let corpus = match std::env::var_os("KILN_CORPUS") {
        Some(c) if !c.is_empty() => Some(ws.root.join(c)),
        _ => ws
            .root
            .parent()
            .map(|p| p.join("shared/corpus"))
            .filter(|c| c.is_dir()),
    };
    let mut binds = vec![ws.root.clone()];
    if !ws.target.starts_with(&ws.root) {
        binds.push(ws.target.clone());
    }
    binds.extend(corpus.filter(|c| c.is_dir()));
    binds.extend(
        ws.rust_libdir
            .iter()
            .filter(|l| !l.starts_with(&ws.root))
            .cloned(),
    );
    binds.sort_by_key(|b| b.components().count());
    binds
}

/// Runs one binary in the chroot; prints and returns its result.
fn run_binary(
    root: &Path,
    binds: &[PathBuf],
    bin: &TestBin,
    env: Vec<(String, String)>,
    test_args: &[&str],
) -> Result<(bool, Counts), String> {
    let name = bin.exe.file_name().unwrap_or_default().to_string_lossy();
    eprintln!("xtask: [{LABEL}] running {} ({name})", bin.src);
    let me = std::env::current_exe().map_err(|e| format!("cannot find xtask itself: {e}"))?;
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--net", "--propagation", "private", "--"])
        .arg(me)
        .arg("__in-stack")
        .arg(root)
        .arg(dir_of(&bin.manifest));
    for b in binds {
        cmd.arg("--bind").arg(b);
    }
    cmd.arg("--")
        .arg(&bin.exe)
        .args(test_args)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null());
    let start = Instant::now();
    let (status, counts) = results::run_counting(&mut cmd)?;
    let ok = status.success();
    eprintln!(
        "xtask: [{LABEL}] {} ({name}): {} ({counts}{}) in {:.1}s",
        bin.src,
        if ok { "ok" } else { "FAILED" },
        if ok {
            String::new()
        } else {
            format!("; {}", results::describe(status))
        },
        start.elapsed().as_secs_f64()
    );
    Ok((ok, counts))
}

fn not_run(why: &str) -> Outcome {
    let require = std::env::var("KILN_REQUIRE_CURRENT_STACK").is_ok_and(|v| v == "1");
    let tail = if require {
        " (KILN_REQUIRE_CURRENT_STACK=1: that is a failure)"
    } else {
        ""
    };
    Outcome {
        line: format!("xtask: the current stack ({LABEL}) was not run: {why}{tail}"),
        ok: !require,
    }
}

fn failed(why: &str) -> Outcome {
    Outcome {
        line: format!("xtask: stack {LABEL}: FAILED: {why}"),
        ok: false,
    }
}

/// The tier: makes (or reuses) the chroot, builds and lists the test binaries, runs every
/// binary in it (all of them, also after a failure) and returns the summary line.
pub fn run(cargo_args: &[&str], test_args: &[&str]) -> Outcome {
    let start = Instant::now();
    if let Err(why) = chroot::preflight() {
        return not_run(&why);
    }
    let ws = match workspace() {
        Ok(ws) => ws,
        Err(e) => return failed(&e),
    };
    let root = ws.target.join("stacks").join(chroot::SUITE);
    let made = Instant::now();
    if let Err(why) = chroot::prepare(&root) {
        return not_run(&why);
    }
    let made = made.elapsed().as_secs_f64();
    let bins = match test_binaries(&ws, cargo_args) {
        Ok(b) => b,
        Err(e) => return failed(&e),
    };
    eprintln!(
        "xtask: stack {} ({}): {}",
        chroot::os_label(Some(&root)),
        root.display(),
        describe(Some(&root))
    );
    let binds = binds(&ws);
    for b in &binds {
        let mount_point = chroot::inside(&root, b);
        if let Err(e) = std::fs::create_dir_all(&mount_point) {
            return failed(&format!("cannot create {}: {e}", mount_point.display()));
        }
    }
    let config = config_env(&ws.root);
    let mut total = Counts::default();
    let mut failures: Vec<String> = Vec::new();
    for bin in &bins {
        match run_binary(&root, &binds, bin, test_env(bin, &ws, &config), test_args) {
            Ok((ok, counts)) => {
                total.add(counts);
                if !ok {
                    failures.push(bin.src.clone());
                }
            }
            Err(e) => {
                eprintln!("xtask: [{LABEL}] {}: {e}", bin.src);
                failures.push(bin.src.clone());
            }
        }
    }
    let verdict = if failures.is_empty() {
        "ok".to_string()
    } else {
        format!(
            "FAILED ({} of {} binaries: {})",
            failures.len(),
            bins.len(),
            failures.join(", ")
        )
    };
    Outcome {
        line: format!(
            "xtask: stack {LABEL} (chroot): {verdict}: {total} in {} binaries ({:.1}s, of which {made:.1}s for the chroot)",
            bins.len(),
            start.elapsed().as_secs_f64()
        ),
        ok: failures.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_env_entries() {
        let dir = Path::new("/w");
        let text = r#"
[alias]
xtask = "run"
[env]
VK_LAYER_ENABLES = "A:B"
X = { value = "d", relative = true, force = true }
Y = 'lit\eral'
"#;
        assert_eq!(
            env_entries(text, dir).unwrap(),
            vec![
                ("VK_LAYER_ENABLES".into(), "A:B".into(), false),
                ("X".into(), "/w/d".into(), true),
                ("Y".into(), "lit\\eral".into(), false),
            ]
        );
        assert!(env_entries("[env]\nZ = 3", dir).is_err());
    }
}
