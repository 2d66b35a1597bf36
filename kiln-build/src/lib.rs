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

/// Compiles one file to SPIR-V bytes with glslc (`--target-env=vulkan1.0` unless
/// `target_env` says otherwise, e.g. `"vulkan1.2"`).
pub fn compile_file(path: &Path, target_env: &str) -> Result<Vec<u8>, BuildError> {
    let (stage, hlsl) = stage_of(path).ok_or_else(|| BuildError::UnknownStage {
        file: path.to_path_buf(),
    })?;
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

/// Compiles every shader source under `dir` into `$OUT_DIR/shaders/`, and prints the
/// `cargo:rerun-if-changed` lines. Returns the written `.spv` paths.
pub fn compile_dir(dir: impl AsRef<Path>) -> Result<Vec<PathBuf>, BuildError> {
    let dir = dir.as_ref();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| BuildError::Io {
        path: PathBuf::from("$OUT_DIR"),
        error: std::io::Error::other("OUT_DIR is not set; call compile_dir from build.rs"),
    })?)
    .join("shaders");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-env-changed=KILN_GLSLC");
    compile_dir_to(dir, &out_dir)
}

/// Like [`compile_dir`] but into an explicit folder (no cargo output besides rerun lines).
pub fn compile_dir_to(dir: &Path, out_dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
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
            compile_file(&file, "vulkan1.0")?
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
    fn missing_compiler_names_package() {
        let err = BuildError::CompilerMissing {
            tried: "nope".into(),
        };
        assert!(err.to_string().contains("apt-get install glslc"));
    }
}
