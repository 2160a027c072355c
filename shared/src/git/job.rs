//! The names a job gets in a repository: its branch and its refs.

use std::fmt;

use super::error::GitError;

/// Where our refs live: never under `refs/heads`, so no branch listing shows them.
const REF_NAMESPACE: &str = "refs/cli-agent-mcp";
/// The prefix of our branches.
pub(super) const BRANCH_PREFIX: &str = "cli-agent-mcp/";

/// A job's key in git: safe as one component of a ref name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JobKey(String);

impl JobKey {
    /// `key`, if it can name refs: 1 to 64 characters of `A-Z a-z 0-9 _ -`, not starting
    /// with `-`.
    pub fn new(key: impl Into<String>) -> Result<Self, GitError> {
        let key = key.into();
        check_component(&key)?;
        Ok(Self(key))
    }

    /// The key as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The branch of the job's worktree, `cli-agent-mcp/<key>`.
    pub fn branch(&self) -> String {
        format!("{BRANCH_PREFIX}{}", self.0)
    }

    /// The job whose branch this is, if it is one of ours.
    pub fn of_branch(branch: &str) -> Option<Self> {
        let key = branch
            .strip_prefix("refs/heads/")
            .unwrap_or(branch)
            .strip_prefix(BRANCH_PREFIX)?;
        Self::new(key).ok()
    }

    pub(crate) fn branch_ref(&self) -> String {
        format!("refs/heads/{}", self.branch())
    }

    /// The ref keeping the job's snapshot `label` reachable.
    pub(crate) fn snapshot_ref(&self, label: &str) -> Result<String, GitError> {
        check_component(label)?;
        Ok(format!("{}{label}", self.refs_prefix()))
    }

    /// Every ref of the job starts with this.
    pub(crate) fn refs_prefix(&self) -> String {
        format!("{REF_NAMESPACE}/{}/", self.0)
    }
}

impl fmt::Display for JobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// 1 to 64 of `[A-Za-z0-9_-]`: valid in a ref name and a branch name, with nothing to quote.
fn check_component(name: &str) -> Result<(), GitError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if (1..=64).contains(&name.len()) && name.chars().all(allowed) && !name.starts_with('-') {
        return Ok(());
    }
    Err(GitError::BadName(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_branch_and_refs() {
        let key = JobKey::new("job_3k7qmz2xw4abcdef").unwrap();
        assert_eq!(key.branch(), "cli-agent-mcp/job_3k7qmz2xw4abcdef");
        assert_eq!(
            key.snapshot_ref("before").unwrap(),
            "refs/cli-agent-mcp/job_3k7qmz2xw4abcdef/before"
        );
        assert_eq!(
            JobKey::of_branch("refs/heads/cli-agent-mcp/job_a"),
            JobKey::new("job_a").ok()
        );
        assert_eq!(JobKey::of_branch("refs/heads/main"), None);
    }

    #[test]
    fn unsafe_names_are_refused() {
        for bad in ["", "a/b", "a..b", "-x", "a b", "x.lock", &"a".repeat(65)] {
            assert!(JobKey::new(bad).is_err(), "{bad:?}");
        }
    }
}
