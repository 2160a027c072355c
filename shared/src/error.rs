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

/// Why a run could not start; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The CLI is neither configured nor found on PATH or where installers put it.
    #[error(
        "the {agent} CLI was not found: looked for `{binary}` {looked}. Install it with \
         `npm install -g {package}`, or set {setting} to its binary"
    )]
    CliNotFound {
        /// The agent's name.
        agent: &'static str,
        /// The executable looked for.
        binary: &'static str,
        /// Where it was looked for.
        looked: Box<Looked>,
        /// The npm package that installs it.
        package: &'static str,
        /// Where its binary can be set.
        setting: String,
    },

    /// The binary configured for the CLI is missing or not executable.
    #[error(
        "the {agent} CLI given by {setting} does not exist or is not executable: {}. Point it \
         at the installed binary (`npm install -g {package}` installs one)",
        .bin.display()
    )]
    ConfiguredCliMissing {
        /// The agent's name.
        agent: &'static str,
        /// The binary configured.
        bin: PathBuf,
        /// The npm package that installs it.
        package: &'static str,
        /// Where it was configured.
        setting: String,
    },

    /// The workspace is not an existing directory.
    #[error("workspace {} is not an existing directory: pass the path of a directory that exists", .0.display())]
    WorkspaceMissing(PathBuf),

    /// `fork` without the session to fork.
    #[error("`fork` branches an existing session: pass its `session_id` too, or leave `fork` out")]
    ForkWithoutSession,

    /// The CLI has no way to do what an argument asks.
    #[error("{agent} cannot take `{argument}`: {reason}")]
    Unsupported {
        /// The agent's name.
        agent: &'static str,
        /// The argument.
        argument: &'static str,
        /// Why, and what to do instead.
        reason: &'static str,
    },

    /// The prompt is empty.
    #[error("the prompt is empty: say what the agent should do")]
    EmptyPrompt,

    /// The CLI cannot give the permission level asked for.
    #[error("{agent} cannot run with permission {permission}: {reason}")]
    PermissionUnavailable {
        /// The agent's name.
        agent: &'static str,
        /// The level asked for.
        permission: Permission,
        /// Why the CLI cannot give it.
        reason: String,
    },

    /// The session is resumed from another workspace than it started in, which the CLI does not
    /// allow.
    #[error(
        "{agent} session {session_id} was started in {}, and {agent} resumes a session only from \
         the workspace it was started in: pass workspace {}",
        .original.display(), .original.display()
    )]
    ResumeFromOtherWorkspace {
        /// The agent's name.
        agent: &'static str,
        /// The session to resume.
        session_id: String,
        /// Where it started.
        original: PathBuf,
    },

    /// The CLI is a batch file (not an npm shim) whose command line `cmd.exe` cannot be
    /// given safely (Windows).
    #[error(
        "{agent} is the batch file {}, which only cmd.exe runs, and {reason}: nothing was \
         started. Install the CLI with npm (its shim is started without cmd.exe), or point \
         {agent}'s binary setting at its .exe",
        .bin.display()
    )]
    UnsafeBatchFile {
        /// The agent's name.
        agent: &'static str,
        /// The batch file.
        bin: PathBuf,
        /// What cmd.exe would misread.
        reason: &'static str,
    },

    /// The CLI's process could not be started.
    #[error("could not start {agent} ({}): {source}", .bin.display())]
    Spawn {
        /// The agent's name.
        agent: &'static str,
        /// The binary.
        bin: PathBuf,
        /// Why it could not start.
        source: std::io::Error,
    },

    /// The run's tree could not be measured or made.
    #[error(transparent)]
    Tree(#[from] crate::isolation::TreeError),

    /// The run could not be confined.
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),

    /// The directory for the CLI's usage file could not be made.
    #[error(
        "could not make a directory for the CLI's usage file in {}: {source}; check that \
         the temp dir (TMPDIR) is writable",
        .dir.display()
    )]
    UsageFile {
        /// Where it was to be made.
        dir: PathBuf,
        /// Why it could not.
        source: std::io::Error,
    },

    /// The output schema's file could not be written.
    #[error(
        "could not write the output schema's file in {}: {source}; check that the temp dir \
         (TMPDIR) is writable",
        .dir.display()
    )]
    SchemaFile {
        /// Where it was to be written.
        dir: PathBuf,
        /// Why it could not.
        source: std::io::Error,
    },
}
