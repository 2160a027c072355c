//! Bad input: each a typed error whose message says how to fix it.

use super::*;
use crate::git::{GitError, Mode};
use crate::request::Base;

#[test]
fn a_bare_repository_is_refused() {
    let fixture = Fixture::new();
    let bare = fixture.path("bare.git");
    fixture.sh(
        &fixture.path(""),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    let error = Repo::discover_with(fixture.git.clone(), &bare).unwrap_err();
    assert!(matches!(error, GitError::BareRepository(_)), "{error}");
    assert!(error.to_string().contains("git worktree add"), "{error}");
}

#[test]
fn the_git_directory_itself_is_refused() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let error = Repo::discover_with(fixture.git.clone(), &dir.join(".git")).unwrap_err();
    assert!(matches!(error, GitError::InsideGitDir(_)), "{error}");
}

#[test]
fn a_merge_in_progress_refuses_worktrees_and_apply() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    fixture.sh(&dir, &["stash", "-q", "-u"]);
    fixture.sh(&dir, &["checkout", "-q", "feature"]);
    write(&dir, "README.md", "feature side\n");
    fixture.sh(&dir, &["commit", "-qam", "feature"]);
    fixture.sh(&dir, &["checkout", "-q", "main"]);
    write(&dir, "README.md", "main side\n");
    fixture.sh(&dir, &["commit", "-qam", "main"]);
    let merge = Command::new("git")
        .current_dir(&dir)
        .args([
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "merge",
            "feature",
        ])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", fixture.path("home"))
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge conflicts");
    let repo = fixture.repo(&dir);

    let error = repo
        .create_worktree(&job("job_m"), &fixture.path("state/m"), Base::Head)
        .unwrap_err();
    assert!(error.to_string().contains("middle of a merge"), "{error}");
    assert!(error.to_string().contains("git merge --abort"), "{error}");
    let key = job("job_n");
    let snapshot = repo.snapshot(&key, "before").unwrap();
    let error = repo
        .apply(&key, &snapshot, &snapshot, Mode::Check)
        .unwrap_err();
    assert!(
        matches!(error, GitError::OperationInProgress { .. }),
        "{error}"
    );
}

#[test]
fn a_missing_git_binary_and_a_missing_directory_are_named() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let error = Repo::discover_with(crate::git::Git::at("/nonexistent/git"), &dir).unwrap_err();
    assert!(matches!(error, GitError::GitNotFound { .. }), "{error}");
    assert!(error.to_string().contains("install git"), "{error}");
    let error = Repo::discover_with(fixture.git.clone(), &fixture.path("nowhere")).unwrap_err();
    assert!(matches!(error, GitError::NotADirectory(_)), "{error}");
}

/// Hooks that would leave a marker if any of our commands ran them.
const HOOKS: &[&str] = &[
    "pre-commit",
    "post-checkout",
    "reference-transaction",
    "post-index-change",
];

#[test]
fn no_hook_of_the_repository_runs_and_our_commits_are_our_own() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let marker = fixture.path("hook-ran");
    for hook in HOOKS {
        let script = format!("#!/bin/sh\necho {hook} >> '{}'\n", marker.display());
        write(&dir, &format!(".git/hooks/{hook}"), &script);
        let path = dir.join(".git/hooks").join(hook);
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let repo = fixture.repo(&dir);
    let key = job("job_h");

    let tree = repo
        .create_worktree(&key, &fixture.path("state/h"), Base::WorkingState)
        .unwrap();
    write(&tree.path, "src/lib.rs", "changed\n");
    let after = fixture.repo(&tree.path).snapshot(&key, "after").unwrap();
    repo.apply(&key, &tree.base, &after, Mode::Write).unwrap();
    repo.forget(&key).unwrap();

    assert!(
        !marker.exists(),
        "hooks ran: {}",
        std::fs::read_to_string(&marker).unwrap()
    );
    let author = fixture.sh(&dir, &["log", "-1", "--format=%an <%ae>", &after.commit]);
    assert_eq!(author.trim(), "cli-agent-mcp <cli-agent-mcp@localhost>");
}
