//! What a caller asks for: one headless run of one agent CLI.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The coding-agent CLIs this engine knows how to drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    Codex,
    Claude,
    Gemini,
    Opencode,
}

impl AgentKind {
    pub const ALL: [AgentKind; 4] = [Self::Codex, Self::Claude, Self::Gemini, Self::Opencode];

    /// The name used on the command line, in tool names and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Codex => "codex",
            Self::Claude => "claude",
            Self::Gemini => "gemini",
            Self::Opencode => "opencode",
        }
    }

    /// The npm package that installs the CLI.
    pub fn npm_package(self) -> &'static str {
        match self {
            Self::Codex => "@openai/codex",
            Self::Claude => "@anthropic-ai/claude-code",
            Self::Gemini => "@google/gemini-cli",
            Self::Opencode => "opencode-ai",
        }
    }

    /// The CLI version whose output the parsers and tests were last checked against
    /// (`tests/real/package.json` pins the same; `doctor` warns about others).
    pub fn verified_version(self) -> &'static str {
        match self {
            Self::Codex => "0.169.0",
            Self::Claude => "2.1.197",
            Self::Gemini => "0.61.0",
            Self::Opencode => "1.18.33",
        }
    }

    /// The environment variable that points at the CLI's binary.
    pub fn bin_env_var(self) -> &'static str {
        match self {
            Self::Codex => "CAM_CODEX_BIN",
            Self::Claude => "CAM_CLAUDE_BIN",
            Self::Gemini => "CAM_GEMINI_BIN",
            Self::Opencode => "CAM_OPENCODE_BIN",
        }
    }
}

impl std::fmt::Display for AgentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for AgentKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|agent| agent.name() == s)
            .ok_or_else(|| {
                format!("unknown agent `{s}`: expected one of codex, claude, gemini, opencode")
            })
    }
}

/// How much the agent may do to the machine. Each level maps to the CLI's own mechanism;
/// a level a CLI cannot give is refused, never silently raised. Ordered by what they allow.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Permission {
    /// Read files and run read-only commands; never write.
    #[default]
    ReadOnly,
    /// Edit files inside the workspace and run commands there.
    WorkspaceWrite,
    /// No restrictions: any command, any file.
    Unlimited,
}

impl Permission {
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::Unlimited => "unlimited",
        }
    }
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Permission {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::ReadOnly, Self::WorkspaceWrite, Self::Unlimited]
            .into_iter()
            .find(|level| level.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown permission `{s}`: expected read-only, workspace-write or unlimited"
                )
            })
    }
}

/// One run of one agent.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub agent: AgentKind,
    pub prompt: String,
    /// The CLI's working directory; must be an existing directory.
    pub workspace: PathBuf,
    pub permission: Permission,
    pub model: Option<String>,
    /// Resume this session of the CLI instead of starting a new one.
    pub session_id: Option<String>,
    /// Overrides the engine's default total timeout.
    pub timeout: Option<Duration>,
    /// Extra instructions appended to the agent's system prompt (claude only).
    pub append_system_prompt: Option<String>,
}

impl RunRequest {
    pub fn new(agent: AgentKind, prompt: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        Self {
            agent,
            prompt: prompt.into(),
            workspace: workspace.into(),
            permission: Permission::default(),
            model: None,
            session_id: None,
            timeout: None,
            append_system_prompt: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verified_versions_are_the_ones_the_real_cli_tests_install() {
        let pins: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/real/package.json")).unwrap();
        for agent in AgentKind::ALL {
            assert_eq!(
                pins["dependencies"][agent.npm_package()],
                agent.verified_version(),
                "{agent}"
            );
        }
    }
}
