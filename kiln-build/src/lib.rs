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
//! or `.h` are treated as includes. Compiler errors are reported with file and line, as
//! glslc prints them; a missing `glslc` says which package to install.
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
//! # Prebuilt SPIR-V
//!
//! A source that this glslc cannot compile (a newer extension such as
//! `GL_KHR_cooperative_matrix`) can be committed with the `.spv` a newer compiler made,
//! beside it as `<file>.spv` (e.g. `gemm.comp` and `gemm.comp.spv`), and a line
//! `// kiln: prebuilt` in the source: kiln-build then copies that `.spv` instead of
//! compiling (a missing `.spv` is `KILN-B006`). Other `.spv` files in the folder are ignored.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

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
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::CompilerMissing { tried } => write!(
                f,
                "KILN-B001: shader compiler `{tried}` not found; install it \
                 (Debian/Ubuntu: `apt-get install glslc`) or set KILN_GLSLC"
            ),
            BuildError::Compile { file, output } => write!(
                f,
                "KILN-B002: shader {} failed to compile:\n{}",
                file.display(),
                output.trim_end()
            ),
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target_env: DEFAULT_TARGET_ENV.to_string(),
            folders: Vec::new(),
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
}

/// Reads the `// kiln: target-env=<env>` and `// kiln: prebuilt` lines of a source.
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
        }
    }
    m
}

/// Compiles one file to SPIR-V bytes with glslc for `target_env` (e.g. `"vulkan1.3"`,
/// [`DEFAULT_TARGET_ENV`]), unless the file says otherwise in a
/// `// kiln: target-env=...` line, which wins. A file marked `// kiln: prebuilt` is not
/// compiled: the bytes of `<file>.spv` beside it are returned (`KILN-B006` when missing).
pub fn compile_file(path: &Path, target_env: &str) -> Result<Vec<u8>, BuildError> {
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
    compile_dir_to_with(dir, &out_dir, options)
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
            compile_wgsl(&file)?
        } else {
            compile_file(&file, options.env_for(rel))?
        };
        std::fs::write(&target, bytes).map_err(io(&target))?;
        written.push(target);
    }
    Ok(written)
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
mod tests {
    use super::*;

    #[test]
    fn stages_from_names() {
        assert_eq!(stage_of(Path::new("a/b.comp")), Some(("comp", false)));
        assert_eq!(stage_of(Path::new("x.frag.hlsl")), Some(("frag", true)));
        assert_eq!(stage_of(Path::new("common.glsl")), None);
        assert_eq!(stage_of(Path::new("x.hlsl")), None);
    }

    #[test]
    fn compile_error_names_file_and_line() {
        let dir = std::env::temp_dir().join(format!("kiln-build-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.comp");
        std::fs::write(
            &f,
            "#version 450\nvoid main() {\n  undefined_thing = 1;\n}\n",
        )
        .unwrap();
        let err = compile_file(&f, "vulkan1.0").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("KILN-B002"), "{msg}");
        assert!(msg.contains("bad.comp:3"), "{msg}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn markers_are_read_from_comment_lines() {
        let m = markers("#version 450\n// kiln: target-env=vulkan1.1\nvoid main() {}\n");
        assert_eq!(m.target_env.as_deref(), Some("vulkan1.1"));
        assert!(!m.prebuilt);
        let m = markers("  //kiln: prebuilt\n/* kiln: target-env=x */\n");
        assert_eq!(
            m,
            Markers {
                target_env: None,
                prebuilt: true
            }
        );
    }

    #[test]
    fn folder_overrides_pick_the_deepest_folder() {
        let o = Options::new()
            .folder_target_env("legacy", "vulkan1.0")
            .folder_target_env("legacy/new", "vulkan1.2");
        assert_eq!(o.env_for(Path::new("a.comp")), "vulkan1.3");
        assert_eq!(o.env_for(Path::new("legacy/a.comp")), "vulkan1.0");
        assert_eq!(o.env_for(Path::new("legacy/new/a.comp")), "vulkan1.2");
        assert_eq!(o.env_for(Path::new("legacyx/a.comp")), "vulkan1.3");
    }

    /// The SPIR-V version word (bytes 4..8) of a compiled module.
    fn version(bytes: &[u8]) -> (u8, u8) {
        (bytes[6], bytes[5])
    }

    #[test]
    fn default_target_is_spirv_1_6_and_markers_override_it() {
        let dir = std::env::temp_dir().join(format!("kiln-build-env-{}", std::process::id()));
        let sub = dir.join("old");
        std::fs::create_dir_all(&sub).unwrap();
        let body = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
        std::fs::write(dir.join("a.comp"), body).unwrap();
        std::fs::write(sub.join("b.comp"), body).unwrap();
        std::fs::write(
            sub.join("c.comp"),
            format!("// kiln: target-env=vulkan1.1\n{body}"),
        )
        .unwrap();
        std::fs::write(dir.join("p.comp"), format!("// kiln: prebuilt\n{body}")).unwrap();
        std::fs::write(dir.join("p.comp.spv"), [3u8, 2, 35, 7, 0, 1, 2, 0]).unwrap();
        let out = dir.join("out");
        let options = Options::new().folder_target_env("old", "vulkan1.0");
        compile_dir_to_with(&dir, &out, &options).unwrap();
        let read = |name: &str| std::fs::read(out.join(name)).unwrap();
        assert_eq!(version(&read("a.comp.spv")), (1, 6));
        assert_eq!(version(&read("old/b.comp.spv")), (1, 0));
        assert_eq!(version(&read("old/c.comp.spv")), (1, 3));
        assert_eq!(read("p.comp.spv"), [3u8, 2, 35, 7, 0, 1, 2, 0]);
        std::fs::remove_file(dir.join("p.comp.spv")).unwrap();
        let err = compile_dir_to_with(&dir, &out, &options).unwrap_err();
        assert!(err.to_string().starts_with("KILN-B006"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn missing_compiler_names_package() {
        let err = BuildError::CompilerMissing {
            tried: "nope".into(),
        };
        assert!(err.to_string().contains("apt-get install glslc"));
    }
}
