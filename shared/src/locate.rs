//! Finding a CLI's binary: an explicit path first, else PATH.

use std::path::{Path, PathBuf};

use crate::config::EngineConfig;
use crate::error::SetupError;
use crate::request::AgentKind;

/// The binary to run for `agent`.
pub fn find_cli(agent: AgentKind, config: &EngineConfig) -> Result<PathBuf, SetupError> {
    match config.binaries.get(&agent) {
        Some(bin) => explicit(agent, bin),
        None => on_path(agent),
    }
}

fn explicit(agent: AgentKind, bin: &Path) -> Result<PathBuf, SetupError> {
    // A bare name is looked up on PATH; anything with a slash must exist as given.
    let found = if bin.components().count() == 1 {
        which::which(bin).ok()
    } else {
        is_executable(bin).then(|| bin.to_path_buf())
    };
    found.ok_or_else(|| SetupError::ConfiguredCliMissing {
        agent,
        bin: bin.to_path_buf(),
        package: agent.npm_package(),
        env_var: agent.bin_env_var(),
    })
}

fn on_path(agent: AgentKind) -> Result<PathBuf, SetupError> {
    which::which(agent.name()).map_err(|_| SetupError::CliNotFound {
        agent,
        path: std::env::var("PATH").unwrap_or_default(),
        package: agent.npm_package(),
        env_var: agent.bin_env_var(),
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
