//! `cargo xtask demo` — runs the vector_add example (package `kiln-examples`, release).
//! `cargo xtask test` — runs the whole test suite in two tiers, then the standalone crate
//! (below). Tier one is this machine's Vulkan stack: `cargo test --workspace`. Tier two is
//! the current stack, Debian 13's (loader and validation layer 1.4.309, lavapipe 25.0.7,
//! glslc 2025.2): the same test binaries run again inside a Debian 13 chroot that xtask
//! makes with `mmdebstrap` under `target/stacks/trixie` and reuses while its stamp matches
//! the package list (`stack.rs`, `chroot.rs`). Each stack's loader, layer and driver
//! versions are printed first, each binary's result as it ends, a summary line per stack
//! last. Where the chroot cannot be made (not root, no `mmdebstrap`, `mmdebstrap` failed)
//! one line says so and tier two is skipped, unless `KILN_REQUIRE_CURRENT_STACK=1` (CI)
//! makes that a failure. The standalone part builds and runs `examples/standalone`, the
//! crate outside the workspace that uses kiln as an application does, and checks that a
//! misspelt `include_spirv!` name fails to compile with the list of compiled shaders.
//! `cargo xtask test-current` — only tier two (it builds the test binaries first).
//! `cargo xtask standalone` — only the standalone crate's part of `test`.
//! `cargo xtask check` — only checks (and installs) the system prerequisites.
//! `cargo xtask lint` — rustfmt, clippy (`-D warnings`), rustdoc (`-D warnings`, the
//! docs.rs features), the MSRV build, the benchmark results' freshness (`lint.rs`) and the
//! layering (`layers`); CI runs it before `test`.
//! `cargo xtask layers` — every import in `src/` points down the layers (`layers.rs`).
//! `cargo xtask gpu-run <topic>` — builds a device run's binaries into `.devbin/` and runs
//! `scripts/gpu/<topic>.sh` (`gpu.rs`).
//! `cargo xtask bench-results [--check]` — `docs/benchmarks/RESULTS.md` from the run
//! records in `docs/benchmarks/data/`; `cargo xtask bench-import` makes a record of a
//! `kiln bench --json` output (`bench.rs`).
//!
//! The test commands turn on kiln-cli's feature `bench`, so that `kiln bench` is tested
//! end to end (kiln-cli/tests/cli/bench.rs), unless the arguments pick packages (`-p`).
//!
//! Arguments after the command go to cargo; for `test` and `test-current`, those after a
//! `--` go to the test binaries (as with `cargo test`).
//!
//! Before running cargo, xtask checks the system prerequisites: the Vulkan loader, a
//! driver (lavapipe from `mesa-vulkan-drivers` when there is no GPU), the Khronos
//! validation layer and the `glslc` shader compiler; for the tests also Xvfb and the SPIR-V
//! grammar (`spirv-headers`, which kiln's capability table is checked against). Missing
//! Debian packages are installed
//! with `apt-get` when running as root or with password-less sudo; otherwise the exact
//! command is printed and xtask stops.

mod bench;
mod chroot;
mod gpu;
mod layers;
mod lint;
mod results;
mod stack;
// The corpus tier's rules, as the tests apply them.
#[path = "../../tests/common/corpus.rs"]
mod corpus;

use std::path::Path;
use std::process::{Command, ExitCode};

struct Prereq {
    what: &'static str,
    package: &'static str,
    present: fn() -> bool,
}

fn any_json_in(dirs: &[&str], name_filter: Option<&str>) -> bool {
    dirs.iter().any(|d| {
        std::fs::read_dir(d).is_ok_and(|rd| {
            rd.flatten().any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.ends_with(".json") && name_filter.is_none_or(|f| n.contains(f))
            })
        })
    })
}

fn has_loader() -> bool {
    let out = Command::new("ldconfig").arg("-p").output();
    if let Ok(o) = out {
        if String::from_utf8_lossy(&o.stdout).contains("libvulkan.so.1") {
            return true;
        }
    }
    [
        "/usr/lib/x86_64-linux-gnu/libvulkan.so.1",
        "/usr/lib/aarch64-linux-gnu/libvulkan.so.1",
        "/usr/lib/libvulkan.so.1",
    ]
    .iter()
    .any(|p| Path::new(p).exists())
}

fn has_driver() -> bool {
    std::env::var_os("VK_DRIVER_FILES").is_some()
        || std::env::var_os("VK_ICD_FILENAMES").is_some()
        || any_json_in(
            &[
                "/usr/share/vulkan/icd.d",
                "/etc/vulkan/icd.d",
                "/usr/local/share/vulkan/icd.d",
            ],
            None,
        )
}

fn has_validation_layer() -> bool {
    std::env::var_os("VK_LAYER_PATH").is_some()
        || any_json_in(
            &[
                "/usr/share/vulkan/explicit_layer.d",
                "/etc/vulkan/explicit_layer.d",
                "/usr/local/share/vulkan/explicit_layer.d",
            ],
            Some("khronos_validation"),
        )
}

fn has_glslc() -> bool {
    let glslc = std::env::var("KILN_GLSLC").unwrap_or_else(|_| "glslc".into());
    Command::new(glslc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn has_glslang() -> bool {
    let glslang = std::env::var("KILN_GLSLANG").unwrap_or_else(|_| "glslangValidator".into());
    Command::new(glslang)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn has_xvfb() -> bool {
    Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .is_ok_and(|o| o.status.success())
}

const PREREQS: &[Prereq] = &[
    Prereq {
        what: "Vulkan loader (libvulkan.so.1)",
        package: "libvulkan1",
        present: has_loader,
    },
    Prereq {
        what: "a Vulkan driver (lavapipe when there is no GPU)",
        package: "mesa-vulkan-drivers",
        present: has_driver,
    },
    Prereq {
        what: "Khronos validation layer",
        package: "vulkan-validationlayers",
        present: has_validation_layer,
    },
    Prereq {
        what: "glslc shader compiler",
        package: "glslc",
        present: has_glslc,
    },
];

/// The installed SPIR-V grammar that `capabilities::capability_table_covers_the_installed_spirv_grammar`
/// checks kiln's capability table against (issue 30).
const SPIRV_GRAMMAR: &str = "/usr/include/spirv/unified1/spirv.core.grammar.json";

fn has_spirv_grammar() -> bool {
    std::path::Path::new(SPIRV_GRAMMAR).is_file()
}

const TEST_PREREQS: &[Prereq] = &[
    Prereq {
        what: "Xvfb (virtual display for the window test)",
        package: "xvfb",
        present: has_xvfb,
    },
    Prereq {
        what: "SPIR-V grammar (SPIRV-Headers' spirv.core.grammar.json)",
        package: "spirv-headers",
        present: has_spirv_grammar,
    },
    Prereq {
        what: "glslang (NonSemantic shader debug info of the shaders marked debug-info)",
        package: "glslang-tools",
        present: has_glslang,
    },
];

fn has_librenderdoc() -> bool {
    Path::new("/usr/lib/librenderdoc.so").is_file()
}

fn has_python_renderdoc() -> bool {
    Path::new("/usr/lib/python3/dist-packages/renderdoc.so").is_file()
}

/// RenderDoc for the capture tests (`tests/root/capture.rs`): installed where the release
/// packages it (Debian 12 does; Debian 13 does not), else the tests check their warning
/// path and say so.
const RENDERDOC_PREREQS: &[Prereq] = &[
    Prereq {
        what: "RenderDoc's in-application library (the capture tests)",
        package: "librenderdoc",
        present: has_librenderdoc,
    },
    Prereq {
        what: "RenderDoc's Python module (the capture tests open the capture with it)",
        package: "python3-renderdoc",
        present: has_python_renderdoc,
    },
];

/// Installs [`RENDERDOC_PREREQS`] where apt knows the packages; never fails the run.
fn ensure_renderdoc() {
    let packaged = Command::new("apt-cache")
        .args(["show", "librenderdoc"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    if !packaged {
        eprintln!(
            "xtask: librenderdoc is not packaged here; the RenderDoc capture tests check their \
             warning path"
        );
        return;
    }
    if let Err(e) = ensure(&RENDERDOC_PREREQS.iter().collect::<Vec<_>>()) {
        eprintln!("xtask: RenderDoc (optional, for the capture tests): {e}");
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn can_sudo() -> bool {
    Command::new("sudo")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

fn ensure(prereqs: &[&Prereq]) -> Result<(), String> {
    if prereqs.is_empty() {
        return Ok(());
    }
    let missing: Vec<&&Prereq> = prereqs.iter().filter(|p| !(p.present)()).collect();
    if missing.is_empty() {
        let have: Vec<&str> = prereqs.iter().map(|p| p.package).collect();
        eprintln!("xtask: prerequisites present ({})", have.join(", "));
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|p| p.package).collect();
    for p in &missing {
        eprintln!("xtask: missing {} (Debian package `{}`)", p.what, p.package);
    }
    let install = format!(
        "apt-get install -y --no-install-recommends {}",
        packages.join(" ")
    );
    let has_apt = Command::new("sh")
        .args(["-c", "command -v apt-get"])
        .output()
        .is_ok_and(|o| o.status.success());
    let prefix = if is_root() {
        Some("")
    } else if can_sudo() {
        Some("sudo ")
    } else {
        None
    };
    let (Some(prefix), true) = (prefix, has_apt) else {
        return Err(format!(
            "install the missing packages, then run this again:\n    sudo apt-get update && sudo {install}"
        ));
    };
    let script = format!("{prefix}apt-get update -qq && {prefix}{install}");
    eprintln!("xtask: running: {script}");
    let ok = Command::new("sh")
        .args(["-c", &script])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return Err(format!("`{script}` failed; install the packages by hand"));
    }
    let still: Vec<&str> = missing
        .iter()
        .filter(|p| !(p.present)())
        .map(|p| p.what)
        .collect();
    if !still.is_empty() {
        return Err(format!("still missing after install: {}", still.join(", ")));
    }
    Ok(())
}

fn cargo(args: &[&str]) -> ExitCode {
    let cargo = stack::cargo_bin();
    eprintln!("xtask: cargo {}", args.join(" "));
    match Command::new(cargo).args(args).status() {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

/// Builds and runs `examples/standalone` (its own workspace; the workspace's target
/// directory, `CARGO_TARGET_DIR` where set, else `target/`, so the dependencies built for
/// the tests are reused), then builds it with the `misspelt` feature and expects
/// `include_spirv!`'s compile error for an unknown name.
fn standalone() -> ExitCode {
    let manifest = "examples/standalone/Cargo.toml";
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| cwd.join("target"), |d| cwd.join(d));
    let cargo = stack::cargo_bin();
    eprintln!("xtask: the standalone crate: cargo run --manifest-path {manifest}");
    let run = Command::new(&cargo)
        .args(["run", "--manifest-path", manifest])
        .env("CARGO_TARGET_DIR", &target)
        .status();
    if !matches!(run, Ok(s) if s.success()) {
        eprintln!("xtask: examples/standalone failed");
        return ExitCode::FAILURE;
    }
    eprintln!("xtask: the standalone crate with a misspelt shader name (must not compile)");
    let out = Command::new(&cargo)
        .args([
            "build",
            "--manifest-path",
            manifest,
            "--features",
            "misspelt",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .output();
    let Ok(out) = out else {
        eprintln!("xtask: could not run cargo");
        return ExitCode::FAILURE;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = "no compiled shader `scale.com` (did you mean `scale.comp`?)";
    if out.status.success() || !stderr.contains(want) {
        eprintln!("xtask: expected a compile error containing {want:?}, got:\n{stderr}");
        return ExitCode::FAILURE;
    }
    eprintln!("xtask: standalone ok (the misspelt name was refused with the list of shaders)");
    ExitCode::SUCCESS
}

/// The submit-time synchronization checks for a validation layer that cannot take them from
/// kiln: a layer without `VK_EXT_layer_settings` (1.3.239, Debian 12's) turns them on only
/// through `VK_LAYER_ENABLES`, while a newer one (1.4.309) takes kiln's layer settings and
/// would let this variable *replace* its `enables` list, turning synchronization validation
/// off: so it is set only for the former, from the layer manifest's instance extensions.
/// `None` where the caller set the variable, no manifest is found, or the layer has
/// `VK_EXT_layer_settings`.
fn legacy_layer_enables() -> Option<(&'static str, &'static str)> {
    if std::env::var_os("VK_LAYER_ENABLES").is_some() {
        return None;
    }
    let mut dirs: Vec<String> = std::env::var("VK_LAYER_PATH")
        .map(|p| p.split(':').map(str::to_string).collect())
        .unwrap_or_default();
    dirs.extend(
        [
            "/usr/share/vulkan/explicit_layer.d",
            "/etc/vulkan/explicit_layer.d",
            "/usr/local/share/vulkan/explicit_layer.d",
        ]
        .map(String::from),
    );
    let manifest = dirs
        .iter()
        .find_map(|d| std::fs::read(Path::new(d).join("VkLayer_khronos_validation.json")).ok())?;
    let json: serde_json::Value = serde_json::from_slice(&manifest).ok()?;
    let has_settings = json
        .pointer("/layer/instance_extensions")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|exts| {
            exts.iter().any(|e| {
                e.get("name").and_then(serde_json::Value::as_str) == Some("VK_EXT_layer_settings")
            })
        });
    (!has_settings).then_some((
        "VK_LAYER_ENABLES",
        "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT",
    ))
}

/// The first tier: `cargo test --workspace` on this machine's stack, its output echoed and
/// its result lines added up for the summary line.
fn host_tier(rest: &[&str]) -> stack::Outcome {
    let label = chroot::os_label(None);
    eprintln!(
        "xtask: stack {label} (this machine): {}",
        stack::describe(None)
    );
    let mut args = vec!["test", "--workspace"];
    args.extend(stack::bench_feature(rest));
    args.extend(rest);
    eprintln!("xtask: cargo {}", args.join(" "));
    let cargo = stack::cargo_bin();
    let start = std::time::Instant::now();
    let mut command = Command::new(cargo);
    command.args(&args);
    if let Some((k, v)) = legacy_layer_enables() {
        eprintln!("xtask: {k}={v} (this layer predates VK_EXT_layer_settings)");
        command.env(k, v);
    }
    let run = results::run_counting(&mut command);
    let secs = start.elapsed().as_secs_f64();
    match run {
        Ok((status, counts)) => stack::Outcome {
            line: format!(
                "xtask: stack {label} (this machine): {}: {counts} (cargo test, {secs:.1}s)",
                if status.success() {
                    "ok".to_string()
                } else {
                    format!("FAILED ({})", results::describe(status))
                }
            ),
            ok: status.success(),
        },
        Err(e) => stack::Outcome {
            line: format!("xtask: stack {label} (this machine): FAILED: {e}"),
            ok: false,
        },
    }
}

/// `cargo xtask test`: both tiers (the second also after a failure of the first), the
/// standalone crate after a passing first tier, then the summary lines.
fn test(rest: &[&str]) -> ExitCode {
    let (cargo_args, test_args) = split_args(rest);
    let host = host_tier(rest);
    let standalone_ok = host.ok && standalone() == ExitCode::SUCCESS;
    let current = stack::run(cargo_args, test_args);
    eprintln!("xtask: summary:");
    eprintln!("{}", host.line);
    eprintln!("{}", current.line);
    eprintln!("{}", corpus_line());
    if host.ok && !standalone_ok {
        eprintln!("xtask: the standalone crate FAILED");
    }
    if host.ok && standalone_ok && current.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The summary's line on the SPIR-V corpus tier: the corpus it ran against, or that its
/// tests passed without checking anything (the tier's own decision, `corpus::locate`).
fn corpus_line() -> String {
    let env = std::env::var_os("KILN_CORPUS").filter(|v| !v.is_empty());
    let default = corpus::default_dir();
    match corpus::locate(env.as_deref().map(Path::new), &default, false) {
        Ok(Some(dir)) => format!(
            "xtask: the SPIR-V corpus tier ran against {}",
            dir.display()
        ),
        Ok(None) => format!(
            "xtask: the SPIR-V corpus tier did not run: its tests passed without checking \
             anything (no corpus at {}; set KILN_CORPUS=/path/to/corpus, see \
             docs/guide/testing.md)",
            default.display()
        ),
        Err(why) => format!("xtask: the SPIR-V corpus tier failed: {why}"),
    }
}

fn exit(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Cargo's arguments, and those after `--` for the test binaries.
fn split_args<'a, 'b>(rest: &'b [&'a str]) -> (&'b [&'a str], &'b [&'a str]) {
    match rest.iter().position(|a| *a == "--") {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[]),
    }
}

fn main() -> ExitCode {
    // Run from the workspace root whatever the caller's folder.
    if let Some(root) = Path::new(env!("CARGO_MANIFEST_DIR")).parent() {
        let _ = std::env::set_current_dir(root);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = args.first().map(String::as_str).unwrap_or("help");
    if cmd == "__in-stack" {
        return chroot::in_stack(&args[1..]);
    }
    let rest: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    let base: Vec<&Prereq> = PREREQS.iter().collect();
    let with_test: Vec<&Prereq> = PREREQS.iter().chain(TEST_PREREQS).collect();
    let needs = match cmd {
        "demo" | "check" => &base,
        "test" | "test-current" | "standalone" => &with_test,
        // Builds only (the tests' shaders need glslc), or no Vulkan at all.
        "lint" => &base,
        "gpu-run" | "bench-results" | "bench-import" | "layers" => &Vec::new(),
        _ => {
            eprintln!(
                "usage: cargo xtask <demo|test|test-current|standalone|check|lint|layers> [args for \
                 cargo] [-- args for the test binaries]\n       cargo xtask gpu-run <topic|list> \
                 [--build-only|--no-build]\n       cargo xtask bench-results [--check]\n       \
                 cargo xtask bench-import BENCH.json --machine NAME --commit SHA [--date D]"
            );
            return if cmd == "help" {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
    };
    if let Err(e) = ensure(needs) {
        eprintln!("xtask: {e}");
        return ExitCode::FAILURE;
    }
    if matches!(cmd, "test" | "standalone") {
        ensure_renderdoc();
    }
    match cmd {
        "demo" => {
            let mut a = vec![
                "run",
                "--release",
                "--package",
                "kiln-examples",
                "--example",
                "vector_add",
                "--",
            ];
            a.extend(rest);
            cargo(&a)
        }
        "test" => test(&rest),
        "test-current" => {
            let (cargo_args, test_args) = split_args(&rest);
            let outcome = stack::run(cargo_args, test_args);
            eprintln!("{}", outcome.line);
            if outcome.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        "standalone" => standalone(),
        "lint" => exit(lint::run(&rest) & bench::results(&["--check"]) & layers::run()),
        "layers" => exit(layers::run()),
        "gpu-run" => exit(gpu::run(&rest)),
        "bench-results" => exit(bench::results(&rest)),
        "bench-import" => exit(bench::import(&rest)),
        _ => ExitCode::SUCCESS,
    }
}
