//! The process table for observers, on the OS the tests run on: a child of this test, whose
//! parent, arguments and environment are known, seen running, as a zombie, and reaped.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::{
    arguments, children, cpu_time_of, environment_value, is_alive, process_ids, resident_bytes,
};

const VAR: &str = "CAM_OBSERVE_TEST";

fn sleeper(value: &str) -> Child {
    Command::new("sleep")
        .arg("30")
        .env(VAR, value)
        .spawn()
        .expect("start sleep")
}

fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_running_child_shows_its_parent_arguments_and_environment() {
    let value = format!("running-{}", std::process::id());
    let mut child = sleeper(&value);
    let pid = child.id();
    let table = process_ids();
    assert!(table.contains(&pid), "{pid} not in {table:?}");
    assert!(children(std::process::id()).contains(&pid));
    assert!(is_alive(pid));
    assert_eq!(arguments(pid), Some(vec!["sleep".into(), "30".into()]));
    assert_eq!(environment_value(pid, VAR), Some(value));
    assert_eq!(environment_value(pid, "CAM_OBSERVE_TEST_UNSET"), None);
    assert_eq!(environment_value(pid, ""), None);
    assert!(cpu_time_of(pid).is_some());
    assert!(resident_bytes(pid).is_some_and(|bytes| bytes > 0));
    child.kill().expect("kill sleep");
    child.wait().expect("reap sleep");
}

#[test]
fn a_killed_child_is_dead_as_a_zombie_and_out_of_the_table_once_reaped() {
    let mut child = sleeper("zombie");
    let pid = child.id();
    child.kill().expect("kill sleep");
    wait_until("the child is a zombie", || !is_alive(pid));
    assert!(
        children(std::process::id()).contains(&pid),
        "a zombie is still its parent's child"
    );
    child.wait().expect("reap sleep");
    assert!(!process_ids().contains(&pid));
    assert!(!children(std::process::id()).contains(&pid));
    assert_eq!(arguments(pid), None);
    assert_eq!(environment_value(pid, VAR), None);
}

#[test]
fn this_process_is_left_out_of_the_table_yet_readable() {
    let me = std::process::id();
    assert!(!process_ids().contains(&me));
    assert!(is_alive(me));
    assert!(cpu_time_of(me).is_some());
    assert!(arguments(me).is_some_and(|args| !args.is_empty()));
}
