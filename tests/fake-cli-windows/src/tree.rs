//! The process tree, made the ways Windows programs make theirs, so the engine's teardown is
//! proven against each: a plain child (holding the fake's stdout and stderr, as a tool's
//! subprocess does), a child in a new process group (`CREATE_NEW_PROCESS_GROUP`, out of reach of
//! the fake's console control events), a detached one (`DETACHED_PROCESS`, no console), a child
//! that starts a grandchild, a child in a nested job of the fake's own, and an attempt to break
//! away from the run's job (`CREATE_BREAKAWAY_FROM_JOB`), which must be refused inside a run.
//!
//! Each is this program again, `--fake-cli-child <role> CAM_RUN_ID=<marker>`: the marker on the
//! command line lets Linux's `pgrep -f` find them under Wine. They sleep until killed.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use windows_sys::Win32::System::JobObjects::{AssignProcessToJobObject, CreateJobObjectW};
use windows_sys::Win32::System::Threading::{
    CREATE_BREAKAWAY_FROM_JOB, CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS,
};

use crate::echo::MARKER_VAR;

/// The first argument of a tree process, before its role.
const CHILD_FLAG: &str = "--fake-cli-child";

/// What one process of the tree does.
#[derive(Clone, Copy)]
pub enum Role {
    /// Sleeps until killed.
    Sleeper,
    /// Starts a sleeper (the grandchild), prints its pid on stdout, then sleeps.
    Parent,
}

/// The role when this process is one of the tree's, from its arguments.
pub fn child_role(args: &[OsString]) -> Option<Role> {
    if args.first().is_none_or(|a| a != CHILD_FLAG) {
        return None;
    }
    match args.get(1).and_then(|r| r.to_str()) {
        Some("parent") => Some(Role::Parent),
        _ => Some(Role::Sleeper),
    }
}

/// A tree process's life: a parent starts its child first, then both sleep until killed.
pub fn run_child(role: Role) -> ! {
    if let Role::Parent = role {
        match quiet(child("sleeper", 0)).spawn() {
            Ok(grandchild) => println!("{}", grandchild.id()),
            Err(e) => println!("error: {e}"),
        }
    }
    crate::sleep_until_killed()
}

/// Builds the tree and reports each process's pid (or why it could not start): `plain`,
/// `new_process_group`, `detached`, `parent`, `grandchild`, `nested_job`, and `breakaway`,
/// which is `{"refused": message, "os_error": code}` when the job refused it or
/// `{"escaped": pid}` when it did not.
pub fn build() -> Value {
    json!({
        "plain": started(child("sleeper", 0)),
        "new_process_group": started(quiet(child("sleeper", CREATE_NEW_PROCESS_GROUP))),
        "detached": started(quiet(child("sleeper", DETACHED_PROCESS))),
        "grandchild": grandchild(),
        "nested_job": nested_job(),
        "breakaway": breakaway(),
    })
}

/// This program as a tree process of `role`, with the creation flags, carrying the marker. Its
/// stdin is null (the fake's is at EOF already); stdout and stderr are the fake's unless changed.
fn child(role: &str, flags: u32) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|_| "cli-agent-fake-cli-windows.exe".into());
    let marker = std::env::var(MARKER_VAR).unwrap_or_default();
    let mut cmd = Command::new(exe);
    cmd.args([CHILD_FLAG, role, &format!("{MARKER_VAR}={marker}")]);
    cmd.creation_flags(flags).stdin(Stdio::null());
    cmd
}

/// No standard handles: the child holds none of the fake's pipes.
fn quiet(mut cmd: Command) -> Command {
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    cmd
}

/// The pid of a started child, which is left running; or the error.
fn started(mut cmd: Command) -> Value {
    match cmd.spawn() {
        Ok(c) => json!(c.id()),
        Err(e) => json!({"error": e.to_string()}),
    }
}

/// A parent that starts the grandchild: `{"parent": pid, "grandchild": pid}`.
fn grandchild() -> Value {
    let mut cmd = child("parent", 0);
    let mut parent = match cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn() {
        Ok(p) => p,
        Err(e) => return json!({"error": e.to_string()}),
    };
    let mut line = String::new();
    if let Some(out) = parent.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    let grandchild = line
        .trim()
        .parse::<u32>()
        .map_or_else(|_| json!({"error": line.trim()}), |pid| json!(pid));
    json!({"parent": parent.id(), "grandchild": grandchild})
}

/// A child assigned to a job of the fake's own, nested in the run's job (Windows 8 and later).
/// The job has no limits, so its handle closing with the fake leaves the child to the run's job.
fn nested_job() -> Value {
    // SAFETY: null attributes and a null name are documented: a default, unnamed job.
    let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if job.is_null() {
        return json!({"error": format!("CreateJobObjectW: {}", std::io::Error::last_os_error())});
    }
    let child = match quiet(child("sleeper", 0)).spawn() {
        Ok(c) => c,
        Err(e) => return json!({"error": e.to_string()}),
    };
    // SAFETY: `job` is the valid handle made above, never closed (it lives as long as the fake),
    // and the child's handle is open while `child` is alive.
    if unsafe { AssignProcessToJobObject(job, child.as_raw_handle()) } == 0 {
        return json!({"pid": child.id(), "error": format!("AssignProcessToJobObject: {}", std::io::Error::last_os_error())});
    }
    json!({"pid": child.id()})
}

/// The attempt to leave the run's job. Outside any job the flag is ignored and the child starts.
fn breakaway() -> Value {
    match quiet(child("sleeper", CREATE_BREAKAWAY_FROM_JOB)).spawn() {
        Ok(c) => json!({"escaped": c.id()}),
        Err(e) => json!({"refused": e.to_string(), "os_error": e.raw_os_error()}),
    }
}
