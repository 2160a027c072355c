//! The git side of isolation and review, on a synthetic repository, next to the anchors git
//! itself gives: `cargo bench -p cli-agent-engine --bench git [-- [snapshots|worktrees] [FILES [BYTES]]]`
//! (both sections unless one is named).
//!
//! The repository has FILES files (default 50000) of BYTES bytes each (default 4096, so about
//! 200 MB), committed, then 20 files edited and 20 untracked files added. Printed, as the
//! median of 5 runs each, every run timed after a `sync` (so none pays for the dirty pages
//! of the one before):
//! 1. (`snapshots`) `git status` (the anchor); a run's before snapshot; its measurement (one more file
//!    edited, the after snapshot from the before snapshot's index, and the changes); with their
//!    ratios to `git status`, all three taking turns run by run.
//! 2. (`worktrees`) `git status` + `git worktree add` (the anchor: git's default, serial checkout) next to
//!    `Repo::create_worktree` from the working state, taking turns run by run (anchor, ours,
//!    anchor, ...) so a drifting disk slows both alike; each worktree removed before the
//!    next. A reference row times the anchor with `-c checkout.workers=0`, git's own
//!    parallel checkout, which `create_worktree` uses: that is where its speed comes from.
//!
//! It never reads the real home's git config; the repository lives in a temporary directory
//! and is removed at the end.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cli_agent_engine::Base;
use cli_agent_engine::git::{BranchFate, Git, JobKey, Repo};
use cli_agent_test_support::synthetic_repo::{Checkout, EDITED, SyntheticRepo, median, timed};

const RUNS: usize = 5;

fn main() {
    // `cargo test --all-targets` runs this without `--bench`: a small repository, as a smoke test.
    let measuring = std::env::args().any(|arg| arg == "--bench");
    let sections: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| arg == "snapshots" || arg == "worktrees")
        .collect();
    let wanted = |section: &str| sections.is_empty() || sections.iter().any(|s| s == section);
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--") && arg != "snapshots" && arg != "worktrees");
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
    let started = Instant::now();
    let synthetic = SyntheticRepo::make("cli-agent-mcp-git-bench", files, bytes);
    println!(
        "synthetic repository: {files} files of {bytes} bytes, {EDITED} edited, {EDITED} untracked (made in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    let git = synthetic
        .git_env()
        .into_iter()
        .fold(Git::from_path().unwrap(), |git, (key, value)| {
            git.env(key, value)
        });
    let repo = Repo::discover_with(git, synthetic.dir()).unwrap().unwrap();
    if wanted("snapshots") {
        measure_snapshots(&synthetic, &repo);
    }
    if wanted("worktrees") {
        measure_worktrees(&synthetic, &repo);
    }
}

/// Taking turns run by run, as a run in place does: `git status`, the before snapshot
/// (keeping its index), one file edited, then the after snapshot from that index and the changes.
fn measure_snapshots(synthetic: &SyntheticRepo, repo: &Repo) {
    let key = JobKey::new("job_bench").unwrap();
    let (mut status, mut before, mut after) = (vec![], vec![], vec![]);
    for run in 0..RUNS {
        status.push(timed(|| synthetic.git(&["status", "--porcelain"])));
        let mut kept = None;
        before.push(timed(|| {
            kept = Some(repo.snapshot_keeping_index(&key, "before").unwrap())
        }));
        let (start, kept) = kept.unwrap();
        std::fs::write(synthetic.file_path(1), format!("run {run}\n")).unwrap();
        after.push(timed(|| {
            let end = repo.snapshot_after(&key, "after", &kept).unwrap();
            assert_eq!(repo.changes(&start, &end).unwrap().files_changed, 1);
        }));
    }
    let status = median(status);
    println!("\n1. snapshot and changes             median of {RUNS}   x git status");
    row("git status", status, status);
    row("before snapshot", median(before), status);
    row("after snapshot + changes", median(after), status);
    repo.forget(&key).unwrap();
}

fn measure_worktrees(synthetic: &SyntheticRepo, repo: &Repo) {
    let (mut anchor, mut parallel, mut ours) = (vec![], vec![], vec![]);
    for n in 0..RUNS {
        let plain = synthetic.status_and_worktree_add(&format!("plain-{n}"), Checkout::Serial);
        anchor.push(plain);
        ours.push(create_worktree(synthetic, repo, n));
        let workers =
            synthetic.status_and_worktree_add(&format!("workers-{n}"), Checkout::Parallel);
        parallel.push(workers);
    }
    let anchor = median(anchor);
    println!("\n2. isolated run set-up              median of {RUNS}   x anchor");
    row("git status + git worktree add", anchor, anchor);
    row("create_worktree (working state)", median(ours), anchor);
    println!("   reference, git's parallel checkout:");
    row("  the anchor, checkout.workers=0", median(parallel), anchor);
}

/// One `create_worktree` from the working state, timed; removed after, untimed.
fn create_worktree(synthetic: &SyntheticRepo, repo: &Repo, n: usize) -> Duration {
    let key = JobKey::new(format!("job_{n}")).unwrap();
    let path = synthetic.root().join(format!("ours-{n}"));
    let mut tree = None;
    let took = timed(|| {
        tree = Some(
            repo.create_worktree(&key, &path, Base::WorkingState)
                .unwrap(),
        )
    });
    let tree = tree.unwrap();
    repo.remove_worktree(&tree.path, &tree.branch, BranchFate::Delete)
        .unwrap();
    repo.forget(&key).unwrap();
    took
}

fn row(name: &str, took: Duration, anchor: Duration) {
    let ratio = took.as_secs_f64() / anchor.as_secs_f64();
    println!(
        "   {name:<32} {:>9.1} ms   {ratio:>5.2}",
        took.as_secs_f64() * 1000.0
    );
}
