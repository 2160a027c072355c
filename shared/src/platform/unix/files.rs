//! Files as Unix keeps them: modes for private directories, inodes, allocated blocks, links.

use std::fs::{DirBuilder, Metadata};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::Path;

/// A directory builder whose directories only this user can read (mode 0700).
pub fn private_dir() -> DirBuilder {
    let mut builder = DirBuilder::new();
    builder.mode(0o700);
    builder
}

/// The file's identity on its device (its inode), to tell a replaced file from a changed one.
pub fn file_id(metadata: &Metadata) -> u64 {
    metadata.ino()
}

/// The disk a file takes: its allocated blocks, in bytes.
pub fn disk_bytes(metadata: &Metadata) -> u64 {
    metadata.blocks() * 512
}

/// A symbolic link at `link` pointing to `target`.
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}
