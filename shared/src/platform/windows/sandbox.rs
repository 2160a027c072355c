//! The kernel sandbox on Windows: there is none the server can apply to an arbitrary CLI (no
//! Landlock, no Seatbelt; an AppContainer would need ACLs on every allowed directory). The
//! types are empty: no sandbox can be built, so none is ever passed to a spawn.

use std::path::PathBuf;

use crate::platform::support::{BuildError, KernelSupport};

/// The name of this OS's sandbox, for messages.
pub const SANDBOX_NAME: &str = "Windows (none)";

/// A run's sandbox: none can exist on Windows.
#[derive(Debug)]
pub enum Sandbox {}

/// What one spawn consumes: none can exist on Windows.
#[derive(Debug)]
pub enum SpawnSandbox {}

/// Always refused: Windows has no sandbox to build.
pub fn build_sandbox(_: &[PathBuf]) -> Result<Sandbox, BuildError> {
    Err(BuildError {
        sandbox: SANDBOX_NAME,
        reason: KernelSupport::NoWindowsSandbox
            .missing_reason()
            .unwrap_or_default()
            .to_owned(),
    })
}

/// The sandbox of one spawn: unreachable, as no sandbox exists.
pub fn spawn_sandbox(sandbox: &Sandbox) -> std::io::Result<SpawnSandbox> {
    match *sandbox {}
}

/// What Windows offers: nothing.
pub fn probe_sandbox() -> KernelSupport {
    KernelSupport::NoWindowsSandbox
}
