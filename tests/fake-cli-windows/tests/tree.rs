//! The process tree under a job object, as the engine holds a run: every process the fake
//! starts, whatever its creation flags, is in the job (nested job included), the breakaway is
//! refused, and terminating the job leaves none. Windows only (under Wine here, by
//! scripts/check-windows).
#![cfg(windows)]
// Its helpers may unwrap: a panic there is a failed test, with its place (clippy.toml).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::windows::io::AsRawHandle;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};

const FAKE: &str = env!("CARGO_BIN_EXE_cli-agent-fake-cli-windows");

/// A kill-on-close job without breakaway, as the engine makes one per run.
struct Job(HANDLE);

impl Job {
    fn kill_on_close() -> Self {
        // SAFETY: null attributes and name: a default, unnamed job.
        let job = Self(unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) });
        assert!(
            !job.0.is_null(),
            "CreateJobObjectW: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: all-zero is a valid JOBOBJECT_EXTENDED_LIMIT_INFORMATION (plain integers).
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the job handle is valid; the pointer and size describe `limits`.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        assert_ne!(
            ok,
            0,
            "SetInformationJobObject: {}",
            std::io::Error::last_os_error()
        );
        job
    }

    /// How many processes of the job are alive.
    fn active(&self) -> u32 {
        // SAFETY: all-zero is a valid JOBOBJECT_BASIC_ACCOUNTING_INFORMATION (plain integers).
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the job handle is valid; the pointer and size describe `info`.
        let ok = unsafe {
            QueryInformationJobObject(
                self.0,
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(
            ok,
            0,
            "QueryInformationJobObject: {}",
            std::io::Error::last_os_error()
        );
        info.ActiveProcesses
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once; kill-on-close ends what is left.
        unsafe { CloseHandle(self.0) };
    }
}

#[test]
fn every_process_of_the_tree_is_in_the_job_the_breakaway_is_refused_and_terminate_leaves_none() {
    let job = Job::kill_on_close();
    let mut fake = Command::new(FAKE)
        .args(["exec", "--json", "-"])
        .env("CAM_RUN_ID", "fake-cli-windows-test-1")
        .env_remove("FAKE_CLI_DIRECTIVES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Assigned before it reads its prompt, so before it starts any child.
    // SAFETY: both handles are valid: the job's (above) and the child's while `fake` lives.
    let assigned = unsafe { AssignProcessToJobObject(job.0, fake.as_raw_handle()) };
    assert_ne!(assigned, 0, "{}", std::io::Error::last_os_error());
    fake.stdin.take().unwrap().write_all(b"tree hang").unwrap();

    let mut lines = BufReader::new(fake.stdout.take().unwrap()).lines();
    let report: Value = loop {
        let line = lines
            .next()
            .expect("a reasoning item with the tree")
            .unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["item"]["type"] == "reasoning" {
            break serde_json::from_str(event["item"]["text"].as_str().unwrap()).unwrap();
        }
    };
    assert_eq!(
        report["breakaway"]["os_error"], 5,
        "breakaway refused (access denied): {report}"
    );
    for pid in [
        &report["plain"],
        &report["new_process_group"],
        &report["detached"],
        &report["grandchild"]["parent"],
        &report["grandchild"]["grandchild"],
        &report["nested_job"]["pid"],
    ] {
        assert!(pid.is_u64(), "every process started: {report}");
    }
    assert!(report["nested_job"].get("error").is_none(), "{report}");
    // The fake and its six: plain, new group, detached, parent, grandchild, nested job.
    assert_eq!(job.active(), 7);

    let started = Instant::now();
    // SAFETY: the job handle is valid.
    assert_ne!(unsafe { TerminateJobObject(job.0, 1) }, 0);
    while job.active() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{} processes left",
            job.active()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        lines.next().is_none(),
        "stdout ends with the tree (the plain child held it)"
    );
    assert_eq!(fake.wait().unwrap().code(), Some(1));
}
