//! The git side of isolation and review, on a synthetic repository, next to the anchors git
//! itself gives: `cargo bench -p cli-agent-engine --bench git [-- FILES [BYTES]]`.
//!
//! The repository has FILES files (default 50000) of BYTES bytes each (default 4096, so about
//! 200 MB), committed, then 20 files edited and 20 untracked files added. Printed, as the
//! median of 5 runs each:
//! 1. `git status` (the anchor); one snapshot; a run's measurement (one more file edited, the
//!    after snapshot, and the changes since the before snapshot); with their ratios to
//!    `git status`.
//! 2. `git status` + `git worktree add` (the anchor) next to `Repo::create_worktree` from the
//!    working state, each worktree removed before the next.
//!
//! It never reads the real home's git config; the repository lives in a temporary directory
//! and is removed at the end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cli_agent_engine::git::{Base, BranchFate, Git, JobKey, Repo};

const RUNS: usize = 5;
const FILES_PER_DIR: usize = 100;
const EDITED: usize = 20;

fn main() {
    // `cargo test --all-targets` runs this without `--bench`: a small repository, as a smoke test.
    let measuring = std::env::args().any(|arg| arg == "--bench");
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"));
    let default_files = if measuring { 50_000 } else { 300 };
    let files = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default_files);
    let bytes = args.next().and_then(|n| n.parse().ok()).unwrap_or(4096);
    if !measuring {
        println!(
            "smoke test only: `cargo bench -p cli-agent-engine --bench git` gives the figures"
        );
    }
    let root = std::env::temp_dir().join(format!("cli-agent-mcp-git-bench-{}", std::process::id()));
    let dir = root.join("repo");
    let started = Instant::now();
    make_repository(&root, &dir, files, bytes);
    println!(
        "synthetic repository: {files} files of {bytes} bytes, {EDITED} edited, {EDITED} untracked (made in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    let git = isolated_git(&root);
    let repo = Repo::discover_with(git, &dir).unwrap().unwrap();
    measure_snapshots(&root, &dir, &repo);
    measure_worktrees(&root, &dir, &repo);
    std::fs::remove_dir_all(&root).unwrap();
}

fn measure_snapshots(root: &Path, dir: &Path, repo: &Repo) {
    let status = median(|| plain_git(root, dir, &["status", "--porcelain"]));
    let key = JobKey::new("job_bench").unwrap();
    let snapshot = median(|| drop(repo.snapshot(&key, "before").unwrap()));
    let before = repo.snapshot(&key, "before").unwrap();
    let mut run = 0;
    let measure = median(|| {
        run += 1;
        std::fs::write(dir.join("d0/f1.txt"), format!("run {run}\n")).unwrap();
        let after = repo.snapshot(&key, "after").unwrap();
        assert_eq!(repo.changes(&before, &after).unwrap().files_changed, 1);
    });
    println!("\n1. snapshot and changes             median of {RUNS}   x git status");
    row("git status", status, status);
    row("snapshot", snapshot, status);
    row("after snapshot + changes", measure, status);
    repo.forget(&key).unwrap();
}

fn measure_worktrees(root: &Path, dir: &Path, repo: &Repo) {
    let mut n = 0;
    let anchor = median(|| {
        n += 1;
        let path = root.join(format!("plain-{n}"));
        let added = Instant::now();
        plain_git(root, dir, &["status", "--porcelain"]);
        let path_text = path.to_str().unwrap();
        plain_git(
            root,
            dir,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("plain-{n}"),
                path_text,
            ],
        );
        let took = added.elapsed();
        plain_git(root, dir, &["worktree", "remove", "--force", path_text]);
        took
    });
    let ours = median(|| {
        n += 1;
        let key = JobKey::new(format!("job_{n}")).unwrap();
        let added = Instant::now();
        let tree = repo
            .create_worktree(&key, &root.join(format!("ours-{n}")), Base::WorkingState)
            .unwrap();
        let took = added.elapsed();
        repo.remove_worktree(&tree.path, &tree.branch, BranchFate::Delete)
            .unwrap();
        repo.forget(&key).unwrap();
        took
    });
    println!("\n2. isolated run set-up              median of {RUNS}   x anchor");
    row("git status + git worktree add", anchor, anchor);
    row("create_worktree (working state)", ours, anchor);
}

fn row(name: &str, took: Duration, anchor: Duration) {
    let ratio = took.as_secs_f64() / anchor.as_secs_f64();
    println!(
        "   {name:<32} {:>9.1} ms   {ratio:>5.2}",
        took.as_secs_f64() * 1000.0
    );
}

/// The median of [`RUNS`] timings; `run` times itself when it returns a duration.
fn median<T: Timed>(mut run: impl FnMut() -> T) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            run().took(started)
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

trait Timed {
    fn took(self, started: Instant) -> Duration;
}

impl Timed for () {
    fn took(self, started: Instant) -> Duration {
        started.elapsed()
    }
}

impl Timed for Duration {
    fn took(self, _: Instant) -> Duration {
        self
    }
}

fn make_repository(root: &Path, dir: &Path, files: usize, bytes: usize) {
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let line = "the quick brown fox jumps over the lazy dog 0123456789\n";
    let body: String = line.repeat(bytes / line.len() + 1)[..bytes].to_owned();
    for n in 0..files {
        let path = file_path(dir, n);
        if n % FILES_PER_DIR == 0 {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        }
        std::fs::write(path, format!("{n}\n{body}")).unwrap();
    }
    plain_git(root, dir, &["init", "-q", "-b", "main"]);
    plain_git(root, dir, &["add", "-A"]);
    plain_git(root, dir, &["commit", "-qm", "synthetic"]);
    for n in 0..EDITED.min(files) {
        std::fs::write(file_path(dir, n * (files / EDITED.max(1))), "edited\n").unwrap();
        std::fs::write(dir.join(format!("untracked-{n}.txt")), "new\n").unwrap();
    }
}

fn file_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("d{}/f{n}.txt", n / FILES_PER_DIR))
}

fn isolated_git(root: &Path) -> Git {
    Git::from_path()
        .unwrap()
        .env("HOME", root.join("home"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
}

fn plain_git(root: &Path, dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .env("HOME", root.join("home"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}
