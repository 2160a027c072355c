//! Which processes of a process table belong to a run, where the OS keeps no tree for us
//! (macOS: no subreaper, so escaped orphans go to launchd, and no pidfd).
//!
//! Processes are known by the kernel's unique id, never recycled, unlike a pid. Every process
//! also records the unique id of the process that spawned it, kept when it is reparented, so a
//! double-forked daemon still links back to the run through its spawner. Two more keys: the
//! run's process group (safe only while the session leader is unreaped, which keeps its id out
//! of reuse) and the run's marker in the environment.
//!
//! The one gap: an intermediate that forks and exits between two looks at the table leaves a
//! child whose spawner was never seen. Only the marker still names such a child.

use std::collections::{HashMap, HashSet};

/// One process as a scan of the process table saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcEntry {
    pub pid: i32,
    pub pgid: i32,
    /// The kernel's id of this process, never reused.
    pub unique_id: u64,
    /// The unique id of the process that spawned it, kept across reparenting.
    pub parent_unique_id: u64,
    pub zombie: bool,
    pub marker: MarkerSeen,
}

/// What a process's environment said of the run marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerSeen {
    /// The value of its `CAM_RUN_ID` entry.
    Value(String),
    Absent,
    /// Not ours to read, gone meanwhile, or in the middle of an exec: says nothing either way.
    Unreadable,
}

/// Which marker values belong to the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerMatch {
    /// One run's value.
    Exact(String),
    /// Every run of one server instance (for the guardian): `<instance>-`. A prefix that does
    /// not end in `-` matches nothing, since it would also claim other instances' runs.
    Prefix(String),
}

impl MarkerMatch {
    pub fn matches(&self, seen: &MarkerSeen) -> bool {
        let MarkerSeen::Value(value) = seen else {
            return false;
        };
        match self {
            Self::Exact(run) => value == run,
            Self::Prefix(instance) => instance.ends_with('-') && value.starts_with(instance),
        }
    }
}

/// The processes of one run (or, for the guardian, of every run of one server), known by
/// unique id. It only grows: a dead member's id still links the children it left.
#[derive(Clone, Debug)]
pub struct ProcessTree {
    group: Option<i32>,
    marker: MarkerMatch,
    members: HashSet<u64>,
}

/// Not a process of ours: the kernel's own id, and what a failed read would give. Never a
/// member, or every process the kernel spawned would link to the run.
const NO_PROCESS: u64 = 0;

impl ProcessTree {
    /// `roots`: the run's session leader (or the server, for the guardian). `group`: the run's
    /// process group, only while its leader is unreaped.
    pub fn new(
        roots: impl IntoIterator<Item = u64>,
        group: Option<i32>,
        marker: MarkerMatch,
    ) -> Self {
        let mut tree = Self {
            group,
            marker,
            members: HashSet::new(),
        };
        roots.into_iter().for_each(|root| tree.adopt(root));
        tree
    }

    /// A process the tracker saw the run fork, remembered so its children still link after
    /// it exits.
    pub fn adopt(&mut self, unique_id: u64) {
        if unique_id != NO_PROCESS {
            self.members.insert(unique_id);
        }
    }

    pub fn contains(&self, unique_id: u64) -> bool {
        self.members.contains(&unique_id)
    }

    /// The snapshot's processes that are the run's, zombies included, in snapshot order; their
    /// unique ids are remembered. A process is the run's if it or its spawner is a member, if
    /// it is in the run's group, or if its marker matches; and so are its descendants to any
    /// depth, in whatever order the snapshot lists them.
    pub fn link<'a>(&mut self, snapshot: &'a [ProcEntry]) -> Vec<&'a ProcEntry> {
        let mut linked: Vec<bool> = snapshot.iter().map(|entry| self.claims(entry)).collect();
        let mut pending: Vec<usize> = (0..snapshot.len()).filter(|&i| linked[i]).collect();
        let spawned = spawned_by(snapshot);
        while let Some(index) = pending.pop() {
            let unique_id = snapshot[index].unique_id;
            self.adopt(unique_id);
            for &child in spawned.get(&unique_id).into_iter().flatten() {
                if !linked[child] {
                    linked[child] = true;
                    pending.push(child);
                }
            }
        }
        snapshot
            .iter()
            .zip(linked)
            .filter_map(|(entry, linked)| linked.then_some(entry))
            .collect()
    }

    /// Whether the entry is the run's by itself, before following spawners within the
    /// snapshot.
    fn claims(&self, entry: &ProcEntry) -> bool {
        self.contains(entry.unique_id)
            || self.contains(entry.parent_unique_id)
            || self.group == Some(entry.pgid)
            || self.marker.matches(&entry.marker)
    }
}

/// The snapshot's indices by the unique id of the process that spawned them.
fn spawned_by(snapshot: &[ProcEntry]) -> HashMap<u64, Vec<usize>> {
    let mut spawned: HashMap<u64, Vec<usize>> = HashMap::new();
    for (index, entry) in snapshot.iter().enumerate() {
        spawned
            .entry(entry.parent_unique_id)
            .or_default()
            .push(index);
    }
    spawned
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) const RUN: &str = "1.a-1";

    /// A running, unmarked process leading its own group.
    pub(crate) fn process(pid: i32, unique_id: u64, parent_unique_id: u64) -> ProcEntry {
        ProcEntry {
            pid,
            pgid: pid,
            unique_id,
            parent_unique_id,
            zombie: false,
            marker: MarkerSeen::Absent,
        }
    }

    fn marked(mut entry: ProcEntry, marker: MarkerSeen) -> ProcEntry {
        entry.marker = marker;
        entry
    }

    fn run_tree(root: u64) -> ProcessTree {
        ProcessTree::new([root], None, MarkerMatch::Exact(RUN.to_owned()))
    }

    fn pids(linked: &[&ProcEntry]) -> Vec<i32> {
        linked.iter().map(|entry| entry.pid).collect()
    }

    #[test]
    fn a_reparented_orphan_links_through_its_adopted_spawner() {
        let mut tree = run_tree(100);
        // The tracker saw the leader fork 101; 101 forked 102 and exited, 102 went to launchd.
        tree.adopt(101);
        let snapshot = [process(1, 1, 0), process(50, 100, 9), process(52, 102, 101)];
        assert_eq!(pids(&tree.link(&snapshot)), [50, 52]);
        assert!(tree.contains(102), "the orphan is remembered");
    }

    #[test]
    fn a_grandchild_listed_before_its_parent_is_linked() {
        let mut tree = run_tree(100);
        let snapshot = [
            process(53, 103, 102),
            process(52, 102, 101),
            process(51, 101, 100),
            process(50, 100, 9),
        ];
        assert_eq!(pids(&tree.link(&snapshot)), [53, 52, 51, 50]);
        assert!([101, 102, 103].iter().all(|&id| tree.contains(id)));
    }

    #[test]
    fn a_process_reusing_a_dead_members_pid_is_not_linked() {
        let mut tree = run_tree(100);
        assert_eq!(
            pids(&tree.link(&[process(50, 100, 9), process(51, 101, 100)])),
            [50, 51]
        );
        // 51 died; an unrelated process now has its pid.
        let later = [process(50, 100, 9), process(51, 900, 7)];
        assert_eq!(pids(&tree.link(&later)), [50]);
        assert!(!tree.contains(900));
    }

    #[test]
    fn a_later_stranger_with_a_members_pid_and_group_is_not_linked() {
        let mut tree = run_tree(100);
        assert_eq!(pids(&tree.link(&[process(60, 100, 9)])), [60]);
        // The leader is gone (no group held), a stranger leads a group with the same number.
        assert!(tree.link(&[process(60, 600, 7)]).is_empty());
    }

    #[test]
    fn members_of_the_runs_group_are_linked() {
        let mut tree = ProcessTree::new([100], Some(50), MarkerMatch::Exact(RUN.to_owned()));
        let stranger_in_group = ProcEntry {
            pgid: 50,
            ..process(70, 700, 7)
        };
        let snapshot = [process(50, 100, 9), stranger_in_group, process(71, 701, 7)];
        assert_eq!(pids(&tree.link(&snapshot)), [50, 70]);
    }

    #[test]
    fn an_exact_marker_matches_one_run_and_a_prefix_every_run_of_an_instance() {
        let value = |text: &str| MarkerSeen::Value(text.to_owned());
        let exact = MarkerMatch::Exact("1.a-1".to_owned());
        let prefix = MarkerMatch::Prefix("1.a-".to_owned());
        assert!(exact.matches(&value("1.a-1")));
        assert!(!exact.matches(&value("1.a-10")));
        assert!(prefix.matches(&value("1.a-1")));
        assert!(prefix.matches(&value("1.a-10")));
        assert!(!prefix.matches(&value("1.ab-1")));
        assert!(!MarkerMatch::Prefix("1.a".to_owned()).matches(&value("1.ab-1")));
    }

    #[test]
    fn a_marked_process_and_its_children_are_linked_though_its_spawner_was_never_seen() {
        let mut tree = run_tree(100);
        let snapshot = [
            marked(process(80, 800, 555), MarkerSeen::Value(RUN.to_owned())),
            process(81, 801, 800),
            marked(
                process(82, 802, 555),
                MarkerSeen::Value("1.a-10".to_owned()),
            ),
        ];
        assert_eq!(pids(&tree.link(&snapshot)), [80, 81]);
    }

    #[test]
    fn an_unreadable_or_absent_marker_links_nothing_by_itself() {
        let mut tree = run_tree(100);
        let snapshot = [
            marked(process(80, 800, 555), MarkerSeen::Unreadable),
            process(81, 801, 555),
        ];
        assert!(tree.link(&snapshot).is_empty());
    }

    #[test]
    fn the_guardians_tree_holds_every_descendant_of_the_server() {
        let server = 10;
        let prefix = MarkerMatch::Prefix("1.a-".to_owned());
        let mut tree = ProcessTree::new([server], None, prefix);
        let snapshot = [
            process(20, 20, server),
            process(21, 21, 20),
            process(30, 30, server),
            process(40, 40, 4),
        ];
        assert_eq!(pids(&tree.link(&snapshot)), [20, 21, 30]);
    }

    #[test]
    fn the_kernels_id_is_never_a_member() {
        let mut tree = ProcessTree::new([NO_PROCESS], None, MarkerMatch::Exact(RUN.to_owned()));
        tree.adopt(NO_PROCESS);
        assert!(tree.link(&[process(1, 1, NO_PROCESS)]).is_empty());
    }

    #[test]
    fn zombies_are_linked_and_their_children_through_them() {
        let mut tree = run_tree(100);
        let zombie = ProcEntry {
            zombie: true,
            ..process(51, 101, 100)
        };
        let snapshot = [zombie, process(52, 102, 101)];
        assert_eq!(pids(&tree.link(&snapshot)), [51, 52]);
    }
}
