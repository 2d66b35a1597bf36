//! kiln's procedural macros. Use them through `kiln` (`kiln::include_spirv!`), not
//! directly: this crate is an implementation detail and has no stable API of its own.
//!
//! # Why a proc macro
//!
//! `include_spirv!("x.comp")` reads `$OUT_DIR/shaders/x.comp.spv`, which the embedding
//! crate's `build.rs` wrote through `kiln-build`. With `include_bytes!(concat!(env!(..)))`
//! alone, a crate without a build script gets rustc's "environment variable `OUT_DIR` not
//! defined", and a misspelt name "couldn't read .../x.com.spv" with no list of what
//! exists. Here the lookup runs at expansion time instead (a proc macro runs inside rustc,
//! which cargo gives the crate's `OUT_DIR`), so each misuse is a `compile_error!` saying
//! what to do: add the build script, or pick one of the compiled shaders it lists
//! (with the closest name first). No index file is needed: the compiled shaders are the
//! `.spv` files under `$OUT_DIR/shaders/`, however `build.rs` put them there
//! (`compile_dir`, or several `compile_dir_to` calls into subfolders). A found shader
//! expands to `include_bytes!("<absolute path>")`, so rustc tracks the file for rebuilds.

use std::path::{Path, PathBuf};

use proc_macro::TokenStream;

/// `spirv_bytes!("name")`: `include_bytes!` of `$OUT_DIR/shaders/name.spv`, or a
/// `compile_error!` that says what to do. Used by `kiln::include_spirv!`.
#[proc_macro]
pub fn spirv_bytes(input: TokenStream) -> TokenStream {
    let out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
    let code = match string_literal(&input) {
        Err(e) => compile_error(&e),
        Ok(name) => match resolve(&name, out_dir.as_deref()) {
            Ok(path) => format!("::core::include_bytes!({:?})", path.display().to_string()),
            Err(e) => compile_error(&e),
        },
    };
    code.parse().unwrap_or_default()
}

fn compile_error(message: &str) -> String {
    format!("::core::compile_error!({message:?})")
}

/// The value of the one string literal `input` holds.
fn string_literal(input: &TokenStream) -> Result<String, String> {
    let usage = "include_spirv! takes one string literal, the shader's file name relative to \
                 the shader folder: include_spirv!(\"vector_add.comp\")";
    let mut tokens = input.clone().into_iter();
    match (tokens.next(), tokens.next()) {
        (Some(proc_macro::TokenTree::Literal(lit)), None) => {
            unquote(&lit.to_string()).ok_or_else(|| usage.to_string())
        }
        // A `$name:literal` passed on by a macro_rules macro arrives in an invisible group.
        (Some(proc_macro::TokenTree::Group(g)), None)
            if g.delimiter() == proc_macro::Delimiter::None =>
        {
            string_literal(&g.stream())
        }
        _ => Err(usage.to_string()),
    }
}

/// `"a.comp"` → `a.comp`; raw strings `r"…"`/`r#"…"#` too. Escapes other than `\\` and
/// `\"` are not expected in file names and are refused.
fn unquote(lit: &str) -> Option<String> {
    if let Some(raw) = lit.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let body = raw.get(hashes..raw.len().checked_sub(hashes)?)?;
        return Some(body.strip_prefix('"')?.strip_suffix('"')?.to_string());
    }
    let body = lit.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next()? {
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Where the SPIR-V of `name` is, or the message for a `compile_error!`.
fn resolve(name: &str, out_dir: Option<&Path>) -> Result<PathBuf, String> {
    let Some(out_dir) = out_dir else {
        return Err(format!(
            "include_spirv!(\"{name}\") embeds SPIR-V that this crate's build script compiles, \
             but this crate has no build script (OUT_DIR is not set). Add `kiln-build` under \
             [build-dependencies] and a build.rs with: fn main() {{ if let Err(e) = \
             kiln_build::compile_dir(\"shaders\") {{ eprintln!(\"{{e}}\"); \
             std::process::exit(1); }} }} (see kiln's README, \"kiln in your own crate\")"
        ));
    };
    let root = out_dir.join("shaders");
    let path = root.join(format!("{name}.spv"));
    if path.is_file() {
        return Ok(path);
    }
    let mut compiled = Vec::new();
    collect(&root, &root, &mut compiled);
    compiled.sort();
    if compiled.is_empty() {
        return Err(format!(
            "no compiled shader `{name}`: this crate's build script compiled no shaders into \
             {} ; call kiln_build::compile_dir(\"shaders\") in build.rs with `{name}` in that \
             folder",
            root.display()
        ));
    }
    let suggestion = closest(name, &compiled)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default();
    Err(format!(
        "no compiled shader `{name}`{suggestion}; the build script compiled: {}. The name is \
         the source's path relative to the shader folder, with its extension \
         (include_spirv!(\"{}\"))",
        compiled.join(", "),
        compiled[0]
    ))
}

/// The `.spv` files under `dir`, as names relative to `root` without `.spv`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if let Some(rel) = path
            .strip_prefix(root)
            .ok()
            .and_then(|r| r.to_str())
            .and_then(|r| r.strip_suffix(".spv"))
        {
            out.push(rel.replace('\\', "/"));
        }
    }
}

/// The compiled name nearest to `name` by edit distance, when it is near (≤ 1/3 of the
/// name's length, at least 2 edits allowed).
fn closest<'a>(name: &str, names: &'a [String]) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    names
        .iter()
        .map(|n| (distance(name, n), n))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, n)| n.as_str())
}

/// Levenshtein distance in characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kiln-macros-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(dir.join("shaders/test")).unwrap();
        dir
    }

    #[test]
    fn no_build_script_says_how_to_add_one() {
        let e = resolve("vector_add.comp", None).unwrap_err();
        assert!(
            e.contains("has no build script (OUT_DIR is not set)"),
            "{e}"
        );
        assert!(e.contains("[build-dependencies]"), "{e}");
        assert!(e.contains("kiln_build::compile_dir(\"shaders\")"), "{e}");
    }

    #[test]
    fn an_unknown_name_lists_the_compiled_shaders_and_the_closest() {
        let dir = temp("unknown");
        for f in [
            "printf.comp.spv",
            "vector_add.comp.spv",
            "test/fill.comp.spv",
        ] {
            std::fs::write(dir.join("shaders").join(f), [0u8; 4]).unwrap();
        }
        let e = resolve("printf.com", Some(&dir)).unwrap_err();
        assert!(
            e.starts_with("no compiled shader `printf.com` (did you mean `printf.comp`?)"),
            "{e}"
        );
        assert!(
            e.contains("compiled: printf.comp, test/fill.comp, vector_add.comp."),
            "{e}"
        );
        let e = resolve("zzzzzzzz.frag", Some(&dir)).unwrap_err();
        assert!(!e.contains("did you mean"), "{e}");
        let found = resolve("test/fill.comp", Some(&dir)).unwrap();
        assert_eq!(found, dir.join("shaders/test/fill.comp.spv"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn no_shaders_at_all_says_to_compile_them() {
        let dir = temp("none");
        let e = resolve("a.comp", Some(&dir)).unwrap_err();
        assert!(e.contains("compiled no shaders"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn literals_are_unquoted() {
        assert_eq!(unquote("\"a.comp\"").as_deref(), Some("a.comp"));
        assert_eq!(
            unquote("r#\"a \"b\".comp\"#").as_deref(),
            Some("a \"b\".comp")
        );
        assert_eq!(unquote("\"a\\n\""), None);
        assert_eq!(unquote("42"), None);
        assert_eq!(distance("printf.com", "printf.comp"), 1);
    }
}
