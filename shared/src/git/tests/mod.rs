//! Tests on real repositories made in temporary directories. Git here never reads the real
//! home's config: HOME points into the temporary directory and global/system config is off.

// Hooks as `#!/bin/sh` scripts with their mode, and symbolic links' edits.
#[cfg(unix)]
mod errors;
mod merge;
#[cfg(unix)]
mod snapshot;
mod worktree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cli_agent_test_support::common::NO_CONFIG;

use super::{Git, JobKey, Repo};

/// A temporary directory holding a home and the test's repositories, `root` its real path;
/// removed when dropped.
pub(super) struct Fixture {
    root: PathBuf,
    pub git: Git,
    _dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("cli-agent-mcp-git-test-")
            .tempdir()
            .unwrap();
        // Plain on Windows too: git takes no `\\?\` path, and prints none.
        let root = crate::plain_path::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let git = Git::from_path()
            .unwrap()
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env("GIT_CONFIG_GLOBAL", NO_CONFIG)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CEILING_DIRECTORIES", root.parent().unwrap());
        Self {
            root,
            git,
            _dir: dir,
        }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Runs the test's own git (with hooks and all, as a user would), returning stdout.
    pub fn sh(&self, cwd: &Path, args: &[&str]) -> String {
        let output = Command::new("git")
            .current_dir(cwd)
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args(args)
            .env("HOME", self.path("home"))
            .env("GIT_CONFIG_GLOBAL", NO_CONFIG)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn repo(&self, dir: &Path) -> Repo {
        Repo::discover_with(self.git.clone(), dir).unwrap().unwrap()
    }

    /// An empty repository on branch main.
    pub fn init(&self, name: &str) -> PathBuf {
        let dir = self.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.sh(&dir, &["init", "-q", "-b", "main"]);
        dir
    }

    /// A repository with history and work in progress: a commit of text, binary, symlink (not
    /// on Windows, where git checks one out as a file), subdirectory and .gitignore; then an
    /// uncommitted edit, an untracked file, ignored files, a stash and a second branch.
    pub fn sample(&self) -> PathBuf {
        let dir = self.init("repo");
        write(&dir, "src/lib.rs", &numbered("fn", 10));
        write(&dir, "README.md", "# Sample\n\nSome words.\n");
        write(&dir, ".gitignore", "*.log\n.env\ntarget/\n");
        write(&dir, "sub/dir/notes.txt", "a\nb\nc\n");
        std::fs::write(dir.join("logo.bin"), [0u8, 1, 2, 0, 255]).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("README.md", dir.join("link")).unwrap();
        self.sh(&dir, &["add", "-A"]);
        self.sh(&dir, &["commit", "-qm", "first"]);
        self.sh(&dir, &["branch", "feature"]);
        write(&dir, "README.md", "# Sample\n\nStashed words.\n");
        self.sh(&dir, &["stash", "-q"]);
        write(&dir, "README.md", "# Sample\n\nMore words.\n");
        write(&dir, "untracked.txt", "new\n");
        write(&dir, "debug.log", "ignored\n");
        write(&dir, ".env", "SECRET=1\n");
        dir
    }
}

pub fn write(dir: &Path, relative: &str, content: &str) {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

pub fn read(dir: &Path, relative: &str) -> String {
    std::fs::read_to_string(dir.join(relative)).unwrap()
}

/// `count` lines `<word> 1` .. `<word> count`.
pub fn numbered(word: &str, count: usize) -> String {
    (1..=count).map(|n| format!("{word} {n}\n")).collect()
}

pub fn job(key: &str) -> JobKey {
    JobKey::new(key).unwrap()
}

/// What the user owns in a repository, byte for byte: the index, HEAD, their branches (ours
/// left out), the stash, and every file of the working tree.
#[derive(Debug, PartialEq, Eq)]
pub struct UserState {
    index: Option<Vec<u8>>,
    head: String,
    refs: String,
    stash: String,
    files: BTreeMap<PathBuf, Vec<u8>>,
}

impl UserState {
    pub fn of(fixture: &Fixture, dir: &Path) -> Self {
        let refs = fixture.sh(dir, &["for-each-ref", "refs/heads", "refs/stash"]);
        Self {
            index: std::fs::read(dir.join(".git/index")).ok(),
            head: std::fs::read_to_string(dir.join(".git/HEAD")).unwrap(),
            refs: refs
                .lines()
                .filter(|line| !line.contains("refs/heads/cli-agent-mcp/"))
                .collect::<Vec<_>>()
                .join("\n"),
            stash: fixture.sh(dir, &["stash", "list"]),
            files: files(dir),
        }
    }
}

/// Every file under `dir` but `.git`, with its bytes (a symlink's target for a symlink).
pub fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            let relative = path.strip_prefix(dir).unwrap().to_owned();
            if relative == Path::new(".git") {
                continue;
            }
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                found.insert(relative, target.into_os_string().into_encoded_bytes());
            } else if kind.is_dir() {
                pending.push(path);
            } else {
                found.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    found
}
