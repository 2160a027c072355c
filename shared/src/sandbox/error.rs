//! Why a run could not be confined.

use std::path::PathBuf;

use crate::platform;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the sandbox is required (--sandbox required) and {reason}. Run on such a kernel, \
         or set --sandbox auto (confine where possible) or off"
    )]
    Unavailable { reason: &'static str },
    #[error(transparent)]
    Build(#[from] platform::BuildError),
    #[error("could not prepare the sandbox's {what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}
