//! Permission levels the kernel enforces: under `read-only` and `workspace-write`, the CLI and
//! every process it starts run in the OS's sandbox (a Landlock ruleset applied between fork
//! and exec on Linux, a Seatbelt profile through `sandbox-exec` on macOS; see
//! [`crate::platform`]). They read anything and write only where the level allows (the
//! workspace, the CLI's own state, a private temporary directory, the device files);
//! `unlimited` is not confined. The network is not restricted: the CLIs need their model APIs.

mod error;
mod run_tmp;
mod writable;

use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Once};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::platform::KernelSupport;
pub use error::SandboxError;
pub use run_tmp::{RunTmp, remove_left_by};
pub use writable::WritePlan;

use crate::platform;
use crate::request::Permission;

/// Whether runs are confined: `--sandbox`, `CAM_SANDBOX`, the config's `sandbox`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Confine where the OS's sandbox works; say once where it cannot.
    #[default]
    Auto,
    /// Confine, or refuse to run where the OS cannot.
    Required,
    /// Never confine: the CLIs' own flags are the only bound.
    Off,
}

impl SandboxMode {
    /// Its name, as `--sandbox` spells it.
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

/// Whether a run at `level` is confined under `mode` on an OS with `support`.
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
                tracing::warn!("runs are not confined by the OS: {reason}; each CLI's own flags are the only bound")
            });
            Ok(false)
        }
    }
}

/// One confined run: its sandbox, its private temporary directory, and what it may write.
#[derive(Debug)]
pub struct Confinement {
    sandbox: platform::Sandbox,
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
            sandbox: platform::build_sandbox(&writable)?,
            tmp,
            level: plan.level,
            writable,
        }))
    }

    /// The sandbox of one spawn (each spawn consumes one).
    pub fn for_spawn(&self) -> std::io::Result<platform::SpawnSandbox> {
        platform::spawn_sandbox(&self.sandbox)
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
            "the {} sandbox ({} level) refused {}: under it the agent writes only to {} \
             (and the device files). Call with a higher permission if the task needs more",
            platform::SANDBOX_NAME,
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

/// [`REFUSAL_WORDS`] as one search: every tool's end is looked at, and one pass over its line
/// costs what a search for one of the words did.
#[allow(
    clippy::expect_used,
    reason = "constant words, compiled by every test of a refusal"
)]
static REFUSAL: LazyLock<regex::Regex> = LazyLock::new(|| {
    let words: Vec<String> = REFUSAL_WORDS
        .iter()
        .map(|words| regex::escape(words))
        .collect();
    // The words are constants: a failure to compile is a bug that every test catches.
    regex::Regex::new(&words.join("|")).expect("the refusal words compile")
});

/// Whether a tool's output tells of a refused write.
pub fn tells_of_refusal(output: &str) -> bool {
    REFUSAL.is_match(output)
}

// They need a kernel sandbox and `sh`: Linux's and macOS's.
#[cfg(all(test, unix))]
mod tests;
