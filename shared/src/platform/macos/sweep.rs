//! Tearing a run down on macOS: the process table read through libproc, linked into the
//! run's tree by unique ids (those the tracker saw, and each process's spawner's), by its
//! group while the leader is unreaped, and by its marker; then stopped, rescanned and killed
//! ([`crate::platform::teardown`]).

use std::time::Duration;

use nix::sys::signal::Signal;

use super::libproc::{all_pids, bsd_info, environment_value, signal_if, unique_ids};
use super::run_watch::RunWatch;
use crate::marker::{MARKER_VAR, MarkerPrefix, RunMarker};
use crate::platform::marked::MarkedPass;
use crate::platform::teardown::{Delivery, ProcessTable, Teardown, TeardownSignal, tear_down};
use crate::platform::tree::{MarkerMatch, ProcEntry, ProcessTree};

/// A pause before each rescan, for the kills of the round before to show.
const ROUND: Duration = Duration::from_millis(10);
/// About five seconds of rounds: as long as a Linux sweep keeps going.
const MAX_ROUNDS: usize = 500;

/// SIGKILL every process of the run that is left, wherever it went. Call it after the leader
/// exited and before reaping it. Returns how many it killed.
pub async fn sweep(watch: &RunWatch, marker: &RunMarker) -> usize {
    let tree = ProcessTree::new(
        watch.known(),
        Some(watch.pid().as_raw()),
        MarkerMatch::Exact(marker.as_str().to_owned()),
    );
    let copy = tree.clone();
    let teardown = match tokio::task::spawn_blocking(move || tear_down_tree(copy)).await {
        Ok(teardown) => teardown,
        // A runtime shutting down refuses blocking tasks: then tear down here, never skip it.
        Err(_) => tear_down_tree(tree),
    };
    if !teardown.complete {
        tracing::warn!(leader = %watch.pid(), "some processes of the run were still alive when the teardown gave up");
    }
    teardown.killed
}

fn tear_down_tree(mut tree: ProcessTree) -> Teardown {
    tear_down(&mut Table::default(), &mut tree, MAX_ROUNDS)
}

/// Whose runs [`kill_runs`] kills: the descendants of a server (by unique id) where it is
/// known, and on every OS each process that carries the server's marker prefix.
pub struct RunsOf {
    server: Option<u64>,
}

impl RunsOf {
    /// The runs of this process, by their marker: this process's other descendants (its
    /// guardian among them) are not runs, and each run's own teardown already followed its
    /// unique ids.
    pub fn this_process() -> Self {
        Self { server: None }
    }

    /// The runs of the process that started this one (the guardian's server): every
    /// descendant of it. Call it while that process still lives, before it can be gone.
    pub fn parent() -> Self {
        let me = i32::try_from(std::process::id()).unwrap_or(0);
        Self {
            server: unique_ids(me).map(|ids| ids.parent_unique_id),
        }
    }
}

/// Stop and kill every process of every run of the server instance of `prefix`. One whole
/// teardown, so nothing is left unsure.
pub fn kill_runs(prefix: &MarkerPrefix, runs: &RunsOf) -> MarkedPass {
    let marker = MarkerMatch::Prefix(format!("{}-", prefix.instance()));
    let teardown = tear_down_tree(ProcessTree::new(runs.server, None, marker));
    MarkedPass {
        killed: teardown.killed,
        unsure: 0,
    }
}

/// The live process table.
#[derive(Default)]
struct Table {
    scans: usize,
}

impl ProcessTable for Table {
    fn scan(&mut self) -> Vec<ProcEntry> {
        if self.scans > 0 {
            std::thread::sleep(ROUND);
        }
        self.scans += 1;
        let me = i32::try_from(std::process::id()).unwrap_or(0);
        let pids = all_pids().unwrap_or_else(|error| {
            tracing::warn!(%error, "cannot list the processes to tear a run down");
            Vec::new()
        });
        pids.into_iter()
            .filter(|&pid| pid > 0 && pid != me)
            .filter_map(entry)
            .collect()
    }

    fn signal(&mut self, pid: i32, unique_id: u64, signal: TeardownSignal) -> Delivery {
        let signal = match signal {
            TeardownSignal::Stop => Signal::SIGSTOP,
            TeardownSignal::Kill => Signal::SIGKILL,
        };
        signal_if(pid, unique_id, signal)
    }
}

/// One process as the teardown sees it; `None` when it is gone or not ours to read.
fn entry(pid: i32) -> Option<ProcEntry> {
    let info = bsd_info(pid)?;
    let ids = unique_ids(pid)?;
    Some(ProcEntry {
        pid,
        pgid: info.pgid,
        unique_id: ids.unique_id,
        parent_unique_id: ids.parent_unique_id,
        zombie: info.zombie,
        marker: environment_value(pid, MARKER_VAR),
    })
}
