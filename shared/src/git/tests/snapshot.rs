//! Snapshots and changes.

use std::path::Path;

use super::*;
use crate::git::{ChangeKind, Changes, Snapshot};

fn tree_files(fixture: &Fixture, dir: &Path, snapshot: &Snapshot) -> Vec<String> {
    let listed = fixture.sh(dir, &["ls-tree", "-r", "--name-only", &snapshot.commit]);
    listed.lines().map(str::to_owned).collect()
}

#[test]
fn a_snapshot_records_the_working_state_and_leaves_the_users_alone() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let before = UserState::of(&fixture, &dir);

    let snapshot = repo.snapshot(&job("job_a"), "before").unwrap();

    assert_eq!(UserState::of(&fixture, &dir), before);
    let files = tree_files(&fixture, &dir, &snapshot);
    assert!(files.contains(&"untracked.txt".to_owned()), "{files:?}");
    assert!(
        !files.iter().any(|f| f == "debug.log" || f == ".env"),
        "{files:?}"
    );
    let readme = fixture.sh(&dir, &["show", &format!("{}:README.md", snapshot.commit)]);
    assert_eq!(readme, "# Sample\n\nMore words.\n");
    let parent = fixture.sh(&dir, &["rev-parse", &format!("{}^", snapshot.commit)]);
    assert_eq!(parent, fixture.sh(&dir, &["rev-parse", "HEAD"]));
    let kept = fixture.sh(&dir, &["rev-parse", "refs/cli-agent-mcp/job_a/before"]);
    assert_eq!(kept.trim(), snapshot.commit);
}

/// `git diff --numstat -M` between two commits: (path or `old => new`, added, removed), sorted.
fn git_numstat(fixture: &Fixture, dir: &Path, from: &str, to: &str) -> Vec<(String, u64, u64)> {
    let output = fixture.sh(dir, &["diff", "--numstat", "-M", "-z", from, to]);
    let mut fields = output.split('\0');
    let mut rows = Vec::new();
    while let Some(field) = fields.next().filter(|field| !field.is_empty()) {
        let mut parts = field.splitn(3, '\t');
        let added = parts.next().unwrap().parse().unwrap_or(0);
        let removed = parts.next().unwrap().parse().unwrap_or(0);
        let path = match parts.next().unwrap() {
            "" => format!("{} => {}", fields.next().unwrap(), fields.next().unwrap()),
            path => path.to_owned(),
        };
        rows.push((path, added, removed));
    }
    rows.sort();
    rows
}

/// Our changes in the same form as [`git_numstat`].
fn our_numstat(changes: &Changes) -> Vec<(String, u64, u64)> {
    let mut rows: Vec<_> = changes
        .files
        .iter()
        .map(|file| {
            let path = match &file.old_path {
                Some(old) => format!("{old} => {}", file.path),
                None => file.path.clone(),
            };
            (path, file.lines_added, file.lines_removed)
        })
        .collect();
    rows.sort();
    rows
}

/// Edits of every kind: lines changed, a rename, a deletion, binary content, a symlink's
/// target, and an ignored file that must not count.
fn edit_everything(dir: &Path) {
    write(
        dir,
        "src/lib.rs",
        &numbered("fn", 12).replace("fn 3\n", "fn three\n"),
    );
    std::fs::rename(
        dir.join("sub/dir/notes.txt"),
        dir.join("sub/dir/renamed.txt"),
    )
    .unwrap();
    std::fs::remove_file(dir.join("untracked.txt")).unwrap();
    std::fs::write(dir.join("logo.bin"), [0u8, 9, 9, 0]).unwrap();
    std::fs::remove_file(dir.join("link")).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", dir.join("link")).unwrap();
    write(dir, "more.log", "still ignored\n");
}

#[test]
fn changes_equal_git_diff_between_the_snapshots() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_b");
    let before = repo.snapshot(&key, "before").unwrap();
    edit_everything(&dir);
    let after = repo.snapshot(&key, "after").unwrap();

    let changes = repo.changes(&before, &after).unwrap();

    let expected = git_numstat(&fixture, &dir, &before.commit, &after.commit);
    assert_eq!(our_numstat(&changes), expected);
    let by_path = |path: &str| changes.files.iter().find(|f| f.path == path).unwrap();
    assert_eq!(by_path("sub/dir/renamed.txt").change, ChangeKind::Renamed);
    assert_eq!(by_path("untracked.txt").change, ChangeKind::Deleted);
    assert!(by_path("logo.bin").binary);
    assert_eq!(by_path("link").change, ChangeKind::Modified);
    let lib = by_path("src/lib.rs");
    assert_eq!((lib.lines_added, lib.lines_removed), (3, 1));
    assert_eq!(changes.files_changed, 5);
    let added: u64 = changes.files.iter().map(|f| f.lines_added).sum();
    assert_eq!(changes.lines_added, added);
}

#[test]
fn an_after_snapshot_from_the_kept_index_records_what_a_fresh_one_does() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_k");
    let (before, kept) = repo.snapshot_keeping_index(&key, "before").unwrap();
    edit_everything(&dir);

    let after = repo.snapshot_after(&key, "after", &kept).unwrap();

    assert_eq!(after.tree, repo.snapshot(&key, "fresh").unwrap().tree);
    let changes = repo.changes(&before, &after).unwrap();
    assert_eq!(
        our_numstat(&changes),
        git_numstat(&fixture, &dir, &before.commit, &after.commit)
    );
}

#[test]
fn a_file_force_added_to_the_users_index_during_the_run_is_measured() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_f");
    let (before, kept) = repo.snapshot_keeping_index(&key, "before").unwrap();
    fixture.sh(&dir, &["add", "--force", "debug.log"]);

    let after = repo.snapshot_after(&key, "after", &kept).unwrap();

    assert!(tree_files(&fixture, &dir, &after).contains(&"debug.log".to_owned()));
    let changes = repo.changes(&before, &after).unwrap();
    let paths: Vec<_> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["debug.log"]);
}

#[test]
fn a_delegate_that_commits_is_still_measured_by_content() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_c");
    let before = repo.snapshot(&key, "before").unwrap();
    write(&dir, "src/lib.rs", "replaced\n");
    fixture.sh(&dir, &["commit", "-qam", "the delegate commits"]);
    let after = repo.snapshot(&key, "after").unwrap();

    let changes = repo.changes(&before, &after).unwrap();
    let paths: Vec<_> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["src/lib.rs"],
        "README's uncommitted edit was committed too but is unchanged"
    );
    assert_eq!(changes.lines_removed, 10);
}

#[test]
fn no_change_gives_empty_changes_and_diff() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_d");
    let before = repo.snapshot(&key, "before").unwrap();
    let after = repo.snapshot(&key, "after").unwrap();
    assert!(repo.changes(&before, &after).unwrap().is_empty());
    assert_eq!(repo.diff(&before, &after, &[] as &[&str]).unwrap(), "");
}

#[test]
fn the_diff_names_binary_files_and_can_be_limited_to_paths() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_e");
    let before = repo.snapshot(&key, "before").unwrap();
    std::fs::write(dir.join("logo.bin"), [0u8, 7, 7, 0]).unwrap();
    write(&dir, "src/lib.rs", "one line\n");
    let after = repo.snapshot(&key, "after").unwrap();

    let all = repo.diff(&before, &after, &[] as &[&str]).unwrap();
    assert!(
        all.contains("Binary files a/logo.bin and b/logo.bin differ"),
        "{all}"
    );
    assert!(all.contains("+one line"), "{all}");
    let limited = repo.diff(&before, &after, &["src"]).unwrap();
    assert!(
        limited.contains("+one line") && !limited.contains("logo.bin"),
        "{limited}"
    );
    assert_eq!(
        limited,
        fixture.sh(
            &dir,
            &[
                "diff",
                "--no-color",
                &before.commit,
                &after.commit,
                "--",
                "src"
            ]
        )
    );
}

#[test]
fn an_unborn_head_and_a_detached_head_both_snapshot() {
    let fixture = Fixture::new();
    let dir = fixture.init("fresh");
    write(&dir, "a.txt", "a\n");
    let repo = fixture.repo(&dir);
    let first = repo.snapshot(&job("job_f"), "before").unwrap();
    let parents = fixture.sh(&dir, &["rev-list", "--parents", "-n1", &first.commit]);
    assert_eq!(
        parents.split_whitespace().count(),
        1,
        "no parent: {parents}"
    );

    let dir = fixture.sample();
    fixture.sh(&dir, &["checkout", "-q", "--detach", "HEAD"]);
    let repo = fixture.repo(&dir);
    let snapshot = repo.snapshot(&job("job_f"), "before").unwrap();
    let parent = fixture.sh(&dir, &["rev-parse", &format!("{}^", snapshot.commit)]);
    assert_eq!(parent, fixture.sh(&dir, &["rev-parse", "HEAD"]));
}

#[test]
fn a_subdirectory_and_a_linked_worktree_are_found_with_their_own_index() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir.join("sub/dir"));
    assert_eq!(repo.subdir(), Path::new("sub/dir"));
    assert_eq!(repo.top(), dir);

    let linked = fixture.path("linked");
    fixture.sh(
        &dir,
        &["worktree", "add", "-q", linked.to_str().unwrap(), "feature"],
    );
    write(&linked, "staged.txt", "staged\n");
    fixture.sh(&linked, &["add", "staged.txt"]);
    let repo = fixture.repo(&linked);
    assert_ne!(repo.git_dir(), fixture.repo(&dir).git_dir());
    let index_before = std::fs::read(repo.git_dir().join("index")).unwrap();
    let snapshot = repo.snapshot(&job("job_g"), "before").unwrap();
    let files = tree_files(&fixture, &linked, &snapshot);
    assert!(files.contains(&"staged.txt".to_owned()), "{files:?}");
    assert!(
        !files.contains(&"untracked.txt".to_owned()),
        "the main tree's file: {files:?}"
    );
    assert_eq!(
        std::fs::read(repo.git_dir().join("index")).unwrap(),
        index_before
    );
}

#[test]
fn snapshots_from_several_threads_at_once_all_succeed() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|n| {
                let repo = &repo;
                scope.spawn(move || {
                    let key = job(&format!("job_t{n}"));
                    let before = repo.snapshot(&key, "before")?;
                    let after = repo.snapshot(&key, "after")?;
                    repo.changes(&before, &after)
                })
            })
            .collect();
        for handle in handles {
            let changes = handle.join().unwrap().unwrap();
            assert!(changes.is_empty(), "{changes:?}");
        }
    });
}

#[test]
fn outside_git_changes_say_why() {
    let fixture = Fixture::new();
    let plain = fixture.path("plain");
    std::fs::create_dir_all(&plain).unwrap();
    assert!(
        Repo::discover_with(fixture.git.clone(), &plain)
            .unwrap()
            .is_none()
    );
    let changes = Changes::outside_repository(&plain);
    assert_eq!(
        changes.not_tracked.unwrap(),
        format!(
            "not tracked: {} is not inside a git repository",
            plain.display()
        )
    );
}
