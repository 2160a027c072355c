//! Worktrees of jobs.

use super::*;
use crate::git::{BranchFate, GitError, disk_usage};
use crate::request::Base;

fn refs_of(fixture: &Fixture, dir: &Path, key: &str) -> String {
    fixture.sh(
        dir,
        &[
            "for-each-ref",
            &format!("refs/cli-agent-mcp/{key}/"),
            &format!("refs/heads/cli-agent-mcp/{key}"),
        ],
    )
}

#[test]
fn a_worktree_starts_from_the_working_state_with_included_files() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    write(&dir, ".worktreeinclude", ".env\nuntracked.txt\n");
    let repo = fixture.repo(&dir.join("sub/dir"));
    let before = UserState::of(&fixture, &dir);
    let path = fixture.path("state/worktrees/job_w");

    let tree = repo
        .create_worktree(&job("job_w"), &path, Base::WorkingState)
        .unwrap();

    assert_eq!(UserState::of(&fixture, &dir), before);
    assert_eq!(tree.branch, "cli-agent-mcp/job_w");
    assert_eq!(tree.workdir, path.join("sub/dir"));
    assert_eq!(tree.included, [".env"], "only files both named and ignored");
    assert_eq!(read(&path, "README.md"), "# Sample\n\nMore words.\n");
    assert_eq!(read(&path, "untracked.txt"), "new\n");
    assert_eq!(read(&path, ".env"), "SECRET=1\n");
    assert!(!path.join("debug.log").exists());
    #[cfg(unix)]
    assert_eq!(
        std::fs::read_link(path.join("link")).unwrap(),
        Path::new("README.md")
    );
    assert_eq!(
        std::fs::read(path.join("logo.bin")).unwrap(),
        [0u8, 1, 2, 0, 255]
    );
    let head = fixture.sh(&path, &["rev-parse", "HEAD"]);
    assert_eq!(head.trim(), tree.base.commit);
    assert_eq!(fixture.sh(&path, &["status", "--porcelain"]), "");
}

#[test]
fn a_worktree_from_head_leaves_uncommitted_work_out() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let path = fixture.path("state/job_h");
    let tree = repo
        .create_worktree(&job("job_h"), &path, Base::Head)
        .unwrap();
    assert_eq!(read(&path, "README.md"), "# Sample\n\nSome words.\n");
    assert!(!path.join("untracked.txt").exists());
    assert_eq!(
        tree.base.commit,
        fixture.sh(&dir, &["rev-parse", "HEAD"]).trim()
    );
}

#[test]
fn commits_removal_and_forgetting() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_k");
    let path = fixture.path("state/job_k");
    let tree = repo
        .create_worktree(&key, &path, Base::WorkingState)
        .unwrap();
    assert!(!repo.has_own_commits(&tree).unwrap());
    write(&path, "src/lib.rs", "changed\n");
    fixture.sh(&path, &["commit", "-qam", "work"]);
    assert!(repo.has_own_commits(&tree).unwrap());
    assert!(disk_usage(&path) > 0);
    assert_eq!(repo.job_worktrees().unwrap().len(), 1);

    repo.remove_worktree(&tree.path, &tree.branch, BranchFate::Keep)
        .unwrap();
    assert!(!path.exists());
    assert!(repo.job_worktrees().unwrap().is_empty());
    assert!(refs_of(&fixture, &dir, "job_k").contains("refs/heads/cli-agent-mcp/job_k"));

    repo.forget(&key).unwrap();
    assert_eq!(refs_of(&fixture, &dir, "job_k"), "");
}

#[test]
fn forget_removes_a_live_worktree_branch_and_refs() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_f");
    let path = fixture.path("state/job_f");
    repo.create_worktree(&key, &path, Base::WorkingState)
        .unwrap();
    repo.forget(&key).unwrap();
    assert!(!path.exists());
    assert_eq!(refs_of(&fixture, &dir, "job_f"), "");
    assert_eq!(
        fixture
            .sh(&dir, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
}

#[test]
fn a_failed_creation_leaves_nothing_behind() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_x");
    write(
        &fixture.path("state"),
        "blocker",
        "a file where a directory must go\n",
    );
    let path = fixture.path("state/blocker/job_x");

    let error = repo
        .create_worktree(&key, &path, Base::WorkingState)
        .unwrap_err();

    assert!(matches!(error, GitError::Failed { .. }), "{error}");
    assert_eq!(refs_of(&fixture, &dir, "job_x"), "");
    assert!(repo.job_worktrees().unwrap().is_empty());
    assert!(
        !dir.join(".git/worktrees").exists()
            || std::fs::read_dir(dir.join(".git/worktrees"))
                .unwrap()
                .next()
                .is_none()
    );

    let taken = fixture.path("state");
    let error = repo.create_worktree(&key, &taken, Base::Head).unwrap_err();
    assert!(matches!(error, GitError::WorktreePathExists(_)), "{error}");
    assert_eq!(refs_of(&fixture, &dir, "job_x"), "");
}

#[test]
fn a_branch_left_by_an_earlier_job_is_refused_by_name() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    fixture.sh(&dir, &["branch", "cli-agent-mcp/job_y"]);
    let error = repo
        .create_worktree(&job("job_y"), &fixture.path("state/y"), Base::Head)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("branch cli-agent-mcp/job_y already exists"),
        "{error}"
    );
}

#[test]
fn worktrees_made_from_several_threads_at_once_all_succeed() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|n| {
                let (repo, fixture) = (&repo, &fixture);
                scope.spawn(move || {
                    let key = job(&format!("job_p{n}"));
                    repo.create_worktree(
                        &key,
                        &fixture.path(&format!("state/p{n}")),
                        Base::WorkingState,
                    )
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap().unwrap();
        }
    });
    assert_eq!(repo.job_worktrees().unwrap().len(), 4);
}

#[test]
fn worktrees_deleted_by_hand_are_pruned_keeping_their_branches() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let user_tree = fixture.path("user-tree");
    fixture.sh(
        &dir,
        &[
            "worktree",
            "add",
            "-q",
            user_tree.to_str().unwrap(),
            "feature",
        ],
    );
    std::fs::remove_dir_all(&user_tree).unwrap();
    let path = fixture.path("state/job_m");
    repo.create_worktree(&job("job_m"), &path, Base::Head)
        .unwrap();
    std::fs::remove_dir_all(&path).unwrap();

    let listed = repo.job_worktrees().unwrap();
    assert!(listed[0].missing, "{listed:?}");
    let pruned = repo.prune_missing_worktrees().unwrap();
    assert_eq!(pruned.len(), 1);
    assert!(repo.job_worktrees().unwrap().is_empty());
    assert!(refs_of(&fixture, &dir, "job_m").contains("refs/heads/cli-agent-mcp/job_m"));
    let records = fixture.sh(&dir, &["worktree", "list", "--porcelain"]);
    assert!(
        records.contains("user-tree"),
        "the user's record stays: {records}"
    );
}
