//! `glslc` at run time for hot reload, and the files each compile read: the compiler writes
//! a Make dependency file (`-MD -MF`, target `-MT`), parsed here.
//!
//! The depfile is Make syntax (GNU make manual, "Generating Prerequisites Automatically"):
//! `target: prerequisite prerequisite \` with `\`-newline continuations, `\ ` an escaped
//! space, `\#` an escaped `#`, `$$` a `$`, `#` a comment. glslc (shaderc 2023) escapes
//! nothing: a path with spaces arrives as several words. So a word that is no file is
//! joined with the words after it until the joined path is one ([`rejoin`]); with a
//! compiler that escapes, every word is a file and nothing is joined.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::shaders::ShaderModule;

/// The target kiln names in the depfile (`-MT`): the rule is found by it.
const TARGET: &str = "kiln-hot-reload";

/// What one run of the compiler gave: the module or the compiler's messages, and the files
/// the compile read, the source first (only the source when the compiler wrote no
/// depfile, e.g. because it could not start).
pub(crate) struct Compiled {
    pub module: Result<ShaderModule, String>,
    pub files: Vec<PathBuf>,
}

/// Shader stages glslc knows by `-fshader-stage`.
const STAGES: &[&str] = &[
    "comp", "vert", "frag", "geom", "tesc", "tese", "mesh", "task",
];

/// `glslc` (or `$KILN_GLSLC`) on `path`, whose bytes as read are `bytes`, with kiln-build's
/// command line (`--target-env=vulkan1.3` unless a `// kiln: target-env=…` line says
/// otherwise, `-I` the file's folder, HLSL for `*.hlsl` with entry `main`) plus a depfile.
/// `stage` is glslc's stage name; `None` takes it from the file name (`fill.comp`,
/// `fill.comp.hlsl`).
pub(crate) fn compile(path: &Path, bytes: &[u8], stage: Option<&str>) -> Compiled {
    let mut files = vec![path.to_path_buf()];
    let module = run(path, bytes, stage, &mut files);
    Compiled { module, files }
}

fn run(
    path: &Path,
    bytes: &[u8],
    stage: Option<&str>,
    files: &mut Vec<PathBuf>,
) -> Result<ShaderModule, String> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let (named, hlsl) = match name.rsplit('.').collect::<Vec<_>>().as_slice() {
        ["hlsl", stage, ..] => (*stage, true),
        [stage, ..] => (*stage, false),
        [] => ("", false),
    };
    let stage = stage.unwrap_or(named);
    if !STAGES.contains(&stage) {
        return Err(format!(
            "cannot tell the stage of {}; name it *.comp (or *.comp.hlsl)",
            path.display()
        ));
    }
    let text = String::from_utf8_lossy(bytes);
    let env = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("//"))
        .filter_map(|l| l.trim().strip_prefix("kiln:"))
        .find_map(|l| l.trim().strip_prefix("target-env="))
        .map_or("vulkan1.3".to_string(), |e| e.trim().to_string());
    let compiler = std::env::var("KILN_GLSLC").unwrap_or_else(|_| "glslc".into());
    let depfile = depfile_path()?;
    let mut cmd = std::process::Command::new(&compiler);
    cmd.arg(format!("--target-env={env}"))
        .arg(format!("-fshader-stage={stage}"))
        .arg("-MD")
        .arg("-MF")
        .arg(&depfile)
        .arg("-MT")
        .arg(TARGET)
        .arg("-o")
        .arg("-");
    if hlsl {
        cmd.arg("-x").arg("hlsl").arg("-fentry-point=main");
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        cmd.arg("-I").arg(dir);
    }
    let out = cmd.arg(path).output();
    // Written on failures too (with the includes found so far).
    if let Ok(text) = std::fs::read_to_string(&depfile) {
        let _ = std::fs::remove_file(&depfile);
        for f in depfile_paths(&text, |p| p.is_file()) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    let out =
        out.map_err(|e| format!("cannot run `{compiler}` ({e}); install glslc or set KILN_GLSLC"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim_end().to_string());
    }
    ShaderModule::from_bytes(&out.stdout)
        .map(|m| m.with_label(name))
        .map_err(|e| e.to_string())
}

/// A depfile name of its own for each compile (several watcher threads compile at once),
/// in the process's private folder ([`private_dir`]).
fn depfile_path() -> Result<PathBuf, String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = DIR.get_or_init(private_dir).clone()?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Ok(dir.join(format!("{n}.d")))
}

/// A new folder in the temp folder that only this user can enter (mode 0700 on Unix),
/// made once per process: in the shared temp folder another user could plant a file (or a
/// link) at a predictable depfile path for glslc to write through, or kiln to read. The
/// folder is created, never reused: a name that exists already is skipped. Left empty when
/// the process ends (each depfile is removed once read).
fn private_dir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for attempt in 0..16u32 {
        let dir = base.join(format!(
            "kiln-hot-{}-{nanos:08x}-{attempt}",
            std::process::id()
        ));
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(format!(
                    "cannot create a folder for glslc's depfiles in {} ({e})",
                    base.display()
                ))
            }
        }
    }
    Err(format!(
        "cannot create a folder for glslc's depfiles in {} ({})",
        base.display(),
        last.map_or_else(String::new, |e| e.to_string())
    ))
}

/// The files a Make dependency file names as prerequisites, in order, each once: the
/// words of each rule ([`words`]) made paths by [`rejoin`] with `exists`.
pub(crate) fn depfile_paths(text: &str, exists: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for rule in words(text) {
        for p in rejoin(&rule, &exists) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    paths
}

/// The prerequisites of each rule of a Make dependency file, as words, unescaped. Lines
/// are joined at `\`-newline; `#` starts a comment; a rule's target ends at the first `:`
/// followed by a blank or the line's end (so `C:\x.h` stays a path).
fn words(text: &str) -> Vec<Vec<String>> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    joined
        .lines()
        .filter_map(after_target)
        .map(split_words)
        .filter(|w| !w.is_empty())
        .collect()
}

/// What follows the target of the rule on `line` (`None` for blank and comment lines).
fn after_target(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1, // the next byte is escaped
            b'#' => return None,
            b':' if bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()) => {
                return Some(&line[i + 1..]);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The words of a prerequisite list: blanks separate them unless escaped (`\ `), `\#` is
/// `#`, `$$` is `$`, an unescaped `#` ends the list; other backslashes are kept (Windows
/// paths).
fn split_words(list: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some(' ' | '\t' | '#')) => {
                word.extend(chars.next());
            }
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            '#' => break,
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Words a path split at unescaped spaces may span in [`rejoin`] (a path with more spaces
/// is kept in pieces).
const MAX_JOIN: usize = 16;

/// Paths from depfile words where the compiler did not escape spaces: each word starts the
/// longest run of words (up to [`MAX_JOIN`]) that joined with spaces is a file (`exists`);
/// a word that starts none stays alone (a file removed since). The longest, not the first:
/// a prefix of a path with spaces may itself be a file (`/tmp/kiln` beside
/// `/tmp/kiln hot/k.glsl`).
fn rejoin(words: &[String], exists: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let mut taken = 1;
        let mut joined = String::new();
        for (j, w) in words.iter().enumerate().skip(i).take(MAX_JOIN) {
            if j > i {
                joined.push(' ');
            }
            joined.push_str(w);
            if exists(Path::new(&joined)) {
                taken = j + 1 - i;
            }
        }
        paths.push(PathBuf::from(words[i..i + taken].join(" ")));
        i += taken;
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_of_make_syntax() {
        // glslc's own line, continuations (LF and CRLF), escapes, comments, phony rules.
        let text = "kiln-hot-reload: a.comp inc/x.glsl \\\n  my\\ dir/y.glsl \\\r\n z$$1.h \\#q.h # comment\n\
                    # a comment line\n\ninc/x.glsl:\nmy\\ dir/y.glsl: inc/x.glsl C:\\w\\v.h\n";
        assert_eq!(
            words(text),
            vec![
                strings(&["a.comp", "inc/x.glsl", "my dir/y.glsl", "z$1.h", "#q.h"]),
                strings(&["inc/x.glsl", "C:\\w\\v.h"]),
            ]
        );
        // Each path once, in order (every word a file here, and no join of words).
        let want = [
            "a.comp",
            "inc/x.glsl",
            "my dir/y.glsl",
            "z$1.h",
            "#q.h",
            "C:\\w\\v.h",
        ];
        let paths = depfile_paths(text, |p| want.iter().any(|w| Path::new(w) == p));
        assert_eq!(paths, want.map(PathBuf::from).to_vec());
        // A target with a drive letter and no trailing newline.
        assert_eq!(
            words("C:\\o\\-: C:\\s.comp"),
            vec![strings(&["C:\\s.comp"])]
        );
        assert!(words("").is_empty());
        assert!(words("no rule here\n").is_empty());
    }

    #[test]
    fn unescaped_spaces_are_joined_where_the_joined_path_exists() {
        // glslc: `kiln-hot-reload: /t/hot exp/s t.comp /t/hot exp/inc dir/h.glsl /t/a.glsl`.
        let files = [
            "/t/hot exp/s t.comp",
            "/t/hot exp/inc dir/h.glsl",
            "/t/a.glsl",
        ];
        let exists = |p: &Path| files.iter().any(|f| Path::new(f) == p);
        let text = format!("{TARGET}: {}", files.join(" "));
        assert_eq!(words(&text)[0].len(), 7);
        let want: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        assert_eq!(depfile_paths(&text, exists), want);
        // Escaped spaces (every word a file): nothing joined.
        let text = format!("{TARGET}: /t/hot\\ exp/s\\ t.comp /t/a.glsl");
        assert_eq!(
            depfile_paths(&text, exists),
            vec![PathBuf::from(files[0]), PathBuf::from(files[2])]
        );
        // A prefix of a spaced path that is itself a file: the whole path is taken.
        let with_prefix = ["/t/hot", "/t/hot exp/s t.comp", "/t/a.glsl"];
        let exists_too = |p: &Path| with_prefix.iter().any(|f| Path::new(f) == p);
        assert_eq!(
            depfile_paths(
                &format!("{TARGET}: /t/hot exp/s t.comp /t/hot /t/a.glsl"),
                exists_too
            ),
            ["/t/hot exp/s t.comp", "/t/hot", "/t/a.glsl"]
                .map(PathBuf::from)
                .to_vec()
        );
        // A word that is no file and joins into none: kept alone, the rest unchanged.
        assert_eq!(
            depfile_paths(&format!("{TARGET}: /gone /t/a.glsl"), exists),
            vec![PathBuf::from("/gone"), PathBuf::from("/t/a.glsl")]
        );
    }

    #[test]
    fn depfiles_go_to_one_private_folder_per_process() {
        let a = depfile_path().unwrap();
        let b = depfile_path().unwrap();
        assert_ne!(a, b);
        let dir = a.parent().unwrap();
        assert_eq!(b.parent(), Some(dir));
        assert_eq!(dir.parent(), Some(std::env::temp_dir().as_path()));
        let meta = std::fs::symlink_metadata(dir).unwrap();
        assert!(meta.is_dir());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        }
    }
}
