//! Why a run could not be confined.

use std::path::PathBuf;

use crate::platform;

/// Why a run could not be confined; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The sandbox is required and this kernel cannot give it.
    #[error(
        "the sandbox is required (--sandbox required) and {reason}. Run on such a kernel, \
         or set --sandbox auto (confine where possible) or off"
    )]
    Unavailable {
        /// Why not.
        reason: &'static str,
    },
    /// The OS's sandbox could not be built.
    #[error(transparent)]
    Build(#[from] platform::BuildError),
    /// A file the sandbox needs could not be prepared.
    #[error("could not prepare the sandbox's {what} {}: {source}", .path.display())]
    Io {
        /// What was being prepared.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
}
