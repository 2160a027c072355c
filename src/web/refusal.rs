//! How every check of the front refuses a request, in one shape.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A refusal: its status and a plain-text body saying what was wrong and how to fix it.
pub fn refusal(status: StatusCode, message: &str) -> Response {
    (status, format!("{message}\n")).into_response()
}
