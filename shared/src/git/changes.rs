//! What changed between two snapshots, by content: each file with its kind and line counts.

use std::collections::HashMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::GitError;
use super::repo::{Repo, not_tracked_reason};
use super::snapshot::Snapshot;

/// The files a run changed, with totals; or, outside git, why there is nothing to tell.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Changes {
    /// The files changed, each with its lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
    /// How many files changed.
    pub files_changed: u64,
    /// Lines added over every file.
    pub lines_added: u64,
    /// Lines removed over every file.
    pub lines_removed: u64,
    /// Set when the workspace is not in a git repository, saying so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_tracked: Option<String>,
}

/// One file's change. Paths are relative to the repository's top level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChange {
    /// The file's path (after a rename).
    pub path: String,
    /// The path before a rename.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// What happened to it.
    pub change: ChangeKind,
    /// Lines added.
    pub lines_added: u64,
    /// Lines removed.
    pub lines_removed: u64,
    /// Binary content: no line counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

/// What happened to a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It is new.
    Added,
    /// Its content or mode changed.
    Modified,
    /// It is gone.
    Deleted,
    /// It was moved, perhaps changed too.
    Renamed,
}

impl Changes {
    /// No changes to tell, for this reason.
    pub fn not_tracked(reason: impl Into<String>) -> Self {
        Self {
            not_tracked: Some(reason.into()),
            ..Self::default()
        }
    }

    /// No changes to tell because `dir` is in no git repository.
    pub fn outside_repository(dir: &Path) -> Self {
        Self::not_tracked(not_tracked_reason(dir))
    }

    fn from_files(files: Vec<FileChange>) -> Self {
        Self {
            files_changed: files.len() as u64,
            lines_added: files.iter().map(|file| file.lines_added).sum(),
            lines_removed: files.iter().map(|file| file.lines_removed).sum(),
            files,
            not_tracked: None,
        }
    }

    /// Whether no file changed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

impl Repo {
    /// The changes from `before` to `after`, compared by content with rename detection, so
    /// commits made in between do not hide anything.
    pub fn changes(&self, before: &Snapshot, after: &Snapshot) -> Result<Changes, GitError> {
        self.changes_between_trees(&before.tree, &after.tree)
    }

    pub(crate) fn changes_between_trees(
        &self,
        before: &str,
        after: &str,
    ) -> Result<Changes, GitError> {
        let output = self
            .run()
            .args([
                "diff-tree",
                "-r",
                "-z",
                "--find-renames",
                "--raw",
                "--numstat",
            ])
            .args([before, after])
            .stdout()?;
        parse_raw_numstat(&output).map(Changes::from_files)
    }
}

/// Parses `diff-tree -z --raw --numstat`: all raw records, then all numstat records.
fn parse_raw_numstat(output: &[u8]) -> Result<Vec<FileChange>, GitError> {
    let text = String::from_utf8_lossy(output);
    let mut fields = text.split('\0').filter(|field| !field.is_empty());
    let mut raw = Vec::new();
    let mut counts = HashMap::new();
    while let Some(field) = fields.next() {
        let mut next = || fields.next().map(str::to_owned).ok_or_else(|| bad(&text));
        if let Some(meta) = field.strip_prefix(':') {
            let status = meta.rsplit(' ').next().unwrap_or_default();
            let first = next()?;
            let renamed = status.starts_with('R') || status.starts_with('C');
            let (old, path) = if renamed {
                (Some(first), next()?)
            } else {
                (None, first)
            };
            raw.push((status.chars().next().unwrap_or('M'), old, path));
        } else {
            let mut parts = field.splitn(3, '\t');
            let (added, removed) = (parts.next().unwrap_or("-"), parts.next().unwrap_or("-"));
            let path = match parts.next() {
                Some(path) if !path.is_empty() => path.to_owned(),
                _ => {
                    next()?;
                    next()?
                }
            };
            counts.insert(path, (added.parse().ok(), removed.parse().ok()));
        }
    }
    Ok(raw
        .into_iter()
        .map(|(status, old_path, path)| {
            let (added, removed) = counts.get(&path).copied().unwrap_or((None, None));
            FileChange {
                change: kind(status),
                binary: added.is_none() && removed.is_none(),
                lines_added: added.unwrap_or(0),
                lines_removed: removed.unwrap_or(0),
                old_path,
                path,
            }
        })
        .collect())
}

fn kind(status: char) -> ChangeKind {
    match status {
        'A' => ChangeKind::Added,
        'D' => ChangeKind::Deleted,
        'R' | 'C' => ChangeKind::Renamed,
        _ => ChangeKind::Modified,
    }
}

fn bad(output: &str) -> GitError {
    GitError::UnexpectedOutput {
        command: "diff-tree --raw --numstat".into(),
        output: output.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_numstat_records_combine() {
        let output = b":100644 100644 aa bb M\0src/a.rs\0:000000 100644 00 cc A\0new.txt\0\
                       :100644 100644 dd ee R087\0old.rs\0moved.rs\0:100644 000000 ff 00 D\0gone.bin\0\
                       3\t1\tsrc/a.rs\0\
                       2\t0\tnew.txt\0\
                       1\t1\t\0old.rs\0moved.rs\0\
                       -\t-\tgone.bin\0";
        let changes = Changes::from_files(parse_raw_numstat(output).unwrap());
        assert_eq!(changes.files_changed, 4);
        assert_eq!((changes.lines_added, changes.lines_removed), (6, 2));
        let moved = &changes.files[2];
        assert_eq!(moved.change, ChangeKind::Renamed);
        assert_eq!(moved.old_path.as_deref(), Some("old.rs"));
        assert_eq!((moved.path.as_str(), moved.lines_added), ("moved.rs", 1));
        assert!(changes.files[3].binary);
        assert_eq!(changes.files[3].change, ChangeKind::Deleted);
    }

    #[test]
    fn lean_json_leaves_out_empty_fields() {
        let json = serde_json::to_value(Changes::not_tracked("not tracked: /x")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"files_changed": 0, "lines_added": 0, "lines_removed": 0,
                               "not_tracked": "not tracked: /x"})
        );
    }
}
