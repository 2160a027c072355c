//! Starting a CLI as a tree of its own, so every process it starts can be found and killed
//! when the run ends (on Unix a session of its own, on Windows a job object), marked with its
//! run's marker, and confined by the platform's sandbox when given.

use std::path::Path;
use std::process::Stdio;

use tokio::process::{ChildStderr, ChildStdin, Command};

use super::leader::Leader;
#[cfg(unix)]
use super::pipe::Pipe;
#[cfg(windows)]
use super::pipe_windows::Pipe;
use crate::command_line::CommandLine;
use crate::marker::{MARKER_VAR, RunMarker};
use crate::platform::SpawnSandbox;

/// A started CLI: the session leader and its pipes.
pub struct SpawnedCli {
    /// The CLI's process, its session's leader.
    pub leader: Leader,
    /// Where its prompt goes, then closed.
    pub stdin: ChildStdin,
    /// Its JSONL events.
    pub stdout: Pipe,
    /// Its diagnostics, of which the tail is kept.
    pub stderr: ChildStderr,
}

/// Set `cmd` up as every run's CLI is, whatever the OS: its whole environment is the command
/// line's (nothing else of ours leaks) with the run's marker, its stdio piped.
fn configure(cmd: &mut Command, command: &CommandLine, workspace: &Path, marker: &RunMarker) {
    cmd.env_clear()
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .env(MARKER_VAR, marker.as_str())
        .current_dir(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
}

/// Spawn `command` in `workspace` as the leader of a new session, confined by `sandbox` when
/// given (see [`crate::sandbox`]).
#[cfg(unix)]
pub fn spawn(
    command: &CommandLine,
    workspace: &Path,
    marker: &RunMarker,
    sandbox: Option<SpawnSandbox>,
) -> std::io::Result<SpawnedCli> {
    use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessSession};

    use crate::platform;

    let (program, args) =
        platform::sandboxed_argv(&command.program, &command.args, sandbox.as_ref());
    let mut wrap = CommandWrap::with_new(&program, |cmd| {
        cmd.args(&args);
        configure(cmd, command, workspace, marker);
        platform::before_exec(cmd, sandbox);
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

/// Spawn `command` in `workspace` in a job object of its own, which it and every process it
/// starts belong to from their first instruction (see [`crate::platform::start_in_job`]).
/// Windows has no kernel sandbox to apply: `sandbox` cannot be given (its type is empty).
#[cfg(windows)]
pub fn spawn(
    command: &CommandLine,
    workspace: &Path,
    marker: &RunMarker,
    sandbox: Option<SpawnSandbox>,
) -> std::io::Result<SpawnedCli> {
    if let Some(sandbox) = sandbox {
        match sandbox {}
    }
    let mut cmd = Command::new(&command.program);
    cmd.args(&command.args).kill_on_drop(true);
    configure(&mut cmd, command, workspace, marker);
    let (mut child, watch) = crate::platform::start_in_job(&mut cmd)?;
    let take = |what| std::io::Error::other(format!("the CLI's {what} was not piped"));
    Ok(SpawnedCli {
        stdin: child.stdin.take().ok_or_else(|| take("stdin"))?,
        stdout: Pipe::new(child.stdout.take().ok_or_else(|| take("stdout"))?),
        stderr: child.stderr.take().ok_or_else(|| take("stderr"))?,
        leader: Leader::new(child, watch),
    })
}
