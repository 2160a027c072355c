//! Starting a CLI in a session of its own, so every process it starts can be found and
//! killed by its group and session when the run ends.

use std::path::Path;
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::unistd::Pid;
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessSession};
use tokio::process::{ChildStderr, ChildStdin};

use super::leader::Leader;
use super::pipe::Pipe;
use crate::command::CommandLine;

/// The environment variable that marks every process of one run, so a sweep can find the
/// run's processes wherever they went (their own sessions, double forks).
pub const MARKER_VAR: &str = "CAM_RUN_ID";

/// The marker value of one run: `<instance>-<n>`, where the instance is this process's pid
/// and start time, so a later process that reuses our pid cannot claim our runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunMarker(String);

impl RunMarker {
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let seq = NEXT.fetch_add(1, Ordering::Relaxed);
        Self(format!("{}-{seq}", instance()))
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

/// This process's instance id: `<pid>.<start time in ns, hex>`, fixed at first use.
pub(crate) fn instance() -> &'static str {
    static INSTANCE: OnceLock<String> = OnceLock::new();
    INSTANCE.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}.{nanos:x}", std::process::id())
    })
}

/// The start of the marker entry of every run of one process instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerPrefix(String);

#[derive(Debug, thiserror::Error)]
#[error(
    "{0:?} is not a run-marker prefix (expected {MARKER_VAR}=<pid>.<hex>-); \
     the guardian is started by cli-agent-mcp itself, not by hand"
)]
pub struct BadMarkerPrefix(String);

impl MarkerPrefix {
    /// The prefix of this process's runs.
    pub fn of_this_process() -> Self {
        Self(format!("{MARKER_VAR}={}-", instance()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The process instance it names, `<pid>.<hex>`.
    pub fn instance(&self) -> &str {
        let value = self.0.strip_prefix(MARKER_VAR).unwrap_or(&self.0);
        value.trim_start_matches('=').trim_end_matches('-')
    }

    pub fn matches(&self, entry: &[u8]) -> bool {
        entry.starts_with(self.0.as_bytes())
    }
}

impl std::str::FromStr for MarkerPrefix {
    type Err = BadMarkerPrefix;

    /// Only a whole instance prefix: a shorter one would match the runs of other servers.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadMarkerPrefix(text.to_owned());
        let instance = text
            .strip_prefix(MARKER_VAR)
            .and_then(|rest| rest.strip_prefix('='))
            .and_then(|rest| rest.strip_suffix('-'))
            .ok_or_else(bad)?;
        let (pid, nanos) = instance.split_once('.').ok_or_else(bad)?;
        let digits =
            |part: &str, radix| !part.is_empty() && part.chars().all(|c| c.is_digit(radix));
        if digits(pid, 10) && digits(nanos, 16) {
            Ok(Self(text.to_owned()))
        } else {
            Err(bad())
        }
    }
}

/// A started CLI: the session leader and its pipes.
pub struct SpawnedCli {
    pub leader: Leader,
    pub stdin: ChildStdin,
    pub stdout: Pipe,
    pub stderr: ChildStderr,
}

/// Make this process the reaper of its orphaned descendants, so that tool processes a CLI
/// leaves in sessions of their own come back to us to be killed rather than going to init.
pub fn become_subreaper() -> std::io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(std::io::Error::from)
}

/// Spawn `command` in `workspace` as the leader of a new session, confined by `sandbox` when
/// given (see [`crate::sandbox`]).
pub fn spawn(
    command: &CommandLine,
    workspace: &Path,
    marker: &RunMarker,
    sandbox: Option<landlock::RulesetCreated>,
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
        before_exec(cmd, sandbox);
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
    let take = |what| std::io::Error::other(format!("the CLI's {what} was not piped"));
    Ok(SpawnedCli {
        stdin: child.stdin.take().ok_or_else(|| take("stdin"))?,
        // Out of the runtime's hands: the reader watches it only while it waits on it.
        stdout: Pipe::new(
            child
                .stdout
                .take()
                .ok_or_else(|| take("stdout"))?
                .into_owned_fd()?,
        )?,
        stderr: child.stderr.take().ok_or_else(|| take("stderr"))?,
        leader: Leader::new(child)?,
    })
}

/// What the child does between fork and exec: a wide stdout pipe, the sandbox's ruleset, and
/// death with its parent.
fn before_exec(cmd: &mut tokio::process::Command, sandbox: Option<landlock::RulesetCreated>) {
    let parent = Pid::this();
    let mut sandbox = sandbox;
    // SAFETY: the closure only calls async-signal-safe functions (prctl, getppid, kill, fcntl,
    // and Landlock's system calls on a ruleset built before the fork).
    unsafe {
        cmd.pre_exec(move || {
            widen_stdout();
            if let Some(ruleset) = sandbox.take() {
                crate::sandbox::enforce(ruleset)?;
            }
            die_with_parent(parent)
        })
    };
}

/// The most a CLI's stdout pipe holds: `/proc/sys/fs/pipe-max-size` by default.
const STDOUT_PIPE_BYTES: nix::libc::c_int = 1 << 20;

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

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use nix::fcntl::{FcntlArg, fcntl};

    use super::*;

    #[tokio::test]
    async fn a_clis_stdout_pipe_holds_a_mebibyte() {
        let command = CommandLine {
            program: "sh".into(),
            args: vec!["-c".into(), "read line".into()],
            env: Vec::new(),
        };
        let spawned = spawn(&command, Path::new("/"), &RunMarker::new(), None).expect("spawn sh");
        let size = fcntl(spawned.stdout.as_fd(), FcntlArg::F_GETPIPE_SZ).expect("F_GETPIPE_SZ");
        assert_eq!(size, STDOUT_PIPE_BYTES);
        drop(spawned.stdin);
        spawned.leader.exited().await;
        let _ = spawned.leader.reap().await;
    }
}
