//! The inner loop, `cargo test`'s only integration binary: every test that needs nothing from
//! outside the checkout but git and the fake CLIs (tests/fixtures), one module per former test
//! file. One binary because linking is most of an incremental run. doctor and mcp_readme also
//! check the installed real CLIs' versions and configs where scripts/install-clis.sh put them
//! (quick, no model run); without them those checks skip, and fail under
//! `CAM_TEST_REQUIRE_ALL=1`. The other tiers (`cargo test --test <tier>`) are in scripts/test.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

#[cfg(unix)]
use cli_agent_test_support::real;
use cli_agent_test_support::{common, mcp, web};

// Unix's install dirs and login shell, through symbolic links to the fake CLI's script; the
// Windows candidates are the engine's locate tests' (under Wine).
#[cfg(unix)]
mod cli_discovery;
mod config;
mod custom_agents;
mod dashboard;
mod doctor;
mod engine_lifecycle;
// Unix only: Windows needs no guardian process (a job object kills the run's tree with its
// holder: the engine's platform::windows tests, under Wine).
#[cfg(unix)]
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
// Symbolic links to the fake CLI's script on the server's PATH; Windows' PATH search is the
// engine's locate tests' (under Wine).
#[cfg(unix)]
mod offered_tools;
mod output_schema;
mod policy;
mod resources;
// The fake CLI run by `run`, and Unix signals to it.
#[cfg(unix)]
mod run_command;
// The kernel sandbox (Landlock, Seatbelt): Windows has none (doctor says so).
#[cfg(unix)]
mod sandbox;
mod server_json;
mod structure;
