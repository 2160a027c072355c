//! Isolation and review end to end (REFACTOR_SPEC "Isolation and review", I1..): the built
//! server, driven over stdio, runs the fake CLI in real git repositories made in temp dirs,
//! and `jobs diff|apply|discard|revert` work on what it left. Every git command of the tests
//! and the server reads a config of the test's own (`GIT_CONFIG_GLOBAL`, no system config).

use crate::common;
use crate::mcp;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
#[cfg(unix)]
use std::time::Duration;

use common::temp_dir;
use mcp::{Server, all_text, is_error, job_id, texts};
#[cfg(unix)]
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use tempfile::TempDir;

/// A git repository in a temp dir, with a global git config of its own.
struct Repo {
    dir: TempDir,
}

impl Repo {
    /// An empty repository on branch `main`, with an identity.
    fn new(name: &str) -> Self {
        let dir = temp_dir(name);
        std::fs::create_dir_all(dir.path().join("repo")).expect("repo dir");
        std::fs::write(
            dir.path().join("gitconfig"),
            "[user]\n\tname = Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n",
        )
        .expect("git config");
        let repo = Self { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        // The agent's own git sees the repository's config, not the test's global one.
        repo.git(&["config", "user.name", "Agent"]);
        repo.git(&["config", "user.email", "agent@example.invalid"]);
        repo
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    /// A file outside the repository (scripts, markers).
    fn outside(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A file for the fake's records and markers, in its `CODEX_HOME`: outside the repository,
    /// where the kernel sandbox lets the CLI write (its own state).
    fn record(&self, name: &str) -> PathBuf {
        let home = self.outside("codex-home");
        std::fs::create_dir_all(&home).expect("codex home");
        home.join(name)
    }

    fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let path = self.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, content).expect("write");
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.path().join(path)).unwrap_or_default()
    }

    fn git_env(&self, command: &mut Command) {
        command
            .env("GIT_CONFIG_GLOBAL", self.dir.path().join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.dir.path())
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_WORK_TREE");
    }

    /// `git ARGS` in the repository; its stdout. Panics when it fails.
    fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.path(), args, None)
    }

    fn git_in(&self, dir: &Path, args: &[&str], index: Option<&Path>) -> String {
        let mut command = Command::new("git");
        self.git_env(&mut command);
        if let Some(index) = index {
            command.env("GIT_INDEX_FILE", index);
        }
        let output = command
            .current_dir(dir)
            .args(args)
            .output()
            .expect("run git");
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// One file committed.
    fn with_commit(name: &str) -> Self {
        let repo = Self::new(name);
        repo.write(
            "shared.txt",
            "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n",
        );
        repo.commit_all("first");
        repo
    }

    /// A script the fake CLI runs in its working directory: the agent's edits.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.outside(name);
        std::fs::write(&path, body).expect("script");
        path
    }

    /// The tree of `dir`'s working state (tracked, modified and untracked files that are not
    /// ignored), made through a copy of its index so the real one is untouched.
    fn working_tree(&self, dir: &Path) -> String {
        let real = PathBuf::from(
            self.git_in(
                dir,
                &["rev-parse", "--path-format=absolute", "--git-path", "index"],
                None,
            )
            .trim(),
        );
        let index = self.outside(&common::unique("index"));
        if real.exists() {
            std::fs::copy(&real, &index).expect("copy index");
        }
        self.git_in(dir, &["add", "-A", "."], Some(&index));
        let top = self.git_in(dir, &["rev-parse", "--show-toplevel"], None);
        self.git_in(Path::new(top.trim()), &["add", "-A"], Some(&index));
        let tree = self.git_in(dir, &["write-tree"], Some(&index));
        let _ = std::fs::remove_file(index);
        tree.trim().to_owned()
    }

    fn worktrees(&self) -> String {
        self.git(&["worktree", "list", "--porcelain"])
    }

    /// Every ref, ours included.
    fn refs(&self) -> String {
        self.git(&["for-each-ref", "--format=%(refname)"])
    }

    /// What the user owns: index bytes, HEAD, branches and tags (not ours), stash, and every
    /// file's bytes (a symlink's target), `.git` aside.
    fn user_state(&self) -> UserState {
        let refs = self
            .git(&["for-each-ref", "--format=%(refname) %(objectname)"])
            .lines()
            .filter(|line| !line.contains("cli-agent-mcp"))
            .collect::<Vec<_>>()
            .join("\n");
        UserState {
            index: std::fs::read(self.path().join(".git/index")).unwrap_or_default(),
            head: std::fs::read_to_string(self.path().join(".git/HEAD")).expect("HEAD"),
            refs,
            stash: self.git(&["stash", "list", "--format=%H %s"]),
            files: files_of(&self.path()),
        }
    }
}

#[derive(Debug, PartialEq)]
struct UserState {
    index: Vec<u8>,
    head: String,
    refs: String,
    stash: String,
    files: BTreeMap<String, Vec<u8>>,
}

/// Every file under `dir` but `.git`, by relative path: contents, or `-> target` for a link.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).expect("read dir").flatten() {
            let path = entry.path();
            let name = path
                .strip_prefix(dir)
                .expect("inside")
                .display()
                .to_string();
            let kind = entry.file_type().expect("file type");
            if name == ".git" {
                continue;
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).expect("link");
                files.insert(name, format!("-> {}", target.display()).into_bytes());
            } else if kind.is_dir() {
                pending.push(path);
            } else {
                files.insert(name, std::fs::read(&path).expect("read file"));
            }
        }
    }
    files
}

/// One file's change as `changes` reports it, or as `git diff` says.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Change {
    path: String,
    old_path: Option<String>,
    kind: String,
    added: u64,
    removed: u64,
    binary: bool,
}

fn reported(changes: &Value) -> Vec<Change> {
    let mut files: Vec<_> = changes["files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|file| Change {
            path: file["path"].as_str().expect("path").to_owned(),
            old_path: file["old_path"].as_str().map(str::to_owned),
            kind: file["change"].as_str().expect("change").to_owned(),
            added: file["lines_added"].as_u64().expect("added"),
            removed: file["lines_removed"].as_u64().expect("removed"),
            binary: file["binary"] == true,
        })
        .collect();
    files.sort();
    files
}

/// `git diff -M` between two trees, in the same terms.
fn git_diff(repo: &Repo, before: &str, after: &str) -> Vec<Change> {
    let status = repo.git(&["diff", "-z", "-M", "--name-status", before, after]);
    let numstat = repo.git(&["diff", "-z", "-M", "--numstat", before, after]);
    let mut counts = BTreeMap::new();
    let mut fields = numstat.split('\0');
    while let Some(head) = fields.next().filter(|head| !head.is_empty()) {
        let mut parts = head.splitn(3, '\t');
        let (added, removed) = (parts.next().expect("added"), parts.next().expect("removed"));
        let path = match parts.next().expect("path") {
            "" => fields.nth(1).expect("new path"),
            path => path,
        };
        counts.insert(path.to_owned(), (added.to_owned(), removed.to_owned()));
    }
    let mut changes = Vec::new();
    let mut fields = status.split('\0');
    while let Some(code) = fields.next().filter(|code| !code.is_empty()) {
        let (old_path, path) = if code.starts_with('R') {
            let old = fields.next().expect("old path").to_owned();
            (Some(old), fields.next().expect("path").to_owned())
        } else {
            (None, fields.next().expect("path").to_owned())
        };
        let kind = match &code[..1] {
            "A" => "added",
            "D" => "deleted",
            "R" => "renamed",
            _ => "modified",
        };
        let (added, removed) = &counts[&path];
        let binary = added == "-";
        changes.push(Change {
            kind: kind.to_owned(),
            added: added.parse().unwrap_or(0),
            removed: removed.parse().unwrap_or(0),
            binary,
            path,
            old_path,
        });
    }
    changes.sort();
    changes
}

/// A server whose git reads the repository's test config.
fn server_for(repo: &Repo) -> mcp::Builder {
    Server::builder()
        .env("GIT_CONFIG_GLOBAL", repo.dir.path().join("gitconfig"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("CAM_STATE_DIR", repo.outside("state"))
        .env("CODEX_HOME", repo.outside("codex-home"))
}

async fn started(builder: mcp::Builder) -> Server {
    let mut server = builder.spawn();
    server.initialize().await;
    server
}

/// A codex call with write permission; `extra` adds or overrides arguments.
async fn codex(server: &mut Server, workspace: &Path, prompt: &str, extra: Value) -> Value {
    let mut arguments = json!({
        "prompt": prompt,
        "workspace": workspace,
        "permission": "workspace-write",
        "isolation": "worktree",
    });
    for (key, value) in extra.as_object().expect("object") {
        arguments[key] = value.clone();
    }
    server.call("codex", arguments).await
}

/// A finished call's structured result; panics with its text when it failed.
fn done(result: &Value) -> &Value {
    assert!(!is_error(result), "the call failed: {}", all_text(result));
    &result["structuredContent"]
}

/// Call a review tool on a job.
async fn review(server: &mut Server, tool: &str, id: &str) -> Value {
    server.call(tool, json!({"job_id": id})).await
}

/// Wait for background jobs; their results, by job id.
async fn wait_all(server: &mut Server, ids: &[&str]) -> Value {
    let result = server
        .call("job_wait", json!({"job_ids": ids, "timeout_secs": 300}))
        .await;
    assert!(!is_error(&result), "job_wait failed: {}", all_text(&result));
    result
}

/// The repository of the first test: history, uncommitted, untracked and ignored files,
/// a stash, a `.worktreeinclude`, and a subdirectory workspace.
fn rich_repo() -> Repo {
    let repo = Repo::new("iso-rich");
    repo.write(".gitignore", "build/\n.env\n");
    repo.write(".worktreeinclude", ".env\n");
    repo.write("tracked.txt", "alpha\nbeta\n");
    repo.write("old.txt", "a file that moves\nwith two lines\n");
    repo.write("gone.txt", "deleted by the agent\n");
    repo.write("sub/dir/keep.txt", "in the subdirectory\n");
    repo.commit_all("first");
    repo.git(&["tag", "v1"]);
    repo.write("tracked.txt", "alpha\nbeta\nstashed\n");
    repo.git(&["stash", "push", "-q", "-m", "kept aside"]);
    repo.write("tracked.txt", "alpha\nbeta changed, not committed\n");
    repo.write("notes.txt", "untracked notes\n");
    repo.write(".env", "SECRET=1\n");
    repo.write("build/out.o", "ignored build output\n");
    repo
}

const AGENT_EDITS: &str = "cd ../..\n\
    printf 'gamma\\n' >> tracked.txt\n\
    mv old.txt renamed.txt\n\
    rm gone.txt\n\
    printf '\\000\\001\\002binary' > blob.bin\n\
    ln -s tracked.txt link\n\
    printf 'new\\n' > sub/dir/new.txt\n\
    printf 'ignored\\n' > build/junk.o\n";

#[tokio::test]
async fn an_isolated_run_reports_what_git_sees_and_starts_from_the_working_state() {
    let repo = rich_repo();
    let workspace = repo.path().join("sub/dir");
    let before = repo.working_tree(&workspace);
    let user = repo.user_state();
    let script = repo.script("edit.sh", AGENT_EDITS);
    let argv = repo.record("argv.json");
    let mut server = started(server_for(&repo)).await;
    let prompt = format!(
        "edit-script={} argv-out={} answer=done",
        script.display(),
        argv.display()
    );
    let result = codex(&mut server, &workspace, &prompt, json!({})).await;
    let changes = &done(&result)["changes"];
    let worktree = PathBuf::from(changes["worktree"].as_str().expect("worktree kept"));
    assert_eq!(
        changes["branch"],
        format!("cli-agent-mcp/{}", job_id(&result))
    );

    // Same subdirectory, started from the working state, `.env` copied in, other ignored files not.
    let seen: Value = serde_json::from_slice(&std::fs::read(&argv).expect("argv")).expect("json");
    let cwd = std::fs::canonicalize(seen["cwd"].as_str().expect("cwd")).expect("cwd");
    assert_eq!(
        cwd,
        std::fs::canonicalize(worktree.join("sub/dir")).expect("subdir")
    );
    let read = |path: &str| std::fs::read_to_string(worktree.join(path)).unwrap_or_default();
    assert_eq!(
        read("tracked.txt"),
        "alpha\nbeta changed, not committed\ngamma\n"
    );
    assert_eq!(read("notes.txt"), "untracked notes\n");
    assert_eq!(read(".env"), "SECRET=1\n");
    assert_eq!(
        read("build/out.o"),
        "",
        "ignored files outside .worktreeinclude stay out"
    );

    // The reported changes are git's diff between the before and after states.
    let after = repo.working_tree(&worktree);
    let expected = git_diff(&repo, &before, &after);
    assert_eq!(reported(changes), expected, "{}", all_text(&result));
    assert_eq!(changes["files_changed"], expected.len() as u64);
    let kinds: Vec<_> = expected
        .iter()
        .map(|c| (c.kind.as_str(), c.binary))
        .collect();
    assert!(
        kinds.contains(&("renamed", false)) && kinds.contains(&("added", true)),
        "{expected:?}"
    );
    assert_eq!(
        repo.user_state(),
        user,
        "the run changed the user's repository"
    );

    // job_diff shows the edits and changes nothing of the user's.
    let diff = review(&mut server, "job_diff", &job_id(&result)).await;
    let text = done(&diff)["diff"].as_str().expect("diff").to_owned();
    for needle in [
        "+gamma",
        "renamed.txt",
        "blob.bin",
        "sub/dir/new.txt",
        "link",
    ] {
        assert!(
            text.contains(needle),
            "{needle} missing from the diff:\n{text}"
        );
    }
    assert!(!text.contains("junk.o"), "ignored files are not changes");
    let some = json!({"job_id": job_id(&result), "paths": ["sub/dir/new.txt"]});
    let some = server.call("job_diff", some).await;
    let some = done(&some)["diff"].as_str().expect("diff").to_owned();
    assert!(
        some.contains("sub/dir/new.txt") && !some.contains("gamma"),
        "{some}"
    );
    assert_eq!(
        repo.user_state(),
        user,
        "job_diff changed the user's repository"
    );

    // Applied, the workspace holds what the worktree held: rename, binary and link included.
    let applied = review(&mut server, "job_apply", &job_id(&result)).await;
    assert_eq!(done(&applied)["written"], true, "{}", all_text(&applied));
    assert_eq!(repo.working_tree(&workspace), after);
    assert_eq!(
        std::fs::read_link(repo.path().join("link")).expect("link"),
        Path::new("tracked.txt")
    );
}

#[tokio::test]
async fn base_head_starts_the_worktree_from_the_last_commit_alone() {
    let repo = Repo::with_commit("iso-head");
    repo.write("shared.txt", "uncommitted\n");
    repo.write("untracked.txt", "untracked\n");
    let script = repo.script("edit.sh", "printf 'agent\\n' > agent.txt\n");
    let prompt = format!("edit-script={} answer=done", script.display());
    let mut server = started(server_for(&repo)).await;
    let result = codex(&mut server, &repo.path(), &prompt, json!({"base": "head"})).await;
    let changes = &done(&result)["changes"];
    let worktree = PathBuf::from(changes["worktree"].as_str().expect("kept"));
    let read = |path: &str| std::fs::read_to_string(worktree.join(path)).unwrap_or_default();
    assert!(
        read("shared.txt").starts_with("one\n"),
        "{}",
        read("shared.txt")
    );
    assert!(!worktree.join("untracked.txt").exists());
    let paths: Vec<_> = reported(changes).into_iter().map(|c| c.path).collect();
    assert_eq!(paths, ["agent.txt"], "{}", all_text(&result));
}

#[tokio::test]
async fn a_jobs_diff_reads_as_the_resource_job_id_diff() {
    let repo = Repo::with_commit("iso-resource");
    let script = repo.script("edit.sh", "printf 'agent\\n' > agent.txt\n");
    let prompt = format!("edit-script={} answer=done", script.display());
    let mut server = started(server_for(&repo)).await;
    let result = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    let id = job_id(&result);
    done(&result);
    let shown = review(&mut server, "job_diff", &id).await;
    let uri = format!("job://{id}/diff");
    let request = server
        .request("resources/read", json!({ "uri": &uri }))
        .await;
    let read = server.result(request).await;
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], uri.as_str(), "{read}");
    assert_eq!(contents["mimeType"], "text/x-diff", "{read}");
    let diff = contents["text"].as_str().expect("text");
    assert!(diff.contains("agent.txt"), "{diff}");
    assert_eq!(diff, texts(&shown)[0], "the resource is job_diff's page");
}

#[tokio::test]
async fn an_agents_commits_are_measured_by_content_and_their_branch_is_kept() {
    let repo = Repo::with_commit("iso-commits");
    let mut server = started(server_for(&repo)).await;
    let commit = "printf 'committed\\n' > c.txt\ngit add c.txt\ngit commit -q -m agent\n";
    let script = repo.script("commit.sh", commit);
    let prompt = format!("edit-script={} answer=done", script.display());
    let result = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    let changes = &done(&result)["changes"];
    let paths: Vec<_> = reported(changes).into_iter().map(|c| c.path).collect();
    assert_eq!(paths, ["c.txt"], "{}", all_text(&result));

    // A commit that changes no file still keeps its branch: it is the agent's work.
    let empty = repo.script("empty.sh", "git commit -q --allow-empty -m 'agent note'\n");
    let prompt = format!("edit-script={} answer=done", empty.display());
    let result = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    let id = job_id(&result);
    let changes = &done(&result)["changes"];
    assert_eq!(changes["files_changed"], 0, "{changes}");
    assert!(changes["worktree"].is_string(), "{changes}");
    let next = changes["next"].as_str().unwrap_or_default();
    assert!(next.contains("job_discard"), "{changes}");
    assert!(
        repo.refs()
            .contains(&format!("refs/heads/cli-agent-mcp/{id}")),
        "the branch with the agent's commit was deleted: {}\n{}",
        all_text(&result),
        repo.refs()
    );
}

/// Two background jobs appending to `shared.txt`'s last line; their ids.
async fn two_jobs_on_one_file(server: &mut Server, repo: &Repo) -> (String, String) {
    let mut ids = Vec::new();
    for n in 1..=2 {
        let script = repo.script(
            &format!("edit{n}.sh"),
            &format!("sed -i 's/^eight$/eight by job {n}/' shared.txt\n"),
        );
        let prompt = format!("edit-script={} answer=done{n}", script.display());
        let started = codex(server, &repo.path(), &prompt, json!({"background": true})).await;
        ids.push(job_id(&started));
    }
    (ids[0].clone(), ids[1].clone())
}

#[tokio::test]
async fn two_isolated_jobs_on_one_file_apply_in_turn_and_the_second_refuses_naming_it() {
    let repo = Repo::with_commit("iso-two");
    let mut server = started(server_for(&repo)).await;
    let (first, second) = two_jobs_on_one_file(&mut server, &repo).await;
    let waited = wait_all(&mut server, &[&first, &second]).await;
    assert!(all_text(&waited).contains("done1") && all_text(&waited).contains("done2"));
    let page = server.call("job_result", json!({"job_id": first})).await;
    let tree = &page["structuredContent"]["tree"];
    assert_eq!(tree["isolation"], "worktree", "{page}");
    assert_eq!(tree["state"], "kept");
    assert_eq!(tree["files_changed"], 1);
    assert!(all_text(&page).contains("job_diff"), "{}", all_text(&page));
    let overlaps = &waited["structuredContent"]["overlaps"];
    assert_eq!(overlaps[0]["files"], json!(["shared.txt"]), "{waited}");
    assert!(all_text(&waited).contains("both changed shared.txt"));
    assert!(
        repo.read("shared.txt").ends_with("eight\n"),
        "isolated jobs left the workspace alone"
    );

    let applied = review(&mut server, "job_apply", &first).await;
    assert_eq!(done(&applied)["written"], true);
    assert!(repo.read("shared.txt").ends_with("eight by job 1\n"));
    let state = repo.user_state();
    let refused = review(&mut server, "job_apply", &second).await;
    assert!(is_error(&refused), "{}", all_text(&refused));
    assert!(
        all_text(&refused).contains("shared.txt"),
        "{}",
        all_text(&refused)
    );
    assert_eq!(
        repo.user_state(),
        state,
        "a refused apply changed the workspace"
    );
}

#[tokio::test]
async fn an_apply_after_the_workspace_changed_elsewhere_merges_cleanly() {
    let repo = Repo::with_commit("iso-merge");
    let mut server = started(server_for(&repo)).await;
    let script = repo.script(
        "edit.sh",
        "sed -i 's/^eight$/eight by the agent/' shared.txt\n",
    );
    let prompt = format!("edit-script={} answer=done", script.display());
    let result = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    let id = job_id(&result);
    let worktree = PathBuf::from(done(&result)["changes"]["worktree"].as_str().expect("kept"));
    repo.write(
        "shared.txt",
        "one by the user\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n",
    );
    repo.write("other.txt", "the user's new file\n");

    let checked = server
        .call("job_apply", json!({"job_id": id, "check": true}))
        .await;
    assert_eq!(done(&checked)["written"], false);
    assert!(
        repo.read("shared.txt").ends_with("\neight\n"),
        "check wrote nothing"
    );
    let applied = review(&mut server, "job_apply", &id).await;
    assert_eq!(done(&applied)["written"], true);
    assert_eq!(
        repo.read("shared.txt"),
        "one by the user\ntwo\nthree\nfour\nfive\nsix\nseven\neight by the agent\n"
    );
    assert_eq!(repo.read("other.txt"), "the user's new file\n");
    assert!(!worktree.exists(), "an applied job's worktree is removed");
    assert!(
        repo.refs()
            .contains(&format!("refs/heads/cli-agent-mcp/{id}")),
        "its branch stays"
    );
}

#[tokio::test]
async fn a_run_that_changed_nothing_leaves_no_worktree_branch_or_ref() {
    let repo = Repo::with_commit("iso-nothing");
    let (worktrees, refs) = (repo.worktrees(), repo.refs());
    let mut server = started(server_for(&repo)).await;
    let result = codex(&mut server, &repo.path(), "answer=nothing", json!({})).await;
    let changes = &done(&result)["changes"];
    assert_eq!(changes["files_changed"], 0, "{changes}");
    assert!(changes.get("worktree").is_none(), "{changes}");
    assert_eq!(repo.worktrees(), worktrees);
    assert_eq!(repo.refs(), refs);
    let left: Vec<_> = std::fs::read_dir(repo.outside("state/worktrees"))
        .into_iter()
        .flatten()
        .collect();
    assert!(left.is_empty(), "worktree directories left: {left:?}");
}

#[tokio::test]
async fn an_in_place_run_reports_its_changes_and_job_revert_takes_them_out() {
    let repo = Repo::with_commit("iso-revert");
    let mut server = started(server_for(&repo)).await;
    let script = repo.script(
        "edit.sh",
        "sed -i 's/^eight$/eight in place/' shared.txt\nprintf 'new\\n' > added.txt\n",
    );
    let prompt = format!("edit-script={} answer=done", script.display());
    let in_place = json!({"isolation": "none"});
    let result = codex(&mut server, &repo.path(), &prompt, in_place.clone()).await;
    let changes = &done(&result)["changes"];
    assert_eq!(changes["isolation"], "none");
    let paths: Vec<_> = reported(changes)
        .into_iter()
        .map(|c| (c.path, c.kind))
        .collect();
    assert_eq!(
        paths,
        [
            ("added.txt".into(), "added".into()),
            ("shared.txt".into(), "modified".into())
        ]
    );
    assert!(
        changes["next"]
            .as_str()
            .expect("next")
            .contains("job_revert")
    );
    let reverted = review(&mut server, "job_revert", &job_id(&result)).await;
    assert_eq!(done(&reverted)["written"], true, "{}", all_text(&reverted));
    assert!(repo.read("shared.txt").ends_with("\neight\n"));
    assert!(!repo.path().join("added.txt").exists());

    // Changed since in a way that conflicts: refused, naming the file, nothing touched.
    let result = codex(&mut server, &repo.path(), &prompt, in_place).await;
    repo.write(
        "shared.txt",
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight by the user\n",
    );
    let state = repo.user_state();
    let refused = review(&mut server, "job_revert", &job_id(&result)).await;
    assert!(is_error(&refused), "{}", all_text(&refused));
    assert!(
        all_text(&refused).contains("shared.txt"),
        "{}",
        all_text(&refused)
    );
    assert_eq!(
        repo.user_state(),
        state,
        "a refused revert changed the workspace"
    );
}

/// A background isolated job that appends `partial` to `shared.txt` and then hangs; its id
/// once the edit is made.
async fn hanging_partial_edit(server: &mut Server, repo: &Repo) -> String {
    let marker = repo.record("edited");
    let script = repo.script(
        "partial.sh",
        &format!(
            "printf 'partial\\n' >> shared.txt\n: > '{}'\nexec sleep 3600\n",
            marker.display()
        ),
    );
    let prompt = format!("edit-script={} answer=never", script.display());
    let started = codex(server, &repo.path(), &prompt, json!({"background": true})).await;
    common::wait_until("the agent made its partial edit", || marker.exists()).await;
    job_id(&started)
}

/// `job_diff` shows the partial edit; `job_discard` removes the worktree and the branch.
async fn assert_reviewable_then_discard(server: &mut Server, repo: &Repo, id: &str) {
    let diff = review(server, "job_diff", id).await;
    let text = done(&diff)["diff"].as_str().unwrap_or_default().to_owned();
    assert!(
        text.contains("+partial"),
        "the partial edit is not reviewable:\n{}",
        all_text(&diff)
    );
    let worktree = repo.outside("state/worktrees").join(id);
    assert!(worktree.exists(), "{} is gone", worktree.display());
    let discarded = review(server, "job_discard", id).await;
    assert!(!is_error(&discarded), "{}", all_text(&discarded));
    assert!(
        !worktree.exists(),
        "job_discard left {}",
        worktree.display()
    );
    assert!(!repo.worktrees().contains(id), "{}", repo.worktrees());
    assert!(
        !repo
            .refs()
            .contains(&format!("refs/heads/cli-agent-mcp/{id}")),
        "{}",
        repo.refs()
    );
}

#[tokio::test]
async fn a_cancelled_run_keeps_its_worktree_for_review_and_job_discard_removes_it() {
    let repo = Repo::with_commit("iso-cancel");
    let mut server = started(server_for(&repo)).await;
    let id = hanging_partial_edit(&mut server, &repo).await;
    let cancelled = review(&mut server, "job_cancel", &id).await;
    assert!(!is_error(&cancelled), "{}", all_text(&cancelled));
    let waited = wait_all(&mut server, &[&id]).await;
    assert!(
        all_text(&waited).contains("cancelled"),
        "{}",
        all_text(&waited)
    );
    assert_reviewable_then_discard(&mut server, &repo, &id).await;
}

// A Unix signal (Windows' stops are console events, src/stop_signals.rs).
#[cfg(unix)]
#[tokio::test]
async fn a_server_stopped_by_sigterm_leaves_the_worktree_reviewable_by_the_next() {
    let repo = Repo::with_commit("iso-sigterm");
    let mut server = started(server_for(&repo)).await;
    let id = hanging_partial_edit(&mut server, &repo).await;
    server.signal(Signal::SIGTERM);
    server.wait_exit(Duration::from_secs(60)).await;
    let mut next = started(server_for(&repo)).await;
    assert_reviewable_then_discard(&mut next, &repo, &id).await;
}

/// `cli-agent-mcp jobs ARGS --json` on the repository's job store; its JSON output.
fn jobs_command(repo: &Repo, args: &[&str]) -> (bool, Value) {
    let mut command = common::cam_command();
    repo.git_env(&mut command);
    let output = command
        .env("CAM_STATE_DIR", repo.outside("state"))
        .arg("jobs")
        .args(args)
        .arg("--json")
        .output()
        .expect("run jobs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let value = serde_json::from_str(&stdout).unwrap_or_else(
        |_| json!({"stdout": stdout, "stderr": String::from_utf8_lossy(&output.stderr)}),
    );
    (output.status.success(), value)
}

// A Unix signal; a killed server's runs go with its job objects on Windows (the engine's
// platform::windows tests, under Wine).
#[cfg(unix)]
#[tokio::test]
async fn a_server_killed_by_sigkill_leaves_the_worktree_reviewable_from_a_shell() {
    let repo = Repo::with_commit("iso-sigkill");
    let mut server = started(server_for(&repo).own_process_group()).await;
    let id = hanging_partial_edit(&mut server, &repo).await;
    server.signal(Signal::SIGKILL);
    server.wait_exit(Duration::from_secs(60)).await;
    let worktree = repo.outside("state/worktrees").join(&id);
    common::wait_until("the guardian ends the run", || {
        let (ok, diff) = jobs_command(&repo, &["diff", &id]);
        ok && diff.to_string().contains("+partial")
    })
    .await;
    assert!(worktree.exists());
    let (ok, discarded) = jobs_command(&repo, &["discard", &id]);
    assert!(ok, "{discarded}");
    assert!(
        !worktree.exists(),
        "jobs discard left {}",
        worktree.display()
    );
    assert!(
        !repo
            .refs()
            .contains(&format!("refs/heads/cli-agent-mcp/{id}")),
        "{}",
        repo.refs()
    );
}

#[tokio::test]
async fn jobs_diff_apply_discard_and_revert_from_a_shell_work_on_the_servers_jobs() {
    let repo = Repo::with_commit("iso-shell");
    let mut server = started(server_for(&repo)).await;
    let edit = |n: u32| {
        let script = repo.script(
            &format!("edit{n}.sh"),
            &format!("printf 'file {n}\\n' > f{n}.txt\n"),
        );
        format!("edit-script={} answer=done", script.display())
    };
    let isolated = job_id(&codex(&mut server, &repo.path(), &edit(1), json!({})).await);
    let dropped = job_id(&codex(&mut server, &repo.path(), &edit(2), json!({})).await);
    let in_place = codex(
        &mut server,
        &repo.path(),
        &edit(3),
        json!({"isolation": "none"}),
    )
    .await;
    let in_place = job_id(&in_place);

    let (ok, diff) = jobs_command(&repo, &["diff", &isolated]);
    assert!(ok && diff.to_string().contains("+file 1"), "{diff}");
    let (ok, applied) = jobs_command(&repo, &["apply", &isolated]);
    assert!(ok, "{applied}");
    assert_eq!(repo.read("f1.txt"), "file 1\n");
    let (ok, discarded) = jobs_command(&repo, &["discard", &dropped]);
    assert!(ok, "{discarded}");
    assert!(!repo.outside("state/worktrees").join(&dropped).exists());
    assert!(!repo.path().join("f2.txt").exists());
    let (ok, reverted) = jobs_command(&repo, &["revert", &in_place]);
    assert!(ok, "{reverted}");
    assert!(!repo.path().join("f3.txt").exists());
    let (ok, refused) = jobs_command(&repo, &["apply", &in_place]);
    assert!(!ok, "applying an in-place job is refused: {refused}");
}

#[tokio::test]
async fn isolated_calls_are_refused_over_the_cap_outside_git_and_mid_merge() {
    let repo = Repo::with_commit("iso-refuse");
    let builder = server_for(&repo).env("CAM_MAX_WORKTREES", "1");
    let mut server = started(builder).await;
    let script = repo.script("edit.sh", "printf 'x\\n' > x.txt\n");
    let prompt = format!("edit-script={} answer=done", script.display());
    let first = job_id(&codex(&mut server, &repo.path(), &prompt, json!({})).await);
    let second = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    assert!(is_error(&second), "{}", all_text(&second));
    assert!(all_text(&second).contains(&first), "{}", all_text(&second));
    assert!(
        all_text(&second).contains("CAM_MAX_WORKTREES"),
        "{}",
        all_text(&second)
    );

    let plain = repo.outside("plain");
    std::fs::create_dir_all(&plain).expect("plain dir");
    let outside = codex(&mut server, &plain, "answer=x", json!({})).await;
    assert!(is_error(&outside), "{}", all_text(&outside));
    assert!(
        all_text(&outside).contains("isolation `none`"),
        "{}",
        all_text(&outside)
    );

    review(&mut server, "job_discard", &first).await;
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("shared.txt", "other\n");
    repo.commit_all("other");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("shared.txt", "main\n");
    repo.commit_all("main");
    let mut merge = Command::new("git");
    repo.git_env(&mut merge);
    let merged = merge
        .current_dir(repo.path())
        .args(["merge", "-q", "other"])
        .output();
    assert!(
        !merged.expect("git merge").status.success(),
        "the merge must conflict"
    );
    let state = repo.user_state();
    let mid_merge = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    assert!(is_error(&mid_merge), "{}", all_text(&mid_merge));
    assert!(
        all_text(&mid_merge).contains("git merge --abort"),
        "{}",
        all_text(&mid_merge)
    );
    assert_eq!(repo.user_state(), state);
    assert!(
        !repo.worktrees().contains("cli-agent-mcp"),
        "{}",
        repo.worktrees()
    );
}

#[tokio::test]
async fn several_isolated_runs_starting_at_once_on_one_repository_all_succeed() {
    const RUNS: usize = 6;
    let repo = Repo::with_commit("iso-many");
    let mut server = started(server_for(&repo)).await;
    let mut calls = Vec::new();
    for n in 0..RUNS {
        let script = repo.script(
            &format!("edit{n}.sh"),
            &format!("printf '{n}\\n' > f{n}.txt\n"),
        );
        let arguments = json!({
            "prompt": format!("edit-script={} answer=done", script.display()),
            "workspace": repo.path(),
            "permission": "workspace-write",
            "isolation": "worktree",
        });
        calls.push(server.start_call("codex", arguments, None).await);
    }
    for (n, call) in calls.into_iter().enumerate() {
        let result = server.result(call).await;
        let changes = &done(&result)["changes"];
        let paths: Vec<_> = reported(changes).into_iter().map(|c| c.path).collect();
        assert_eq!(paths, [format!("f{n}.txt")], "{}", all_text(&result));
        assert!(changes["worktree"].is_string(), "{changes}");
    }
    assert_eq!(
        repo.worktrees().matches("cli-agent-mcp/").count(),
        RUNS,
        "{}",
        repo.worktrees()
    );
}

#[tokio::test]
async fn a_failed_or_timed_out_run_keeps_its_worktree_for_review() {
    let repo = Repo::with_commit("iso-failed");
    let mut server = started(server_for(&repo)).await;
    let script = repo.script("edit.sh", "printf 'half\\n' > half.txt\n");
    let prompt = format!("edit-script={} fail=boom", script.display());
    let failed = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    let report = &failed["structuredContent"];
    assert_eq!(report["status"], "failed", "{}", all_text(&failed));
    let worktree = PathBuf::from(report["changes"]["worktree"].as_str().expect("kept"));
    assert!(worktree.join("half.txt").exists());

    let marker = repo.record("edited");
    let script = repo.script(
        "slow.sh",
        &format!(
            "printf 'slow\\n' > slow.txt\n: > '{}'\nexec sleep 3600\n",
            marker.display()
        ),
    );
    let prompt = format!("edit-script={} answer=never", script.display());
    let timed_out = codex(
        &mut server,
        &repo.path(),
        &prompt,
        json!({"timeout_secs": 2}),
    )
    .await;
    assert!(marker.exists(), "the edit was made before the timeout");
    let id = job_id(&timed_out);
    let diff = review(&mut server, "job_diff", &id).await;
    assert!(
        all_text(&diff).contains("+slow"),
        "{}\n{}",
        all_text(&timed_out),
        all_text(&diff)
    );
}

#[tokio::test]
async fn pruning_a_job_removes_its_worktree_branch_and_refs() {
    let repo = Repo::with_commit("iso-prune");
    let refs = repo.refs();
    let mut server = started(server_for(&repo)).await;
    let script = repo.script("edit.sh", "printf 'x\\n' > x.txt\n");
    let prompt = format!("edit-script={} answer=done", script.display());
    let isolated = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    let worktree = PathBuf::from(
        done(&isolated)["changes"]["worktree"]
            .as_str()
            .expect("kept"),
    );
    let in_place = codex(
        &mut server,
        &repo.path(),
        &prompt,
        json!({"isolation": "none"}),
    )
    .await;
    done(&in_place);
    assert!(
        repo.refs().contains("refs/cli-agent-mcp/"),
        "{}",
        repo.refs()
    );

    let (ok, pruned) = jobs_command(&repo, &["prune", "--older-than-days", "0"]);
    assert!(ok, "{pruned}");
    assert_eq!(pruned["pruned"], 2, "{pruned}");
    assert!(!worktree.exists(), "prune left {}", worktree.display());
    assert!(
        !repo.worktrees().contains("cli-agent-mcp"),
        "{}",
        repo.worktrees()
    );
    assert_eq!(repo.refs(), refs, "prune left refs of ours");
}

#[tokio::test]
async fn a_starting_server_forgets_worktrees_deleted_by_hand() {
    let repo = Repo::with_commit("iso-by-hand");
    let mut server = started(server_for(&repo)).await;
    let script = repo.script("edit.sh", "printf 'x\\n' > x.txt\n");
    let prompt = format!("edit-script={} answer=done", script.display());
    let result = codex(&mut server, &repo.path(), &prompt, json!({})).await;
    let worktree = PathBuf::from(done(&result)["changes"]["worktree"].as_str().expect("kept"));
    drop(server);
    std::fs::remove_dir_all(&worktree).expect("delete the worktree by hand");
    assert!(
        repo.worktrees().contains("cli-agent-mcp"),
        "git still records it"
    );
    let _next = started(server_for(&repo)).await;
    common::wait_until("git forgets the deleted worktree", || {
        !repo.worktrees().contains("cli-agent-mcp")
    })
    .await;
}

#[tokio::test]
async fn a_check_reports_facts_from_the_jobs_tree_after_a_configured_setup() {
    let repo = Repo::with_commit("iso-check");
    repo.write(".gitignore", "setup.log\n");
    repo.commit_all("ignore the setup's log");
    let config = repo.outside("config.toml");
    // The commands in the OS's shell: sh, or cmd.exe's batch-file lines on Windows.
    let (setup, check, broken) = if cfg!(windows) {
        let check = "if exist added.txt if exist setup.log echo checked";
        ("echo prepared> setup.log", check, "echo broken\nexit /b 3")
    } else {
        let check = "test -f added.txt && test -f setup.log && echo checked";
        ("echo prepared > setup.log", check, "echo broken; exit 3")
    };
    std::fs::write(
        &config,
        format!(
            "[repositories.{}]\nsetup = {}\n",
            common::toml_path(&repo.path()),
            toml::Value::String(setup.to_owned())
        ),
    )
    .expect("config");
    let mut server = started(server_for(&repo).env("CAM_CONFIG", &config)).await;
    let script = repo.script("add.sh", "echo new > added.txt\n");
    let prompt = format!("edit-script={} answer=done", script.display());

    let passed = codex(&mut server, &repo.path(), &prompt, json!({"check": check})).await;
    let report = done(&passed);
    assert_eq!(report["check"]["passed"], true, "{passed}");
    assert_eq!(report["check"]["output_tail"], "checked");
    assert_eq!(
        report["changes"]["files_changed"], 1,
        "the setup's ignored log is no change"
    );

    let failing = json!({"check": broken});
    let failed = codex(&mut server, &repo.path(), &prompt, failing).await;
    let report = done(&failed);
    assert_eq!(report["check"]["passed"], false);
    assert_eq!(report["check"]["exit_code"], 3);
    assert!(all_text(&failed).contains("FAILED (exit 3)") && all_text(&failed).contains("broken"));

    let read_only = json!({"prompt": "x", "workspace": repo.path(), "check": "true"});
    let refused = server.call("codex", read_only).await;
    assert!(is_error(&refused) && all_text(&refused).contains("workspace-write"));
}
