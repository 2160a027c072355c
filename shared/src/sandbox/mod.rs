//! Permission levels the kernel enforces: under `read-only` and `workspace-write`, the CLI and
//! every process it starts run under a Landlock ruleset applied between fork and exec. They
//! read anything and write only where the level allows (the workspace, the CLI's own state, a
//! private temporary directory, the device files); `unlimited` has no ruleset. The network is
//! not restricted: the CLIs need their model APIs.

mod kernel;
mod ruleset;
mod run_tmp;
mod writable;

use std::path::{Path, PathBuf};
use std::sync::Once;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use kernel::KernelSupport;
pub use run_tmp::{RunTmp, remove_left_by};
pub use writable::WritePlan;

use crate::request::Permission;

/// Whether runs are confined: `--sandbox`, `CAM_SANDBOX`, the config's `sandbox`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Confine where the kernel supports Landlock; say once where it cannot.
    #[default]
    Auto,
    /// Confine, or refuse to run where the kernel cannot.
    Required,
    /// Never confine: the CLIs' own flags are the only bound.
    Off,
}

impl SandboxMode {
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Required => "required",
            Self::Off => "off",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SandboxMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Self::Auto, Self::Required, Self::Off]
            .into_iter()
            .find(|mode| mode.name() == text)
            .ok_or_else(|| format!("unknown sandbox mode `{text}`: expected auto, required or off"))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the sandbox is required (--sandbox required) and {reason}. Run on such a kernel, \
         or set --sandbox auto (confine where possible) or off"
    )]
    Unavailable { reason: &'static str },
    #[error("could not build the Landlock ruleset: {0}; set --sandbox off to run unconfined")]
    Ruleset(String),
    #[error("could not prepare the sandbox's {what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SandboxError {
    fn ruleset(error: impl std::fmt::Display) -> Self {
        Self::Ruleset(error.to_string())
    }
}

/// Whether a run at `level` is confined under `mode` on a kernel with `support`.
pub fn decide(
    mode: SandboxMode,
    level: Permission,
    support: KernelSupport,
) -> Result<bool, SandboxError> {
    if mode == SandboxMode::Off || level == Permission::Unlimited {
        return Ok(false);
    }
    match (support.missing_reason(), mode) {
        (None, _) => Ok(true),
        (Some(reason), SandboxMode::Required) => Err(SandboxError::Unavailable { reason }),
        (Some(reason), _) => {
            static SAID: Once = Once::new();
            SAID.call_once(|| {
                tracing::warn!("runs are not confined by the kernel: {reason}; each CLI's own flags are the only bound")
            });
            Ok(false)
        }
    }
}

/// One confined run: its ruleset, its private temporary directory, and what it may write.
#[derive(Debug)]
pub struct Confinement {
    ruleset: landlock::RulesetCreated,
    tmp: RunTmp,
    level: Permission,
    writable: Vec<PathBuf>,
}

impl Confinement {
    /// The confinement of a run per `plan`, or none when [`decide`] says so. `marker` names
    /// the run's temporary directory.
    pub fn for_run(
        mode: SandboxMode,
        plan: &WritePlan,
        marker: &str,
    ) -> Result<Option<Self>, SandboxError> {
        if !decide(mode, plan.level, KernelSupport::current())? {
            return Ok(None);
        }
        let tmp = RunTmp::create(marker).map_err(|source| SandboxError::Io {
            what: "temporary directory",
            path: std::env::temp_dir(),
            source,
        })?;
        let writable = plan.paths(tmp.path())?;
        Ok(Some(Self {
            ruleset: ruleset::build(&writable)?,
            tmp,
            level: plan.level,
            writable,
        }))
    }

    /// A ruleset for one process to enforce (each spawn consumes one).
    pub fn ruleset(&self) -> std::io::Result<landlock::RulesetCreated> {
        self.ruleset.try_clone()
    }

    /// The run's `TMPDIR`.
    pub fn tmp(&self) -> &Path {
        self.tmp.path()
    }

    /// The warning of a run whose tools were refused something, naming the sandbox, the level
    /// and where it may write.
    pub fn refusal_warning(&self, refused: &[String]) -> String {
        let places: Vec<_> = self
            .writable
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        format!(
            "the Landlock sandbox ({} level) refused {}: under it the agent writes only to {} \
             (and the device files). Call with a higher permission if the task needs more",
            self.level,
            refused.join("; "),
            places.join(", ")
        )
    }
}

/// How a refused write reads in a tool's output (the C library's words for EACCES, EPERM and
/// EROFS, and Node's error codes).
const REFUSAL_WORDS: &[&str] = &[
    "Permission denied",
    "permission denied",
    "Operation not permitted",
    "Read-only file system",
    "EACCES",
    "EPERM",
    "EROFS",
];

/// Whether a tool's output tells of a refused write.
pub fn tells_of_refusal(output: &str) -> bool {
    REFUSAL_WORDS.iter().any(|words| output.contains(words))
}

/// Confines the calling process: for `pre_exec`, between fork and exec.
pub fn enforce(ruleset: landlock::RulesetCreated) -> std::io::Result<()> {
    ruleset::enforce(ruleset)
}

#[cfg(test)]
mod tests;
