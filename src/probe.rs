//! A short-lived run of a CLI beside the real runs (`--version`, its model listing), bounded
//! in time and killed with whatever it started if it hangs: in a process group of its own on
//! Unix, in a job object of its own on Windows.

use std::process::{Output, Stdio};
use std::time::Duration;

use cli_agent_engine::FoundCli;
use cli_agent_engine::locate::Start;

/// `--version` of a healthy CLI answers in about a second, its model listing in a few; a hung
/// one must not hang its caller.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// What a probe printed.
pub struct Printed {
    pub stdout: String,
    /// Some CLIs answer here (pi prints `--version` on stderr when stdin is not a terminal).
    pub stderr: String,
}

/// What `command` prints, run so that a launcher and its child are killed together if it
/// hangs; `Err` says how it failed.
pub async fn probe(mut command: tokio::process::Command) -> Result<Printed, String> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = bounded(command).await?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let said = stderr
            .lines()
            .chain(stdout.lines())
            .find(|l| !l.trim().is_empty());
        return Err(format!(
            "failed ({}){}",
            output.status,
            said.map(|line| format!(": {}", line.trim()))
                .unwrap_or_default()
        ));
    }
    Ok(Printed {
        stdout: stdout.into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// A command that starts the CLI `found` as a run would (an npm shim as the program it names)
/// with `args`, in the server's environment.
pub fn command_for(found: &FoundCli, args: &[&str]) -> tokio::process::Command {
    let mut command = match &found.start {
        Start::Shim { program, args } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            command
        }
        Start::AsFound | Start::BatchFile => tokio::process::Command::new(&found.path),
    };
    command.args(args);
    command
}

/// Did not answer in time: the whole tree was killed.
fn timed_out() -> String {
    format!("did not answer within {} s", PROBE_TIMEOUT.as_secs())
}

/// `command`'s output, in a process group of its own killed whole at [`PROBE_TIMEOUT`].
#[cfg(unix)]
async fn bounded(mut command: tokio::process::Command) -> Result<Output, String> {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;

    let child = command
        .process_group(0)
        .spawn()
        .map_err(|error| format!("could not start: {error}"))?;
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    match tokio::time::timeout(PROBE_TIMEOUT, child.wait_with_output()).await {
        Ok(output) => output.map_err(|error| format!("failed: {error}")),
        Err(_) => {
            if let Some(group) = group {
                let _ = killpg(group, Signal::SIGKILL);
            }
            Err(timed_out())
        }
    }
}

/// `command`'s output, in a job object of its own terminated at [`PROBE_TIMEOUT`]; whatever
/// the probe left running dies when the job's last handle (the watch's) closes.
#[cfg(windows)]
async fn bounded(mut command: tokio::process::Command) -> Result<Output, String> {
    let (child, watch) = cli_agent_engine::platform::start_in_job(&mut command)
        .map_err(|error| format!("could not start: {error}"))?;
    match tokio::time::timeout(PROBE_TIMEOUT, child.wait_with_output()).await {
        Ok(output) => output.map_err(|error| format!("failed: {error}")),
        Err(_) => {
            watch.kill();
            Err(timed_out())
        }
    }
}
