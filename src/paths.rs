//! Real paths as a person writes them: the engine's [`cli_agent_engine::plain_path`], which a
//! run's workspace goes through too, so the app's roots and the engine's workspaces compare
//! in the same form (on Windows the plain `C:\work`, not the verbatim `\\?\C:\work`).

pub use cli_agent_engine::plain_path::{canonicalize, plain_form};
