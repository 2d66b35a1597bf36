//! Shader debug info (see the crate docs, "Debug info"): which files get it, and the
//! NonSemantic.Shader.DebugInfo.100 form through glslang (`debug-info=nonsemantic`).
//!
//! glslc (shaderc 2023.2, Debian 12) has only `-g`: `OpString`/`OpSource`/`OpLine`, which
//! GPU-assisted validation and shader printf use for `file:line`, but which carries no
//! scopes, variables or types for a shader debugger. glslang's `glslangValidator -gVS`
//! (glslang-tools 12.0, Debian 12; the `KILN_GLSLANG` variable names another) writes
//! NonSemantic.Shader.DebugInfo.100 with the source, which RenderDoc's shader debugger
//! reads. kiln-build therefore compiles a debug-info shader with glslc first (its messages
//! are the ones kiln-build parses, and a failing shader fails there) and then, where
//! glslang is installed, once more with glslang; without glslang it keeps glslc's `-g`
//! output and warns once (`KILN-B012`, naming the package). Plain `debug-info` stays
//! glslc's `-g`: validation layer 1.3.239's GPU-assisted validation fails to instrument
//! glslang 12's NonSemantic modules ("SPIR-V module not valid: Id is 0").

use std::path::Path;
use std::process::Command;
use std::sync::Once;

use crate::BuildError;

/// The glslang executable: `KILN_GLSLANG` or `glslangValidator`.
pub fn glslang() -> String {
    std::env::var("KILN_GLSLANG").unwrap_or_else(|_| "glslangValidator".to_string())
}

/// Whether a file gets debug info (of one kind: `-g`, or NonSemantic):
/// `KILN_SHADER_DEBUG_INFO=1|0` decides for every file; else the file's own `// kiln:`
/// line (`marked`) does; else [`Options`](crate::Options) (`all`), except in release
/// builds (cargo's `PROFILE` is `release`), which strip it unless asked per file.
pub fn wanted(marked: bool, all: bool) -> bool {
    let setting = std::env::var("KILN_SHADER_DEBUG_INFO").ok();
    let profile = std::env::var("PROFILE").ok();
    wanted_with(marked, all, setting.as_deref(), profile.as_deref())
}

/// [`wanted`] for the values of `KILN_SHADER_DEBUG_INFO` and `PROFILE` given.
pub fn wanted_with(marked: bool, all: bool, setting: Option<&str>, profile: Option<&str>) -> bool {
    match setting {
        Some("1") => true,
        Some("0") => false,
        _ => marked || (all && profile != Some("release")),
    }
}

/// `path` (a source glslc compiled already) compiled with NonSemantic.Shader.DebugInfo.100
/// and its source (`glslangValidator -gVS`); `None` when glslang is not installed (then
/// `KILN-B012` is printed once, as a cargo warning in a build script).
///
/// Errors: `KILN-B002` glslang failed (its output), `KILN-B003` I/O.
pub fn nonsemantic(
    path: &Path,
    stage: &str,
    hlsl: bool,
    target_env: &str,
) -> Option<Result<Vec<u8>, BuildError>> {
    let out = std::env::temp_dir().join(format!(
        "kiln-build-{}-{}.spv",
        std::process::id(),
        path.file_name()?.to_string_lossy()
    ));
    let mut cmd = Command::new(glslang());
    cmd.arg("-V")
        .arg("--target-env")
        .arg(target_env)
        .arg("-gVS")
        .arg("-S")
        .arg(stage)
        .arg("-o")
        .arg(&out);
    if hlsl {
        cmd.arg("-D").arg("-e").arg("main");
    }
    if let Some(dir) = path.parent() {
        cmd.arg(format!("-I{}", dir.display()));
    }
    cmd.arg(path);
    let result = match cmd.output() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            warn_missing();
            return None;
        }
        Err(error) => Err(BuildError::Io {
            path: path.to_path_buf(),
            error,
        }),
        Ok(o) if !o.status.success() => Err(BuildError::Compile {
            file: path.to_path_buf(),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        }),
        Ok(_) => std::fs::read(&out).map_err(|error| BuildError::Io {
            path: out.clone(),
            error,
        }),
    };
    let _ = std::fs::remove_file(&out);
    Some(result)
}

/// `KILN-B012`, once per process: debug info falls back to glslc's `-g`.
fn warn_missing() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let text = format!(
            "KILN-B012: `{}` not found: shaders marked for debug info get glslc's -g \
             (file and line for GPU-AV and printf, no NonSemantic.Shader.DebugInfo.100 for \
             a shader debugger); install glslang-tools (apt-get install glslang-tools) or \
             set KILN_GLSLANG",
            glslang()
        );
        if std::env::var_os("OUT_DIR").is_some() {
            println!("cargo:warning={text}");
        } else {
            eprintln!("{text}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_builds_strip_what_the_options_asked_for_not_marked_files() {
        for (marked, all, setting, profile, want) in [
            (false, false, None, Some("debug"), false),
            (true, false, None, Some("release"), true),
            (false, true, None, Some("debug"), true),
            (false, true, None, Some("release"), false),
            (false, true, None, None, true),
            (true, true, Some("0"), Some("debug"), false),
            (false, false, Some("1"), Some("release"), true),
            (true, false, Some("other"), Some("release"), true),
        ] {
            assert_eq!(
                wanted_with(marked, all, setting, profile),
                want,
                "{marked} {all} {setting:?} {profile:?}"
            );
        }
    }
}
