//! The unified diff between two snapshots, for review.

use std::ffi::OsStr;

use super::error::GitError;
use super::repo::Repo;
use super::snapshot::Snapshot;

impl Repo {
    /// The unified diff from `before` to `after`, renames shown as renames and binary files
    /// named but not dumped; limited to `paths` (files or directories, relative to the top
    /// level, taken literally) unless that is empty.
    pub fn diff<P: AsRef<OsStr>>(
        &self,
        before: &Snapshot,
        after: &Snapshot,
        paths: &[P],
    ) -> Result<String, GitError> {
        let output = self
            .run()
            .literal_paths()
            .args(["diff-tree", "-r", "-p", "--find-renames", "--no-color"])
            .args([&before.tree, &after.tree])
            .arg("--")
            .args(paths)
            .stdout()?;
        Ok(String::from_utf8_lossy(&output).into_owned())
    }
}
