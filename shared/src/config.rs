//! Engine-wide settings: where the CLIs are and how long runs may take. One value that the
//! app resolves from its flags, variables and config file and hands over, so the engine
//! parses none of them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::environment::EnvPattern;
use crate::request::{Permission, RunRequest};
use crate::sandbox::SandboxMode;

/// Settings shared by every run. `Default` gives the documented defaults.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Explicit binaries by agent name (`CAM_<AGENT>_BIN`, `--<agent>-bin`, the config
    /// file); others are found on PATH, else where installers put them (see
    /// [`crate::locate`]). A custom agent without one uses its base CLI's.
    pub binaries: HashMap<String, PathBuf>,
    /// Ask the login shell for its PATH when a CLI is not on ours (`--no-login-shell` and
    /// `CAM_NO_LOGIN_SHELL` turn it off).
    pub login_shell: bool,
    /// A run's total time limit unless its request gives one.
    pub total_timeout: Duration,
    /// Longest time without a parsed event before a run is ended; `None` disables it.
    pub idle_timeout: Option<Duration>,
    /// Time between the polite signal (SIGINT to the group) and SIGKILL.
    pub grace: Duration,
    /// Time a CLI may linger after its turn ended before it is torn down.
    pub exit_grace: Duration,
    /// Time to drain stdout after the CLI exited.
    pub drain_grace: Duration,
    /// Longest stdout line accepted; a longer one fails the run.
    pub max_line_bytes: usize,
    /// How much of the end of stderr is kept.
    pub stderr_tail_bytes: usize,
    /// Variables every CLI receives besides its own (`CAM_PASS_ENV`).
    pub pass_env: Vec<EnvPattern>,
    /// Commands of the user's own per repository: a run whose workspace is inside one gets
    /// its `setup` and, unless it names one, its `check` (the deepest match wins).
    pub repositories: Vec<RepositoryCommands>,
    /// Whether runs are confined by the kernel (see [`crate::sandbox`]).
    pub sandbox: SandboxMode,
    /// For tests only: every CLI's command line is built at this level whatever the run's,
    /// so a test shows that the sandbox alone bounds the run (`CAM_TEST_CLI_PERMISSION`).
    pub test_cli_permission: Option<Permission>,
}

/// `[repositories."<path>"]` of the config file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepositoryCommands {
    /// The repository's directory: a workspace at or under it gets its commands.
    pub path: PathBuf,
    /// Prepares an isolated run's new worktree before the agent starts.
    pub setup: Option<String>,
    /// Run in the run's tree after the agent ends.
    pub check: Option<String>,
}

impl EngineConfig {
    /// The commands configured for the repository holding `workspace`.
    pub fn repository_commands(&self, workspace: &Path) -> Option<&RepositoryCommands> {
        self.repositories
            .iter()
            .filter(|repo| workspace.starts_with(&repo.path))
            .max_by_key(|repo| repo.path.components().count())
    }

    /// How long `request`'s run, and each command of the caller's around it, may take.
    pub fn total_limit(&self, request: &RunRequest) -> Duration {
        request.timeout.unwrap_or(self.total_timeout)
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            binaries: HashMap::new(),
            login_shell: true,
            total_timeout: Duration::from_secs(30 * 60),
            idle_timeout: Some(Duration::from_secs(10 * 60)),
            grace: Duration::from_secs(3),
            exit_grace: Duration::from_secs(2),
            drain_grace: Duration::from_secs(2),
            max_line_bytes: 64 * 1024 * 1024,
            stderr_tail_bytes: 64 * 1024,
            pass_env: Vec::new(),
            repositories: Vec::new(),
            sandbox: SandboxMode::Auto,
            test_cli_permission: None,
        }
    }
}
