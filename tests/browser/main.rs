//! The dashboard in a real browser (playwright-core from scripts/install-browser.sh driving the
//! system's Chromium): `cargo test --test browser`, or `scripts/test browser`.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

use cli_agent_test_support::{common, web};

mod dashboard_browser;
