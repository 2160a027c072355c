//! Index files of our own, so the user's index is never written.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::GitError;

/// A temporary index file, removed (with any lock git left beside it) when dropped.
pub(crate) struct TempIndex {
    path: PathBuf,
}

impl TempIndex {
    /// A path for a fresh index; git creates the file on first write.
    pub fn empty() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "cli-agent-mcp-index-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            path: std::env::temp_dir().join(name),
        }
    }

    /// A copy of `index`, so its stat data spares hashing unchanged files (a missing index is
    /// an empty one, as in a repository nothing was ever added to).
    pub fn copy_of(index: &Path) -> Result<Self, GitError> {
        let temp = Self::empty();
        match std::fs::copy(index, &temp.path) {
            Ok(_) => Ok(temp),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(temp),
            Err(error) => Err(GitError::io("could not copy the index", index, error)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(self.path.with_extension("lock"));
    }
}
