//! The dashboard: every run and job of the store (all servers of this user share it), live in
//! a browser page. `commands::dashboard` serves it alone, `commands::serve` beside `/mcp`; it
//! takes plain values (a store, an address) and knows neither. Loopback only, behind the web
//! front's guard and a one-time token traded for a session cookie (`auth.rs`); the pages and
//! their assets are embedded (`pages.rs`); the store is polled for what changed and pushed as
//! server-sent events (`live/`); a job's changes are reviewed, applied, discarded or reverted
//! from its page (`review.rs`), and a question it waits on answered there (`questions.rs`).
//! [`router`] gives the routes; `state` what they share.

mod auth;
mod cancel;
mod diff_view;
mod error;
mod live;
mod markdown;
mod pages;
mod questions;
mod review;
mod state;

use axum::Router;
use axum::routing::{get, post};

pub use self::error::DashboardError;
pub use self::state::DashboardState;

/// The dashboard's routes, for `cli-agent-mcp dashboard` and for another server to merge at `/`
/// (`Router::new().nest_service("/mcp", mcp).merge(router(state))`). They bring their own
/// guard (the front's Host and Origin check for the dashboard's hosts, the session cookie,
/// CSRF): a bearer-token check in front of them would lock browsers out, since a browser cannot
/// send one.
pub fn router(state: DashboardState) -> Router {
    Router::new()
        .route("/", get(pages::index))
        .route("/events", get(live::jobs_feed))
        .route("/jobs/{id}", get(pages::job))
        .route("/jobs/{id}/events", get(live::job_feed))
        .route("/jobs/{id}/cancel", post(cancel::cancel))
        .route(
            "/jobs/{id}/questions/{number}/{verdict}",
            post(questions::answer),
        )
        .route("/jobs/{id}/review", get(review::show))
        .route("/jobs/{id}/apply", post(review::apply))
        .route("/jobs/{id}/discard", post(review::discard))
        .route("/jobs/{id}/revert", post(review::revert))
        .route("/assets/{name}", get(pages::asset))
        .fallback(pages::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.access().clone(),
            auth::require_session,
        ))
        .layer(state.guard().clone())
        .layer(axum::middleware::map_response(pages::secure_headers))
        .with_state(state)
}
