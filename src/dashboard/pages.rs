//! The pages and their assets, embedded in the binary: no build step, nothing fetched from
//! the internet. The pages are shells that their scripts fill from the live feeds.

use axum::extract::{Path, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use super::error::DashboardError;
use super::state::DashboardState;
use crate::jobs::store::JobId;

const INDEX: &str = include_str!("assets/index.html");
const JOB: &str = include_str!("assets/job.html");

/// Name, content type, content.
const ASSETS: [(&str, &str, &str); 5] = [
    ("icon.svg", "image/svg+xml", include_str!("assets/icon.svg")),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
    (
        "common.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/common.js"),
    ),
    (
        "list.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/list.js"),
    ),
    (
        "job.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/job.js"),
    ),
];

/// Scripts and styles from this server only, no inline script, no frames, nothing from
/// elsewhere: what an answer's text might smuggle in has nowhere to go.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
    connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub async fn index() -> Html<&'static str> {
    Html(INDEX)
}

/// A job's page, with the session's CSRF value for its cancel button.
pub async fn job(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
) -> Result<Response, DashboardError> {
    let Ok(id) = id.parse::<JobId>() else {
        return Ok(not_found().await);
    };
    let key = id.clone();
    state
        .query(move |store| store.get(&key)?.ok_or_else(|| store.unknown_job(&key)))
        .await?;
    let page = JOB
        .replace("{{id}}", id.as_str())
        .replace("{{csrf}}", state.access().csrf().as_str());
    Ok(Html(page).into_response())
}

pub async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(asset, _, _)| *asset == name) {
        Some((_, kind, content)) => ([(CONTENT_TYPE, *kind)], *content).into_response(),
        None => not_found().await,
    }
}

pub async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "no such page on this dashboard").into_response()
}

/// On every response: the content policy, no sniffing, no framing, no caching, no referrer.
pub async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (CONTENT_SECURITY_POLICY, POLICY),
        (X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (X_FRAME_OPTIONS, "DENY"),
        (REFERRER_POLICY, "no-referrer"),
        (CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}
