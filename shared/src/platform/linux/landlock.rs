//! Landlock, the Linux sandbox: the kernel's support, asked once, and the ruleset of one run
//! (read anywhere, write only beneath the paths given), enforced between fork and exec.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr,
};

use crate::platform::support::{BuildError, KernelSupport};

/// The newest ABI whose rights we ask for: renames and links across directories (2),
/// truncate (3) and ioctl on devices (5). ABI 9 would also confine connecting to unix
/// sockets, which CLIs use for their own helpers; older kernels get what they have
/// (the crate's best effort).
const ABI_USED: ABI = ABI::V5;

/// Device files every CLI may write and ioctl: the null sinks, terminals and shared memory.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// The name of this OS's sandbox, for messages.
pub const SANDBOX_NAME: &str = "Landlock";

/// What one spawn consumes: a ruleset of its own.
pub type SpawnSandbox = RulesetCreated;

/// A run's sandbox: a ruleset each spawn clones ([`RulesetCreated::try_clone`]).
pub type Sandbox = RulesetCreated;

/// A ruleset that lets its process read and run anything and write only beneath `writable`
/// and `DEVICES`. Paths that do not exist are left out. Built before the fork; the child
/// only has to enforce it.
pub fn build_sandbox(writable: &[PathBuf]) -> Result<RulesetCreated, BuildError> {
    let all = AccessFs::from_all(ABI_USED);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .and_then(Ruleset::create)
        .map_err(ruleset_error)?;
    ruleset = add(ruleset, Path::new("/"), AccessFs::from_read(ABI_USED))?;
    let devices = DEVICES.iter().map(Path::new);
    for path in writable.iter().map(PathBuf::as_path).chain(devices) {
        ruleset = add(ruleset, path, all)?;
    }
    Ok(ruleset)
}

/// Adds `access` beneath `path` (file rights only, for a file); a missing path adds nothing.
fn add(
    ruleset: RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<RulesetCreated, BuildError> {
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(ruleset_error)
}

/// The ruleset for one spawn.
pub fn spawn_sandbox(sandbox: &Sandbox) -> std::io::Result<SpawnSandbox> {
    sandbox.try_clone()
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`: the ABI version, or
/// EOPNOTSUPP (disabled) / ENOSYS (absent). The `landlock` crate keeps this query private.
pub fn probe_sandbox() -> KernelSupport {
    const VERSION: nix::libc::c_uint = 1;
    // SAFETY: a null attribute pointer with size 0 is the documented form of this query.
    let abi = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_landlock_create_ruleset,
            std::ptr::null::<nix::libc::c_void>(),
            0usize,
            VERSION,
        )
    };
    match abi {
        abi if abi > 0 => KernelSupport::Landlock { abi: abi as i32 },
        _ if std::io::Error::last_os_error().raw_os_error() == Some(nix::libc::EOPNOTSUPP) => {
            KernelSupport::LandlockDisabled
        }
        _ => KernelSupport::NoLandlock,
    }
}

/// Confines the calling process with `ruleset` (and no new privileges): called between fork
/// and exec, so it only makes system calls.
pub(super) fn enforce(ruleset: RulesetCreated) -> std::io::Result<()> {
    ruleset
        .restrict_self()
        .map(drop)
        .map_err(|_| std::io::Error::last_os_error())
}

fn ruleset_error(error: impl std::fmt::Display) -> BuildError {
    BuildError {
        sandbox: SANDBOX_NAME,
        reason: error.to_string(),
    }
}
