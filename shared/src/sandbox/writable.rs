//! Where a confined run may write, by level.

use std::path::{Path, PathBuf};

use super::error::SandboxError;
use crate::request::Permission;

/// What a run may write besides its temporary directory and the device files.
#[derive(Clone, Debug, Default)]
pub struct WritePlan {
    /// The run's permission level.
    pub level: Permission,
    /// The workspace, or an isolated run's whole worktree.
    pub tree: PathBuf,
    /// The git metadata an isolated run's commits need (see
    /// [`crate::git::worktree_metadata`]).
    pub git: Vec<PathBuf>,
    /// The CLI's own state and cache directories ([`crate::cli::Cli::state_dirs`]),
    /// made when missing so the CLI can start afresh.
    pub state: Vec<PathBuf>,
    /// A custom agent's own writable directories (`writable` in the config).
    pub extra: Vec<PathBuf>,
    /// Directories the engine gives the run for files it reads back (a usage file).
    pub engine_files: Vec<PathBuf>,
}

impl WritePlan {
    /// Every writable path: under `read-only` the CLI's state, the engine's files and `tmp`
    /// only; under
    /// `workspace-write` also the tree, its git metadata and the agent's own directories.
    pub(super) fn paths(&self, tmp: &Path) -> Result<Vec<PathBuf>, SandboxError> {
        for dir in &self.state {
            make_private_dir(dir)?;
        }
        let mut paths = vec![tmp.to_owned()];
        paths.extend(self.state.iter().cloned());
        paths.extend(self.engine_files.iter().cloned());
        if self.level == Permission::WorkspaceWrite {
            paths.push(self.tree.clone());
            paths.extend(self.git.iter().cloned());
            paths.extend(self.extra.iter().cloned());
        }
        Ok(paths)
    }
}

/// Makes `dir` (and its missing parents), readable by this user only, if it does not exist.
fn make_private_dir(dir: &Path) -> Result<(), SandboxError> {
    if dir.exists() {
        return Ok(());
    }
    crate::platform::private_dir()
        .recursive(true)
        .create(dir)
        .map_err(|source| SandboxError::Io {
            what: "CLI state directory",
            path: dir.to_owned(),
            source,
        })
}
