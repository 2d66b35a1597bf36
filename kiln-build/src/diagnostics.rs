//! Compiler messages as `file:line:column: severity: message`, each with its source line,
//! and their `cargo:warning=` form.
//!
//! glslc (glslang) reports `file:line: error: 'token' : message`, with no column. The
//! column is found from the token glslang quotes: the first place the token appears in
//! that source line (1-based, in characters); when it quotes nothing (`'' : syntax
//! error`) or the token is not on the line, the line's first non-blank character. naga
//! (WGSL) reports spans; its rendered text is kept as it is.
//!
//! Cargo shows a build script's `cargo:warning=` lines even when the script fails, above
//! its stdout/stderr dump, so [`cargo_lines`] is how a failing shader reaches the user.

use std::fmt;
use std::path::{Path, PathBuf};

/// One compiler message about one place in a source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file the message is about (an included file when the error is in it).
    pub file: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (characters), found as the module docs say.
    pub column: u32,
    /// `error` or `warning`.
    pub severity: String,
    /// The compiler's message, e.g. `'foo' : undeclared identifier`.
    pub message: String,
    /// The source line, when the file could be read.
    pub source_line: Option<String>,
}

impl fmt::Display for Diagnostic {
    /// `file:line:column: severity: message`, then the source line and a caret under the
    /// column.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.severity,
            self.message
        )?;
        if let Some(src) = &self.source_line {
            let pad: String = src
                .chars()
                .take(self.column.saturating_sub(1) as usize)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(f, "\n    {src}\n    {pad}^")?;
        }
        Ok(())
    }
}

/// Parses glslc's stderr for `file`; `dir` is where relative file names in the output
/// are resolved (the compiler's working directory). Lines that are not `path:line:
/// severity: message` (the `N errors generated.` summary) are dropped.
pub fn parse_glslc(output: &str, file: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for text in output.lines() {
        let Some(d) = parse_line(text, file) else {
            continue;
        };
        out.push(d);
    }
    out
}

fn parse_line(text: &str, file: &Path) -> Option<Diagnostic> {
    // `path:line: error: message`; the path itself may contain ':' only on Windows drives.
    let (head, rest) = split_severity(text)?;
    let (path, line) = head.rsplit_once(':')?;
    let line: u32 = line.trim().parse().ok()?;
    let (severity, message) = rest;
    let path = if path.is_empty() {
        file.to_path_buf()
    } else {
        PathBuf::from(path)
    };
    let source_line = read_line(&path, line);
    let column = source_line
        .as_deref()
        .map_or(1, |src| column_of(src, &message));
    Some(Diagnostic {
        file: path,
        line,
        column,
        severity,
        message,
        source_line,
    })
}

/// Splits `head: error: message` at the severity.
fn split_severity(text: &str) -> Option<(&str, (String, String))> {
    for sev in ["error", "warning"] {
        let pat = format!(": {sev}: ");
        if let Some(i) = text.find(&pat) {
            let message = text[i + pat.len()..].trim().to_string();
            return Some((&text[..i], (sev.to_string(), message)));
        }
    }
    None
}

fn read_line(path: &Path, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .nth(line.checked_sub(1)? as usize)
        .map(|l| l.trim_end().to_string())
}

/// The 1-based column of the token glslang quotes at the start of `message`
/// (`'foo' : ...`), else of the line's first non-blank character.
pub fn column_of(src: &str, message: &str) -> u32 {
    let token = message
        .strip_prefix('\'')
        .and_then(|m| m.split_once('\''))
        .map(|(t, _)| t.trim())
        .filter(|t| !t.is_empty());
    let byte = token
        .and_then(|t| find_token(src, t))
        .or_else(|| src.find(|c: char| !c.is_whitespace()))
        .unwrap_or(0);
    src[..byte].chars().count() as u32 + 1
}

/// The first occurrence of `token` in `src` that is not part of a longer identifier.
fn find_token(src: &str, token: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let word = token.chars().all(ident);
    let mut from = 0;
    while let Some(i) = src[from..].find(token) {
        let at = from + i;
        let before = src[..at].chars().next_back();
        let after = src[at + token.len()..].chars().next();
        if !word || (!before.is_some_and(ident) && !after.is_some_and(ident)) {
            return Some(at);
        }
        from = at + token.len();
    }
    None
}

/// `cargo:warning=` lines for a text of one or more lines (cargo shows each line as a
/// warning of the package, also when the build script then fails).
pub fn cargo_lines(text: &str) -> Vec<String> {
    text.lines().map(|l| format!("cargo:warning={l}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_come_from_the_quoted_token() {
        let src = "  undefined_thing = x + foo;";
        assert_eq!(
            column_of(src, "'undefined_thing' : undeclared identifier"),
            3
        );
        assert_eq!(column_of(src, "'foo' : undeclared identifier"), 25);
        // Not part of a longer identifier: `x` is the one at column 21.
        assert_eq!(column_of(src, "'x' : something"), 21);
        assert_eq!(
            column_of("  }", "'' :  syntax error, unexpected RIGHT_BRACE"),
            3
        );
    }

    #[test]
    fn a_diagnostic_prints_file_line_column_and_the_source_line() {
        let d = Diagnostic {
            file: PathBuf::from("shaders/a.comp"),
            line: 5,
            column: 3,
            severity: "error".into(),
            message: "'foo' : undeclared identifier".into(),
            source_line: Some("  foo = 1;".into()),
        };
        assert_eq!(
            d.to_string(),
            "shaders/a.comp:5:3: error: 'foo' : undeclared identifier\n      foo = 1;\n      ^"
        );
        assert_eq!(
            cargo_lines(&d.to_string())[0],
            "cargo:warning=shaders/a.comp:5:3: error: 'foo' : undeclared identifier"
        );
    }
}
