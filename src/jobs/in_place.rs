//! The in-place runs of a server, by repository: a run that overlapped another in the same
//! repository cannot tell its edits from the other's, and is told so.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::store::JobId;

/// The in-place runs of this server going on now, by repository.
#[derive(Default)]
pub struct InPlaceRuns {
    runs: Registry,
}

/// The other runs one run met in its repository.
type Overlaps = Arc<Mutex<BTreeSet<String>>>;

/// Each repository's in-place runs now, with whom each has met.
type Registry = Arc<Mutex<HashMap<PathBuf, Vec<(JobId, Overlaps)>>>>;

/// One in-place run's entry; leaves the registry when dropped.
pub(super) struct InPlace {
    runs: Registry,
    repo: PathBuf,
    id: JobId,
    met: Overlaps,
}

impl InPlaceRuns {
    pub fn enter(&self, repo: &Path, id: &JobId) -> InPlace {
        let met = Overlaps::default();
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        let here = runs.entry(repo.to_owned()).or_default();
        for (other, their_met) in here.iter() {
            lock(&met).insert(other.to_string());
            lock(their_met).insert(id.to_string());
        }
        here.push((id.clone(), met.clone()));
        InPlace {
            runs: self.runs.clone(),
            repo: repo.to_owned(),
            id: id.clone(),
            met,
        }
    }
}

impl InPlace {
    pub fn others(&self) -> Vec<String> {
        lock(&self.met).iter().cloned().collect()
    }
}

impl Drop for InPlace {
    fn drop(&mut self) {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(here) = runs.get_mut(&self.repo) {
            here.retain(|(id, _)| *id != self.id);
            if here.is_empty() {
                runs.remove(&self.repo);
            }
        }
    }
}

fn lock(set: &Overlaps) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
    set.lock().unwrap_or_else(|p| p.into_inner())
}
