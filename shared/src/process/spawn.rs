//! Starting a CLI in a session of its own.

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::unistd::Pid;
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessSession};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use crate::command::CommandLine;

/// The environment variable that marks every process of one run, so a sweep can find the
/// run's processes wherever they went (their own sessions, double forks).
pub const MARKER_VAR: &str = "CAM_RUN_ID";

/// The marker value of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunMarker(String);

impl RunMarker {
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let seq = NEXT.fetch_add(1, Ordering::Relaxed);
        Self(format!("{}-{nanos:x}-{seq}", std::process::id()))
    }

    /// The start of the `/proc/<pid>/environ` entry of every run of this process.
    pub fn process_prefix() -> Vec<u8> {
        format!("{MARKER_VAR}={}-", std::process::id()).into_bytes()
    }

    /// `CAM_RUN_ID=<value>` as it appears in `/proc/<pid>/environ`.
    pub fn environ_entry(&self) -> Vec<u8> {
        format!("{MARKER_VAR}={}", self.0).into_bytes()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for RunMarker {
    fn default() -> Self {
        Self::new()
    }
}

/// A started CLI: the session leader and its pipes.
pub struct SpawnedCli {
    pub child: Child,
    /// pid = pgid = sid of the leader.
    pub leader: Pid,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Make this process the reaper of its orphaned descendants, so that tool processes a CLI
/// leaves in sessions of their own come back to us to be killed rather than going to init.
pub fn become_subreaper() -> std::io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(std::io::Error::from)
}

/// Spawn `command` in `workspace` as the leader of a new session.
pub fn spawn(
    command: &CommandLine,
    workspace: &Path,
    marker: &RunMarker,
) -> std::io::Result<SpawnedCli> {
    let mut wrap = CommandWrap::with_new(&command.program, |cmd| {
        // The CLI's whole environment is the command line's: nothing else of ours leaks.
        cmd.args(&command.args)
            .env_clear()
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .env(MARKER_VAR, marker.as_str())
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let parent = Pid::this();
        // SAFETY: the closure only calls async-signal-safe functions (prctl, getppid, kill).
        unsafe { cmd.pre_exec(move || die_with_parent(parent)) };
    });
    wrap.wrap(ProcessSession).wrap(KillOnDrop);

    let wrapped = wrap.spawn()?;
    // SAFETY: ProcessSession did its work (setsid) before exec, and KillOnDrop set tokio's
    // kill_on_drop on the command. We drop their child wrapper on purpose: its wait() blocks
    // until every member of the group has exited, and with the subreaper that includes the
    // CLI's orphans, so the end of a run would never be seen. We wait on the leader alone and
    // signal the group ourselves.
    let mut child = unsafe { wrapped.try_into_inner_child() }
        .map_err(|_| std::io::Error::other("process-wrap returned no native child"))?;
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the CLI exited before it could be tracked"))?;
    let leader = Pid::from_raw(pid as i32);
    let take = |what| std::io::Error::other(format!("the CLI's {what} was not piped"));
    Ok(SpawnedCli {
        stdin: child.stdin.take().ok_or_else(|| take("stdin"))?,
        stdout: child.stdout.take().ok_or_else(|| take("stdout"))?,
        stderr: child.stderr.take().ok_or_else(|| take("stderr"))?,
        leader,
        child,
    })
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
