//! `test_trigger_tool_change` (server-stateless, SEP-2575): the suite calls it while a
//! `subscriptions/listen` stream asks for `toolsListChanged`, and expects the notification.
//! Each call adds `test_added_tool` to the list, or takes it away, and the change goes out as
//! every change of the tools on offer does.

use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{CallToolResult, ContentBlock, Tool};

use super::input_schema;
use crate::mcp::AgentServer;

pub const TRIGGER: &str = "test_trigger_tool_change";
const ADDED: &str = "test_added_tool";

/// Whether `test_added_tool` is on the list now.
#[derive(Default)]
pub struct ToolChange {
    added: AtomicBool,
}

impl ToolChange {
    /// The trigger, and the added tool while it is there.
    pub fn tools(&self) -> impl Iterator<Item = Tool> {
        let added = self.added.load(Ordering::Relaxed);
        [
            (
                TRIGGER,
                "Adds test_added_tool to the tool list, or takes it away.",
            ),
            (ADDED, "Listed while test_trigger_tool_change has added it."),
        ]
        .into_iter()
        .filter(move |(name, _)| *name == TRIGGER || added)
        .map(|(name, description)| {
            Tool::new(name, description, input_schema(serde_json::json!({})))
        })
    }

    /// The call of `name`, if it is one of these.
    pub fn call(&self, name: &str, agents: &AgentServer) -> Option<CallToolResult> {
        let text = match name {
            TRIGGER => {
                let added = !self.added.fetch_xor(true, Ordering::Relaxed);
                agents.catalogue.announce_change();
                if added {
                    "test_added_tool added"
                } else {
                    "test_added_tool removed"
                }
            }
            ADDED if self.added.load(Ordering::Relaxed) => "the added tool ran",
            _ => return None,
        };
        Some(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}
