//! Apply and revert.

use super::*;
use crate::git::{GitError, Mode, Snapshot, Worktree};
use crate::request::Base;

/// A worktree job that ran `edit` in its tree; returns the worktree and its after snapshot.
fn worktree_job(
    fixture: &Fixture,
    repo: &Repo,
    key: &str,
    base: Base,
    edit: impl FnOnce(&Path),
) -> (Worktree, Snapshot) {
    let tree = repo
        .create_worktree(&job(key), &fixture.path(&format!("state/{key}")), base)
        .unwrap();
    edit(&tree.path);
    let after = fixture
        .repo(&tree.path)
        .snapshot(&job(key), "after")
        .unwrap();
    (tree, after)
}

fn conflicts(error: GitError) -> Vec<String> {
    match error {
        GitError::Conflicts { files, .. } => files,
        other => panic!("expected conflicts, got {other}"),
    }
}

/// Two worktree jobs that changed line 5 of src/lib.rs, each its own way.
fn rival_jobs(fixture: &Fixture, repo: &Repo) -> [(Worktree, Snapshot); 2] {
    let edit = |line: &'static str| {
        move |tree: &Path| {
            write(
                tree,
                "src/lib.rs",
                &numbered("fn", 10).replace("fn 5\n", line),
            )
        }
    };
    [("job_1", "fn five\n"), ("job_2", "fn FIVE\n")]
        .map(|(key, line)| worktree_job(fixture, repo, key, Base::WorkingState, edit(line)))
}

#[test]
fn a_check_writes_nothing() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let [(first, first_after), _] = rival_jobs(&fixture, &repo);
    let state = UserState::of(&fixture, &dir);

    let checked = repo
        .apply(&job("job_1"), &first.base, &first_after, Mode::Check)
        .unwrap();

    assert!(!checked.written);
    assert_eq!(checked.changes.files[0].path, "src/lib.rs");
    assert_eq!(UserState::of(&fixture, &dir), state);
}

#[test]
fn two_jobs_on_one_file_the_first_applies_the_second_is_refused() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let [(first, first_after), (second, second_after)] = rival_jobs(&fixture, &repo);
    let index = std::fs::read(dir.join(".git/index")).unwrap();

    let applied = repo
        .apply(&job("job_1"), &first.base, &first_after, Mode::Write)
        .unwrap();

    assert!(applied.written);
    assert!(read(&dir, "src/lib.rs").contains("fn five\n"));
    assert_eq!(
        std::fs::read(dir.join(".git/index")).unwrap(),
        index,
        "the index is untouched"
    );
    assert_eq!(read(&dir, "README.md"), "# Sample\n\nMore words.\n");

    let state = UserState::of(&fixture, &dir);
    let error = repo
        .apply(&job("job_2"), &second.base, &second_after, Mode::Write)
        .unwrap_err();
    assert!(error.to_string().contains("src/lib.rs"), "{error}");
    assert_eq!(conflicts(error), ["src/lib.rs"]);
    assert_eq!(
        UserState::of(&fixture, &dir),
        state,
        "the workspace is as the first left it"
    );
}

#[test]
fn an_apply_after_the_workspace_changed_elsewhere_merges_cleanly() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let (tree, after) = worktree_job(&fixture, &repo, "job_3", Base::WorkingState, |tree| {
        write(
            tree,
            "src/lib.rs",
            &numbered("fn", 10).replace("fn 1\n", "fn one\n"),
        );
        write(tree, "src/new.rs", "new file\n");
        std::fs::remove_file(tree.join("sub/dir/notes.txt")).unwrap();
    });
    write(
        &dir,
        "src/lib.rs",
        &numbered("fn", 10).replace("fn 9\n", "fn nine\n"),
    );
    write(&dir, "README.md", "# Sample\n\nThe user's own words.\n");

    let applied = repo
        .apply(&job("job_3"), &tree.base, &after, Mode::Write)
        .unwrap();

    let lib = read(&dir, "src/lib.rs");
    assert!(
        lib.contains("fn one\n") && lib.contains("fn nine\n"),
        "{lib}"
    );
    assert_eq!(read(&dir, "src/new.rs"), "new file\n");
    assert!(
        !dir.join("sub").exists(),
        "the emptied directory went with its file"
    );
    assert_eq!(
        read(&dir, "README.md"),
        "# Sample\n\nThe user's own words.\n"
    );
    assert_eq!(applied.changes.files_changed, 3);
    assert_eq!(read(&dir, ".env"), "SECRET=1\n");
}

#[test]
fn an_ignored_file_in_the_way_is_a_conflict_never_overwritten() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let (tree, after) = worktree_job(&fixture, &repo, "job_4", Base::Head, |tree| {
        write(tree, "local.cfg", "from the job\n");
    });
    write(&dir, ".gitignore", "*.log\n.env\ntarget/\nlocal.cfg\n");
    write(&dir, "local.cfg", "the user's own\n");
    let state = UserState::of(&fixture, &dir);

    let error = repo
        .apply(&job("job_4"), &tree.base, &after, Mode::Write)
        .unwrap_err();

    assert_eq!(conflicts(error), ["local.cfg"]);
    assert_eq!(UserState::of(&fixture, &dir), state);
}

#[test]
fn a_revert_takes_out_exactly_the_jobs_changes() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_5");
    let original = files(&dir);
    let before = repo.snapshot(&key, "before").unwrap();
    write(
        &dir,
        "src/lib.rs",
        &numbered("fn", 10).replace("fn 2\n", "fn two\n"),
    );
    write(&dir, "added/deep/file.txt", "added\n");
    std::fs::remove_file(dir.join("logo.bin")).unwrap();
    let after = repo.snapshot(&key, "after").unwrap();
    write(&dir, "README.md", "# Sample\n\nEdited after the run.\n");

    repo.revert(&key, &before, &after, Mode::Write).unwrap();

    let mut expected = original;
    expected.insert(
        "README.md".into(),
        b"# Sample\n\nEdited after the run.\n".to_vec(),
    );
    assert_eq!(files(&dir), expected);
}

#[test]
fn a_revert_where_the_files_changed_since_is_refused() {
    let fixture = Fixture::new();
    let dir = fixture.sample();
    let repo = fixture.repo(&dir);
    let key = job("job_6");
    let before = repo.snapshot(&key, "before").unwrap();
    write(
        &dir,
        "src/lib.rs",
        &numbered("fn", 10).replace("fn 2\n", "fn two\n"),
    );
    write(&dir, "other.txt", "job's\n");
    let after = repo.snapshot(&key, "after").unwrap();
    write(
        &dir,
        "src/lib.rs",
        &numbered("fn", 10).replace("fn 2\n", "fn TWO\n"),
    );
    let state = UserState::of(&fixture, &dir);

    let error = repo.revert(&key, &before, &after, Mode::Write).unwrap_err();

    assert_eq!(conflicts(error), ["src/lib.rs"]);
    assert_eq!(
        UserState::of(&fixture, &dir),
        state,
        "all or nothing: other.txt stays too"
    );
}
