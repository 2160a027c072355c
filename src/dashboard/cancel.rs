//! The cancel button: asks the job's owning server through the store, as `jobs cancel` does,
//! and tells the page what came of it.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use super::error::DashboardError;
use super::pages;
use super::state::DashboardState;
use crate::jobs::store::{CANCEL_WAIT, JobId};

/// `POST /jobs/{id}/cancel` (the guard has checked the session and its CSRF value): the
/// report of `jobs cancel --json`.
pub async fn cancel(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
) -> Result<Response, DashboardError> {
    let Ok(id) = id.parse::<JobId>() else {
        return Ok(pages::not_found().await);
    };
    let key = id.clone();
    let cancel = state
        .query(move |store| store.cancel_and_wait(&key, CANCEL_WAIT))
        .await?;
    Ok(Json(cancel.to_json(&id)).into_response())
}
