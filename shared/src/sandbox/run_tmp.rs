//! A private temporary directory per confined run: its `TMPDIR`, writable under the sandbox,
//! removed when the run ends.

use std::path::{Path, PathBuf};

/// Removed, with whatever the run left in it, when dropped.
#[derive(Debug)]
pub struct RunTmp {
    path: PathBuf,
}

impl RunTmp {
    /// A new directory, readable by this user only, under the server's temp dir.
    pub fn create(marker: &str) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let path = std::env::temp_dir().join(format!("cam-run-{marker}"));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Self { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunTmp {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(dir = %self.path.display(), %error, "could not remove a run's temporary directory");
        }
    }
}
