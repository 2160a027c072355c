//! The engine's front door: validate a request, start its CLI, supervise it, and return the
//! outcome. One `Engine` serves any number of concurrent runs; they share only the ledger of
//! sessions, which remembers where each session started and its cumulative usage where the
//! CLI reports usage that way.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::check::run_command;
use crate::cli::{SchemaFlag, UsageFile};
use crate::command;
use crate::config::EngineConfig;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::event::AgentEvent;
use crate::git::JobKey;
use crate::git::worktree_metadata;
use crate::isolation::{RunTree, Tracking, TreeError, TreeOutcome, TreePlan};
use crate::locate::{FoundCli, find_cli};
use crate::event::Usage;
use crate::outcome::{ErrorInfo, ErrorKind, Outcome, Status};
use crate::output_schema::SchemaFile;
use crate::process::{self, RunMarker};
use crate::request::{Isolation, Permission, RunRequest};
use crate::sandbox::{self, Confinement, KernelSupport, SandboxError, WritePlan};
use crate::supervise::{Limits, Observer, supervise};
use crate::transcript::Transcript;

pub struct Engine {
    config: EngineConfig,
    sessions: Mutex<HashMap<(Agent, String), SessionRecord>>,
}

/// A checked request with its command line, ready to start: see [`Engine::prepare`].
#[derive(Debug)]
pub struct Prepared {
    agent: Agent,
    request: RunRequest,
    /// The CLI's binary and where it was found.
    program: FoundCli,
    command: command::CommandLine,
    earlier: Option<SessionRecord>,
    /// Where the CLI is told to write its usage, for a CLI that prints none.
    usage_file: Option<(UsageFile, PathBuf)>,
    /// The run's tree, once [`Engine::place`] has measured or isolated it.
    placed: Option<(JobKey, Tracking)>,
    /// The output schema's file, for a CLI that reads it from one; removed when dropped.
    _schema_file: Option<SchemaFile>,
}

impl Prepared {
    /// The agent that runs it.
    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// The request, its workspace resolved.
    pub fn request(&self) -> &RunRequest {
        &self.request
    }

    /// The run's tree, when it is measured (a run that may write, in git) or isolated.
    pub fn tree(&self) -> Option<&RunTree> {
        match &self.placed {
            Some((_, Tracking::Tracked(tree))) => Some(tree),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
struct SessionRecord {
    workspace: PathBuf,
    /// The last cumulative usage report (see [`crate::cli::Cli::usage_is_cumulative`]), to
    /// subtract next time.
    cumulative_usage: Option<Usage>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Self {
        Self {
            config,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Run `request` with `agent` to its end: [`Engine::prepare`], then
    /// [`Engine::run_prepared`].
    pub async fn run(
        &self,
        agent: Agent,
        request: RunRequest,
        cancel: CancellationToken,
        observer: Observer<'_>,
    ) -> Result<Outcome, SetupError> {
        let prepared = self.prepare(agent, request)?;
        self.run_prepared(prepared, cancel, observer).await
    }

    /// Check a request and build its command line without starting anything, so a caller can
    /// refuse a bad request at once and start (or queue) a good one.
    pub fn prepare(&self, agent: Agent, mut request: RunRequest) -> Result<Prepared, SetupError> {
        if request.prompt.trim().is_empty() {
            return Err(SetupError::EmptyPrompt);
        }
        let profile = agent.profile();
        request.model = request.model.or_else(|| profile.model.clone());
        request.timeout = request.timeout.or(profile.timeout);
        request.workspace = std::fs::canonicalize(&request.workspace)
            .ok()
            .filter(|path| path.is_dir())
            .ok_or_else(|| SetupError::WorkspaceMissing(request.workspace.clone()))?;
        self.add_repository_commands(&mut request);
        let earlier = self.check_resume(agent, &request)?;
        let program = find_cli(agent, &self.config)?;
        let confined = sandbox::decide(
            self.config.sandbox,
            request.permission,
            KernelSupport::current(),
        )?;
        let mut command = self.command_line(agent, &request, &program, confined)?;
        let usage_file = match agent.cli().usage_file() {
            Some(file) => {
                let path = run_file_path("usage", "usage.json").map_err(|source| {
                    SetupError::UsageFile {
                        dir: std::env::temp_dir(),
                        source,
                    }
                })?;
                command.flag_value(file.flag, &path.to_string_lossy());
                Some((file, path))
            }
            None => None,
        };
        let schema_file = hand_over_schema(agent, &request, &mut command)?;
        Ok(Prepared {
            agent,
            request,
            program,
            command,
            earlier,
            usage_file,
            placed: None,
            _schema_file: schema_file,
        })
    }

    /// Places a prepared run in its tree: takes the "before" snapshot of a run that may write
    /// and, for an isolated run, makes its worktree and moves the run there. `job` names the
    /// refs and the branch; worktrees go under `worktrees`. The git work runs off the runtime.
    pub async fn place(
        &self,
        prepared: &mut Prepared,
        job: JobKey,
        worktrees: PathBuf,
    ) -> Result<(), SetupError> {
        let request = &prepared.request;
        let plan = TreePlan {
            isolation: request.isolation,
            base: request.base,
            job: job.clone(),
            worktrees,
        };
        let (workspace, permission) = (request.workspace.clone(), request.permission);
        let tracking = tokio::task::spawn_blocking(move || plan.begin(&workspace, permission))
            .await
            .map_err(|error| TreeError::Internal(error.to_string()))??;
        if let Tracking::Tracked(tree) = &tracking
            && let Some(workdir) = tree.workdir()
        {
            prepared.request.workspace = workdir.to_owned();
        }
        prepared.placed = Some((job, tracking));
        Ok(())
    }

    /// Start a prepared run and supervise it to its end. `cancel` stops it (the whole tree is
    /// torn down before this returns); `observer` sees every event as it is parsed, in batches.
    pub async fn run_prepared(
        &self,
        mut prepared: Prepared,
        cancel: CancellationToken,
        observer: Observer<'_>,
    ) -> Result<Outcome, SetupError> {
        let marker = RunMarker::new();
        let launched = self.launch(&mut prepared, &marker, &cancel).await;
        let Prepared {
            agent,
            mut request,
            command,
            earlier,
            usage_file,
            placed,
            ..
        } = prepared;
        let (confinement, setup, spawned) = match launched {
            Ok(launched) => launched,
            Err(error) => {
                // Nothing ran: an isolated run's worktree goes again.
                settle_tree(placed).await;
                return Err(error);
            }
        };
        let limits = self.limits(agent, &request);
        let prompt = take_prompt(agent, &mut request);
        let (mut transcript, end) =
            supervise(spawned, marker, agent, prompt, limits, cancel.clone(), observer).await;
        warn_of_refusals(confinement.as_ref(), &mut transcript);
        let reported = self
            .settle_usage(&mut transcript, usage_file, agent, &request, earlier)
            .await;
        let mut outcome = transcript.finish(end);
        outcome.warnings.extend(setup);
        check_output(agent, &request, &mut outcome);
        self.after_agent(
            &request,
            &command,
            confinement,
            &mut outcome,
            placed,
            &cancel,
        )
        .await;
        outcome.redact_secrets();
        self.remember(agent, &request, &outcome, reported);
        tracing::info!(%agent, status = outcome.status.name(), ms = outcome.duration_ms, "finished");
        Ok(outcome)
    }

    /// Confines the run, runs a new worktree's setup, and starts the CLI: the confinement,
    /// the setup's warning and the started CLI.
    async fn launch(
        &self,
        prepared: &mut Prepared,
        marker: &RunMarker,
        cancel: &CancellationToken,
    ) -> Result<(Option<Confinement>, Option<String>, process::SpawnedCli), SetupError> {
        let confinement = self.confine(prepared, marker)?;
        let Prepared {
            agent,
            request,
            program,
            command,
            placed,
            ..
        } = &*prepared;
        let setup = self.set_up(request, command, placed.as_ref(), cancel).await;
        let spawn = || {
            let sandbox = confinement
                .as_ref()
                .map(Confinement::for_spawn)
                .transpose()?;
            process::spawn(command, &request.workspace, marker, sandbox)
        };
        let spawned = spawn().map_err(|source| SetupError::Spawn {
            agent: agent.name(),
            bin: program.path.clone(),
            source,
        })?;
        tracing::info!(%agent, pid = %spawned.leader, workspace = %request.workspace.display(), bin = %program.path.display(), found_by = %program.source, "started");
        Ok((confinement, setup, spawned))
    }

    /// The run's sandbox (see [`crate::sandbox`]), its temporary directory set as the CLI's
    /// `TMPDIR`; none when the level or the mode says so.
    fn confine(
        &self,
        prepared: &mut Prepared,
        marker: &RunMarker,
    ) -> Result<Option<Confinement>, SandboxError> {
        let request = &prepared.request;
        let worktree = match &prepared.placed {
            Some((_, Tracking::Tracked(tree))) => tree.worktree.as_ref(),
            _ => None,
        };
        let (tree, git) = match worktree {
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
        let usage_dir = prepared
            .usage_file
            .as_ref()
            .and_then(|(_, path)| path.parent());
        let plan = WritePlan {
            level: request.permission,
            tree,
            git,
            state: prepared
                .agent
                .cli()
                .state_dirs(CliEnv(&prepared.command.env)),
            extra: prepared.agent.profile().writable.clone(),
            engine_files: usage_dir.map(Path::to_owned).into_iter().collect(),
        };
        let confinement = Confinement::for_run(self.config.sandbox, &plan, marker.as_str())?;
        if let Some(confinement) = &confinement {
            let tmp = ("TMPDIR".into(), confinement.tmp().into());
            prepared.command.env.push(tmp);
        }
        Ok(confinement)
    }

    /// The CLI's command line. Its own flags get the level the CLI asks for under the kernel
    /// sandbox when `confined` (see [`crate::cli::Cli::own_level_when_confined`]), or the
    /// test-only level when one is configured ([`EngineConfig::test_cli_permission`]).
    fn command_line(
        &self,
        agent: Agent,
        request: &RunRequest,
        program: &FoundCli,
        confined: bool,
    ) -> Result<command::CommandLine, SetupError> {
        let cli = agent.cli();
        let permission = match self.config.test_cli_permission {
            Some(permission) => permission,
            None if confined => cli.own_level_when_confined(request.permission),
            None => request.permission,
        };
        let request = RunRequest {
            permission,
            ..request.clone()
        };
        let mut command = agent.command_line(&request, &program.path, &self.config.pass_env)?;
        // A CLI found off PATH runs with its dir on PATH, unless the agent sets PATH itself.
        if let Some(path) = program.search_path()
            && !agent
                .profile()
                .env
                .iter()
                .any(|(name, _)| name == "PATH")
        {
            command.replace_env("PATH", path);
        }
        Ok(command)
    }

    /// A new worktree's setup command, before the agent starts. A failure is a warning: the
    /// agent still runs, and its check will tell.
    async fn set_up(
        &self,
        request: &RunRequest,
        command: &command::CommandLine,
        placed: Option<&(JobKey, Tracking)>,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let setup = request.setup.as_deref()?;
        let in_a_new_worktree = matches!(
            placed,
            Some((
                _,
                Tracking::Tracked(RunTree {
                    worktree: Some(_),
                    ..
                })
            ))
        );
        if !in_a_new_worktree {
            return None;
        }
        let limit = self.total_limit(request);
        // The setup is the person's own, from the config file: it runs unconfined (it may
        // need to write caches outside the tree, as package managers do).
        let (dir, env) = (&request.workspace, &command.env);
        let ran = run_command(setup, dir, env, None, limit, cancel).await;
        (!ran.passed).then(|| {
            format!(
                "the setup command `{setup}` failed in the worktree ({}); the agent ran anyway. \
                 Its output ends: {}",
                ran.describe_end(),
                ran.output_tail
            )
        })
    }

    /// After the agent: the caller's check in the run's tree, then what the run changed.
    async fn after_agent(
        &self,
        request: &RunRequest,
        command: &command::CommandLine,
        confinement: Option<Confinement>,
        outcome: &mut Outcome,
        placed: Option<(JobKey, Tracking)>,
        cancel: &CancellationToken,
    ) {
        let ended = matches!(outcome.status, Status::Completed | Status::Failed);
        if let (Some(check), true) = (&request.check, ended) {
            let limit = self.total_limit(request);
            let (dir, env) = (&request.workspace, &command.env);
            // The check is the caller's: it runs under the same sandbox as the agent.
            let sandbox = confinement.as_ref();
            let ran = run_command(check, dir, env, sandbox, limit, cancel).await;
            outcome.check = Some(ran);
        }
        // The run's temporary directory goes now, before the tree is measured.
        drop(confinement);
        let (tree, warning) = settle_tree(placed).await;
        outcome.tree = tree;
        outcome.warnings.extend(warning);
    }

    /// The configured setup and check of the workspace's repository, for a run that may write
    /// or is isolated (a read-only run in place changes nothing to check).
    fn add_repository_commands(&self, request: &mut RunRequest) {
        let measured =
            request.permission != Permission::ReadOnly || request.isolation != Isolation::None;
        let Some(commands) = self.config.repository_commands(&request.workspace) else {
            return;
        };
        if measured {
            request.setup = commands.setup.clone();
            request.check = request.check.take().or_else(|| commands.check.clone());
        }
    }

    fn limits(&self, agent: Agent, request: &RunRequest) -> Limits {
        let config = &self.config;
        Limits {
            total: self.total_limit(request),
            idle: agent.profile().idle_timeout.or(config.idle_timeout),
            person_wait: request.person_wait.clone(),
            grace: config.grace,
            exit_grace: config.exit_grace,
            drain_grace: config.drain_grace,
            max_line_bytes: config.max_line_bytes,
            stderr_tail_bytes: config.stderr_tail_bytes,
        }
    }

    /// How long a run, and each command of the caller's around it, may take.
    fn total_limit(&self, request: &RunRequest) -> std::time::Duration {
        request.timeout.unwrap_or(self.config.total_timeout)
    }

    /// Most CLIs resume a session only from the directory it started in (opencode hangs
    /// otherwise): refuse early when the ledger knows it was another one.
    fn check_resume(
        &self,
        agent: Agent,
        request: &RunRequest,
    ) -> Result<Option<SessionRecord>, SetupError> {
        let Some(session_id) = &request.session_id else {
            return Ok(None);
        };
        let record = self
            .ledger()
            .get(&(agent, session_id.clone()))
            .cloned();
        let Some(record) = record else {
            return Ok(None);
        };
        if agent.cli().resumes_only_from_origin() && record.workspace != request.workspace {
            return Err(SetupError::ResumeFromOtherWorkspace {
                agent: agent.name(),
                session_id: session_id.clone(),
                original: record.workspace,
            });
        }
        Ok(Some(record))
    }

    /// Read the usage a CLI wrote to a file, and turn a cumulative report into this run's.
    /// Returns the usage as the CLI reported it, for the ledger.
    async fn settle_usage(
        &self,
        transcript: &mut Transcript,
        usage_file: Option<(UsageFile, PathBuf)>,
        agent: Agent,
        request: &RunRequest,
        earlier: Option<SessionRecord>,
    ) -> Option<Usage> {
        if let Some((file, path)) = usage_file {
            read_usage_file(transcript, file, &path).await;
        }
        let reported = transcript.usage_mut().map(|usage| *usage);
        if agent.cli().usage_is_cumulative() {
            let earlier = earlier.and_then(|record| record.cumulative_usage);
            self.unaccumulate_usage(transcript, agent, request, earlier);
        }
        reported
    }

    /// Turn a session's cumulative usage into this run's: subtract the last report.
    fn unaccumulate_usage(
        &self,
        transcript: &mut Transcript,
        agent: Agent,
        request: &RunRequest,
        earlier: Option<Usage>,
    ) {
        match (earlier, transcript.usage_mut()) {
            (Some(earlier), Some(usage)) => *usage = usage.since(&earlier),
            (None, Some(_)) if request.session_id.is_some() => transcript.warn(format!(
                "{} reports usage cumulatively over a session, and this server did not see the \
                 session's earlier turns: the usage includes them",
                agent
            )),
            _ => {}
        }
    }

    fn remember(
        &self,
        agent: Agent,
        request: &RunRequest,
        outcome: &Outcome,
        reported: Option<Usage>,
    ) {
        let Some(session_id) = &outcome.session_id else {
            return;
        };
        let mut ledger = self.ledger();
        let record = ledger
            .entry((agent, session_id.clone()))
            .or_insert_with(|| SessionRecord {
                workspace: request.workspace.clone(),
                cumulative_usage: None,
            });
        if reported.is_some() {
            record.cumulative_usage = reported;
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, HashMap<(Agent, String), SessionRecord>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A confined run whose tools were refused writes says what the sandbox refused.
fn warn_of_refusals(confinement: Option<&Confinement>, transcript: &mut Transcript) {
    if let Some(confinement) = confinement
        && !transcript.refused().is_empty()
    {
        let warning = confinement.refusal_warning(transcript.refused());
        transcript.warn(warning);
    }
}

/// What a placed run changed. When it cannot be measured, the warning says why and an
/// isolated run's worktree stays for review; the run's answer stands either way.
async fn settle_tree(placed: Option<(JobKey, Tracking)>) -> (Option<TreeOutcome>, Option<String>) {
    let Some((job, tracking)) = placed else {
        return (None, None);
    };
    let tree = match tracking {
        Tracking::Off => return (None, None),
        Tracking::NotTracked(reason) => return (Some(TreeOutcome::not_tracked(reason)), None),
        Tracking::Tracked(tree) => tree,
    };
    let kept = tree.clone();
    let settled = tokio::task::spawn_blocking(move || tree.settle(&job).map_err(|e| e.to_string()))
        .await
        .unwrap_or_else(|error| Err(error.to_string()));
    match settled {
        Ok(outcome) => (Some(outcome), None),
        Err(error) => {
            let warning = match &kept.worktree {
                Some(worktree) => format!(
                    "could not measure what the run changed ({error}); its worktree {} (branch \
                     {}) is kept for review",
                    worktree.path.display(),
                    worktree.branch
                ),
                None => format!("could not measure what the run changed: {error}"),
            };
            (Some(TreeOutcome::unmeasured(kept)), Some(warning))
        }
    }
}

/// The prompt the CLI reads, taken out of the request: an output schema the CLI takes no flag
/// for is spelled out at its end.
fn take_prompt(agent: Agent, request: &mut RunRequest) -> String {
    let mut prompt = std::mem::take(&mut request.prompt);
    if let Some(schema) = &request.output_schema
        && agent.cli().schema_flag().is_none()
    {
        prompt.push_str(&schema.prompt_instruction());
    }
    prompt
}

/// Gives the CLI the request's output schema by its own flag, where it has one; a schema
/// read from a file is written to one, which goes when the returned guard is dropped.
fn hand_over_schema(
    agent: Agent,
    request: &RunRequest,
    command: &mut command::CommandLine,
) -> Result<Option<SchemaFile>, SetupError> {
    let Some(schema) = &request.output_schema else {
        return Ok(None);
    };
    match agent.cli().schema_flag() {
        None => Ok(None),
        Some(SchemaFlag::Inline(flag)) => {
            command.insert_options(&[format!("{flag}={}", schema.schema())]);
            Ok(None)
        }
        Some(SchemaFlag::File(flag)) => {
            let file = run_file_path("schema", "schema.json")
                .and_then(|path| SchemaFile::write(schema, path))
                .map_err(|source| SetupError::SchemaFile {
                    dir: std::env::temp_dir(),
                    source,
                })?;
            command.insert_options(&[format!("{flag}={}", file.path().display())]);
            Ok(Some(file))
        }
    }
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

/// A fresh path for one of a run's files (`kind` names it), in a directory of its own (which
/// the sandbox lets the CLI write) made in the temp dir.
fn run_file_path(kind: &str, file: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // Named by this process instance, so its guardian can remove it after a SIGKILL.
    let dir = std::env::temp_dir().join(format!("cam-{kind}-{}-{n}", crate::marker::instance()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir.join(file))
}

/// The usage the CLI wrote to `path`, unless its stdout reported some; the file goes.
async fn read_usage_file(transcript: &mut Transcript, file: UsageFile, path: &Path) {
    let owned = path.to_path_buf();
    let text = tokio::task::spawn_blocking(move || {
        let text = std::fs::read_to_string(&owned);
        if let Some(dir) = owned.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
        text
    })
    .await
    .ok()
    .and_then(Result::ok);
    if transcript.usage_mut().is_some() {
        return;
    }
    // A run that was killed, or failed before its end, writes none.
    let Some(text) = text else {
        return;
    };
    match (file.read)(&text) {
        Some(usage) => transcript.record(AgentEvent::Usage(usage)),
        None => {
            tracing::warn!(file = %path.display(), "the CLI's usage file did not read as usage")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clis::{CLAUDE, CODEX, GEMINI};
    use crate::output_schema::OutputSchema;

    fn with_schema(agent: Agent) -> (RunRequest, command::CommandLine) {
        let mut request = crate::request::flag_prompt_request();
        let schema = serde_json::json!({"type": "object", "required": ["a"]});
        request.output_schema = Some(OutputSchema::new(schema).unwrap());
        let cmd = agent.cli().command(&request, Path::new("cli")).unwrap();
        (request, cmd)
    }

    #[test]
    fn the_schema_goes_by_file_inline_or_in_the_prompt_as_the_cli_takes_it() {
        let (request, mut cmd) = with_schema(CODEX);
        let file = hand_over_schema(CODEX, &request, &mut cmd)
            .unwrap()
            .expect("a file");
        let flag = format!("--output-schema={}", file.path().display());
        assert_eq!(
            cmd.args[cmd.args.len() - 3..],
            [flag, "--".into(), "-".into()]
        );
        let written = std::fs::read_to_string(file.path()).unwrap();
        assert_eq!(written, r#"{"required":["a"],"type":"object"}"#);
        let dir = file.path().parent().unwrap().to_owned();
        drop(file);
        assert!(!dir.exists(), "the schema's directory outlived the run");

        let (request, mut cmd) = with_schema(CLAUDE);
        assert!(hand_over_schema(CLAUDE, &request, &mut cmd).unwrap().is_none());
        let inline = r#"--json-schema={"required":["a"],"type":"object"}"#;
        assert!(cmd.args.contains(&inline.to_owned()), "{:?}", cmd.args);

        let (mut request, mut cmd) = with_schema(GEMINI);
        let before = cmd.args.clone();
        assert!(hand_over_schema(GEMINI, &request, &mut cmd).unwrap().is_none());
        assert_eq!(cmd.args, before);
        assert!(take_prompt(GEMINI, &mut request).contains("exactly one JSON value"));
    }
}
