//! A short-lived run of a CLI beside the real runs (`--version`, its model listing), bounded
//! in time and killed with whatever it started if it hangs.

use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// `--version` of a healthy CLI answers in about a second, its model listing in a few; a hung
/// one must not hang its caller.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// What a probe printed.
pub struct Printed {
    pub stdout: String,
    /// Some CLIs answer here (pi prints `--version` on stderr when stdin is not a terminal).
    pub stderr: String,
}

/// What `command` prints, run in a process group of its own so a launcher and its child are
/// killed together if it hangs; `Err` says how it failed.
pub async fn probe(mut command: tokio::process::Command) -> Result<Printed, String> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("could not start: {error}"))?;
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let output = match tokio::time::timeout(PROBE_TIMEOUT, child.wait_with_output()).await {
        Ok(output) => output.map_err(|error| format!("failed: {error}"))?,
        Err(_) => {
            if let Some(group) = group {
                let _ = killpg(group, Signal::SIGKILL);
            }
            return Err(format!(
                "did not answer within {} s",
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
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
