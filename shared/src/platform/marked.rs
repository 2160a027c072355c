//! What a pass over the processes that carry a run's marker reports, on every OS.

/// What one pass of [`super::kill_runs`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MarkedPass {
    /// Processes it killed.
    pub killed: usize,
    /// Processes whose environment read empty: perhaps marked, in the middle of an exec.
    pub unsure: usize,
}

/// How long a process whose environment reads empty is asked again: long enough for any
/// exec to finish (a process in the middle of one shows no environment for a moment); a
/// process that really has no environment cannot be told apart.
pub const UNSURE_FOR: std::time::Duration = std::time::Duration::from_secs(1);
