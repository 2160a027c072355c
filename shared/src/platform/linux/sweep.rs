//! Sweeping up every process of a run that escaped its group, and killing every process of
//! every run as a last resort.
//!
//! The real CLIs run their tools in sessions of their own, and some leave them running when
//! signalled, so a group signal is never enough. A process belongs to a run if it is in the
//! run's group or session (certain only while the leader is unreaped, which
//! [`crate::process::Leader`] guarantees) or carries the run's marker in its environment. Every kill goes through a
//! pidfd after the check, so a reused pid is never hit. Thanks to the subreaper, orphans come
//! back to this process, which reaps them by pid or pidfd (never `waitpid(-1)`, which could
//! steal a status tokio is waiting for).
//!
//! Cost: a sweep round needs a look at the whole process table, and hundreds of runs may end
//! at once. So one snapshot serves every sweep that asked for one before it began, it is read off
//! the runtime (`spawn_blocking`), and it reads the environment only of the processes that
//! can carry a marker without being in a run's group or session: our orphans (children that
//! are not a live leader). Without the subreaper every process is such a candidate.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use super::pidfd::{Fate, PidFd, kill_if};
use super::proc_table::{MarkerRead, ProcStat, marker_entry, process_table, read_marker};
use super::run_watch::{RunWatch, is_live_leader};
use crate::marker::{MarkerPrefix, RunMarker};
use crate::platform::marked::{MarkedPass, UNSURE_FOR};

/// How long a sweep keeps going while processes of the run are still dying.
const SWEEP_LIMIT: Duration = Duration::from_secs(5);
const SWEEP_ROUND: Duration = Duration::from_millis(10);

/// One process in a snapshot, with what its environment said when it was a candidate.
struct Entry {
    stat: ProcStat,
    marker: MarkerRead,
}

struct Snapshot {
    taken: Instant,
    entries: Vec<Entry>,
}

static LAST: tokio::sync::Mutex<Option<Arc<Snapshot>>> = tokio::sync::Mutex::const_new(None);

/// A snapshot of the process table taken no earlier than `asked`: the last one if it began
/// after `asked`, else a new one. Sweeps waiting for the lock share the next one.
async fn snapshot_since(asked: Instant) -> Arc<Snapshot> {
    let mut last = LAST.lock().await;
    if let Some(snapshot) = last.as_ref().filter(|s| s.taken >= asked) {
        return snapshot.clone();
    }
    let taken = Instant::now();
    // A runtime shutting down refuses blocking tasks: then read it here, never skip it.
    let entries = match tokio::task::spawn_blocking(read_snapshot).await {
        Ok(entries) => entries,
        Err(_) => read_snapshot(),
    };
    let snapshot = Arc::new(Snapshot { taken, entries });
    *last = Some(snapshot.clone());
    snapshot
}

fn read_snapshot() -> Vec<Entry> {
    let me = Pid::this();
    let subreaper = nix::sys::prctl::get_child_subreaper().unwrap_or(false);
    process_table()
        .map(|stat| {
            let candidate = !stat.is_zombie()
                && !stat.is_kernel_thread()
                && (!subreaper || (stat.ppid == me && !is_live_leader(stat.pid)));
            let marker = match candidate {
                true => read_marker(stat.pid),
                false => MarkerRead::Absent,
            };
            Entry { stat, marker }
        })
        .collect()
}

/// SIGKILL every remaining process of the run and reap those that were re-parented to us.
/// Call it after the leader exited and before reaping it. Returns how many it killed.
pub async fn sweep(leader: &RunWatch, marker: &RunMarker) -> usize {
    let mut run = RunSweep::new(leader, marker);
    let deadline = Instant::now() + SWEEP_LIMIT;
    loop {
        // The group is the leader's while it is unreaped; gone already once it is empty.
        let _ = nix::sys::signal::killpg(run.leader, Signal::SIGKILL);
        let snapshot = snapshot_since(Instant::now()).await;
        if !run.round(&snapshot) {
            return run.count;
        }
        if Instant::now() >= deadline {
            tracing::warn!(leader = %run.leader, "some processes of the run were still dying when the sweep gave up");
            return run.count;
        }
        tokio::time::sleep(SWEEP_ROUND).await;
    }
}

struct RunSweep {
    leader: Pid,
    marker: Vec<u8>,
    /// Processes killed and not yet gone, followed (and reaped) through their pidfds: a
    /// zombie has lost the environment that showed its marker.
    killed: HashMap<Pid, PidFd>,
    /// How many of `killed` were counted already.
    followed: usize,
    count: usize,
    /// Until when an orphan whose environment reads empty keeps the sweep going.
    unsure_until: Instant,
}

impl RunSweep {
    fn new(leader: &RunWatch, marker: &RunMarker) -> Self {
        Self {
            leader: leader.pid(),
            marker: marker.environ_entry(),
            killed: HashMap::new(),
            followed: 0,
            count: 0,
            unsure_until: Instant::now() + UNSURE_FOR,
        }
    }

    fn in_group_or_session(&self, stat: &ProcStat) -> bool {
        stat.pgrp == self.leader || stat.session == self.leader
    }

    /// Whether the process at `pid` belongs to the run, judged afresh: `None` when its
    /// environment reads empty, as in the middle of an exec.
    fn owns(&self, pid: Pid) -> Option<bool> {
        if ProcStat::read(pid).is_some_and(|stat| self.in_group_or_session(&stat)) {
            return Some(true);
        }
        match read_marker(pid) {
            MarkerRead::Entry(entry) => Some(entry == self.marker),
            MarkerRead::Absent => Some(false),
            MarkerRead::Unsure => None,
        }
    }

    /// One round over a snapshot: kill what lives, reap what died. True while anything of the
    /// run is still alive or unreaped, or was killed or seen gone in this round.
    ///
    /// A process of the run may have children that the snapshot did not show as ours (their
    /// parent was not us yet): they come to us only as its last thread exits, which may be
    /// after the snapshot was read. So the sweep ends only at a round whose snapshot was read
    /// after every process it killed or reaped was gone.
    fn round(&mut self, snapshot: &Snapshot) -> bool {
        let me = Pid::this();
        let mut pending = false;
        for entry in &snapshot.entries {
            pending |= self.settle(entry, me);
        }
        self.count += self.killed.len() - self.followed;
        let following = !self.killed.is_empty();
        self.killed
            .retain(|_, pidfd| pidfd.reap() == Fate::Lingering);
        self.followed = self.killed.len();
        pending || following
    }

    /// Act on one process of a snapshot: kill it if it is the run's and alive, reap it if it
    /// is our zombie. True while it needs another round.
    fn settle(&mut self, Entry { stat, marker }: &Entry, me: Pid) -> bool {
        let ours = self.in_group_or_session(stat)
            || matches!(marker, MarkerRead::Entry(entry) if *entry == self.marker);
        if *marker == MarkerRead::Unsure && !ours {
            // Perhaps ours, in the middle of an exec: look again next round.
            return Instant::now() < self.unsure_until;
        }
        if !ours || stat.pid == self.leader {
            return false;
        }
        if !stat.is_zombie() {
            return !self.killed.contains_key(&stat.pid) && self.kill(stat.pid);
        }
        if stat.ppid == me {
            // Our zombie child: only we can reap it, so the pid is still this one. A zombie
            // main thread whose other threads are still exiting cannot be reaped yet: wait.
            // Reaped now, its last thread may have handed us its children after the snapshot:
            // look again.
            return waitpid(stat.pid, Some(WaitPidFlag::WNOHANG)).is_ok();
        }
        // Its parent is one of ours too: once that dies, the zombie comes to us.
        true
    }

    /// Kill a live process of the run, judged ours afresh through its pidfd. True when it
    /// could not be judged now (an exec, perhaps) and must be looked at again.
    fn kill(&mut self, pid: Pid) -> bool {
        let mut unsure = false;
        let killed = kill_if(pid, |pid| {
            let owns = self.owns(pid);
            unsure = owns.is_none();
            owns == Some(true)
        });
        match killed {
            Some(pidfd) => {
                self.killed.insert(pid, pidfd);
                false
            }
            None => unsure && Instant::now() < self.unsure_until,
        }
    }
}

/// SIGKILL every live process carrying a marker that starts with `prefix`, each through a
/// pidfd after its marker is checked again. One pass.
pub fn kill_runs(prefix: &MarkerPrefix, _: &RunsOf) -> MarkedPass {
    let ours = |pid| marker_entry(pid).is_some_and(|entry| prefix.matches(&entry));
    let mut pass = MarkedPass::default();
    for stat in process_table().filter(|stat| !stat.is_zombie() && !stat.is_kernel_thread()) {
        match read_marker(stat.pid) {
            MarkerRead::Entry(entry) if prefix.matches(&entry) => {
                pass.killed += usize::from(kill_if(stat.pid, ours).is_some());
            }
            MarkerRead::Unsure => pass.unsure += 1,
            MarkerRead::Entry(_) | MarkerRead::Absent => {}
        }
    }
    pass
}

/// Whose runs [`kill_runs`] kills. On Linux the marker alone finds them: every process
/// keeps the environment it was started with, and `/proc` shows it.
pub struct RunsOf;

impl RunsOf {
    /// The runs of this process.
    pub fn this_process() -> Self {
        Self
    }

    /// The runs of the process that started this one (the guardian's server). Call it before
    /// that process can be gone.
    pub fn parent() -> Self {
        Self
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;

    use nix::sys::wait::{Id, WaitStatus, waitid};

    use super::super::proc_table::pids;
    use super::*;
    use crate::marker::MARKER_VAR;
    use crate::process::Leader;

    fn marked_sleeper(value: &str) -> std::process::Child {
        std::process::Command::new("sleep")
            .arg("60")
            .env(MARKER_VAR, value)
            .spawn()
            .expect("spawn sleep")
    }

    fn kill_and_reap(mut child: std::process::Child) {
        let _ = child.kill();
        let _ = child.wait();
    }

    // Not this process's own prefix: the other tests of this binary run beside this one, and
    // their marked processes would die with it.
    #[test]
    fn kill_runs_kills_one_instances_processes_only() {
        let pid = std::process::id();
        let instance = format!("{pid}.cafe");
        let prefix: MarkerPrefix = format!("{MARKER_VAR}={instance}-").parse().expect("prefix");
        let mut ours = marked_sleeper(&format!("{instance}-0"));
        // Another server, one that once had this pid, and one whose start time extends ours.
        let mut others = [
            marked_sleeper("1.1-0"),
            marked_sleeper(&format!("{pid}.0-0")),
            marked_sleeper(&format!("{instance}0-0")),
        ];
        assert_eq!(kill_runs(&prefix, &RunsOf::this_process()).killed, 1);
        assert!(
            ours.wait().expect("wait").code().is_none(),
            "killed by a signal"
        );
        for other in &mut others {
            assert!(
                other.try_wait().expect("try_wait").is_none(),
                "another instance's run"
            );
        }
        others.into_iter().for_each(kill_and_reap);
    }

    #[tokio::test]
    async fn a_sweep_kills_the_runs_orphans_and_spares_an_unmarked_child_of_ours() {
        super::super::adopt_orphans().expect("PR_SET_CHILD_SUBREAPER");
        let marker = RunMarker::new();
        // The leader leaves a marked sleeper in a session of its own, then exits.
        let child = tokio::process::Command::new("sh")
            .args(["-c", "setsid sleep 60 & exit 0"])
            .env(MARKER_VAR, marker.as_str())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let leader = Leader::new(child).expect("leader");
        let mut bystander = std::process::Command::new("sleep")
            .arg("60")
            .process_group(0)
            .spawn()
            .expect("spawn sleep");
        leader.exited().await;
        let marked = |pid| marker_entry(pid) == Some(marker.environ_entry());
        // Until it has a session of its own, the group kill would take it, not the sweep.
        let escaped = || {
            pids().any(|pid| marked(pid) && ProcStat::read(pid).is_some_and(|s| s.session == pid))
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !escaped() {
            assert!(
                Instant::now() < deadline,
                "the marked sleeper never left the group"
            );
            tokio::time::sleep(SWEEP_ROUND).await;
        }

        assert_eq!(sweep(leader.watch(), &marker).await, 1);
        assert!(!pids().any(marked), "the marked orphan is gone");
        assert!(
            bystander.try_wait().expect("try_wait").is_none(),
            "unmarked, spared"
        );
        assert_eq!(leader.reap().await.and_then(|s| s.code()), Some(0));
        kill_and_reap(bystander);
    }

    #[tokio::test]
    async fn a_sweep_follows_the_children_of_an_orphan_it_killed() {
        super::super::adopt_orphans().expect("PR_SET_CHILD_SUBREAPER");
        let marker = RunMarker::new();
        // The orphan is a shell in a session of its own; its sleeper is not our child until the
        // shell dies, so no snapshot taken before that shows it as a candidate.
        let child = tokio::process::Command::new("sh")
            .args(["-c", "setsid sh -c 'sleep 60; true' & exit 0"])
            .env(MARKER_VAR, marker.as_str())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let leader = Leader::new(child).expect("leader");
        leader.exited().await;
        let marked = |pid| marker_entry(pid) == Some(marker.environ_entry());
        let sleeper_runs = || {
            pids().any(|pid| {
                marked(pid)
                    && std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|cmdline| cmdline.starts_with(b"sleep\x0060"))
            })
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !sleeper_runs() {
            assert!(Instant::now() < deadline, "the sleeper never started");
            tokio::time::sleep(SWEEP_ROUND).await;
        }

        assert_eq!(
            sweep(leader.watch(), &marker).await,
            2,
            "the shell and its sleeper"
        );
        assert!(!pids().any(marked), "nothing marked is left");
        assert_eq!(leader.reap().await.and_then(|s| s.code()), Some(0));
    }

    /// An orphan of the run whose main thread has exited while another thread, reading stdin,
    /// lives on, as in a killed node process: the children the main thread forked pass to that
    /// thread, so their parent stays the orphan, and they come to us only as it exits.
    const HALF_EXITED: &str = r#"
import ctypes, subprocess, sys, threading
threading.Thread(target=sys.stdin.read).start()
subprocess.Popen(["sleep", "60"], start_new_session=True)
ctypes.CDLL(None).syscall(int(sys.argv[1]), 0)
"#;

    /// A process's parent, while it lives.
    fn parent(pid: Pid) -> Option<Pid> {
        ProcStat::read(pid).map(|stat| stat.ppid)
    }

    fn snapshot_now() -> Snapshot {
        let taken = Instant::now();
        let entries = read_snapshot();
        Snapshot { taken, entries }
    }

    async fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !condition() {
            assert!(Instant::now() < deadline, "timed out waiting until {what}");
            tokio::time::sleep(SWEEP_ROUND).await;
        }
    }

    /// A run whose exited leader left a [`HALF_EXITED`] orphan, and the orphan's stdin: the
    /// leader, the orphan and its sleeper, once the orphan's main thread has exited.
    async fn run_leaving_a_half_exited_orphan(
        marker: &RunMarker,
    ) -> (Leader, tokio::process::ChildStdin, Pid, Pid) {
        let mut child = tokio::process::Command::new("sh")
            .args([
                "-c",
                "exec 3<&0; python3 -c \"$1\" \"$2\" <&3 & exit 0",
                "sh",
            ])
            .args([HALF_EXITED, &nix::libc::SYS_exit.to_string()])
            .env(MARKER_VAR, marker.as_str())
            .stdin(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let stdin = child.stdin.take().expect("the orphan's stdin");
        let leader = Leader::new(child).expect("leader");
        leader.exited().await;
        let sleeper = || {
            pids().find(|&pid| {
                marker_entry(pid) == Some(marker.environ_entry())
                    && ProcStat::read(pid).is_some_and(|stat| stat.session == pid)
            })
        };
        wait_for("the sleeper runs in a session of its own", || {
            sleeper().is_some()
        })
        .await;
        let sleeper = sleeper().expect("the sleeper");
        let orphan = parent(sleeper).expect("the sleeper's parent");
        wait_for("the orphan's main thread has exited", || {
            ProcStat::read(orphan).is_some_and(|stat| stat.is_zombie())
        })
        .await;
        (leader, stdin, orphan, sleeper)
    }

    #[tokio::test]
    async fn a_round_that_reaped_an_orphan_looks_again_for_the_children_it_handed_us() {
        super::super::adopt_orphans().expect("PR_SET_CHILD_SUBREAPER");
        let marker = RunMarker::new();
        let (leader, stdin, orphan, sleeper) = run_leaving_a_half_exited_orphan(&marker).await;
        // The round's snapshot is read while the sleeper's parent is still the orphan; the
        // orphan's last thread exits before the round.
        let stale = snapshot_now();
        drop(stdin);
        let exited = || {
            let now = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
            !matches!(waitid(Id::Pid(orphan), now), Ok(WaitStatus::StillAlive))
        };
        wait_for("the orphan has exited", exited).await;
        assert_eq!(parent(sleeper), Some(Pid::this()), "the sleeper came to us");

        let mut run = RunSweep::new(leader.watch(), &marker);
        assert!(run.round(&stale), "it reaped the orphan, so it looks again");
        while run.round(&snapshot_now()) {
            tokio::time::sleep(SWEEP_ROUND).await;
        }
        assert_eq!(run.count, 1, "the sleeper");
        assert!(ProcStat::read(sleeper).is_none(), "the sleeper is gone");
        assert_eq!(leader.reap().await.and_then(|s| s.code()), Some(0));
    }
}
