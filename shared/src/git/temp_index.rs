//! Index files of our own, so the user's index is never written.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::GitError;

/// A temporary index file, removed (with any lock git left beside it) when dropped.
#[derive(Debug)]
pub(crate) struct TempIndex {
    path: PathBuf,
}

impl TempIndex {
    /// A path for a fresh index; git creates the file on first write.
    pub fn empty() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        // Named by the server instance, whose guardian removes it if the server is killed.
        let name = format!(
            "cam-index-{}-{}",
            crate::marker::instance(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            path: std::env::temp_dir().join(name),
        }
    }

    /// A copy of `index`, so its stat data spares hashing unchanged files (a missing index is
    /// an empty one, as in a repository nothing was ever added to). The copy keeps the
    /// original's modification time: git trusts an entry's stat data only when the file is
    /// older than the index, and a fresh time would hide edits made in the index's last tick.
    pub fn copy_of(index: &Path) -> Result<Self, GitError> {
        let temp = Self::empty();
        let mut source = match File::open(index) {
            Ok(source) => source,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(temp),
            Err(error) => return Err(GitError::io("could not read the index", index, error)),
        };
        let copied = File::create(&temp.path).and_then(|mut copy| {
            std::io::copy(&mut source, &mut copy)?;
            copy.set_modified(source.metadata()?.modified()?)
        });
        copied.map_err(|error| GitError::io("could not copy the index", index, error))?;
        Ok(temp)
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
