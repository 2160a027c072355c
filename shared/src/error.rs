//! Errors that stop a run before its CLI starts. Each message says what to do.

use std::path::PathBuf;

use crate::request::Permission;

/// Where a CLI was looked for: "on PATH (/usr/bin:/bin) and in the login shell's PATH,
/// ~/.nvm/versions/node/*/bin, …".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Looked {
    /// The server's PATH.
    pub path: String,
    /// The other places, as a person would write them (`~/.local/bin`).
    pub places: Vec<String>,
}

impl std::fmt::Display for Looked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "on PATH ({})", self.path)?;
        if !self.places.is_empty() {
            write!(f, " and in {}", self.places.join(", "))?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(
        "the {agent} CLI was not found: looked for `{binary}` {looked}. Install it with \
         `npm install -g {package}`, or set {setting} to its binary"
    )]
    CliNotFound {
        /// The agent's name.
        agent: &'static str,
        binary: &'static str,
        looked: Box<Looked>,
        package: &'static str,
        setting: String,
    },

    #[error(
        "the {agent} CLI given by {setting} does not exist or is not executable: {}. Point it \
         at the installed binary (`npm install -g {package}` installs one)",
        .bin.display()
    )]
    ConfiguredCliMissing {
        /// The agent's name.
        agent: &'static str,
        bin: PathBuf,
        package: &'static str,
        setting: String,
    },

    #[error("workspace {} is not an existing directory: pass the path of a directory that exists", .0.display())]
    WorkspaceMissing(PathBuf),

    #[error("the prompt is empty: say what the agent should do")]
    EmptyPrompt,

    #[error("{agent} cannot run with permission {permission}: {reason}")]
    PermissionUnavailable {
        /// The agent's name.
        agent: &'static str,
        permission: Permission,
        reason: String,
    },

    #[error(
        "{agent} session {session_id} was started in {}, and {agent} resumes a session only from \
         the workspace it was started in: pass workspace {}",
        .original.display(), .original.display()
    )]
    ResumeFromOtherWorkspace {
        /// The agent's name.
        agent: &'static str,
        session_id: String,
        original: PathBuf,
    },

    #[error("could not start {agent} ({}): {source}", .bin.display())]
    Spawn {
        /// The agent's name.
        agent: &'static str,
        bin: PathBuf,
        source: std::io::Error,
    },

    #[error(transparent)]
    Tree(#[from] crate::isolation::TreeError),

    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),

    #[error(
        "could not make a directory for the CLI's usage file in {}: {source}; check that \
         the temp dir (TMPDIR) is writable",
        .dir.display()
    )]
    UsageFile {
        dir: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "could not write the output schema's file in {}: {source}; check that the temp dir \
         (TMPDIR) is writable",
        .dir.display()
    )]
    SchemaFile {
        dir: PathBuf,
        source: std::io::Error,
    },
}
