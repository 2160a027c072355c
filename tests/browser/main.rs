//! The dashboard in a real browser (playwright-core from scripts/install-browser.sh driving the
//! system's Chromium): `cargo test --test browser`, or `scripts/test browser`.
// A test's or a bench's unwrap is a failure with its place (see clippy.toml).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../mcp/mod.rs"]
mod mcp;
#[path = "../web/mod.rs"]
mod web;

mod dashboard_browser;
