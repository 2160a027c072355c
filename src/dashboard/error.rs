//! What can go wrong serving the dashboard, each message saying what to do.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::jobs::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    #[error(transparent)]
    Store(#[from] StoreError),

    #[error("a query of the job store did not finish: {0}")]
    Query(String),

    #[error(
        "cannot listen on 127.0.0.1:{port}: {source}; choose another port with --port, or \
         leave it out for a free one"
    )]
    Bind { port: u16, source: std::io::Error },

    #[error("the system's random source failed ({0}): the dashboard cannot make its token")]
    Random(getrandom::Error),

    #[error("cannot install the SIGINT/SIGTERM handlers: {0}")]
    Signals(std::io::Error),

    #[error("cannot print the dashboard's URL on stdout: {0}")]
    Stdout(std::io::Error),

    #[error("the dashboard's HTTP server failed: {0}")]
    Serve(std::io::Error),
}

impl IntoResponse for DashboardError {
    fn into_response(self) -> Response {
        let status = match &self {
            Self::Store(StoreError::UnknownJob { .. }) => StatusCode::NOT_FOUND,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        (status, self.to_string()).into_response()
    }
}
