//! What can go wrong with the store, each message naming the database and the fix.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

use super::id::JobId;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot tell where to keep the job store: HOME is not set; set CAM_STATE_DIR (or \
         XDG_STATE_HOME) to a writable directory"
    )]
    NoStateDir,
    #[error(
        "cannot tell where to keep the job store: LOCALAPPDATA is not set (or not a full path); \
         set CAM_STATE_DIR to a writable directory"
    )]
    NoLocalAppData,

    #[error(
        "cannot create the job store's directory {}: {source}; make its parent writable by this \
         user, or set CAM_STATE_DIR to a writable directory", .dir.display()
    )]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "the job store {} cannot be written ({source}): make {} writable by this user, or set \
         CAM_STATE_DIR to a writable directory", .path.display(), parent(.path).display()
    )]
    Unwritable {
        path: PathBuf,
        source: rusqlite::Error,
    },

    #[error(
        "the disk holding the job store {} is full ({source}): free some space, prune old jobs \
         (`cli-agent-mcp jobs prune`), or set CAM_STATE_DIR to a directory on another disk",
        .path.display()
    )]
    DiskFull {
        path: PathBuf,
        source: rusqlite::Error,
    },

    #[error(
        "the job store {} is corrupt and could not be moved aside ({source}): move it away by \
         hand, or set CAM_STATE_DIR to another directory", .path.display()
    )]
    MoveAside {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "the job store {} is still damaged after the damaged file was moved aside ({why}): check \
         the disk, or set CAM_STATE_DIR to another directory", .path.display()
    )]
    Corrupt { path: PathBuf, why: String },

    #[error(
        "cannot start the job store's writer thread ({source}): the system is out of threads or memory"
    )]
    WriterThread { source: std::io::Error },

    #[error(
        "the job store {} was written by a newer cli-agent-mcp (schema version {found}; this one \
         knows up to {known}): upgrade cli-agent-mcp, or set CAM_STATE_DIR to another directory",
        .path.display()
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error(
        "no job {id} in the job store {}: it never existed there or was pruned; `cli-agent-mcp \
         jobs` lists the jobs it holds", .path.display()
    )]
    UnknownJob { id: JobId, path: PathBuf },

    #[error(
        "job {id} in the job store {} has a record this version cannot read ({source}); \
         `cli-agent-mcp jobs show {id}` shows what is left of it", .path.display()
    )]
    BadRecord {
        id: String,
        path: PathBuf,
        source: serde_json::Error,
    },

    #[error("{name}={value:?} is not valid: expected {expected}")]
    BadSetting {
        name: &'static str,
        value: String,
        expected: &'static str,
    },

    #[error(
        "the job store {} failed: {source}; if this persists, move the file aside or set \
         CAM_STATE_DIR to another directory", .path.display()
    )]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Tells what a failure of SQLite on `path` means to the user.
    pub(super) fn sqlite(path: &Path, source: rusqlite::Error) -> Self {
        let path = path.to_owned();
        match source.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => Self::DiskFull { path, source },
            Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
                Self::Unwritable { path, source }
            }
            _ => Self::Sqlite { path, source },
        }
    }

    /// Whether the file is damaged or not a database at all, so it should be moved aside.
    pub(super) fn is_corruption(source: &rusqlite::Error) -> bool {
        matches!(
            source.sqlite_error_code(),
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
        )
    }
}

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(path)
}
