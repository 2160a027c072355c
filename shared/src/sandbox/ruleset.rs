//! The Landlock ruleset of one run: read anywhere, write only beneath the paths given.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr,
};

use super::SandboxError;

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

/// A ruleset that lets its process read and run anything and write only beneath `writable`
/// and [`DEVICES`]. Paths that do not exist are left out. Built before the fork; the child
/// only has to enforce it.
pub fn build(writable: &[PathBuf]) -> Result<RulesetCreated, SandboxError> {
    let all = AccessFs::from_all(ABI_USED);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .and_then(Ruleset::create)
        .map_err(SandboxError::ruleset)?;
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
) -> Result<RulesetCreated, SandboxError> {
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(SandboxError::ruleset)
}

/// Confines the calling process with `ruleset` (and no new privileges): called between fork
/// and exec, so it only makes system calls.
pub fn enforce(ruleset: RulesetCreated) -> std::io::Result<()> {
    ruleset
        .restrict_self()
        .map(drop)
        .map_err(|_| std::io::Error::last_os_error())
}
