//! What Linux and macOS share beneath the engine: `getrusage`, the effective user, how an exit
//! status names a signal, and file modes.

mod files;

pub use files::{disk_bytes, file_id, private_dir, symlink};

/// The user and system CPU time of this process so far (`getrusage`, the same on every Unix).
pub fn cpu_time() -> std::time::Duration {
    let mut usage = std::mem::MaybeUninit::<nix::libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid, and the
    // struct was zeroed should it fail.
    let usage = unsafe {
        nix::libc::getrusage(nix::libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: nix::libc::timeval| {
        let micros = u64::try_from(t.tv_usec).unwrap_or(0);
        std::time::Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), 0)
            + std::time::Duration::from_micros(micros)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Whether this process runs as root (some CLIs refuse flags there).
pub fn running_as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The signal that ended a process, if a signal did.
pub fn exit_signal(status: std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}
