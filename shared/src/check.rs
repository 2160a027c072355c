//! Commands of the caller's own around a run, in its tree: a `setup` that prepares a new
//! worktree before the agent starts (installing dependencies), and a `check` run after the
//! agent ends (tests, lint), whose exit code and output tail go in the outcome, so a caller
//! compares facts rather than the agent's own claim. Each runs in the OS's shell (`sh -c`; on
//! Windows a batch file of its lines), in a process tree of its own, with the CLI's environment,
//! and is torn down whole when cancelled or out of time.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::command_line::CommandLine;
use crate::locate::batch_file_refusal;
use crate::outcome::CommandOutcome;
use crate::process::{self, RunMarker, StderrTail};
use crate::sandbox::Confinement;

/// The most of a command's output kept (its last lines are quoted).
const OUTPUT_BYTES: usize = 16 * 1024;

/// How long the output is read after the command's tree is gone: its end comes at once, as
/// every writer died, unless a process that escaped the tree holds the pipe.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// How a command ended.
enum End {
    Exited,
    TimedOut,
    Cancelled,
}

/// Runs `command` in the OS's shell in `dir`, with `env` as its whole environment and confined
/// by `sandbox` when given, for at most `limit`; `cancel` stops it. Its whole process tree is
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
    let (line, _batch_file) = match shell_line(command, env) {
        Ok(shell) => shell,
        Err(error) => return not_started(command, &error, started),
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
    drain(&mut output).await;
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

/// The command line that runs `command` with everything it writes on stderr (one pipe, so the
/// tail reads in order), and on Windows the batch file it runs (deleted when dropped).
fn shell_line(
    command: &str,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> std::io::Result<(CommandLine, Option<tempfile::TempPath>)> {
    let shell = |program: std::ffi::OsString, args| CommandLine {
        program,
        args,
        env: env.to_vec(),
    };
    if !cfg!(windows) {
        let args = vec!["-c".into(), format!("exec 1>&2\n{command}")];
        return Ok((shell("sh".into(), args), None));
    }
    // `cmd /c` runs one line, so a command of several (as `sh -c` takes them) is a batch
    // file's, started through std's batch-file handling with no argument.
    let mut file = tempfile::Builder::new()
        .prefix("cli-agent-mcp-")
        .suffix(".cmd")
        .tempfile()?;
    std::io::Write::write_all(&mut file, batch_script(command).as_bytes())?;
    let path = file.into_temp_path();
    let line = shell(path.as_os_str().to_owned(), Vec::new());
    if let Some(why) = batch_file_refusal(&line) {
        return Err(std::io::Error::other(format!(
            "the batch file {} cannot be started safely: {why}; set TEMP to a directory \
             without `%`",
            path.display()
        )));
    }
    Ok((line, Some(path)))
}

/// A batch file running `command`'s lines with their output on stderr, and exiting with its
/// exit code. CRLF line ends: cmd.exe finds a label in an LF-only file only by luck.
fn batch_script(command: &str) -> String {
    let lines = [
        "@echo off",
        "call :command 1>&2",
        "exit /b %ERRORLEVEL%",
        ":command",
    ];
    let own = command.lines();
    lines
        .into_iter()
        .chain(own)
        .map(|line| format!("{line}\r\n"))
        .collect()
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

/// Reads what the command's tree left in the pipe (on Windows nothing can be read without
/// waiting, so the last lines are still there when its exit is seen first).
async fn drain(output: &mut StderrTail<tokio::process::ChildStderr>) {
    let to_the_end = async {
        while output.is_open() {
            output.read().await;
        }
    };
    let _ = tokio::time::timeout(DRAIN_GRACE, to_the_end).await;
}

fn not_started(command: &str, error: &std::io::Error, started: Instant) -> CommandOutcome {
    CommandOutcome {
        command: command.to_owned(),
        passed: false,
        exit_code: None,
        timed_out: false,
        cancelled: false,
        duration_ms: millis(started),
        output_tail: format!("could not start the shell: {error}"),
    }
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        // cmd.exe needs SystemRoot to start what a batch file runs.
        ["PATH", "SystemRoot"]
            .into_iter()
            .filter_map(|key| Some((key.into(), std::env::var_os(key)?)))
            .collect()
    }

    /// A command of several lines, each in the OS's shell: two writes, one to each stream, and
    /// an exit code of 3.
    fn two_lines_then_exit_3() -> &'static str {
        if cfg!(windows) {
            "echo out\n>&2 echo err\nexit /b 3"
        } else {
            "echo out\necho err >&2\nexit 3"
        }
    }

    #[tokio::test]
    async fn a_check_reports_its_exit_code_and_the_tail_of_its_output() {
        let cancel = CancellationToken::new();
        let outcome = run_command(
            two_lines_then_exit_3(),
            &std::env::temp_dir(),
            &env(),
            None,
            Duration::from_secs(60),
            &cancel,
        )
        .await;
        assert!(!outcome.passed);
        assert_eq!(outcome.exit_code, Some(3), "{}", outcome.output_tail);
        assert_eq!(outcome.output_tail, "out\nerr");
    }

    #[tokio::test]
    async fn a_checks_last_lines_are_in_its_tail_however_its_exit_and_output_race() {
        let flood = if cfg!(windows) {
            "for /L %%i in (1,1,3000) do @echo line %%i"
        } else {
            "seq -f 'line %g' 1 3000"
        };
        for _ in 0..5 {
            let cancel = CancellationToken::new();
            let limit = Duration::from_secs(60);
            let dir = std::env::temp_dir();
            let outcome = run_command(flood, &dir, &env(), None, limit, &cancel).await;
            assert!(outcome.passed, "{}", outcome.output_tail);
            assert!(
                outcome.output_tail.ends_with("line 3000"),
                "{}",
                outcome.output_tail
            );
        }
    }

    #[tokio::test]
    async fn a_check_out_of_time_is_stopped_with_what_it_started() {
        let (background, foreground) = if cfg!(windows) {
            ("start /b ping -n 3600 127.0.0.1", "ping -n 3600 127.0.0.1")
        } else {
            ("sleep 3600 &", "sleep 3600")
        };
        let cancel = CancellationToken::new();
        let outcome = run_command(
            &format!("{background}\n{foreground}"),
            &std::env::temp_dir(),
            &env(),
            None,
            Duration::from_millis(500),
            &cancel,
        )
        .await;
        assert!(outcome.timed_out && !outcome.passed);
    }

    #[test]
    fn a_windows_check_is_a_batch_file_of_its_lines_with_the_output_on_stderr() {
        assert_eq!(
            batch_script("npm ci\ncargo test && cargo clippy"),
            "@echo off\r\ncall :command 1>&2\r\nexit /b %ERRORLEVEL%\r\n:command\r\n\
             npm ci\r\ncargo test && cargo clippy\r\n"
        );
    }
}
