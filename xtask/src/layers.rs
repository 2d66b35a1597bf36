//! `cargo xtask layers`: the library's layering, checked from the source (also a step of
//! `cargo xtask lint`).
//!
//! The folders of `src/` are layers, bottom to top ([`ORDER`]); a file may name its own
//! layer and the layers below it, never one above. The check reads every `.rs` file of
//! `src/`, drops comments and string literals, and resolves each path that starts at the
//! crate root — `crate::x`, the items of `use crate::{x, y::z}`, and `super::` chains that
//! climb to the root — to the layer it names. A name re-exported at the root (`crate::Buffer`)
//! counts as the layer it comes from (read from `src/lib.rs`'s `pub use` lines), so a
//! re-export cannot hide an upward import; that includes `use` of any visibility, behind
//! `#[cfg]`, nested groups, and the items of `lib.rs`'s inline modules (`crate::hooks::X`
//! is the layer `X` comes from). The root under another name (`use crate as k`,
//! `use crate::{self as k}`) is followed too. `lib.rs` itself is the composition of all layers
//! and is not checked; `$crate::` paths in macros are the user's, not an import.
//!
//! Output: one line per upward import, `file:line: layer -> layer (path)`, and a summary.
//! Pure functions over strings ([`strip`], [`root_paths`], [`reexports`], [`violations`])
//! are unit-tested below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, bottom first: `error` (what every layer returns), then the folders, then
/// `compose` (`src/compose.rs`, the composition root that makes a `Device` of all layers).
pub const ORDER: &[&str] = &[
    "error",
    "device",
    "shaders",
    "descriptors",
    "pipeline",
    "commands",
    "queue",
    "transfer",
    "window",
    "compose",
];

fn rank(layer: &str) -> Option<usize> {
    ORDER.iter().position(|l| *l == layer)
}

/// `text` with comments and the contents of string and char literals replaced by spaces
/// (newlines kept, so line numbers stay).
pub fn strip(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && is_raw_start(&b, i) {
            // r"..." or r#"..."#: find the closing quote with as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            out.extend(std::iter::repeat_n(' ', j - i + 1));
            j += 1;
            while j < b.len() {
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    out.extend(std::iter::repeat_n(' ', hashes + 1));
                    j += hashes + 1;
                    break;
                }
                out.push(blank(b[j]));
                j += 1;
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && is_char_literal(&b, i) {
            let end = (i + 1..b.len()).find(|&j| b[j] == '\'' && b[j - 1] != '\\');
            let end = end.unwrap_or(i);
            out.extend(std::iter::repeat_n(' ', end - i + 1));
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether `r` at `i` starts a raw string (not the end of an identifier such as `for"`).
fn is_raw_start(b: &[char], i: usize) -> bool {
    let prev_ident = i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_');
    if prev_ident {
        return false;
    }
    let mut j = i + 1;
    while b.get(j) == Some(&'#') {
        j += 1;
    }
    b.get(j) == Some(&'"')
}

/// Whether the `'` at `i` opens a char literal (`'a'`, `'\n'`, `'\u{1F}'`), not a
/// lifetime (`'a`).
fn is_char_literal(b: &[char], i: usize) -> bool {
    matches!(
        (b.get(i + 1), b.get(i + 2)),
        (Some('\\'), _) | (Some(_), Some('\''))
    )
}

/// The path after the crate root of every root path in stripped `code`, with its 1-based
/// line: `crate::a::b` gives `a::b`; `use crate::{a, b::c}` gives `a` and `b::c`;
/// `super::super::x` in a file `depth` modules below the root gives `x` when the chain
/// reaches the root (`depth` = the number of `super` that reach it). The root under another
/// name (`use crate as k;`, `use crate::{self as k}`) counts as `crate`: `k::a` gives `a`.
pub fn root_paths(code: &str, depth: usize) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let line_of = |pos: usize| chars[..pos].iter().filter(|c| **c == '\n').count() + 1;
    let ident_before = |pos: usize| {
        pos > 0 && {
            let c = chars[pos - 1];
            c.is_alphanumeric() || c == '_' || c == '$' || c == ':'
        }
    };
    let is_path = |c: &char| c.is_alphanumeric() || *c == '_' || *c == ':';
    let roots: Vec<String> = std::iter::once("crate::".to_string())
        .chain(root_aliases(code).into_iter().map(|a| format!("{a}::")))
        .collect();
    let mut i = 0;
    while i < chars.len() {
        let at = |p: &str| {
            p.chars()
                .enumerate()
                .all(|(k, c)| chars.get(i + k) == Some(&c))
                && !ident_before(i)
        };
        let (start, after) = if let Some(r) = roots.iter().find(|r| at(r)) {
            (i, i + r.chars().count())
        } else if at("super::") {
            let mut j = i;
            let mut supers = 0;
            while chars[j..].iter().take(7).collect::<String>() == "super::" {
                supers += 1;
                j += 7;
            }
            if supers < depth || depth == 0 {
                i = j;
                continue;
            }
            (i, j)
        } else {
            i += 1;
            continue;
        };
        let line = line_of(start);
        let mut j = after;
        while chars.get(j).is_some_and(|c| c.is_whitespace()) {
            j += 1;
        }
        if chars.get(j) == Some(&'{') {
            // A group: the path of each top-level item (up to a nested group).
            let mut level = 0;
            let mut item = String::new();
            let mut at_item_start = true;
            while j < chars.len() {
                let c = chars[j];
                match c {
                    '{' => level += 1,
                    '}' => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    ',' if level == 1 => at_item_start = true,
                    _ => {}
                }
                if level == 1 && at_item_start && is_path(&c) && (c != ':' || !item.is_empty()) {
                    item.push(c);
                } else if !item.is_empty() {
                    found.push((line, std::mem::take(&mut item)));
                    at_item_start = c == ',' && level == 1;
                }
                j += 1;
            }
            if !item.is_empty() {
                found.push((line, item));
            }
        } else {
            let name: String = chars[j..].iter().take_while(|c| is_path(c)).collect();
            let name = name.trim_end_matches(':').to_string();
            if !name.is_empty() {
                found.push((line, name));
            }
        }
        i = after;
    }
    found
}

/// The names `code` gives the crate root: `use crate as k;` and `use crate::{self as k}`.
fn root_aliases(code: &str) -> Vec<String> {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for w in words.windows(3) {
        if (w[0] == "crate" || w[0] == "self") && w[1] == "as" && w[2] != "_" {
            // `self as k` binds the root only inside a group of `crate::`.
            if w[0] == "crate" || self_in_crate_group(code, w[2]) {
                out.push(w[2].to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether `self as alias` appears at the top level of a `crate::{...}` group of `code`.
fn self_in_crate_group(code: &str, alias: &str) -> bool {
    let mut from = 0;
    while let Some(k) = code[from..].find("crate::") {
        let at = from + k + 7;
        from = at;
        let rest = code[at..].trim_start();
        if !rest.starts_with('{') {
            continue;
        }
        let mut level = 0;
        let mut end = rest.len();
        for (p, c) in rest.char_indices() {
            match c {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        end = p;
                        break;
                    }
                }
                _ => {}
            }
        }
        let group = &rest[1..end];
        let flat: String = group.split_whitespace().collect::<Vec<_>>().join(" ");
        if flat
            .split(',')
            .any(|item| item.trim() == format!("self as {alias}"))
        {
            return true;
        }
    }
    false
}

/// The names `lib.rs` binds at the root with `use` (of any visibility, behind attributes
/// such as `#[cfg]`), each with the layer it comes from (`pub use device::{Buffer, Image}`
/// gives `Buffer -> device`; nested groups flattened). The items of an inline module of
/// `lib.rs` (`pub mod hooks { pub use crate::queue::STAGING_CHUNK; }`) are keyed
/// `hooks::STAGING_CHUNK`, and the module's own name maps to the highest layer it
/// re-exports from (a path through it that cannot be followed counts as that layer).
pub fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut code: Vec<char> = strip(lib).chars().collect();
    let mut map = BTreeMap::new();
    // Inline modules first, each blanked out of the root's text once read.
    while let Some((name, open, close)) = inline_module(&code) {
        let inner: String = code[open + 1..close].iter().collect();
        let mut top: Option<String> = None;
        for (bound, layer) in uses_of(&inner) {
            if top.as_deref().and_then(rank) < rank(&layer) {
                top = Some(layer.clone());
            }
            map.insert(format!("{name}::{bound}"), layer);
        }
        if let Some(top) = top {
            map.insert(name, top);
        }
        for c in &mut code[open..=close] {
            *c = ' ';
        }
    }
    let root: String = code.into_iter().collect();
    map.extend(uses_of(&root));
    map
}

/// The first `mod NAME {` of `code` with a body: its name and the positions of its braces.
fn inline_module(code: &[char]) -> Option<(String, usize, usize)> {
    let text: String = code.iter().collect();
    let mut from = 0;
    while let Some(k) = text[from..].find("mod ") {
        let at = from + k;
        from = at + 4;
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + 4..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after_name = rest.trim_start()[name.len()..].trim_start();
        if name.is_empty() || !after_name.starts_with('{') {
            continue;
        }
        // Positions in chars (the stripped text may hold non-ASCII only in identifiers).
        let open = text[..text.len() - after_name.len()].chars().count();
        let mut level = 0;
        for (p, c) in code.iter().enumerate().skip(open) {
            match c {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        return Some((name, open, p));
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    None
}

/// The names bound by the `use` statements of `code` whose path starts at a layer (`crate::`
/// or `self::` optional), each with that layer.
fn uses_of(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for stmt in code.split(';') {
        let Some(k) = use_keyword(stmt) else {
            continue;
        };
        let rest = stmt[k + 4..].trim();
        let rest = rest
            .trim_start_matches("::")
            .trim_start_matches("crate::")
            .trim_start_matches("self::");
        let Some((layer, items)) = rest.split_once("::") else {
            continue;
        };
        let layer = layer.trim();
        if rank(layer).is_none() {
            continue;
        }
        let flat: String = items.chars().filter(|c| *c != '{' && *c != '}').collect();
        for item in flat.split(',') {
            // `a::b::C`, `C as D`: the name bound is the last one.
            let item = item.split_whitespace().collect::<Vec<_>>().join(" ");
            let bound = match item.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or(&item).trim(),
            };
            if !bound.is_empty() && bound != "self" && bound != "*" && bound != "_" {
                out.push((bound.to_string(), layer.to_string()));
            }
        }
    }
    out
}

/// Where the `use` keyword of statement `stmt` starts: after nothing but attributes, a
/// visibility (`pub`, `pub(crate)`, ...), or the end of an earlier item's block.
fn use_keyword(stmt: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = stmt[from..].find("use") {
        let at = from + k;
        from = at + 3;
        let ok_before = stmt[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let ok_after = stmt[at + 3..]
            .chars()
            .next()
            .is_some_and(char::is_whitespace);
        if !(ok_before && ok_after) {
            continue;
        }
        let mut before = stmt[..at].trim_end();
        if let Some(b) = before.strip_suffix(')') {
            if let Some(v) = b.rfind("pub(") {
                before = b[..v].trim_end();
            }
        } else if let Some(b) = before.strip_suffix("pub") {
            before = b.trim_end();
        }
        if before.is_empty() || before.ends_with(']') || before.ends_with('}') {
            return Some(at);
        }
        return None;
    }
    None
}

/// An import of a layer above the file's own.
#[derive(Debug, PartialEq, Eq)]
pub struct Violation {
    pub file: String,
    pub line: usize,
    pub from: String,
    pub to: String,
    pub name: String,
}

/// The upward imports of one file of layer `layer` whose stripped code is `code`, at
/// `depth` modules below the root.
pub fn violations(
    file: &str,
    layer: &str,
    code: &str,
    depth: usize,
    roots: &BTreeMap<String, String>,
) -> Vec<Violation> {
    let Some(own) = rank(layer) else {
        return Vec::new();
    };
    root_paths(code, depth)
        .into_iter()
        .filter_map(|(line, path)| {
            let mut segs = path.split("::").filter(|s| !s.is_empty());
            let first = segs.next()?.to_string();
            let second = segs.next();
            let target = if rank(&first).is_some() {
                first.clone()
            } else if let Some(t) = second.and_then(|s| roots.get(&format!("{first}::{s}"))) {
                t.clone()
            } else {
                roots.get(&first)?.clone()
            };
            let name = match second {
                Some(s) if roots.contains_key(&format!("{first}::{s}")) => format!("{first}::{s}"),
                _ => first,
            };
            (rank(&target)? > own).then(|| Violation {
                file: file.to_string(),
                line,
                from: layer.to_string(),
                to: target,
                name,
            })
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The layer of `path` (relative to `src/`) and its module depth below the root:
/// `device/mod.rs` is (device, 1), `device/features/mesh.rs` (device, 3), `error.rs`
/// (error, 1), `lib.rs` none.
pub fn layer_of(rel: &Path) -> Option<(String, usize)> {
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let first = parts.first()?;
    let layer = first.trim_end_matches(".rs").to_string();
    if layer == "lib" {
        return None;
    }
    let last = parts.last()?;
    // `a/b/mod.rs` is module a::b (depth 2); `a/b/c.rs` is a::b::c (depth 3).
    let depth = if last == "mod.rs" {
        parts.len() - 1
    } else {
        parts.len()
    };
    Some((layer, depth))
}

/// Checks `src/`; prints each upward import and a summary. True when there is none.
pub fn run() -> bool {
    let src = Path::new("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    let roots = reexports(&lib);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut checked = 0;
    for path in &files {
        let Ok(rel) = path.strip_prefix(src) else {
            continue;
        };
        let Some((layer, depth)) = layer_of(rel) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        checked += 1;
        let file = path.display().to_string();
        found.extend(violations(&file, &layer, &strip(&text), depth, &roots));
    }
    for v in &found {
        eprintln!(
            "{}:{}: layer `{}` imports `{}` above it (`{}`)",
            v.file, v.line, v.from, v.to, v.name
        );
    }
    eprintln!(
        "xtask layers: {} files, order {}: {}",
        checked,
        ORDER.join(" <- "),
        if found.is_empty() {
            "every import points down".to_string()
        } else {
            format!("{} upward imports", found.len())
        }
    );
    found.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> BTreeMap<String, String> {
        reexports(
            "pub use device::{Buffer, Image as Img};\npub use commands::Recorder;\n\
             pub use queue::{\n    Queue,\n    submit::Submission,\n};",
        )
    }

    #[test]
    fn reexports_name_their_layer() {
        let r = roots();
        assert_eq!(r.get("Buffer").map(String::as_str), Some("device"));
        assert_eq!(r.get("Img").map(String::as_str), Some("device"));
        assert_eq!(r.get("Image"), None);
        assert_eq!(r.get("Recorder").map(String::as_str), Some("commands"));
        assert_eq!(r.get("Submission").map(String::as_str), Some("queue"));
    }

    #[test]
    fn comments_and_strings_are_not_imports() {
        let code = strip(
            "// crate::queue::x\nlet s = \"crate::queue\"; /* crate::window */\n\
             let r = r#\"crate::queue\"#; let c = '\"'; crate::device::x();",
        );
        let paths = root_paths(&code, 1);
        assert_eq!(paths, vec![(3, "device::x".to_string())]);
        assert_eq!(code.lines().count(), 3);
    }

    #[test]
    fn groups_supers_and_reexports_resolve_to_layers() {
        let code = "use crate::{device::Shared, queue::Queue, Recorder};\n\
                    use super::super::window::X;\nuse super::sibling;\n";
        let found = violations("f.rs", "pipeline", code, 2, &roots());
        let to: Vec<_> = found.iter().map(|v| (v.line, v.to.as_str())).collect();
        assert_eq!(to, vec![(1, "queue"), (1, "commands"), (2, "window")]);
        // `transfer` sits above `queue`, the composition root `compose` above every layer.
        let code = "use crate::transfer::StagingCache;\nfn f() { crate::compose::x() }\n";
        let found = violations("f.rs", "queue", code, 1, &roots());
        let to: Vec<_> = found.iter().map(|v| (v.line, v.to.as_str())).collect();
        assert_eq!(to, vec![(1, "transfer"), (2, "compose")]);
        let up = "use crate::{queue::Queue, device::Shared};\n";
        assert!(violations("f.rs", "transfer", up, 1, &roots()).is_empty());
        assert!(violations("compose.rs", "compose", code, 1, &roots()).is_empty());
        // One level down, `super::super` does not reach the root.
        assert!(violations(
            "f.rs",
            "pipeline",
            "use super::super::window::X;",
            3,
            &roots()
        )
        .is_empty());
    }

    #[test]
    fn imports_of_lower_layers_and_macro_paths_pass() {
        let code = "use crate::device::Shared;\nuse crate::error::Error;\n\
                    $crate::queue::x!();\nfn f(a: crate::Buffer) {}\n";
        assert!(violations("f.rs", "commands", code, 1, &roots()).is_empty());
        assert_eq!(violations("f.rs", "device", code, 1, &roots()), Vec::new());
        assert_eq!(violations("e.rs", "error", code, 1, &roots()).len(), 2);
    }

    #[test]
    fn files_map_to_layers_and_depths() {
        let l = |p: &str| layer_of(Path::new(p));
        assert_eq!(l("device/mod.rs"), Some(("device".into(), 1)));
        assert_eq!(l("device/features/mesh.rs"), Some(("device".into(), 3)));
        assert_eq!(l("error.rs"), Some(("error".into(), 1)));
        assert_eq!(l("error/shader.rs"), Some(("error".into(), 2)));
        assert_eq!(l("lib.rs"), None);
    }
    #[test]
    fn holes_found_in_review_are_closed() {
        // Re-exports behind an attribute, `use` of any visibility at the root, nested
        // groups, and the root's inline modules re-exporting from layers.
        let lib = "#[cfg(feature = \"hot-reload\")]\npub use pipeline::{HotDesc, ReloadEvent};\n\
                   pub(crate) use queue::Inner;\nuse commands::Private;\n\
                   pub use queue::{host::{HostBuffer, Held as H}, Queue};\n\
                   pub mod hooks {\n    pub use crate::queue::STAGING_CHUNK;\n    \
                   pub use crate::device::FaultSite;\n}\n\
                   pub mod reflect {\n    pub use crate::shaders::{Dim, EntryPoint};\n}\n";
        let r = reexports(&strip(lib));
        let layer = |n: &str| r.get(n).map(String::as_str);
        assert_eq!(layer("HotDesc"), Some("pipeline"));
        assert_eq!(layer("ReloadEvent"), Some("pipeline"));
        assert_eq!(layer("Inner"), Some("queue"));
        assert_eq!(layer("Private"), Some("commands"));
        assert_eq!(layer("HostBuffer"), Some("queue"));
        assert_eq!(layer("H"), Some("queue"));
        assert_eq!(layer("Queue"), Some("queue"));
        assert_eq!(layer("hooks::STAGING_CHUNK"), Some("queue"));
        assert_eq!(layer("reflect::EntryPoint"), Some("shaders"));
        let code = "fn a(_: crate::HotDesc) {}\nuse crate::hooks::STAGING_CHUNK;\n\
                    use crate::{hooks::FaultSite, reflect::Dim};\nuse crate::Inner;\n";
        let to = |layer: &str| -> Vec<(usize, String)> {
            violations("f.rs", layer, code, 1, &r)
                .into_iter()
                .map(|v| (v.line, v.to))
                .collect()
        };
        assert_eq!(
            to("device"),
            vec![
                (1, "pipeline".into()),
                (2, "queue".into()),
                (3, "shaders".into()),
                (4, "queue".into())
            ]
        );
        assert_eq!(to("error").len(), 5, "{:?}", to("error"));
        // The crate root under another name: `use crate as k`, `use crate::{self as k}`.
        for code in [
            "use crate as k;\nfn f(_: k::queue::Queue) {}\n",
            "use crate::{self as k, device::Shared};\nuse k::queue::Queue;\n",
            "use crate::{\n    self as k,\n};\nfn f() { k::queue::go() }\n",
        ] {
            let v = violations("f.rs", "device", &strip(code), 1, &r);
            let to: Vec<_> = v.iter().map(|v| v.to.as_str()).collect();
            assert_eq!(to, vec!["queue"], "{code}");
        }
        // An alias alone, and a path that merely ends in the alias's name, are not imports.
        let code = "use crate as k;\nfn f() { kk::queue::x(); a::k::queue::y(); }\n";
        assert!(violations("f.rs", "device", code, 1, &r).is_empty());
    }
}
