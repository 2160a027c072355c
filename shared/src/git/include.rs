//! Copying the files a repository's `.worktreeinclude` names into a new worktree: those that
//! match its patterns (gitignore syntax) and are ignored by git, such as `.env`, as Claude
//! Code does. Git does the matching, so the syntax is exactly git's.

use std::path::Path;

use super::error::GitError;
use super::repo::Repo;

const INCLUDE_FILE: &str = ".worktreeinclude";

impl Repo {
    /// Copies the included files from this working tree into `worktree`; returns their paths.
    /// Files and symbolic links are copied; nested repositories are not.
    pub(crate) fn copy_included(&self, worktree: &Path) -> Result<Vec<String>, GitError> {
        let list = self.top().join(INCLUDE_FILE);
        if !list.is_file() {
            return Ok(Vec::new());
        }
        let matching = self
            .run()
            .args(["ls-files", "-z", "--others", "--ignored", "--exclude-from"])
            .arg(&list)
            .stdout()?;
        if matching.is_empty() {
            return Ok(Vec::new());
        }
        let ignored = self
            .run()
            .args(["check-ignore", "-z", "--stdin"])
            .stdin(matching)
            .allow(&[0, 1])
            .stdout()?;
        let paths: Vec<String> = String::from_utf8_lossy(&ignored)
            .split('\0')
            .filter(|path| !path.is_empty() && !path.ends_with('/'))
            .map(str::to_owned)
            .collect();
        for path in &paths {
            copy_entry(&self.top().join(path), &worktree.join(path))?;
        }
        Ok(paths)
    }
}

fn copy_entry(from: &Path, to: &Path) -> Result<(), GitError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| GitError::io("could not create", parent, error))?;
    }
    let metadata = std::fs::symlink_metadata(from)
        .map_err(|error| GitError::io("could not read", from, error))?;
    let copied = if metadata.file_type().is_symlink() {
        std::fs::read_link(from).and_then(|target| crate::platform::symlink(&target, to))
    } else {
        std::fs::copy(from, to).map(drop)
    };
    copied.map_err(|error| GitError::io("could not copy into the worktree", from, error))
}
