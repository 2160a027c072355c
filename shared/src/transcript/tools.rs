//! The tool calls of a run, counted once each: a CLI may announce a call and report its end,
//! or report only its end, and the summary must count either once.

use crate::open_calls::OpenCalls;
use crate::outcome::{ToolCall, ToolSummary};

/// Finished tool calls kept in the summary.
const RECENT_TOOLS: usize = 20;

/// The counts and the most recent finished calls, as the outcome reports them.
#[derive(Debug, Default)]
pub(super) struct ToolTally {
    summary: ToolSummary,
    /// Calls announced and not finished, so their end is not counted again.
    open: OpenCalls,
}

impl ToolTally {
    /// A call was announced.
    pub(super) fn started(&mut self, id: Option<String>) {
        self.summary.calls += 1;
        if let Some(id) = id {
            self.open.open(id);
        }
    }

    /// A call finished; it counts as a new one unless it was announced and is still open.
    pub(super) fn finished(&mut self, id: Option<String>, call: ToolCall) {
        let announced = id.is_some_and(|id| self.open.close(&id));
        if !announced {
            self.summary.calls += 1;
        }
        self.summary.failed += u32::from(!call.success);
        let recent = &mut self.summary.recent;
        if recent.len() == RECENT_TOOLS {
            recent.remove(0);
        }
        recent.push(call);
    }

    pub(super) fn into_summary(self) -> ToolSummary {
        self.summary
    }
}
