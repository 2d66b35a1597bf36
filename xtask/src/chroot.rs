//! The Debian 13 chroot under `target/stacks/trixie`: made with `mmdebstrap`, reused while
//! its stamp file matches the package list, and entered through a private mount namespace.
//!
//! Safety of the bind mounts: xtask never mounts anything in the caller's mount namespace.
//! Each test binary runs under `unshare --mount --net`, where the hidden command
//! `xtask __in-stack` bind-mounts the repository (and the corpus, /proc, /dev, /dev/shm)
//! into the chroot, runs the binary through `chroot`, and unmounts again (a guard with
//! `Drop`, so also on a panic). Should that process be killed, the mounts go with its
//! namespace: seen from the host they never existed, so `rm -rf target` cannot reach
//! through them into the checkout. Before deleting a chroot, xtask still checks
//! `/proc/self/mountinfo` and refuses when anything is mounted below it (an interrupted
//! `mmdebstrap`, or mounts made by hand).
//!
//! `--net` also gives the tests a network namespace of their own: X servers listen on
//! abstract sockets, which are per network namespace, so the chroot's `xvfb-run -a` cannot
//! collide with (or connect to) an Xvfb on the host.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

pub const SUITE: &str = "trixie";
const STAMP: &str = ".kiln-stack-stamp";

/// The packages installed in the chroot (with their dependencies).
pub const PACKAGES: &[&str] = &[
    // The stack under test: loader, lavapipe, validation layer; glslc for hot reload.
    "libvulkan1",
    "mesa-vulkan-drivers",
    "vulkan-validationlayers",
    "glslc",
    // The SPIR-V grammar kiln's capability table is checked against (issue 30).
    "spirv-headers",
    // The window test runs its child under `xvfb-run -a` (xauth, mcookie from util-linux).
    "xvfb",
    "xauth",
    // What winit 0.30 (x11-dl, xkbcommon-dl, x11rb's dl-libxcb) dlopens in the window test.
    "libx11-6",
    "libx11-xcb1",
    "libxcb1",
    "libxcursor1",
    "libxi6",
    "libxrandr2",
    "libxrender1",
    "libxfixes3",
    "libxext6",
    "libxkbcommon0",
    "libxkbcommon-x11-0",
];

fn mmdebstrap_args() -> Vec<String> {
    vec![
        "--variant=apt".into(),
        format!("--include={}", PACKAGES.join(",")),
        SUITE.into(),
    ]
}

/// What the stamp file of an up-to-date chroot holds.
fn stamp_text() -> String {
    let mut s = format!("mmdebstrap {}\n", mmdebstrap_args().join(" "));
    for p in PACKAGES {
        s.push_str(p);
        s.push('\n');
    }
    s
}

fn mmdebstrap_present() -> bool {
    Command::new("mmdebstrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn namespaces_work() -> Result<(), String> {
    let out = Command::new("unshare")
        .args(["--mount", "--net", "--propagation", "private", "true"])
        .output()
        .map_err(|e| format!("cannot run unshare: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "cannot make a private mount namespace (`unshare --mount --net true`: {})",
        err.trim()
    ))
}

/// What the tier needs before anything is built: root, and private namespaces.
/// `Err` says why the tier cannot run.
pub fn preflight() -> Result<(), String> {
    if !crate::is_root() {
        return Err("not root (mmdebstrap, mount and chroot need root)".into());
    }
    namespaces_work()
}

/// Makes the chroot `dir` when its stamp is missing or stale (else reuses it).
/// `Err` says why the chroot cannot be had (the tier is then not run).
pub fn prepare(dir: &Path) -> Result<(), String> {
    preflight()?;
    let want = stamp_text();
    if std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s == want) {
        eprintln!("xtask: reusing {} (its stamp matches)", dir.display());
        return Ok(());
    }
    if !mmdebstrap_present() {
        let prereq = crate::Prereq {
            what: "mmdebstrap (makes the Debian 13 chroot)",
            package: "mmdebstrap",
            present: mmdebstrap_present,
        };
        crate::ensure(&[&prereq])
            .map_err(|e| format!("mmdebstrap is missing and could not be installed: {e}"))?;
    }
    build(dir, &want)
}

fn build(dir: &Path, stamp: &str) -> Result<(), String> {
    let parent = dir.parent().ok_or("the chroot folder has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let new = parent.join(format!("{SUITE}.new"));
    let log = parent.join(format!("{SUITE}.log"));
    remove_tree(&new)?;
    let args = mmdebstrap_args();
    eprintln!(
        "xtask: making {}: mmdebstrap {} (about a minute; log: {})",
        dir.display(),
        args.join(" "),
        log.display()
    );
    let log_file =
        std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let log_err = log_file
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let start = Instant::now();
    let status = Command::new("mmdebstrap")
        .args(&args)
        .arg(&new)
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(log_err)
        .status()
        .map_err(|e| format!("cannot run mmdebstrap: {e}"))?;
    if !status.success() {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let last = text.lines().rev().find(|l| !l.trim().is_empty());
        let _ = remove_tree(&new);
        return Err(format!(
            "mmdebstrap failed ({}): {} (log: {})",
            crate::results::describe(status),
            last.unwrap_or("no output").trim(),
            log.display()
        ));
    }
    std::fs::write(new.join(STAMP), stamp).map_err(|e| format!("cannot write the stamp: {e}"))?;
    remove_tree(dir)?;
    std::fs::rename(&new, dir)
        .map_err(|e| format!("cannot rename {} to {}: {e}", new.display(), dir.display()))?;
    eprintln!(
        "xtask: made {} in {:.1}s",
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `/proc/self/mountinfo` escapes space, tab, newline and backslash as `\ooo`.
fn unescape_mount_path(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).and_then(|d| {
            let d = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(d, 8).ok()
        });
        match (b[i], oct) {
            (b'\\', Some(c)) => {
                out.push(c);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount points at or below `dir` in this process's mount namespace.
pub fn mounts_under(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    Ok(info
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape_mount_path(p)))
        .filter(|p| p.starts_with(dir))
        .collect())
}

/// Deletes a chroot folder (`trixie` or `trixie.new` under a `stacks` folder) after
/// checking that nothing is mounted at or below it.
fn remove_tree(dir: &Path) -> Result<(), String> {
    if std::fs::symlink_metadata(dir).is_err() {
        return Ok(());
    }
    let real = dir
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    let name = real.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_stacks = real
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|p| p == "stacks");
    if !in_stacks || !name.starts_with(SUITE) {
        return Err(format!(
            "refusing to delete {}: not a chroot folder of xtask",
            real.display()
        ));
    }
    let mounted = mounts_under(&real)?;
    if let Some(m) = mounted.first() {
        return Err(format!(
            "refusing to delete {}: {} is mounted below it (unmount it first)",
            real.display(),
            m.display()
        ));
    }
    eprintln!("xtask: deleting the old {}", real.display());
    std::fs::remove_dir_all(&real).map_err(|e| format!("cannot delete {}: {e}", real.display()))
}

/// `path` (absolute) inside the chroot `root`.
pub fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// The bind mounts of one `__in-stack` run, unmounted in reverse order on drop.
#[derive(Default)]
struct Mounts {
    root: PathBuf,
    done: Vec<PathBuf>,
}

impl Mounts {
    fn bind(&mut self, src: &Path, dst: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dst)
            .map_err(|e| format!("cannot create {}: {e}", dst.display()))?;
        // A symbolic link inside the chroot must not redirect the mount out of it.
        let real = dst
            .canonicalize()
            .map_err(|e| format!("cannot resolve {}: {e}", dst.display()))?;
        if !real.starts_with(&self.root) {
            return Err(format!(
                "{} leads out of the chroot ({})",
                dst.display(),
                real.display()
            ));
        }
        let ok = Command::new("mount")
            .arg("--bind")
            .arg(src)
            .arg(&real)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!(
                "mount --bind {} {} failed",
                src.display(),
                real.display()
            ));
        }
        self.done.push(real);
        Ok(())
    }

    fn unmount_all(&mut self) -> Result<(), String> {
        let mut failed = Vec::new();
        while let Some(m) = self.done.pop() {
            let ok = |args: &[&str]| {
                Command::new("umount")
                    .args(args)
                    .arg(&m)
                    .status()
                    .is_ok_and(|s| s.success())
            };
            if !ok(&[]) && !ok(&["--lazy"]) {
                failed.push(m.display().to_string());
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!("could not unmount {}", failed.join(", ")))
        }
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        if let Err(e) = self.unmount_all() {
            eprintln!("xtask: {e}");
        }
    }
}

fn mount_namespace(pid: &str) -> Result<PathBuf, String> {
    let link = format!("/proc/{pid}/ns/mnt");
    std::fs::read_link(&link).map_err(|e| format!("cannot read {link}: {e}"))
}

/// The hidden `xtask __in-stack ROOT CWD [--bind PATH]... -- EXE ARGS...`, run by
/// [`crate::stack`] under `unshare --mount --net`: mounts, runs EXE in the chroot with
/// CWD as its current folder, unmounts, and exits with EXE's status.
pub fn in_stack(args: &[String]) -> ExitCode {
    match in_stack_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask __in-stack: {e}");
            ExitCode::from(125)
        }
    }
}

fn in_stack_inner(args: &[String]) -> Result<ExitCode, String> {
    let usage = "usage: xtask __in-stack ROOT CWD [--bind PATH]... -- EXE ARGS...";
    let [root, cwd, rest @ ..] = args else {
        return Err(usage.into());
    };
    let split = rest.iter().position(|a| a == "--").ok_or(usage)?;
    let (opts, cmd) = (&rest[..split], &rest[split + 1..]);
    let mut binds: Vec<PathBuf> = Vec::new();
    for pair in opts.chunks(2) {
        match pair {
            [flag, path] if flag == "--bind" => binds.push(PathBuf::from(path)),
            _ => return Err(usage.into()),
        }
    }
    let [exe, exe_args @ ..] = cmd else {
        return Err(usage.into());
    };
    let parent = std::os::unix::process::parent_id().to_string();
    if mount_namespace("self")? == mount_namespace(&parent)? {
        return Err(
            "refusing to mount: not in a mount namespace of its own (run it \
                    through `unshare --mount`)"
                .into(),
        );
    }
    let root = Path::new(root)
        .canonicalize()
        .map_err(|e| format!("cannot resolve {root}: {e}"))?;
    let mut mounts = Mounts {
        root: root.clone(),
        done: Vec::new(),
    };
    for b in &binds {
        mounts.bind(b, &inside(&root, b))?;
    }
    for sys in ["/proc", "/dev", "/dev/shm"] {
        if Path::new(sys).is_dir() {
            mounts.bind(Path::new(sys), &inside(&root, Path::new(sys)))?;
        }
    }
    let status = Command::new("chroot")
        .arg(&root)
        .args(["/usr/bin/env", "-C", cwd])
        .arg(exe)
        .args(exe_args)
        .status()
        .map_err(|e| format!("cannot run chroot: {e}"));
    mounts.unmount_all()?;
    let status = status?;
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c.clamp(0, 255),
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    };
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// `dpkg-query`'s versions of `packages`, on the host (`root` = None) or in a chroot.
pub fn versions(root: Option<&Path>, packages: &[&str]) -> Vec<(String, String)> {
    let mut cmd = match root {
        Some(r) => {
            let mut c = Command::new("chroot");
            c.arg(r).arg("dpkg-query");
            c
        }
        None => Command::new("dpkg-query"),
    };
    let out = cmd
        .args(["-W", "-f", "${Package} ${Version}\n"])
        .args(packages)
        .stderr(Stdio::null())
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    packages
        .iter()
        .map(|p| {
            let v = text
                .lines()
                .filter_map(|l| l.split_once(' '))
                .find(|(name, v)| name.split(':').next() == Some(p) && !v.is_empty())
                .map(|(_, v)| v.to_string());
            (p.to_string(), v.unwrap_or_else(|| "not installed".into()))
        })
        .collect()
}

/// "Debian 13" from `/etc/os-release` (of the host, or of the chroot `root`).
pub fn os_label(root: Option<&Path>) -> String {
    let path = inside(root.unwrap_or(Path::new("/")), Path::new("/etc/os-release"));
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(|v| v.trim_matches('"').to_string())
    };
    let name = field("NAME").unwrap_or_else(|| "unknown system".into());
    let first = name.split_whitespace().next().unwrap_or("").to_string();
    match field("VERSION_ID") {
        Some(v) => format!("{first} {v}"),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_paths_are_unescaped() {
        assert_eq!(unescape_mount_path(r"/a\040b\134c"), r"/a b\c");
        assert_eq!(unescape_mount_path(r"/plain\x"), r"/plain\x");
    }

    #[test]
    fn the_stamp_names_every_package() {
        let s = stamp_text();
        assert!(PACKAGES.iter().all(|p| s.lines().any(|l| l == *p)));
        assert!(s.starts_with("mmdebstrap --variant=apt --include=libvulkan1,"));
    }

    #[test]
    fn inside_joins_absolute_paths() {
        assert_eq!(
            inside(Path::new("/r/t"), Path::new("/work/main")),
            PathBuf::from("/r/t/work/main")
        );
    }
}
