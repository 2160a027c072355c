//! Bringing a job's changes into the caller's workspace (apply), or taking an in-place job's
//! changes out again (revert), by a three-way merge against a fresh snapshot of the
//! workspace. All or nothing: a conflict leaves the workspace as it was; a clean merge writes
//! exactly the files that differ, never touching the user's index.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::changes::Changes;
use super::error::GitError;
use super::invocation::MERGE_TREE_BASE;
use super::job::JobKey;
use super::repo::Repo;
use super::snapshot::Snapshot;
use super::temp_index::TempIndex;

/// Whether to write the merge into the workspace or only find out if it would apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Find out only; the workspace is not touched.
    Check,
    /// Write the workspace's files.
    Write,
}

/// A clean merge: what it changes in the workspace, and whether it was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Merged {
    /// What it changes in the workspace.
    pub changes: Changes,
    /// Whether it was written ([`Mode::Write`]).
    pub written: bool,
    /// The workspace just before, as recorded under the job's refs.
    pub workspace: Snapshot,
}

/// A tree entry the merge changes in the workspace.
struct Step {
    path: String,
    /// The workspace snapshot has this path.
    existed: bool,
    /// `mode oid` to write, or `None` to delete.
    write: Option<(String, String)>,
}

/// Submodule entries: the merge cannot move a submodule's checkout, so they are left alone.
const GITLINK_MODE: &str = "160000";

impl Repo {
    /// Brings the changes from `base` to `after` (a worktree job's) into this workspace as
    /// uncommitted changes; refuses naming the conflicting files.
    pub fn apply(
        &self,
        job: &JobKey,
        base: &Snapshot,
        after: &Snapshot,
        mode: Mode,
    ) -> Result<Merged, GitError> {
        self.three_way(job, "apply", base, after, mode)
    }

    /// Takes the changes from `before` to `after` (an in-place job's) out of this workspace
    /// where its files still hold them; refuses naming the files that changed since.
    pub fn revert(
        &self,
        job: &JobKey,
        before: &Snapshot,
        after: &Snapshot,
        mode: Mode,
    ) -> Result<Merged, GitError> {
        self.three_way(job, "revert", after, before, mode)
    }

    fn three_way(
        &self,
        job: &JobKey,
        operation: &'static str,
        merge_base: &Snapshot,
        theirs: &Snapshot,
        mode: Mode,
    ) -> Result<Merged, GitError> {
        self.ensure_settled()?;
        self.git()
            .require(self.top(), MERGE_TREE_BASE, "applying or reverting a job")?;
        let ours = self.snapshot(job, &format!("{operation}-workspace"))?;
        let merged = self.merge_trees(operation, merge_base, &ours, theirs)?;
        let steps = self.steps(&ours.tree, &merged)?;
        self.refuse_clobbering(operation, &steps)?;
        let changes = self.changes_between_trees(&ours.tree, &merged)?;
        if mode == Mode::Write {
            self.write_steps(&steps, &ours)?;
        }
        Ok(Merged {
            changes,
            written: mode == Mode::Write,
            workspace: ours,
        })
    }

    /// The merged tree, or the conflicting files.
    fn merge_trees(
        &self,
        operation: &'static str,
        base: &Snapshot,
        ours: &Snapshot,
        theirs: &Snapshot,
    ) -> Result<String, GitError> {
        let ran = self
            .run()
            .args([
                "merge-tree",
                "--write-tree",
                "-z",
                "--name-only",
                "--no-messages",
            ])
            .arg(format!("--merge-base={}", base.commit))
            .args([&ours.commit, &theirs.commit])
            .allow(&[0, 1])
            .output()?;
        let text = String::from_utf8_lossy(&ran.stdout);
        let mut fields = text.split('\0').filter(|field| !field.is_empty());
        let tree = fields.next().unwrap_or_default().to_owned();
        if ran.code == 0 {
            return Ok(tree);
        }
        Err(GitError::Conflicts {
            operation,
            files: fields.map(str::to_owned).collect(),
        })
    }

    /// The entries that differ between the workspace's tree and the merged one.
    fn steps(&self, ours: &str, merged: &str) -> Result<Vec<Step>, GitError> {
        let output = self
            .run()
            .args([
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--raw",
                ours,
                merged,
            ])
            .stdout()?;
        let text = String::from_utf8_lossy(&output);
        let mut fields = text.split('\0').filter(|field| !field.is_empty());
        let mut steps = Vec::new();
        while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
            let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            let [old_mode, new_mode, _, new_oid, _] = parts[..] else {
                return Err(GitError::UnexpectedOutput {
                    command: "diff-tree --raw".into(),
                    output: text.into_owned(),
                });
            };
            if new_mode == GITLINK_MODE {
                continue;
            }
            let absent = |mode: &str| mode.bytes().all(|b| b == b'0');
            steps.push(Step {
                path: path.to_owned(),
                existed: !absent(old_mode),
                write: (!absent(new_mode)).then(|| (new_mode.to_owned(), new_oid.to_owned())),
            });
        }
        Ok(steps)
    }

    /// A file the merge would create where the workspace already has something git does not
    /// see (an ignored file, or one in an ignored directory) is a conflict: never overwritten.
    fn refuse_clobbering(&self, operation: &'static str, steps: &[Step]) -> Result<(), GitError> {
        let deleted: HashSet<&str> = steps
            .iter()
            .filter(|step| step.write.is_none())
            .map(|step| step.path.as_str())
            .collect();
        let files: Vec<String> = steps
            .iter()
            .filter(|step| step.write.is_some() && self.clobbers(step, &deleted))
            .map(|step| step.path.clone())
            .collect();
        if files.is_empty() {
            return Ok(());
        }
        Err(GitError::Conflicts { operation, files })
    }

    /// Whether writing `step` would replace something on disk the workspace snapshot lacks:
    /// the path itself, or a file where a parent directory must go.
    fn clobbers(&self, step: &Step, deleted: &HashSet<&str>) -> bool {
        let on_disk = |relative: &str| self.top().join(relative).symlink_metadata().ok();
        if !step.existed && on_disk(&step.path).is_some() {
            return true;
        }
        parents(&step.path).any(|parent| {
            !deleted.contains(parent) && on_disk(parent).is_some_and(|found| !found.is_dir())
        })
    }

    /// Writes the steps; on a failure part-way, puts back every touched path as the
    /// workspace snapshot has it.
    fn write_steps(&self, steps: &[Step], ours: &Snapshot) -> Result<(), GitError> {
        let Err(error) = self.write_unguarded(steps) else {
            return Ok(());
        };
        match self.restore(steps, ours) {
            Ok(()) => Err(error),
            Err(restore) => Err(GitError::RestoreFailed {
                source: Box::new(error),
                restore: Box::new(restore),
                snapshot: ours.commit.clone(),
                paths: steps.iter().map(|step| step.path.clone()).collect(),
            }),
        }
    }

    fn write_unguarded(&self, steps: &[Step]) -> Result<(), GitError> {
        for step in steps.iter().filter(|step| step.write.is_none()) {
            self.remove_file(&step.path)?;
        }
        let entries: Vec<(&str, &str, &str)> = steps
            .iter()
            .filter_map(|step| {
                let (mode, oid) = step.write.as_ref()?;
                Some((mode.as_str(), oid.as_str(), step.path.as_str()))
            })
            .collect();
        self.check_out(&entries)
    }

    /// Writes blobs to their paths through an index of our own.
    fn check_out(&self, entries: &[(&str, &str, &str)]) -> Result<(), GitError> {
        if entries.is_empty() {
            return Ok(());
        }
        let index = TempIndex::empty();
        let info: String = entries
            .iter()
            .map(|(mode, oid, path)| format!("{mode} {oid}\t{path}\0"))
            .collect();
        self.run()
            .index(index.path())
            .args(["update-index", "-z", "--index-info"])
            .stdin(info.into_bytes())
            .output()?;
        let paths: String = entries
            .iter()
            .map(|(_, _, path)| format!("{path}\0"))
            .collect();
        self.run()
            .index(index.path())
            .args(["checkout-index", "--force", "-z", "--stdin"])
            .stdin(paths.into_bytes())
            .output()
            .map(drop)
    }

    /// Puts every path the steps touch back as in the workspace snapshot.
    fn restore(&self, steps: &[Step], ours: &Snapshot) -> Result<(), GitError> {
        let mut entries = Vec::new();
        for step in steps {
            if !step.existed {
                self.remove_file(&step.path)?;
                continue;
            }
            let spec = format!("{}:{}", ours.tree, step.path);
            let found = self
                .run()
                .literal_paths()
                .args(["ls-tree", "-z", &ours.tree, "--", &step.path])
                .text()?;
            let Some((mode, oid)) = parse_ls_tree(&found) else {
                return Err(GitError::UnexpectedOutput {
                    command: format!("ls-tree {spec}"),
                    output: found,
                });
            };
            entries.push((mode, oid, step.path.as_str()));
        }
        let borrowed: Vec<(&str, &str, &str)> = entries
            .iter()
            .map(|(mode, oid, path)| (mode.as_str(), oid.as_str(), *path))
            .collect();
        self.check_out(&borrowed)
    }

    /// Removes a file (gone already is fine) and the directories it leaves empty.
    fn remove_file(&self, path: &str) -> Result<(), GitError> {
        let full = self.top().join(path);
        match std::fs::remove_file(&full) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(GitError::io("could not remove", full, error)),
        }
        let mut dir = full.parent();
        while let Some(parent) = dir.filter(|parent| *parent != self.top()) {
            if std::fs::remove_dir(parent).is_err() {
                break;
            }
            dir = parent.parent();
        }
        Ok(())
    }
}

/// `a/b/c` → `a`, `a/b`.
fn parents(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(|(end, _)| &path[..end])
}

/// `mode type oid\tpath` → (mode, oid).
fn parse_ls_tree(line: &str) -> Option<(String, String)> {
    let (meta, _) = line.split_once('\t')?;
    let mut parts = meta.split(' ');
    let mode = parts.next()?.to_owned();
    let oid = parts.nth(1)?.to_owned();
    Some((mode, oid))
}
