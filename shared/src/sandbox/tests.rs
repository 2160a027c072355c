use std::path::{Path, PathBuf};

use super::*;
use crate::command_line::CommandLine;
use crate::process::{self, RunMarker};

#[test]
fn only_read_only_and_workspace_write_are_confined_and_off_confines_nothing() {
    for support in [KernelSupport::Landlock { abi: 5 }, KernelSupport::Seatbelt] {
        for level in [Permission::ReadOnly, Permission::WorkspaceWrite] {
            assert!(decide(SandboxMode::Auto, level, support).unwrap());
            assert!(decide(SandboxMode::Required, level, support).unwrap());
            assert!(!decide(SandboxMode::Off, level, support).unwrap());
        }
        assert!(!decide(SandboxMode::Required, Permission::Unlimited, support).unwrap());
    }
}

#[test]
fn required_refuses_where_the_os_cannot_confine_naming_the_fix() {
    let missing_kinds = [
        KernelSupport::NoLandlock,
        KernelSupport::LandlockDisabled,
        KernelSupport::NoSeatbelt,
        KernelSupport::NoWindowsSandbox,
    ];
    for missing in missing_kinds {
        let error = decide(SandboxMode::Required, Permission::ReadOnly, missing).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("--sandbox auto"), "{message}");
        assert!(
            message.contains(missing.missing_reason().unwrap()),
            "{message}"
        );
        assert!(!decide(SandboxMode::Auto, Permission::ReadOnly, missing).unwrap());
        assert!(!decide(SandboxMode::Required, Permission::Unlimited, missing).unwrap());
    }
}

#[test]
fn refusals_are_told_from_other_tool_output() {
    assert!(tells_of_refusal(
        "touch: cannot touch '/x': Permission denied"
    ));
    assert!(tells_of_refusal(
        r#"{"error":"EACCES: permission denied, open '/x'"}"#
    ));
    assert!(!tells_of_refusal("wrote 3 files"));
}

/// A directory of its own under the temp dir, by its real path (the sandbox's rules name real
/// paths), removed at the end.
struct Scratch {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let prefix = format!("cam-sandbox-{name}-");
        let dir = tempfile::Builder::new().prefix(&prefix).tempdir().unwrap();
        let path = std::fs::canonicalize(dir.path()).unwrap();
        Self { path, _dir: dir }
    }
}

/// Runs `script` under `sh -c`, confined per `plan`, in `dir`; its exit code.
async fn confined_sh(plan: &WritePlan, dir: &Path, script: &str) -> i32 {
    assert!(
        KernelSupport::current().is_available(),
        "these tests need the OS's sandbox, Landlock or Seatbelt ({})",
        KernelSupport::current()
    );
    let confinement = Confinement::for_run(SandboxMode::Required, plan, "test")
        .unwrap()
        .expect("confined");
    let command = CommandLine {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap()),
            ("TMPDIR".into(), confinement.tmp().into()),
        ],
    };
    let sandbox = confinement.for_spawn().unwrap();
    let spawned = process::spawn(&command, dir, &RunMarker::new(), Some(sandbox)).unwrap();
    drop(spawned.stdin);
    spawned.leader.exited().await;
    spawned.leader.reap().await.and_then(|s| s.code()).unwrap()
}

#[tokio::test]
async fn a_confined_process_writes_where_its_level_allows_and_nowhere_else() {
    let (tree, outside) = (Scratch::new("tree"), Scratch::new("outside"));
    let writes = |target: &Path| format!("echo x > '{}'", target.display());
    let mut plan = WritePlan {
        level: Permission::WorkspaceWrite,
        tree: tree.path.clone(),
        ..WritePlan::default()
    };
    let inside = writes(&tree.path.join("a"));
    assert_eq!(confined_sh(&plan, &tree.path, &inside).await, 0);
    // A refused redirection: dash exits 2, macOS's sh (bash) 1.
    assert_ne!(
        confined_sh(&plan, &tree.path, &writes(&outside.path.join("b"))).await,
        0
    );
    assert!(!outside.path.join("b").exists());
    let in_tmp = "echo x > \"$TMPDIR/c\" && cat /dev/null > /dev/null";
    assert_eq!(confined_sh(&plan, &tree.path, in_tmp).await, 0);
    plan.level = Permission::ReadOnly;
    assert_ne!(
        confined_sh(&plan, &tree.path, &writes(&tree.path.join("d"))).await,
        0
    );
    assert!(!tree.path.join("d").exists());
    assert_eq!(confined_sh(&plan, &tree.path, in_tmp).await, 0);
}

#[tokio::test]
async fn the_run_temporary_directory_goes_with_its_confinement() {
    let tree = Scratch::new("tmp");
    let plan = WritePlan {
        level: Permission::ReadOnly,
        tree: tree.path.clone(),
        ..WritePlan::default()
    };
    let confinement = Confinement::for_run(SandboxMode::Auto, &plan, "tmp-test")
        .unwrap()
        .expect("confined");
    let tmp = confinement.tmp().to_owned();
    std::fs::write(tmp.join("left"), "x").unwrap();
    drop(confinement);
    assert!(!tmp.exists());
}
