//! The third stage: a placed run confined (its sandbox, with a temp dir of its own), a new
//! worktree's setup command run, and the CLI started once the guardian is up. A run that
//! cannot start leaves nothing: an isolated run's new worktree goes again.

use tokio_util::sync::CancellationToken;

use crate::check::run_command;
use crate::config::EngineConfig;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::git::worktree_metadata;
use crate::process::{self, RunMarker, SpawnedCli};
use crate::sandbox::{Confinement, SandboxError, WritePlan};

use super::place::Placed;

/// A run whose CLI has started.
pub(crate) struct Launched {
    pub(super) run: Started,
    pub(super) cli: SpawnedCli,
    pub(super) marker: RunMarker,
}

/// A placed run as its launch left it, apart from its process: what the stages after the
/// launch carry on to the outcome.
pub(super) struct Started {
    pub(super) placed: Placed,
    /// The run's sandbox; `None` when the level or the mode says so.
    pub(super) confinement: Option<Confinement>,
    /// Why a new worktree's setup command failed, if it did: a warning of the outcome.
    pub(super) setup_failed: Option<String>,
}

/// Confines `placed`, runs a new worktree's setup, and starts the CLI. `cancel` stops the
/// setup.
pub(crate) async fn launch(
    mut placed: Placed,
    config: &EngineConfig,
    cancel: &CancellationToken,
) -> Result<Launched, SetupError> {
    let marker = RunMarker::new();
    let confinement = match confine(&mut placed, config, &marker) {
        Ok(confinement) => confinement,
        Err(error) => return Err(nothing_ran(placed, error.into()).await),
    };
    let setup_failed = set_up(&placed, config, cancel).await;
    match spawn(&placed, confinement.as_ref(), &marker) {
        Ok(cli) => Ok(Launched {
            run: Started {
                placed,
                confinement,
                setup_failed,
            },
            cli,
            marker,
        }),
        Err(error) => Err(nothing_ran(placed, error).await),
    }
}

/// `error`, once a run that never started has left nothing: an isolated run's worktree goes.
async fn nothing_ran(placed: Placed, error: SetupError) -> SetupError {
    placed.tree.settle().await;
    error
}

/// The run's sandbox (see [`crate::sandbox`]), its temporary directory set as the CLI's
/// `TMPDIR`; none when the level or the mode says so.
fn confine(
    placed: &mut Placed,
    config: &EngineConfig,
    marker: &RunMarker,
) -> Result<Option<Confinement>, SandboxError> {
    let prepared = &mut placed.prepared;
    let request = &prepared.request;
    let (tree, git) = match placed.tree.worktree() {
        Some(worktree) => {
            let git = worktree_metadata(&worktree.path).map_err(|source| SandboxError::Io {
                what: "worktree's git metadata",
                path: worktree.path.clone(),
                source,
            })?;
            (worktree.path.clone(), git)
        }
        None => (request.workspace.clone(), Vec::new()),
    };
    let agent = prepared.agent;
    let plan = WritePlan {
        level: request.permission,
        tree,
        git,
        state: agent.cli().state_dirs(CliEnv(&prepared.command_line.env)),
        extra: agent.profile().writable.clone(),
        engine_files: prepared
            .files
            .usage_dir()
            .map(ToOwned::to_owned)
            .into_iter()
            .collect(),
    };
    let confinement = Confinement::for_run(config.sandbox, &plan, marker.as_str())?;
    if let Some(confinement) = &confinement {
        let tmp = ("TMPDIR".into(), confinement.tmp().into());
        prepared.command_line.env.push(tmp);
    }
    Ok(confinement)
}

/// A new worktree's setup command, before the agent starts. A failure is a warning: the agent
/// still runs, and its check will tell.
async fn set_up(
    placed: &Placed,
    config: &EngineConfig,
    cancel: &CancellationToken,
) -> Option<String> {
    let request = &placed.prepared.request;
    let setup = request.setup.as_deref()?;
    placed.tree.worktree()?;
    let limit = config.total_limit(request);
    // The setup is the person's own, from the config file: it runs unconfined (it may need to
    // write caches outside the tree, as package managers do).
    let (dir, env) = (&request.workspace, &placed.prepared.command_line.env);
    let ran = run_command(setup, dir, env, None, limit, cancel).await;
    (!ran.passed).then(|| {
        format!(
            "the setup command `{setup}` failed in the worktree ({}); the agent ran anyway. Its \
             output ends: {}",
            ran.describe_end(),
            ran.output_tail
        )
    })
}

/// Starts the CLI in its session, confined by `confinement` when given.
fn spawn(
    placed: &Placed,
    confinement: Option<&Confinement>,
    marker: &RunMarker,
) -> Result<SpawnedCli, SetupError> {
    let prepared = &placed.prepared;
    let (agent, request, program) = (prepared.agent, &prepared.request, &prepared.program);
    let spawned = confinement
        .map(Confinement::for_spawn)
        .transpose()
        .and_then(|sandbox| {
            process::spawn(&prepared.command_line, &request.workspace, marker, sandbox)
        })
        .map_err(|source| SetupError::Spawn {
            agent: agent.name(),
            bin: program.path.clone(),
            source,
        })?;
    tracing::info!(%agent, pid = %spawned.leader, workspace = %request.workspace.display(), bin = %program.path.display(), found_by = %program.source, "started");
    Ok(spawned)
}
