//! What a CLI's process does between fork and exec on Linux: a wide stdout pipe, the
//! sandbox's ruleset, and death with its parent.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd};

use nix::fcntl::{FcntlArg, fcntl};
use nix::unistd::Pid;

use super::landlock::{SpawnSandbox, enforce};

/// The command line as it runs: Landlock confines the process itself, so it is unchanged.
pub fn sandboxed_argv(
    program: &OsStr,
    args: &[String],
    _: Option<&SpawnSandbox>,
) -> (OsString, Vec<OsString>) {
    (
        program.to_owned(),
        args.iter().map(OsString::from).collect(),
    )
}

/// Set the child up between fork and exec: a wide stdout pipe, the sandbox's ruleset, and
/// death with its parent.
pub fn before_exec(cmd: &mut tokio::process::Command, sandbox: Option<SpawnSandbox>) {
    let parent = Pid::this();
    let mut sandbox = sandbox;
    // SAFETY: the closure only calls async-signal-safe functions (prctl, getppid, kill, fcntl,
    // and Landlock's system calls on a ruleset built before the fork).
    unsafe {
        cmd.pre_exec(move || {
            widen_stdout();
            if let Some(ruleset) = sandbox.take() {
                enforce(ruleset)?;
            }
            die_with_parent(parent)
        })
    };
}

/// The most a CLI's stdout pipe holds: `/proc/sys/fs/pipe-max-size` by default.
pub(super) const STDOUT_PIPE_BYTES: nix::libc::c_int = 1 << 20;

/// Give the CLI's stdout a pipe of [`STDOUT_PIPE_BYTES`] before it writes anything. claude
/// exits without waiting for its last writes to drain: with a 64 KiB pipe and a reader a
/// moment behind, the end of a long answer was cut (the real-host tests saw it in 1 run of 6
/// at 1 MiB). Failing (a user over the pipe quota) leaves the default, as before.
fn widen_stdout() {
    // SAFETY: fcntl on fd 1 with an integer argument; the result is deliberately ignored.
    unsafe {
        nix::libc::fcntl(1, nix::libc::F_SETPIPE_SZ, STDOUT_PIPE_BYTES);
    }
}

/// Ask the kernel to SIGTERM the CLI if the thread that forked it dies, and close the race in
/// which the parent died before the request was made.
fn die_with_parent(parent: Pid) -> std::io::Result<()> {
    // SAFETY: plain syscalls with valid arguments.
    unsafe {
        if nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, nix::libc::SIGTERM) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if nix::libc::getppid() != parent.as_raw() {
            nix::libc::kill(nix::libc::getpid(), nix::libc::SIGTERM);
        }
    }
    Ok(())
}

/// Grow the pipe `fd` reads from to `bytes`, for a writer fast enough to fill the default
/// 64 KiB while the reader waits.
pub fn widen_pipe(fd: BorrowedFd<'_>, bytes: i32) -> std::io::Result<()> {
    fcntl(fd.as_fd(), FcntlArg::F_SETPIPE_SZ(bytes))
        .map(drop)
        .map_err(std::io::Error::from)
}

/// Make this process the reaper of its orphaned descendants, so that tool processes a CLI
/// leaves in sessions of their own come back to us to be killed rather than going to init.
pub fn adopt_orphans() -> std::io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::command_line::CommandLine;
    use crate::marker::RunMarker;

    #[tokio::test]
    async fn a_clis_stdout_pipe_holds_a_mebibyte() {
        let command = CommandLine {
            program: "sh".into(),
            args: vec!["-c".into(), "read line".into()],
            env: Vec::new(),
        };
        let spawned = crate::process::spawn(&command, Path::new("/"), &RunMarker::new(), None)
            .expect("spawn sh");
        let size = fcntl(spawned.stdout.as_fd(), FcntlArg::F_GETPIPE_SZ).expect("F_GETPIPE_SZ");
        assert_eq!(size, STDOUT_PIPE_BYTES);
        drop(spawned.stdin);
        spawned.leader.exited().await;
        let _ = spawned.leader.reap().await;
    }
}
