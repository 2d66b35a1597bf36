//! Runs a test command while echoing its standard output, and adds up libtest's
//! `test result: …` lines so that xtask can print one summary line per stack.

use std::fmt;
use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};

/// Test counts added up over libtest's result lines.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    /// How many result lines were counted (one per test binary or doc-test run).
    pub runs: u64,
}

/// Reads libtest output line by line and counts each run's own result line only: a test
/// that runs a child libtest binary (the window and env tests do) shows the child's
/// `running …` and `test result: …` lines inside its captured output, so runs are
/// tracked as nested `running N tests` … `test result:` pairs and only the outermost
/// result lines are counted.
#[derive(Debug, Default)]
pub struct Tally {
    pub counts: Counts,
    depth: u32,
}

impl Tally {
    pub fn line(&mut self, line: &str) {
        let t = line.trim();
        let is_running = t.strip_prefix("running ").is_some_and(|r| {
            let mut w = r.split(' ');
            let n = w.next().is_some_and(|n| n.parse::<u64>().is_ok());
            n && matches!(w.next(), Some("test" | "tests")) && w.next().is_none()
        });
        if is_running {
            self.depth += 1;
            return;
        }
        let mut one = Counts::default();
        if one.add_line(line) {
            self.depth = self.depth.saturating_sub(1);
            if self.depth == 0 {
                self.counts.add(one);
            }
        }
    }
}

impl Counts {
    /// Adds the numbers of a line such as
    /// `test result: FAILED. 222 passed; 18 failed; 3 ignored; 0 measured; …`;
    /// returns whether the line was one.
    pub fn add_line(&mut self, line: &str) -> bool {
        let Some(at) = line.find("test result: ") else {
            return false;
        };
        let rest = &line[at + "test result: ".len()..];
        let Some((_, numbers)) = rest.split_once(". ") else {
            return false;
        };
        for part in numbers.split(';') {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
        self.runs += 1;
        true
    }

    pub fn add(&mut self, other: Counts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.ignored += other.ignored;
        self.runs += other.runs;
    }
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} ignored",
            self.passed, self.failed, self.ignored
        )
    }
}

/// Runs `cmd` with its standard output piped through xtask: everything is echoed to
/// xtask's standard output as it arrives, and libtest's result lines are added up.
/// Standard error is inherited.
pub fn run_counting(cmd: &mut Command) -> Result<(ExitStatus, Counts), String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {:?}: {e}", cmd.get_program()))?;
    let mut tally = Tally::default();
    if let Some(mut out) = child.stdout.take() {
        let mut buf = [0u8; 8192];
        let mut line: Vec<u8> = Vec::new();
        let stdout = std::io::stdout();
        loop {
            let n = match out.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let mut lock = stdout.lock();
            let _ = lock.write_all(&buf[..n]);
            let _ = lock.flush();
            for &b in &buf[..n] {
                if b == b'\n' {
                    tally.line(&String::from_utf8_lossy(&line));
                    line.clear();
                } else {
                    line.push(b);
                }
            }
        }
        tally.line(&String::from_utf8_lossy(&line));
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {:?}: {e}", cmd.get_program()))?;
    Ok((status, tally.counts))
}

/// `exit status: 101`, or the signal that ended the process.
pub fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_result_lines() {
        let mut c = Counts::default();
        assert!(c.add_line(
            "test result: FAILED. 222 passed; 18 failed; 3 ignored; 0 measured; 0 filtered out; \
             finished in 45.20s"
        ));
        assert!(c.add_line("test result: ok. 4 passed; 0 failed; 1 ignored; 0 measured"));
        assert!(!c.add_line("test foo ... ok"));
        assert_eq!(
            c,
            Counts {
                passed: 226,
                failed: 18,
                ignored: 4,
                runs: 2
            }
        );
        assert_eq!(c.to_string(), "226 passed, 18 failed, 4 ignored");
    }

    #[test]
    fn a_child_run_inside_captured_output_is_not_counted() {
        let out = "\nrunning 4 tests\ntest a ... FAILED\n\nfailures:\n\n---- a stdout ----\n\
                   --- child stdout ---\n\nrunning 1 test\ntest child ... FAILED\n\n\
                   test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured\n\n\
                   failures:\n    a\n\n\
                   test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured\n\n\
                   running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored\n";
        let mut t = Tally::default();
        out.lines().for_each(|l| t.line(l));
        assert_eq!(
            t.counts,
            Counts {
                passed: 2,
                failed: 1,
                ignored: 1,
                runs: 2
            }
        );
    }
}
