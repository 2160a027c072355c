//! Finding a CLI's binary: an explicit path first, else PATH. Found before anything starts,
//! so a missing CLI is refused with the setting that fixes it rather than failing a spawn.

use std::path::{Path, PathBuf};

use crate::agent::Agent;
use crate::config::EngineConfig;
use crate::error::SetupError;

/// The binary to run for `agent`.
pub fn find_cli(agent: Agent, config: &EngineConfig) -> Result<PathBuf, SetupError> {
    // A custom agent without a binary of its own runs its base CLI's.
    let configured = config
        .binaries
        .get(agent.name())
        .or_else(|| config.binaries.get(agent.cli().name()));
    match configured {
        Some(bin) => explicit(agent, bin),
        None => on_path(agent),
    }
}

fn explicit(agent: Agent, bin: &Path) -> Result<PathBuf, SetupError> {
    // A bare name is looked up on PATH; anything with a slash must exist as given.
    let found = if bin.components().count() == 1 {
        which::which(bin).ok()
    } else {
        is_executable(bin).then(|| bin.to_path_buf())
    };
    found.ok_or_else(|| SetupError::ConfiguredCliMissing {
        agent,
        bin: bin.to_path_buf(),
        package: agent.cli().npm_package(),
        setting: agent.bin_setting(),
    })
}

fn on_path(agent: Agent) -> Result<PathBuf, SetupError> {
    let binary = agent.cli().binary();
    which::which(binary).map_err(|_| SetupError::CliNotFound {
        agent,
        binary,
        path: std::env::var("PATH").unwrap_or_default(),
        package: agent.cli().npm_package(),
        setting: agent.bin_setting(),
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
