//! A run's changes as results report them: the totals and the first files, and for a worktree
//! kept for review, where it is and the calls that review, apply or discard it; what an apply,
//! a revert or a discard did, in words and as JSON. Below the two that report them: the MCP
//! tools' results (`mcp`) and the `jobs` command (`commands::jobs`).

use std::path::PathBuf;

use cli_agent_engine::Isolation;
use cli_agent_engine::git::{ChangeKind, Changes, FileChange, Merged};
use cli_agent_engine::isolation::TreeOutcome;
use schemars::JsonSchema;
use serde::Serialize;

use crate::jobs::review::Discarded;
use crate::jobs::store::JobId;

/// How many files a result lists; `job_diff` has them all.
const LISTED_FILES: usize = 20;

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ChangesReport {
    pub isolation: Isolation,
    #[serde(flatten)]
    pub changes: Changes,
    /// Files changed beyond those listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more_files: Option<u64>,
    /// The worktree kept for review, and its branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The calls to make next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

impl ChangesReport {
    pub fn of(id: &JobId, outcome: &TreeOutcome) -> Self {
        let mut changes = outcome.changes.clone();
        let more = changes.files.len().saturating_sub(LISTED_FILES);
        changes.files.truncate(LISTED_FILES);
        let tree = outcome.tree.as_ref();
        let kept = tree
            .and_then(|tree| tree.worktree.as_ref())
            .filter(|_| outcome.kept);
        Self {
            isolation: tree.map_or(Isolation::None, |tree| tree.isolation),
            changes,
            more_files: (more > 0).then_some(more as u64),
            worktree: kept.map(|worktree| worktree.path.clone()),
            branch: kept.map(|worktree| worktree.branch.clone()),
            next: next_calls(id, outcome),
        }
    }

    /// One paragraph for clients that read text.
    pub fn text(&self) -> String {
        if let Some(reason) = &self.changes.not_tracked {
            return format!("changes: {reason}");
        }
        let mut text = match self.changes.files_changed {
            0 => "changes: none".to_owned(),
            n => format!(
                "changes: {n} file{} (+{} -{}): {}{}",
                if n == 1 { "" } else { "s" },
                self.changes.lines_added,
                self.changes.lines_removed,
                describe_files(&self.changes),
                self.more_files
                    .map_or(String::new(), |n| format!(", and {n} more")),
            ),
        };
        if let (Some(worktree), Some(branch)) = (&self.worktree, &self.branch) {
            text.push_str(&format!(
                "\nworktree: {} (branch {branch})",
                worktree.display()
            ));
        }
        if let Some(next) = &self.next {
            text.push_str(&format!("\nnext: {next}"));
        }
        text
    }
}

/// The files of `changes`, each with what happened to it, comma-separated.
pub fn describe_files(changes: &Changes) -> String {
    let files: Vec<_> = changes.files.iter().map(describe).collect();
    files.join(", ")
}

fn describe(file: &FileChange) -> String {
    let counts = if file.binary {
        "binary".to_owned()
    } else {
        format!("+{} -{}", file.lines_added, file.lines_removed)
    };
    match (file.change, &file.old_path) {
        (ChangeKind::Renamed, Some(old)) => format!("{old} → {} ({counts})", file.path),
        (ChangeKind::Added, _) => format!("{} (new, {counts})", file.path),
        (ChangeKind::Deleted, _) => format!("{} (deleted)", file.path),
        _ => format!("{} ({counts})", file.path),
    }
}

/// What a caller does next with a run's changes. A kept worktree is named even when its
/// files are as they started: the agent's commits on its branch are work to review.
fn next_calls(id: &JobId, outcome: &TreeOutcome) -> Option<String> {
    let args = format!("{{\"job_id\": \"{id}\"}}");
    let in_place = outcome.tree.as_ref()?.worktree.is_none();
    if outcome.kept {
        Some(format!(
            "review with job_diff {args}, then job_apply {args} or job_discard {args}"
        ))
    } else if in_place && !outcome.changes.is_empty() {
        Some(format!(
            "job_diff {args} shows them; job_revert {args} takes them out again"
        ))
    } else {
        None
    }
}

/// Two jobs that changed some of the same files.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Overlap {
    pub jobs: [JobId; 2],
    pub files: Vec<String>,
}

impl Overlap {
    pub fn text(&self) -> String {
        let [first, second] = &self.jobs;
        format!(
            "jobs {first} and {second} both changed {}: applying both may conflict; apply one, \
             then job_apply {{\"job_id\": \"…\", \"check\": true}} tells whether the other still fits",
            self.files.join(", ")
        )
    }
}

/// The pairs of jobs whose reported changes share files.
pub fn overlaps<'a>(
    jobs: impl IntoIterator<Item = (&'a JobId, &'a ChangesReport)>,
) -> Vec<Overlap> {
    let jobs: Vec<_> = jobs.into_iter().collect();
    let mut found = Vec::new();
    for (at, (first, mine)) in jobs.iter().enumerate() {
        for (second, theirs) in &jobs[at + 1..] {
            let files: Vec<String> = mine
                .changes
                .files
                .iter()
                .filter(|file| {
                    theirs
                        .changes
                        .files
                        .iter()
                        .any(|other| other.path == file.path)
                })
                .map(|file| file.path.clone())
                .collect();
            if !files.is_empty() {
                found.push(Overlap {
                    jobs: [(*first).clone(), (*second).clone()],
                    files,
                });
            }
        }
    }
    found
}

/// What an apply or revert did (or, checked, would do) to the workspace, in words.
pub fn merged_text(action: &str, id: &JobId, merged: &Merged) -> String {
    let files = describe_files(&merged.changes);
    match (merged.written, merged.changes.is_empty()) {
        (_, true) => format!("{action} of job {id}: nothing to change, the workspace has it all"),
        (true, false) => format!("{action} of job {id} done, in the workspace: {files}"),
        (false, false) => format!("{action} of job {id} would go through cleanly: {files}"),
    }
}

/// The same as JSON.
pub fn merged_json(action: &str, id: &JobId, merged: &Merged) -> serde_json::Value {
    serde_json::json!({
        "job_id": id,
        "action": action,
        "written": merged.written,
        "changes": merged.changes,
    })
}

/// What discarding a job removed, in words.
pub fn discarded_text(discarded: &Discarded) -> String {
    let removed = discarded
        .worktree
        .as_ref()
        .map_or("its worktree was gone already".to_owned(), |path| {
            format!("removed its worktree {}", path.display())
        });
    format!(
        "discarded job {}: {removed} and its branch {}",
        discarded.job_id, discarded.branch
    )
}
