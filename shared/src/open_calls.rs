//! The tool calls of a run that started and have not finished yet, remembered so a call
//! announced and then reported finished counts once.

use std::collections::VecDeque;

/// Open calls remembered: CLIs run a few at once, and a call that never finishes must not
/// make every later lookup slower.
pub const OPEN_CALLS: usize = 64;

/// Ids of started, unfinished tool calls, oldest first. A short list beats hashing every id
/// of a run that makes hundreds of thousands of calls.
#[derive(Debug, Default)]
pub struct OpenCalls(VecDeque<String>);

impl OpenCalls {
    /// Remembers a started call, forgetting the oldest open one if [`OPEN_CALLS`] are.
    pub fn open(&mut self, id: String) {
        if self.0.len() == OPEN_CALLS {
            self.0.pop_front();
        }
        self.0.push_back(id);
    }

    /// Forgets a finished call; false if it was not open (never announced, or forgotten).
    pub fn close(&mut self, id: &str) -> bool {
        let found = self.0.iter().rposition(|open| open == id);
        found.is_some_and(|at| self.0.remove(at).is_some())
    }
}
