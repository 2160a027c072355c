//! The Windows server under Wine, driven from Linux by a real MCP client: the promises
//! for the binary users get on Windows, end to end. scripts/check-windows builds
//! `cli-agent-mcp.exe` and the Windows fake CLI (tests/fake-cli-windows) for
//! x86_64-pc-windows-gnu and runs this tier with
//!
//! - `CAM_WINE_SERVER_EXE`: the server's `.exe` (a Linux path);
//! - `CAM_WINE_FAKE_CLI_EXE`: the fake CLI's `.exe`, configured as codex (`CAM_CODEX_BIN`, as a
//!   user points the server at a CLI);
//! - `CAM_WINE_RUNNER`: the command that runs a Windows program (`wine` with the prefix);
//! - `WINEPREFIX`: the Wine prefix (with the ProcessPrng DLL Rust's std needs).
//!
//! Without them every test skips, saying so, and fails under `CAM_TEST_REQUIRE_ALL=1`. A Wine
//! process is a Linux process whose command line is its Windows one, so what is left of a run is
//! read from Linux's process table: the fake CLI is copied into each test's own directory, whose
//! unique name is then on the command line of every process of its runs, and the tree's processes
//! carry the run's marker (`CAM_RUN_ID=<marker>`) too.
#![cfg(target_os = "linux")]
// A test's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

use cli_agent_test_support::{common, mcp};

mod batch_files;
mod rig;
mod teardown;
