//! A job's changes on its page: where it worked (isolation, worktree, branch), what it changed
//! and its diff (rendered on the server, `diff_view.rs`), and the buttons that apply, discard
//! or revert them. The buttons pass the guard as cancel does (session, CSRF value, Origin);
//! the git work runs in the blocking pool, as `jobs apply|discard|revert` would do it.

use std::path::PathBuf;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use cli_agent_engine::Isolation;
use cli_agent_engine::git::{Changes, GitError};
use serde::Serialize;

use super::diff_view;
use super::error::DashboardError;
use super::pages;
use super::state::DashboardState;
use crate::jobs::review::{self, ReviewError};
use crate::jobs::store::{JobId, Store, StoreError, TreeRecord, TreeState};

/// What the page shows of a job's changes.
#[derive(Debug, Serialize)]
struct ReviewView {
    /// `None`: nothing is on record (a read-only run in place, or not started yet).
    isolation: Option<Isolation>,
    state: Option<TreeState>,
    /// The worktree while it is there.
    worktree: Option<PathBuf>,
    branch: Option<String>,
    /// Outside git: why nothing is measured.
    not_tracked: Option<String>,
    /// The files table and the diff, escaped: for the page to insert as it is.
    html: String,
    actions: &'static [Action],
}

/// A button of the page.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Apply,
    Discard,
    Revert,
}

/// What a button did, or why it did nothing.
#[derive(Debug, Serialize)]
struct Reply {
    /// `applied`, `discarded`, `reverted`, or `refused`.
    result: &'static str,
    message: String,
    /// The files that stopped an apply or a revert.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    conflicts: Vec<String>,
}

/// `GET /jobs/{id}/review`: the job's [`ReviewView`].
pub async fn show(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
) -> Result<Response, DashboardError> {
    let Ok(id) = id.parse::<JobId>() else {
        return Ok(pages::not_found().await);
    };
    let view = state
        .query(move |store| ReviewView::read(store, &id))
        .await?;
    Ok(Json(view).into_response())
}

/// `POST /jobs/{id}/apply`.
pub async fn apply(state: State<DashboardState>, id: Path<String>) -> Response {
    act(state, id, Action::Apply).await
}

/// `POST /jobs/{id}/discard`.
pub async fn discard(state: State<DashboardState>, id: Path<String>) -> Response {
    act(state, id, Action::Discard).await
}

/// `POST /jobs/{id}/revert`.
pub async fn revert(state: State<DashboardState>, id: Path<String>) -> Response {
    act(state, id, Action::Revert).await
}

/// Runs a button's action (the guard has checked the session, its CSRF value and the Origin).
async fn act(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    action: Action,
) -> Response {
    let Ok(id) = id.parse::<JobId>() else {
        return pages::not_found().await;
    };
    let done = state.query(move |store| Ok(action.run(store, &id))).await;
    match done {
        Ok(Ok(message)) => Json(Reply {
            result: action.done(),
            message,
            conflicts: Vec::new(),
        })
        .into_response(),
        Ok(Err(error)) => refused(error),
        Err(error) => error.into_response(),
    }
}

/// A refusal: 409 with the reason and the conflicting files; 404 for a job not in the store.
fn refused(error: ReviewError) -> Response {
    let status = match &error {
        ReviewError::Store(StoreError::UnknownJob { .. }) => StatusCode::NOT_FOUND,
        ReviewError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::CONFLICT,
    };
    let conflicts = match &error {
        ReviewError::Git(GitError::Conflicts { files, .. }) => files.clone(),
        _ => Vec::new(),
    };
    let reply = Reply {
        result: "refused",
        message: error.to_string(),
        conflicts,
    };
    (status, Json(reply)).into_response()
}

impl Action {
    /// Does it; says what it did.
    fn run(self, store: &Store, id: &JobId) -> Result<String, ReviewError> {
        Ok(match self {
            Self::Apply => {
                let merged = review::apply(store, id, false)?;
                format!(
                    "Applied to the workspace: {}. The worktree is removed; branch kept until \
                     the job is pruned.",
                    diff_view::summary(&merged.changes)
                )
            }
            Self::Revert => {
                let merged = review::revert(store, id, false)?;
                format!(
                    "Reverted in the workspace: {}.",
                    diff_view::summary(&merged.changes)
                )
            }
            Self::Discard => {
                let discarded = review::discard(store, id)?;
                match discarded.worktree {
                    Some(path) => format!(
                        "Discarded: worktree {} and branch {} removed.",
                        path.display(),
                        discarded.branch
                    ),
                    None => format!("Discarded: branch {} removed.", discarded.branch),
                }
            }
        })
    }

    fn done(self) -> &'static str {
        match self {
            Self::Apply => "applied",
            Self::Discard => "discarded",
            Self::Revert => "reverted",
        }
    }
}

impl ReviewView {
    /// The job's tree and, once it ended, its changes and diff.
    fn read(store: &Store, id: &JobId) -> Result<Self, StoreError> {
        let job = store.get(id)?.ok_or_else(|| store.unknown_job(id))?;
        let record = store.tree(id)?;
        let finished = job.status.is_finished();
        let measured = match finished {
            true => store.outcome(id)?.and_then(|outcome| outcome.tree),
            false => None,
        };
        let changes = measured.map(|tree| tree.changes).unwrap_or_default();
        let html = match (&record, finished) {
            // Its refs went with its worktree: there is no diff to read, and none to show.
            (Some(record), true) if record.state == TreeState::Removed => {
                diff_view::render(id, &changes, "")
            }
            (Some(_), true) => match review::diff(store, id, &[]) {
                Ok(diff) => diff_view::render(id, &changes, &diff),
                Err(error) => diff_view::trouble(&error.to_string()),
            },
            _ => String::new(),
        };
        let branch = record
            .as_ref()
            .and_then(|record| Some(record.tree.worktree.as_ref()?.branch.clone()));
        Ok(Self {
            isolation: record.as_ref().map(|record| record.tree.isolation),
            state: record.as_ref().map(|record| record.state),
            worktree: record
                .as_ref()
                .and_then(TreeRecord::live_worktree)
                .map(ToOwned::to_owned),
            branch,
            actions: match (&record, finished) {
                (Some(record), true) => actions(record, &changes),
                _ => &[],
            },
            not_tracked: changes.not_tracked,
            html,
        })
    }
}

/// The buttons a finished job's tree offers: apply and discard while its worktree is there,
/// revert while an in-place run's changes are in the workspace.
fn actions(record: &TreeRecord, changes: &Changes) -> &'static [Action] {
    if record.live_worktree().is_some() {
        return &[Action::Apply, Action::Discard];
    }
    let in_place = record.tree.worktree.is_none()
        && matches!(record.state, TreeState::Running | TreeState::InPlace);
    match in_place && !changes.is_empty() {
        true => &[Action::Revert],
        false => &[],
    }
}
