//! The synthetic repository of the isolation benchmarks (`benches/server.rs` and
//! `shared/benches/git.rs`), the git anchors timed on it, and fair timing: every timed step
//! starts after `sync`, so no step pays for the dirty pages of the one before.
//!
//! Git here never reads the real home's config: a home of the repository's own, no global
//! and no system config.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

const FILES_PER_DIR: usize = 100;
/// Files edited, and untracked files added, after the commit.
pub const EDITED: usize = 20;

/// How `git worktree add` checks the files out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Checkout {
    /// Git's default: one process writes every file.
    Serial,
    /// `-c checkout.workers=0`: one worker per core, as `Repo::create_worktree` does.
    Parallel,
}

/// A repository of FILES files in a temporary directory, removed when dropped.
pub struct SyntheticRepo {
    root: TempDir,
    dir: PathBuf,
}

impl SyntheticRepo {
    /// `files` files of `bytes` bytes each, committed on `main`, then [`EDITED`] files edited
    /// and [`EDITED`] untracked files added.
    pub fn make(name: &str, files: usize, bytes: usize) -> Self {
        let root = crate::common::temp_dir(name);
        let repo = Self {
            dir: root.path().join("repo"),
            root,
        };
        std::fs::create_dir_all(repo.root().join("home")).expect("create the bench's home");
        let line = "the quick brown fox jumps over the lazy dog 0123456789\n";
        let body: String = line.repeat(bytes / line.len() + 1)[..bytes].to_owned();
        for n in 0..files {
            let path = repo.file_path(n);
            if n % FILES_PER_DIR == 0 {
                std::fs::create_dir_all(path.parent().expect("a parent")).expect("create a dir");
            }
            std::fs::write(path, format!("{n}\n{body}")).expect("write a file");
        }
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-qm", "synthetic"]);
        for n in 0..EDITED.min(files) {
            std::fs::write(repo.file_path(n * (files / EDITED.max(1))), "edited\n")
                .expect("edit a file");
            std::fs::write(repo.dir.join(format!("untracked-{n}.txt")), "new\n")
                .expect("add an untracked file");
        }
        repo
    }

    /// The temporary directory that holds the repository and whatever else the bench needs.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The repository's working tree.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn file_path(&self, n: usize) -> PathBuf {
        self.dir.join(format!("d{}/f{n}.txt", n / FILES_PER_DIR))
    }

    /// The environment that keeps git (ours, the server's) off the real home's config.
    pub fn git_env(&self) -> [(&'static str, OsString); 3] {
        [
            ("HOME", self.root().join("home").into()),
            ("GIT_CONFIG_GLOBAL", "/dev/null".into()),
            ("GIT_CONFIG_NOSYSTEM", "1".into()),
        ]
    }

    /// `git ARGS` in the repository, with an identity; panics when it fails.
    pub fn git(&self, args: &[&str]) {
        let status = Command::new("git")
            .current_dir(&self.dir)
            .args([
                "-c",
                "user.name=Bench",
                "-c",
                "user.email=bench@example.com",
            ])
            .args(args)
            .envs(self.git_env())
            .stdout(Stdio::null())
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?}");
    }

    /// The anchor of an isolated run's set-up: `git status` then `git worktree add -b NAME`
    /// (timed after a `sync`); the worktree and its branch are removed after, untimed.
    pub fn status_and_worktree_add(&self, name: &str, checkout: Checkout) -> Duration {
        let path = self.root().join(name);
        let path_text = path.to_str().expect("a UTF-8 temp dir");
        let workers = match checkout {
            Checkout::Serial => [].as_slice(),
            Checkout::Parallel => ["-c", "checkout.workers=0"].as_slice(),
        };
        let add = [workers, &["worktree", "add", "-q", "-b", name, path_text]].concat();
        let took = timed(|| {
            self.git(&["status", "--porcelain"]);
            self.git(&add);
        });
        self.git(&["worktree", "remove", "--force", path_text]);
        self.git(&["branch", "-D", name]);
        took
    }
}

/// Writes every dirty page out, so the next timed step starts from a quiet disk.
pub fn sync() {
    let status = Command::new("sync").status().expect("run sync");
    assert!(status.success(), "sync failed");
}

/// How long `step` takes, started after a [`sync`].
pub fn timed(step: impl FnOnce()) -> Duration {
    sync();
    let started = Instant::now();
    step();
    started.elapsed()
}

/// The median of some timings.
pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}
