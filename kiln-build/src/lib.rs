//! Build-time shader compilation for kiln. No Vulkan dependency: call it from `build.rs`.
//!
//! In `build.rs`:
//!
//! ```no_run
//! if let Err(e) = kiln_build::compile_dir("shaders") {
//!     eprintln!("{e}");
//!     std::process::exit(1);
//! }
//! ```
//!
//! Every `*.comp|vert|frag|geom|tesc|tese|mesh|task|rgen|rmiss|rchit|rahit|rint|rcall`
//! file, and every `*.<stage>.hlsl` file, under the folder is compiled with `glslc` (Debian
//! package `glslc`) into `$OUT_DIR/shaders/<relative name>.spv`. Files ending in `.glsl`
//! or `.h` are treated as includes. Compiler errors are reported with file, line and
//! column (below); a missing `glslc` says which package to install.
//!
//! With the `wgsl` feature, `*.wgsl` files are compiled through naga; all of a file's
//! entry points go into one module.
//!
//! Environment: `KILN_GLSLC` overrides the compiler path.
//!
//! # Target environment
//!
//! GLSL and HLSL are compiled with `--target-env=vulkan1.3` ([`DEFAULT_TARGET_ENV`]), which
//! emits SPIR-V 1.6: subgroup operations (`GL_KHR_shader_subgroup_*`, SPIR-V 1.3),
//! `OpExecutionModeId` workgroup sizes, `buffer_reference` and the other shaders a compute
//! user writes build without a flag. This is safe for every device kiln runs on: kiln's
//! `Device::new` refuses a device without Vulkan 1.3 (timeline semaphores and
//! synchronization2), and a Vulkan 1.3 device accepts SPIR-V 1.0–1.6
//! (Vulkan spec appendix "Versions"). kiln's SPIR-V checks and reflection read 1.0–1.6.
//!
//! Lower it, most specific first:
//!
//! - **per file**: a line `// kiln: target-env=vulkan1.1` anywhere in the source (GLSL or
//!   HLSL comment syntax is the same);
//! - **per folder**: [`Options::folder_target_env`] for every file under a subfolder;
//! - **for the whole call**: [`Options::target_env`], then [`compile_dir_with`].
//!
//! # Debug info
//!
//! A line `// kiln: debug-info` in a source, or [`Options::debug_info`] for the whole call,
//! compiles with `glslc -g`: the SPIR-V keeps the source file's name (`OpString`), its text
//! (`OpSource`) and `OpLine`s. The validation layer then reports a GPU-assisted validation
//! error, or a shader printf, with the file and line of the shader statement
//! (`KILN_VALIDATION=gpu`; kiln's `LayerFeatures::gpu_assisted`).
//!
//! A line `// kiln: debug-info=nonsemantic`, or [`Options::nonsemantic_debug_info`], adds
//! NonSemantic.Shader.DebugInfo.100 with the source text (`glslangValidator -gVS`, package
//! glslang-tools; Debian 12's glslc 2023.2 has no `-gVS`): what RenderDoc's shader debugger
//! reads for source, scopes and variables. Not the default: validation layer 1.3.239's
//! GPU-assisted validation cannot instrument such modules ("SPIR-V module not valid: Id is
//! 0", and it then names the wrong line). Without glslang the file gets `-g` only
//! (`KILN-B012`, a cargo warning naming the package; [`debug_info`]).
//!
//! Release builds (cargo's `PROFILE=release`) leave out what [`Options`] asked for, not
//! what a file's own line asks; `KILN_SHADER_DEBUG_INFO=1|0` turns it on or off for every
//! file ([`debug_info::wanted`]). The module grows (the source text is inside it) but runs
//! the same; kiln reflects it the same (it skips the non-semantic instructions).
//!
//! # Prebuilt SPIR-V
//!
//! A source that this glslc cannot compile (a newer extension such as
//! `GL_KHR_cooperative_matrix`) can be committed with the `.spv` a newer compiler made,
//! beside it as `<file>.spv` (e.g. `gemm.comp` and `gemm.comp.spv`), and a line
//! `// kiln: prebuilt` in the source: kiln-build then copies that `.spv` instead of
//! compiling (a missing `.spv` is `KILN-B006`). Other `.spv` files in the folder are ignored.
//!
//! # When shaders fail
//!
//! Every shader of the folder is compiled, also after one failed, and all failures are
//! reported together ([`BuildError::Failed`] when there are several): each compiler message
//! as `file:line:column: error: message` with the source line and a caret under the column
//! ([`Diagnostic`]; glslc reports no column, so it is found from the token the message
//! quotes, see [`diagnostics`]). [`compile_dir`] also prints them as `cargo:warning=`
//! lines, which cargo shows at the top of a failed build instead of inside the build
//! script's output dump; with [`compile_dir_to`], call [`print_cargo_warnings`] yourself.
//!
//! # Typed bindings
//!
//! With the `bindings` feature, [`bindings::write`] turns the `.spv` files
//! [`compile_dir`] returns into Rust types for their blocks and constants for their set and
//! binding numbers (`kiln::include_bindings!()` includes them); see [`bindings`].
//!
//! # Rebuilds
//!
//! `cargo:rerun-if-changed` is printed for the folder, every file in it, and every file a
//! shader `#include`s from anywhere (found with `glslc -M`), so editing an included file
//! outside the folder recompiles the shaders that include it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(feature = "bindings")]
pub mod bindings;
pub mod debug_info;
pub mod diagnostics;
pub use diagnostics::Diagnostic;

/// Why a shader could not be compiled.
#[derive(Debug)]
pub enum BuildError {
    /// `glslc` is not installed or not on PATH.
    CompilerMissing { tried: String },
    /// The compiler rejected a file; `output` holds its `file:line: error: …` lines.
    Compile { file: PathBuf, output: String },
    /// Reading or writing a file failed.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The file's stage cannot be told from its name.
    UnknownStage { file: PathBuf },
    /// A `.wgsl` file was found but the `wgsl` feature is off.
    WgslDisabled { file: PathBuf },
    /// A source marked `// kiln: prebuilt` has no `<file>.spv` beside it.
    PrebuiltMissing { file: PathBuf, spv: PathBuf },
    /// Several shaders of one folder failed; each error in file order.
    Failed { errors: Vec<BuildError> },
    /// Typed bindings (feature `bindings`) could not be generated for a compiled shader.
    Bindings { file: PathBuf, detail: String },
}

impl BuildError {
    /// One error for the failures of a folder: the error itself when there is one,
    /// [`BuildError::Failed`] when there are several.
    pub fn from_failures(mut errors: Vec<BuildError>) -> BuildError {
        if errors.len() == 1 {
            errors.remove(0)
        } else {
            BuildError::Failed { errors }
        }
    }

    /// The compiler messages, each with file, line, column and source line: those of every
    /// failed shader for [`BuildError::Failed`]; empty for errors that are not compiler
    /// messages (or output kiln-build cannot parse, which `Display` then prints as it is).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match self {
            BuildError::Compile { file, output } => diagnostics::parse_glslc(output, file),
            BuildError::Failed { errors } => errors.iter().flat_map(|e| e.diagnostics()).collect(),
            _ => Vec::new(),
        }
    }
}

/// Prints `error` as `cargo:warning=` lines (every diagnostic with its source line), which
/// cargo shows even when the build script then fails. [`compile_dir`] does this itself.
pub fn print_cargo_warnings(error: &BuildError) {
    for line in diagnostics::cargo_lines(&error.to_string()) {
        println!("{line}");
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::CompilerMissing { tried } => write!(
                f,
                "KILN-B001: shader compiler `{tried}` not found; install it \
                 (Debian/Ubuntu: `apt-get install glslc`) or set KILN_GLSLC"
            ),
            BuildError::Compile { file, output } => {
                write!(f, "KILN-B002: shader {} failed to compile:", file.display())?;
                let found = diagnostics::parse_glslc(output, file);
                if found.is_empty() {
                    write!(f, "\n{}", output.trim_end())
                } else {
                    found.iter().try_for_each(|d| write!(f, "\n{d}"))
                }
            }
            BuildError::Bindings { file, detail } => write!(
                f,
                "KILN-B011: typed bindings of {}: {detail}",
                file.display()
            ),
            BuildError::Failed { errors } => {
                write!(f, "KILN-B010: {} shaders failed to compile", errors.len())?;
                errors.iter().try_for_each(|e| write!(f, "\n{e}"))
            }
            BuildError::Io { path, error } => {
                write!(f, "KILN-B003: {}: {error}", path.display())
            }
            BuildError::WgslDisabled { file } => write!(
                f,
                "KILN-B005: {} is WGSL; enable kiln-build's `wgsl` feature to compile it",
                file.display()
            ),
            BuildError::PrebuiltMissing { file, spv } => write!(
                f,
                "KILN-B006: {} is marked `// kiln: prebuilt` but {} does not exist; commit the \
                 SPIR-V built from it beside it, or remove the marker to compile it with glslc",
                file.display(),
                spv.display()
            ),
            BuildError::UnknownStage { file } => write!(
                f,
                "KILN-B004: cannot tell the shader stage of {}; name it *.comp, *.vert, \
                 *.frag, … or *.<stage>.hlsl",
                file.display()
            ),
        }
    }
}

impl std::error::Error for BuildError {}

const STAGES: &[&str] = &[
    "comp", "vert", "frag", "geom", "tesc", "tese", "mesh", "task", "rgen", "rmiss", "rchit",
    "rahit", "rint", "rcall",
];

/// The `-fshader-stage` name for a file, or `None` if it is not a shader source.
/// Returns `Some((stage, is_hlsl))`.
pub fn stage_of(path: &Path) -> Option<(&'static str, bool)> {
    let name = path.file_name()?.to_str()?;
    let mut parts = name.rsplit('.');
    let ext = parts.next()?;
    if ext == "hlsl" {
        let stage = parts.next()?;
        return STAGES.iter().find(|s| **s == stage).map(|s| (*s, true));
    }
    STAGES.iter().find(|s| **s == ext).map(|s| (*s, false))
}

/// The compiler to run: `$KILN_GLSLC` or `glslc`.
pub fn glslc() -> String {
    std::env::var("KILN_GLSLC").unwrap_or_else(|_| "glslc".to_string())
}

/// The target environment kiln-build compiles for unless told otherwise: `vulkan1.3`
/// (SPIR-V 1.6; see the crate docs for why every device kiln supports accepts it).
pub const DEFAULT_TARGET_ENV: &str = "vulkan1.3";

/// How [`compile_dir_with`] compiles: the target environment for the whole folder and
/// per-subfolder overrides. A file's own `// kiln: target-env=...` line wins over both.
#[derive(Clone, Debug)]
pub struct Options {
    target_env: String,
    folders: Vec<(PathBuf, String)>,
    debug_info: bool,
    nonsemantic: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target_env: DEFAULT_TARGET_ENV.to_string(),
            folders: Vec::new(),
            debug_info: false,
            nonsemantic: false,
        }
    }
}

impl Options {
    /// [`DEFAULT_TARGET_ENV`] everywhere.
    pub fn new() -> Self {
        Self::default()
    }

    /// The target environment of every file without a more specific one (glslc's
    /// `--target-env` values: `vulkan1.0` … `vulkan1.3`).
    pub fn target_env(mut self, env: &str) -> Self {
        self.target_env = env.to_string();
        self
    }

    /// The target environment of every file under `folder`, a path relative to the folder
    /// compiled (e.g. `"legacy"`). The deepest matching folder wins.
    pub fn folder_target_env(mut self, folder: impl AsRef<Path>, env: &str) -> Self {
        self.folders
            .push((folder.as_ref().to_path_buf(), env.to_string()));
        self
    }

    /// Debug info (NonSemantic.Shader.DebugInfo.100, source file name, text and line
    /// numbers in the SPIR-V) for every file, as a `// kiln: debug-info` line does for one,
    /// except in release builds (see the crate docs, "Debug info").
    pub fn debug_info(mut self, on: bool) -> Self {
        self.debug_info = on;
        self
    }

    /// [`debug_info`](Self::debug_info) plus NonSemantic.Shader.DebugInfo.100 for every
    /// file, as a `// kiln: debug-info=nonsemantic` line does for one (see the crate docs).
    pub fn nonsemantic_debug_info(mut self, on: bool) -> Self {
        self.nonsemantic = on;
        self.debug_info |= on;
        self
    }

    /// The target environment for `rel`, a file path relative to the compiled folder,
    /// before the file's own marker: the deepest folder override containing it, else the
    /// default.
    pub fn env_for(&self, rel: &Path) -> &str {
        self.folders
            .iter()
            .filter(|(folder, _)| rel.starts_with(folder))
            .max_by_key(|(folder, _)| folder.components().count())
            .map_or(self.target_env.as_str(), |(_, env)| env.as_str())
    }
}

/// What a source says about itself in `// kiln: ...` lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Markers {
    /// `// kiln: target-env=<env>`.
    pub target_env: Option<String>,
    /// `// kiln: prebuilt`: copy `<file>.spv` instead of compiling.
    pub prebuilt: bool,
    /// `// kiln: debug-info`: compile with `glslc -g` (see the crate docs).
    pub debug_info: bool,
    /// `// kiln: debug-info=nonsemantic`: NonSemantic.Shader.DebugInfo.100 as well.
    pub nonsemantic: bool,
}

/// Reads the `// kiln: target-env=<env>`, `// kiln: prebuilt` and `// kiln: debug-info`
/// lines of a source.
pub fn markers(source: &str) -> Markers {
    let mut m = Markers::default();
    for line in source.lines() {
        let Some(rest) = line.trim().strip_prefix("//") else {
            continue;
        };
        let Some(rest) = rest.trim().strip_prefix("kiln:") else {
            continue;
        };
        let rest = rest.trim();
        if let Some(env) = rest.strip_prefix("target-env=") {
            m.target_env = Some(env.trim().to_string());
        } else if rest == "prebuilt" {
            m.prebuilt = true;
        } else if rest == "debug-info" {
            m.debug_info = true;
        } else if rest == "debug-info=nonsemantic" {
            m.debug_info = true;
            m.nonsemantic = true;
        }
    }
    m
}

/// Compiles one file to SPIR-V bytes with glslc for `target_env` (e.g. `"vulkan1.3"`,
/// [`DEFAULT_TARGET_ENV`]), unless the file says otherwise in a
/// `// kiln: target-env=...` line, which wins. A file marked `// kiln: prebuilt` is not
/// compiled: the bytes of `<file>.spv` beside it are returned (`KILN-B006` when missing).
/// A `// kiln: debug-info` line adds debug info (see the crate docs).
pub fn compile_file(path: &Path, target_env: &str) -> Result<Vec<u8>, BuildError> {
    compile_file_with(path, target_env, false)
}

/// [`compile_file`], with debug info also when `debug_info` is set
/// ([`Options::debug_info`]).
pub fn compile_file_with(
    path: &Path,
    target_env: &str,
    debug_info: bool,
) -> Result<Vec<u8>, BuildError> {
    compile_one(path, target_env, debug_info, false)
}

/// [`compile_file_with`], with NonSemantic debug info also when `nonsemantic` is set
/// ([`Options::nonsemantic_debug_info`]).
fn compile_one(
    path: &Path,
    target_env: &str,
    debug_info: bool,
    nonsemantic: bool,
) -> Result<Vec<u8>, BuildError> {
    let (stage, hlsl) = stage_of(path).ok_or_else(|| BuildError::UnknownStage {
        file: path.to_path_buf(),
    })?;
    let source = std::fs::read_to_string(path).map_err(|error| BuildError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let marks = markers(&source);
    if marks.prebuilt {
        let mut spv = path.as_os_str().to_owned();
        spv.push(".spv");
        let spv = PathBuf::from(spv);
        return std::fs::read(&spv).map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => BuildError::PrebuiltMissing {
                file: path.to_path_buf(),
                spv: spv.clone(),
            },
            _ => BuildError::Io {
                path: spv.clone(),
                error,
            },
        });
    }
    let target_env = marks.target_env.as_deref().unwrap_or(target_env);
    let mut cmd = Command::new(glslc());
    cmd.arg(format!("--target-env={target_env}"))
        .arg(format!("-fshader-stage={stage}"))
        .arg("-o")
        .arg("-");
    let nonsemantic = debug_info::wanted(marks.nonsemantic, nonsemantic);
    let debug_info = nonsemantic || debug_info::wanted(marks.debug_info, debug_info);
    if debug_info {
        cmd.arg("-g");
    }
    if hlsl {
        cmd.arg("-x").arg("hlsl").arg("-fentry-point=main");
    }
    if let Some(dir) = path.parent() {
        cmd.arg("-I").arg(dir);
    }
    cmd.arg(path);
    let out = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => BuildError::CompilerMissing { tried: glslc() },
        _ => BuildError::Io {
            path: path.to_path_buf(),
            error: e,
        },
    })?;
    if !out.status.success() {
        return Err(BuildError::Compile {
            file: path.to_path_buf(),
            output: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    if nonsemantic {
        if let Some(bytes) = debug_info::nonsemantic(path, stage, hlsl, target_env) {
            return bytes;
        }
    }
    Ok(out.stdout)
}

/// Compiles every shader source under `dir` into `$OUT_DIR/shaders/` for
/// [`DEFAULT_TARGET_ENV`] (per-file markers apply), and prints the
/// `cargo:rerun-if-changed` lines. Returns the written `.spv` paths.
pub fn compile_dir(dir: impl AsRef<Path>) -> Result<Vec<PathBuf>, BuildError> {
    compile_dir_with(dir, &Options::default())
}

/// [`compile_dir`] with [`Options`] (a target environment for the folder, overrides per
/// subfolder).
pub fn compile_dir_with(
    dir: impl AsRef<Path>,
    options: &Options,
) -> Result<Vec<PathBuf>, BuildError> {
    let dir = dir.as_ref();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| BuildError::Io {
        path: PathBuf::from("$OUT_DIR"),
        error: std::io::Error::other("OUT_DIR is not set; call compile_dir from build.rs"),
    })?)
    .join("shaders");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-env-changed=KILN_GLSLC");
    println!("cargo:rerun-if-env-changed=KILN_GLSLANG");
    println!("cargo:rerun-if-env-changed=KILN_SHADER_DEBUG_INFO");
    compile_dir_to_with(dir, &out_dir, options).inspect_err(print_cargo_warnings)
}

/// Like [`compile_dir`] but into an explicit folder (no cargo output besides rerun lines).
pub fn compile_dir_to(dir: &Path, out_dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    compile_dir_to_with(dir, out_dir, &Options::default())
}

/// Like [`compile_dir_with`] but into an explicit folder.
pub fn compile_dir_to_with(
    dir: &Path,
    out_dir: &Path,
    options: &Options,
) -> Result<Vec<PathBuf>, BuildError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| BuildError::Io { path, error }
    };
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    let mut files = Vec::new();
    collect(dir, &mut files).map_err(io(dir))?;
    files.sort();
    let mut written = Vec::new();
    let mut failed = Vec::new();
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
        let is_wgsl = file.extension().is_some_and(|e| e == "wgsl");
        if stage_of(&file).is_none() && !is_wgsl {
            continue;
        }
        let rel = file.strip_prefix(dir).unwrap_or(&file);
        let target = out_dir.join(format!("{}.spv", rel.display()));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let bytes = if is_wgsl {
            compile_wgsl(&file)
        } else {
            track_includes(&file);
            compile_one(
                &file,
                options.env_for(rel),
                options.debug_info,
                options.nonsemantic,
            )
        };
        let bytes = match bytes {
            Ok(bytes) => bytes,
            // Go on: every failing shader is reported in this one build.
            Err(e @ BuildError::Compile { .. }) => {
                failed.push(e);
                continue;
            }
            Err(e) => return Err(e),
        };
        std::fs::write(&target, bytes).map_err(io(&target))?;
        written.push(target);
    }
    if !failed.is_empty() {
        return Err(BuildError::from_failures(failed));
    }
    Ok(written)
}

/// The files `path` includes (transitively), from `glslc -M`; empty when the compiler
/// cannot preprocess it (the compile reports why).
pub fn includes(path: &Path) -> Vec<PathBuf> {
    let Some((stage, hlsl)) = stage_of(path) else {
        return Vec::new();
    };
    let mut cmd = Command::new(glslc());
    cmd.arg("-M").arg(format!("-fshader-stage={stage}"));
    if hlsl {
        cmd.arg("-x").arg("hlsl");
    }
    if let Some(dir) = path.parent() {
        cmd.arg("-I").arg(dir);
    }
    let Ok(out) = cmd.arg(path).output() else {
        return Vec::new();
    };
    if !out.status.success() {
        return Vec::new();
    }
    // `target: source dep dep ...`, continued with `\` at line ends.
    let text = String::from_utf8_lossy(&out.stdout).replace("\\\n", " ");
    let deps = text.split_once(": ").map_or("", |(_, d)| d);
    deps.split_whitespace()
        .map(PathBuf::from)
        .filter(|d| d != path)
        .collect()
}

/// Prints `cargo:rerun-if-changed` for every file `path` includes.
fn track_includes(path: &Path) {
    for dep in includes(path) {
        println!("cargo:rerun-if-changed={}", dep.display());
    }
}

/// Compiles a WGSL file with naga (feature `wgsl`): every entry point into one module.
/// Errors carry naga's diagnostics with file, line and column.
#[cfg(feature = "wgsl")]
pub fn compile_wgsl(path: &Path) -> Result<Vec<u8>, BuildError> {
    let src = std::fs::read_to_string(path).map_err(|error| BuildError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let fail = |output: String| BuildError::Compile {
        file: path.to_path_buf(),
        output,
    };
    let module = naga::front::wgsl::parse_str(&src)
        .map_err(|e| fail(e.emit_to_string_with_path(&src, &path.display().to_string())))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| fail(e.emit_to_string_with_path(&src, &path.display().to_string())))?;
    let words = naga::back::spv::write_vec(&module, &info, &Default::default(), None)
        .map_err(|e| fail(e.to_string()))?;
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// Without the `wgsl` feature a WGSL file is an error that says how to enable it.
#[cfg(not(feature = "wgsl"))]
pub fn compile_wgsl(path: &Path) -> Result<Vec<u8>, BuildError> {
    Err(BuildError::WgslDisabled {
        file: path.to_path_buf(),
    })
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
