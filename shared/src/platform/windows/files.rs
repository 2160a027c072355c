//! Files and exits as Windows has them, where the engine's Unix notions (modes, inodes,
//! blocks, signals, root) have no counterpart or a different one.

use std::fs::{DirBuilder, Metadata};
use std::path::Path;

/// A directory builder for this user's private directories. The engine makes them under the
/// temp dir, which on Windows is in the user's profile (`%LOCALAPPDATA%\Temp`), whose ACL
/// already gives only the user (and SYSTEM and Administrators) access; a new directory
/// inherits it.
pub fn private_dir() -> DirBuilder {
    DirBuilder::new()
}

/// The file's identity on its volume: none that stable Rust reads (the file index is behind
/// an unstable API), so 0; the length and the modification time still tell a change.
pub fn file_id(_: &Metadata) -> u64 {
    0
}

/// The disk a file takes: its length (Windows's allocation size needs a handle of its own).
pub fn disk_bytes(metadata: &Metadata) -> u64 {
    metadata.len()
}

/// A symbolic link at `link` pointing to `target`, to a directory or a file as `target` is
/// (Windows links say which). Needs Developer Mode or the right to create links.
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let resolved = link.parent().unwrap_or(Path::new(".")).join(target);
    if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    }
}

/// Whether this process runs as root: a Unix notion (the CLIs that refuse flags as root do
/// not refuse them to an administrator on Windows).
pub fn running_as_root() -> bool {
    false
}

/// The signal that ended a process: Windows processes end with a code, never a signal.
pub fn exit_signal(_: std::process::ExitStatus) -> Option<i32> {
    None
}
