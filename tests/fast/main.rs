//! The inner loop, `cargo test`'s only integration binary: every test that needs nothing from
//! outside the checkout but git and the fake CLIs (tests/fixtures), one module per former test
//! file. One binary because linking is most of an incremental run. doctor and mcp_readme also
//! check the installed real CLIs' versions and configs where scripts/install-clis.sh put them
//! (quick, no model run); without them those checks skip, and fail under
//! `CAM_TEST_REQUIRE_ALL=1`. The other tiers (`cargo test --test <tier>`) are in scripts/test.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

use cli_agent_test_support::{common, mcp, real, web};

mod cli_discovery;
mod config;
mod custom_agents;
mod dashboard;
mod doctor;
mod engine_lifecycle;
mod guardian;
mod http;
mod input_required;
mod isolation;
mod job_result;
mod jobs;
mod jobs_command;
mod mcp_garbage;
mod mcp_logging;
mod mcp_readme;
mod mcp_server;
mod offered_tools;
mod output_schema;
mod policy;
mod resources;
mod run_command;
mod sandbox;
mod server_json;
mod structure;
