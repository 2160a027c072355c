//! Seatbelt, the macOS sandbox: a profile per run (see [`crate::platform::seatbelt`]), applied
//! by starting the CLI through `/usr/bin/sandbox-exec`, whose fixed path no PATH can swap.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::platform::seatbelt::{SANDBOX_EXEC, SeatbeltProfile, canonical};
use crate::platform::support::{BuildError, KernelSupport};

/// The name of this OS's sandbox, for messages.
pub const SANDBOX_NAME: &str = "Seatbelt";

/// A run's sandbox: its profile and writable roots.
pub type Sandbox = SeatbeltProfile;

/// What one spawn takes: the same profile.
pub type SpawnSandbox = SeatbeltProfile;

/// Whether `sandbox-exec` is there to confine a run.
pub fn probe_sandbox() -> KernelSupport {
    match Path::new(SANDBOX_EXEC).is_file() {
        true => KernelSupport::Seatbelt,
        false => KernelSupport::NoSeatbelt,
    }
}

/// The profile that lets a run read anything and write only beneath `writable` (and the
/// device files). Seatbelt matches resolved paths (`/var` is `/private/var`), so each root
/// is made canonical; one that cannot be is refused rather than silently granting nothing.
pub fn build_sandbox(writable: &[PathBuf]) -> Result<Sandbox, BuildError> {
    let roots = writable
        .iter()
        .map(|path| {
            canonical(path).map_err(|error| BuildError {
                sandbox: SANDBOX_NAME,
                reason: format!(
                    "cannot resolve the writable path {}: {error}",
                    path.display()
                ),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SeatbeltProfile::new(&roots))
}

/// The profile for one spawn.
pub fn spawn_sandbox(sandbox: &Sandbox) -> std::io::Result<SpawnSandbox> {
    Ok(sandbox.clone())
}

/// The command line as it runs: under `sandbox-exec` with the run's profile when confined.
pub fn sandboxed_argv(
    program: &OsStr,
    args: &[String],
    sandbox: Option<&SpawnSandbox>,
) -> (OsString, Vec<OsString>) {
    match sandbox {
        Some(profile) => {
            let (program, args) = profile.wrap(program, args);
            (program.into_os_string(), args)
        }
        None => (
            program.to_owned(),
            args.iter().map(OsString::from).collect(),
        ),
    }
}

/// Nothing to do between fork and exec: the sandbox is in the command line, and macOS has no
/// parent-death signal (the guardian covers a server that dies).
pub fn before_exec(_: &mut tokio::process::Command, _: Option<SpawnSandbox>) {}
