//! A test's own directory under the temporary folder, removed with what it holds when the
//! test ends, failed or not.

use std::path::{Path, PathBuf};

/// `<temporary folder>/<name>-<process id>`, made empty at [`TempDir::new`] and removed
/// (with everything in it) when dropped, so a failed assertion leaves nothing behind.
pub struct TempDir(PathBuf);

impl TempDir {
    /// The directory for `name` in this process, emptied and made now.
    ///
    /// Panics (a test helper) when it cannot be made.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        TempDir(dir)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
