//! The last stage: a supervised run turned into its [`Outcome`]. The usage is read and made
//! this run's own, the answer checked against the output schema, the caller's check run in the
//! run's tree, what the run changed measured, secrets masked, and the session remembered.

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::check::run_command;
use crate::command_line::CommandLine;
use crate::config::EngineConfig;
use crate::event::Usage;
use crate::outcome::{ErrorInfo, ErrorKind, Outcome, Status};
use crate::request::RunRequest;
use crate::sandbox::Confinement;
use crate::transcript::Transcript;

use super::files::UsageFileAt;
use super::launch::Started;
use super::place::Placed;
use super::prepare::Prepared;
use super::sessions::{SessionRecord, Sessions, this_runs_usage};
use super::supervise::Supervised;

/// The outcome of a supervised run. `cancel` stops the caller's check.
pub(crate) async fn settle(
    ran: Supervised,
    config: &EngineConfig,
    sessions: &Sessions,
    cancel: &CancellationToken,
) -> Outcome {
    let Supervised {
        run,
        mut transcript,
        end,
    } = ran;
    let Started {
        placed: Placed { prepared, tree },
        confinement,
        setup_failed,
    } = run;
    let Prepared {
        agent,
        request,
        command_line,
        earlier,
        mut files,
        ..
    } = prepared;
    let usage_file = files.usage.take();
    let reported = usage(&mut transcript, usage_file, agent, &request, earlier).await;
    let mut outcome = transcript.finish(end);
    outcome.warnings.extend(setup_failed);
    check_output(agent, &request, &mut outcome);
    check(
        config,
        &request,
        &command_line,
        confinement,
        &mut outcome,
        cancel,
    )
    .await;
    let (tree, warning) = tree.settle().await;
    outcome.tree = tree;
    outcome.warnings.extend(warning);
    outcome.redact_secrets();
    sessions.remember(agent, &request.workspace, &outcome, reported);
    tracing::info!(%agent, status = outcome.status.name(), ms = outcome.duration_ms, "finished");
    outcome
}

/// Reads the usage a CLI wrote to a file, and turns a cumulative report into this run's.
/// Returns the usage as the CLI reported it, for the ledger.
async fn usage(
    transcript: &mut Transcript,
    file: Option<UsageFileAt>,
    agent: Agent,
    request: &RunRequest,
    earlier: Option<SessionRecord>,
) -> Option<Usage> {
    if let Some(file) = file {
        file.read_into(transcript).await;
    }
    let reported = transcript.usage_mut().map(|usage| *usage);
    if agent.cli().usage_is_cumulative() {
        this_runs_usage(transcript, agent, request, earlier);
    }
    reported
}

/// A completed run asked for an output schema: its answer parsed into `output`, or the run
/// failed naming why, the answer kept as it was.
fn check_output(agent: Agent, request: &RunRequest, outcome: &mut Outcome) {
    let Some(schema) = &request.output_schema else {
        return;
    };
    if outcome.status != Status::Completed {
        return;
    }
    match schema.validate(&outcome.answer) {
        Ok(value) => outcome.output = Some(value),
        Err(error) => {
            outcome.status = Status::Failed;
            outcome.error = Some(ErrorInfo {
                kind: ErrorKind::InvalidOutput,
                message: error.to_string(),
                hint: agent.hint(ErrorKind::InvalidOutput),
            });
        }
    }
}

/// The caller's check, in the run's tree, after a run that ended by itself (completed or
/// failed). It is the caller's: it runs under the same sandbox as the agent, whose temporary
/// directory goes once it has run, before the tree is measured.
async fn check(
    config: &EngineConfig,
    request: &RunRequest,
    command_line: &CommandLine,
    confinement: Option<Confinement>,
    outcome: &mut Outcome,
    cancel: &CancellationToken,
) {
    let ended = matches!(outcome.status, Status::Completed | Status::Failed);
    if let (Some(check), true) = (&request.check, ended) {
        let limit = config.total_limit(request);
        let (dir, env) = (&request.workspace, &command_line.env);
        let ran = run_command(check, dir, env, confinement.as_ref(), limit, cancel).await;
        outcome.check = Some(ran);
    }
}
