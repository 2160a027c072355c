//! Commands of the caller's own around a run, in its tree: a `setup` that prepares a new
//! worktree before the agent starts (installing dependencies), and a `check` run after the
//! agent ends (tests, lint), whose exit code and output tail go in the outcome, so a caller
//! compares facts rather than the agent's own claim. Each runs as `sh -c` in a session of its
//! own, with the CLI's environment, and is torn down whole when cancelled or out of time.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::command_line::CommandLine;
use crate::outcome::CommandOutcome;
use crate::process::{self, RunMarker, StderrTail};
use crate::sandbox::Confinement;

/// The most of a command's output kept (its last lines are quoted).
const OUTPUT_BYTES: usize = 16 * 1024;

/// How a command ended.
enum End {
    Exited,
    TimedOut,
    Cancelled,
}

/// Runs `command` with `sh -c` in `dir`, with `env` as its whole environment and confined by
/// `sandbox` when given, for at most `limit`; `cancel` stops it. Its whole process tree is
/// gone when this returns.
pub async fn run_command(
    command: &str,
    dir: &Path,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    sandbox: Option<&Confinement>,
    limit: Duration,
    cancel: &CancellationToken,
) -> CommandOutcome {
    let started = Instant::now();
    let line = CommandLine {
        program: "sh".into(),
        // Everything to one pipe, so the tail reads in order.
        args: vec!["-c".into(), format!("exec 1>&2\n{command}")],
        env: env.to_vec(),
    };
    let marker = RunMarker::new();
    // A sandbox that cannot be had stops the command: it never runs unconfined instead.
    let sandbox = match sandbox.map(Confinement::for_spawn).transpose() {
        Ok(sandbox) => sandbox,
        Err(error) => return not_started(command, &error, started),
    };
    let spawned = match process::spawn(&line, dir, &marker, sandbox) {
        Ok(spawned) => spawned,
        Err(error) => return not_started(command, &error, started),
    };
    drop(spawned.stdin);
    let mut output = StderrTail::new(spawned.stderr, OUTPUT_BYTES);
    let leader = spawned.leader;
    let end = watch(&leader, &mut output, limit, cancel).await;
    if !matches!(end, End::Exited) {
        leader.kill();
        leader.exited().await;
    }
    process::sweep(&leader, &marker).await;
    let status = leader.reap().await;
    output.read_now(OUTPUT_BYTES);
    let exit_code = status.and_then(|status| status.code());
    CommandOutcome {
        command: command.to_owned(),
        passed: matches!(end, End::Exited) && exit_code == Some(0),
        exit_code,
        timed_out: matches!(end, End::TimedOut),
        cancelled: matches!(end, End::Cancelled),
        duration_ms: millis(started),
        output_tail: output.text(),
    }
}

/// Reads the output until the command exits, runs out of time, or is cancelled.
async fn watch(
    leader: &process::Leader,
    output: &mut StderrTail<tokio::process::ChildStderr>,
    limit: Duration,
    cancel: &CancellationToken,
) -> End {
    let deadline = tokio::time::sleep(limit);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            () = leader.exited() => return End::Exited,
            () = &mut deadline => return End::TimedOut,
            () = cancel.cancelled() => return End::Cancelled,
            () = output.read(), if output.is_open() => {}
        }
    }
}

fn not_started(command: &str, error: &std::io::Error, started: Instant) -> CommandOutcome {
    CommandOutcome {
        command: command.to_owned(),
        passed: false,
        exit_code: None,
        timed_out: false,
        cancelled: false,
        duration_ms: millis(started),
        output_tail: format!("could not start `sh`: {error}"),
    }
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())]
    }

    #[tokio::test]
    async fn a_check_reports_its_exit_code_and_the_tail_of_its_output() {
        let cancel = CancellationToken::new();
        let outcome = run_command(
            "echo out; echo err >&2; exit 3",
            Path::new("/"),
            &env(),
            None,
            Duration::from_secs(60),
            &cancel,
        )
        .await;
        assert!(!outcome.passed);
        assert_eq!(outcome.exit_code, Some(3));
        assert_eq!(outcome.output_tail, "out\nerr");
    }

    #[tokio::test]
    async fn a_check_out_of_time_is_stopped() {
        let cancel = CancellationToken::new();
        let outcome = run_command(
            "sleep 3600 & sleep 3600",
            Path::new("/"),
            &env(),
            None,
            Duration::from_millis(200),
            &cancel,
        )
        .await;
        assert!(outcome.timed_out && !outcome.passed);
    }
}
