//! The person's answer to a question a job waits on (`--park-questions`): recorded in the
//! store for the job's server to take, as the cancel button asks through it. Only here, behind
//! the dashboard's session and CSRF guard: no MCP tool answers one, so the model cannot.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use super::error::DashboardError;
use super::pages;
use super::state::DashboardState;
use crate::jobs::store::JobId;

/// `POST /jobs/{id}/questions/{number}/{verdict}` (`allow` or `decline`): the report as JSON,
/// `result` and `message`.
pub async fn answer(
    State(state): State<DashboardState>,
    Path((id, number, verdict)): Path<(String, u32, String)>,
) -> Result<Response, DashboardError> {
    let (Ok(id), Some(allow)) = (id.parse::<JobId>(), allowed(&verdict)) else {
        return Ok(pages::not_found().await);
    };
    let key = id.clone();
    let answer = state
        .query(move |store| store.answer_parked(&key, number, allow))
        .await?;
    let message = answer.message(&id, number, allow);
    Ok(Json(serde_json::json!({"result": answer.name(), "message": message})).into_response())
}

fn allowed(verdict: &str) -> Option<bool> {
    match verdict {
        "allow" => Some(true),
        "decline" => Some(false),
        _ => None,
    }
}
