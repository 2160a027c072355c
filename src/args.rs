//! The command line: every clap type. They depend on nothing above them (the engine's types
//! and the job store's ids aside); `commands` turns them into the plain settings of each part.

use std::path::PathBuf;
use std::time::Duration;

use std::collections::HashMap;

use clap::{Arg, Args, CommandFactory, Parser, Subcommand};
use cli_agent_engine::Base;
use cli_agent_engine::Isolation;
use cli_agent_engine::clis::{BUILTINS, Cli as AgentCli};
use cli_agent_engine::environment::EnvPattern;
use cli_agent_engine::sandbox::SandboxMode;
use cli_agent_engine::{Effort, EngineConfig, Permission};

use crate::jobs::store::{JobId, JobStatus};

/// What separates the roots of `CAM_ALLOWED_ROOTS`: PATH's separator, since a Windows path
/// holds `:` after its drive letter.
const ROOTS_DELIMITER: char = if cfg!(windows) { ';' } else { ':' };

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Run coding-agent CLIs headless, as an MCP server or once from the command line; leave nothing behind"
)]
pub struct Arguments {
    #[command(flatten)]
    pub options: Options,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What the bare binary takes: the settings every command shares, and `serve`'s own.
#[derive(Args, Debug)]
pub struct Options {
    /// The config file (default: $XDG_CONFIG_HOME/cli-agent-mcp/config.toml, if it exists;
    /// %APPDATA%\cli-agent-mcp\config.toml on Windows).
    /// Flags and CAM_* variables override what it sets.
    #[arg(long, env = "CAM_CONFIG", global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub logging: LoggingArgs,
    /// The bare binary serves MCP, so `serve`'s options are accepted without the subcommand.
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve MCP over stdio, or Streamable HTTP with --http: one tool per CLI (the default).
    Serve(ServeArgs),
    /// Run one agent once and print its answer.
    Run(RunArgs),
    /// Check which CLIs are installed, in which versions, and what to do about the rest.
    Doctor(DoctorArgs),
    /// The recorded jobs: list them (the default), show one, print its answer, cancel, prune.
    Jobs(JobsArgs),
    /// A live page of every run and job, on 127.0.0.1: prints its URL with a one-time token.
    Dashboard(DashboardArgs),
    /// Print the effective settings and agents, and where each setting came from.
    Config(ConfigArgs),
}

impl Command {
    pub fn default_log_level(&self) -> &'static str {
        match self {
            // rmcp logs every message it receives at info.
            Self::Serve(_) => "info,rmcp=warn",
            Self::Run(_)
            | Self::Doctor(_)
            | Self::Jobs(_)
            | Self::Dashboard(_)
            | Self::Config(_) => "warn",
        }
    }
}

/// Settings of the engine, shared by every command.
#[derive(Args, Debug)]
pub struct EngineArgs {
    /// A run's total time limit when its request gives none.
    #[arg(
        long,
        env = "CAM_TIMEOUT_SECS",
        global = true,
        default_value_t = 1800,
        value_name = "SECS"
    )]
    pub default_timeout_secs: u64,
    /// End a run after this long without any event from its CLI (0: never).
    #[arg(
        long,
        env = "CAM_IDLE_TIMEOUT_SECS",
        global = true,
        default_value_t = 600,
        value_name = "SECS"
    )]
    pub idle_timeout_secs: u64,
    /// Time between SIGINT to a CLI's process group and SIGKILL.
    #[arg(
        long,
        env = "CAM_GRACE_SECS",
        global = true,
        default_value_t = 3.0,
        value_name = "SECS"
    )]
    pub grace_secs: f64,
    /// Longest JSONL line accepted from a CLI; a longer one fails the run.
    #[arg(long, env = "CAM_MAX_LINE_BYTES", global = true, default_value_t = 64 * 1024 * 1024, value_name = "BYTES")]
    pub max_line_bytes: usize,
    /// More variables every CLI receives (comma-separated names; `NAME_*` passes a prefix).
    /// A CLI gets only the basics (PATH, HOME, locale, proxies, CA bundles, …), its own
    /// variables and these: other variables of this process never reach it.
    #[arg(
        long,
        env = "CAM_PASS_ENV",
        global = true,
        value_delimiter = ',',
        value_name = "NAMES"
    )]
    pub pass_env: Vec<EnvPattern>,
    /// Confine each CLI and everything it starts with Landlock under read-only and
    /// workspace-write (writes only to the workspace, the CLI's own state and a private
    /// temporary directory): auto (where the kernel can, said once where it cannot),
    /// required (refuse to run where it cannot), off.
    #[arg(
        long,
        env = "CAM_SANDBOX",
        global = true,
        default_value_t = SandboxMode::Auto,
        value_name = "MODE"
    )]
    pub sandbox: SandboxMode,
    /// When a CLI is not on PATH, do not ask the login shell (`$SHELL -i -l -c`) for its PATH;
    /// the dirs where installers put the CLIs are still searched.
    #[arg(long, env = "CAM_NO_LOGIN_SHELL", global = true, value_name = "BOOL", num_args = 0..=1,
          default_value_t = false, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(),
          action = clap::ArgAction::Set)]
    pub no_login_shell: bool,
    /// Test-only: build every CLI's command line at this level whatever the call asked, so a
    /// test shows that the sandbox alone bounds the run.
    #[arg(
        long,
        env = "CAM_TEST_CLI_PERMISSION",
        global = true,
        hide = true,
        value_name = "LEVEL"
    )]
    pub test_cli_permission: Option<Permission>,
}

impl EngineArgs {
    /// The engine's settings, with the binaries given by `--<cli>-bin` or `CAM_<CLI>_BIN`.
    pub fn config(&self, binaries: HashMap<String, PathBuf>) -> EngineConfig {
        EngineConfig {
            binaries,
            login_shell: !self.no_login_shell,
            total_timeout: Duration::from_secs(self.default_timeout_secs),
            idle_timeout: (self.idle_timeout_secs > 0)
                .then(|| Duration::from_secs(self.idle_timeout_secs)),
            grace: Duration::from_secs_f64(self.grace_secs.clamp(0.0, 60.0)),
            max_line_bytes: self.max_line_bytes,
            pass_env: self.pass_env.clone(),
            sandbox: self.sandbox,
            test_cli_permission: self.test_cli_permission,
            ..EngineConfig::default()
        }
    }
}

/// The derived command plus the arguments each CLI of the registry brings.
pub fn command() -> clap::Command {
    with_bin_args(Arguments::command())
}

fn with_bin_args(command: clap::Command) -> clap::Command {
    BUILTINS
        .iter()
        .fold(command, |command, cli| command.arg(bin_arg(*cli)))
}

/// `--<cli>-bin PATH`, also `CAM_<CLI>_BIN`.
fn bin_arg(cli: &dyn AgentCli) -> Arg {
    let name = cli.name();
    Arg::new(bin_arg_id(cli))
        .long(format!("{name}-bin"))
        .env(cli_agent_engine::agent::env_var(name, "BIN"))
        .global(true)
        .value_name("PATH")
        .value_parser(clap::value_parser!(PathBuf))
        .help(format!(
            "The {name} binary (default: `{}` on PATH, else where installers put it)",
            cli.binary()
        ))
}

pub fn bin_arg_id(cli: &dyn AgentCli) -> String {
    format!("{}_bin", cli.name())
}

#[derive(Args, Debug)]
pub struct LoggingArgs {
    /// Log filter for stderr, e.g. `info` or `cli_agent_engine=debug`.
    #[arg(long, env = "CAM_LOG", global = true, value_name = "FILTER")]
    pub log: Option<String>,
    /// Also write logs to this file.
    #[arg(long, env = "CAM_LOG_FILE", global = true, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The agent: a built-in CLI (`cli-agent-mcp doctor` lists them) or a custom agent of the config file.
    pub agent: String,
    /// What the agent should do; `-` reads it from stdin.
    pub prompt: String,
    /// The agent's working directory (default: the current one). Any directory: --allow-root
    /// bounds MCP calls only.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// read-only, workspace-write or unlimited. Any level: --max-permission bounds MCP calls
    /// only.
    #[arg(long, default_value = "read-only")]
    pub permission: Permission,
    /// The model to ask for.
    #[arg(long)]
    pub model: Option<String>,
    /// Resume this session instead of starting a new one.
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// With --session-id: branch that session into a new one, leaving it unchanged.
    #[arg(long, requires = "session_id")]
    pub fork: bool,
    /// The model's reasoning effort: low, medium, high or max (default: the CLI's).
    #[arg(long, value_name = "LEVEL")]
    pub effort: Option<Effort>,
    /// This run's total time limit.
    #[arg(long, value_name = "SECS")]
    pub timeout_secs: Option<u64>,
    /// Text appended to the agent's system prompt (claude only).
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Where the agent works: `none` (the workspace itself) or `worktree` (a git worktree of
    /// its own on branch cli-agent-mcp/<job id>, kept for review when it changed something).
    /// Default: the agent's configured default, else none.
    #[arg(long, value_name = "WHERE")]
    pub isolation: Option<Isolation>,
    /// What an isolated run starts from: `working` (the workspace as it is, uncommitted and
    /// untracked work included) or `head` (the last commit).
    #[arg(long, value_name = "BASE", default_value = "working", value_parser = parse_base)]
    pub base: Base,
    /// A shell command run in the run's tree after the agent ends (tests, lint); its exit code
    /// and output tail are reported. Default: the repository's configured check.
    #[arg(long, value_name = "COMMAND")]
    pub check: Option<String>,
    /// A file holding a JSON Schema the final answer must follow: the answer is validated
    /// (with --json, the parsed answer is the outcome's `output`); one that does not conform
    /// fails the run naming why.
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,
    /// Print the whole outcome as one JSON object instead of the answer.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also list the models each CLI offers, where it can (codex, opencode), the agent's
    /// configured `model` marked as the default.
    #[arg(long)]
    pub models: bool,
}

/// `jobs`: the job store, from a shell (`CAM_STATE_DIR` says where it is).
#[derive(Args, Debug)]
pub struct JobsArgs {
    #[command(subcommand)]
    pub action: Option<JobsAction>,
    #[command(flatten)]
    pub list: JobsListArgs,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum JobsAction {
    /// One job: its state, last progress line and transcript size.
    Show { id: JobId },
    /// A job's whole answer, exactly, to stdout.
    Result {
        id: JobId,
        /// Print the job's events as JSON lines instead.
        #[arg(long)]
        transcript: bool,
    },
    /// Ask the server running a job to cancel it, and wait up to 10 s to see it end.
    Cancel { id: JobId },
    /// What a job changed, as a unified diff (optionally only some files).
    Diff {
        id: JobId,
        /// Only these files (relative to the repository's top level).
        paths: Vec<String>,
    },
    /// Bring an isolated job's changes into its workspace as uncommitted changes (all or
    /// nothing: a conflict changes nothing and names the files).
    Apply {
        id: JobId,
        /// Only say whether it would apply.
        #[arg(long)]
        check: bool,
    },
    /// Remove an isolated job's worktree and branch.
    Discard { id: JobId },
    /// Take an in-place job's changes out of its workspace again (all or nothing).
    Revert {
        id: JobId,
        /// Only say whether it would go through.
        #[arg(long)]
        check: bool,
    },
    /// Delete finished jobs older than this many days, with their events.
    Prune {
        /// Default: CAM_JOB_RETENTION_DAYS, else 7.
        #[arg(long, value_name = "DAYS")]
        older_than_days: Option<u64>,
    },
}

/// Which jobs `jobs` lists, newest first.
#[derive(Args, Debug)]
pub struct JobsListArgs {
    /// queued, running, completed, failed, cancelled, timed_out or interrupted.
    #[arg(long)]
    pub status: Option<JobStatus>,
    /// Only jobs of this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only jobs that ran in this directory.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// How many to list.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

/// `--ask-beyond-bounds`: whether a call past a bound the person may lift asks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AskBeyondBounds {
    /// Ask the person through the client; run only if they allow it.
    Ask,
    /// Refuse without asking.
    Refuse,
}

/// `--sigint`: what SIGINT does to a server (`commands::serve` maps it to the handlers' own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SigintMode {
    /// Cancel the active calls and keep serving; exit when there are none.
    Cancel,
    /// Shut down, like SIGTERM.
    Exit,
    /// Like `cancel`, and a second SIGINT within 2 s shuts down.
    CancelThenExit,
}

/// `dashboard`: serves the page until SIGINT or SIGTERM.
#[derive(Args, Debug)]
pub struct DashboardArgs {
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub port: u16,
}

#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Serving")]
pub struct ServeArgs {
    /// Offer only these tools (comma-separated: codex,claude,gemini,opencode), each while its
    /// CLI is installed or configured.
    #[arg(long, env = "CAM_ENABLE", value_delimiter = ',', value_name = "AGENTS")]
    pub enable: Vec<String>,
    /// Do not offer these tools (comma-separated).
    #[arg(
        long,
        env = "CAM_DISABLE",
        value_delimiter = ',',
        value_name = "AGENTS"
    )]
    pub disable: Vec<String>,
    /// What SIGINT does: `cancel` stops the active calls and keeps serving (idle: exits);
    /// `cancel-then-exit` also exits on a second SIGINT within 2 s; `exit` shuts down.
    #[arg(
        long,
        env = "CAM_SIGINT_MODE",
        value_enum,
        default_value_t = SigintMode::CancelThenExit
    )]
    pub sigint: SigintMode,
    /// A directory MCP calls may work in, with everything below it (repeatable;
    /// CAM_ALLOWED_ROOTS takes a `:` list, `;` on Windows as PATH does). Default: the server's
    /// working directory and your home. `/` (a drive's root on Windows) is refused. `run` is
    /// your own command and is not bound by it.
    #[arg(
        long = "allow-root",
        env = "CAM_ALLOWED_ROOTS",
        value_delimiter = ROOTS_DELIMITER,
        value_name = "DIR"
    )]
    pub allow_root: Vec<PathBuf>,
    /// The most an MCP call may ask for: read-only, workspace-write or unlimited. A call asking
    /// for more is refused. `run` is your own command and is not bound by it.
    #[arg(
        long,
        env = "CAM_MAX_PERMISSION",
        default_value = "workspace-write",
        value_name = "LEVEL"
    )]
    pub max_permission: Permission,
    /// A call whose workspace is outside the allowed roots, or whose permission is above the
    /// ceiling: `ask` the person through the client (MCP elicitation) and run it only if they
    /// allow it; `refuse` it. A client that cannot ask, a decline or no answer refuses.
    /// `/` is never asked for.
    #[arg(
        long,
        env = "CAM_ASK_BEYOND_BOUNDS",
        value_enum,
        default_value_t = AskBeyondBounds::Ask
    )]
    pub ask_beyond_bounds: AskBeyondBounds,
    /// How long a question to the person waits for an answer before the call is refused.
    #[arg(long, env = "CAM_ASK_TIMEOUT_SECS", default_value_t = 120, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub ask_timeout_secs: u64,
    /// A question nobody can be asked through the client (no elicitation, its client gone,
    /// no answer in time), about a delegate's permission or a call past the bounds, waits, its
    /// job `needs_input`, until you answer it on the job's dashboard page, instead of being
    /// denied. The model is never given a way to answer it.
    #[arg(long, env = "CAM_PARK_QUESTIONS", value_name = "BOOL", num_args = 0..=1,
          default_value_t = false, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(),
          action = clap::ArgAction::Set)]
    pub park_questions: bool,
    /// While a run is silent, repeat its last progress at this interval, for clients that
    /// reset their timeout on progress (0: only on events).
    #[arg(
        long,
        env = "CAM_PROGRESS_HEARTBEAT_SECS",
        default_value_t = 10,
        value_name = "SECS"
    )]
    pub progress_heartbeat_secs: u64,
    /// The most runs at once; more wait in a queue, first come first served. Each agent may
    /// have a lower cap of its own: CAM_CODEX_MAX_RUNS, CAM_CLAUDE_MAX_RUNS, and so on.
    #[arg(long, env = "CAM_MAX_RUNS", default_value_t = 8, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_runs: u64,
    /// The most worktrees of isolated jobs at once: a call asking for one more is refused,
    /// naming the jobs to review and discard.
    #[arg(long, env = "CAM_MAX_WORKTREES", default_value_t = 20, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_worktrees: u64,
    /// A blocking call still running after this many seconds answers with its job id, and
    /// the run carries on (0: never). A call's `handoff_after_secs` overrides it.
    #[arg(
        long,
        env = "CAM_HANDOFF_SECS",
        default_value_t = 45,
        value_name = "SECS"
    )]
    pub handoff_secs: u64,
    /// The most characters of an answer a tool result carries (its head and tail);
    /// `job_result` pages through the rest.
    #[arg(long, env = "CAM_MAX_RESULT_CHARS", default_value_t = 20000, value_name = "CHARS",
          value_parser = clap::value_parser!(u64).range(200..))]
    pub max_result_chars: u64,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// `serve --http`: Streamable HTTP instead of stdio.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Serving over HTTP")]
pub struct HttpArgs {
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio, e.g. 127.0.0.1:8765.
    /// Any address but loopback needs a token (CAM_HTTP_TOKEN or --http-token-file).
    #[arg(id = "http", long = "http", env = "CAM_HTTP", value_name = "ADDR")]
    pub addr: Option<std::net::SocketAddr>,
    /// A file holding the bearer token every request must carry (its first line). Without it,
    /// the token is CAM_HTTP_TOKEN; without either, only loopback may be bound and no token is
    /// asked for.
    #[arg(
        id = "http_token_file",
        long = "http-token-file",
        env = "CAM_HTTP_TOKEN_FILE",
        value_name = "PATH"
    )]
    pub token_file: Option<PathBuf>,
    /// More names the Host header may carry (comma-separated; `name` or `name:port`), e.g. the
    /// DNS name of a shared box. Loopback names and the bound address are always allowed.
    #[arg(
        id = "http_allowed_host",
        long = "http-allowed-host",
        env = "CAM_HTTP_ALLOWED_HOSTS",
        value_delimiter = ',',
        value_name = "HOSTS"
    )]
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call (comma-separated, e.g. `https://ide.example.com`). A
    /// request with an Origin header is refused unless its host is allowed as a Host or it is
    /// listed here; requests without one (every non-browser client) pass.
    #[arg(
        id = "http_allowed_origin",
        long = "http-allowed-origin",
        env = "CAM_HTTP_ALLOWED_ORIGINS",
        value_delimiter = ',',
        value_name = "ORIGINS"
    )]
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted.
    #[arg(id = "http_max_body_bytes",
        long = "http-max-body-bytes", env = "CAM_HTTP_MAX_BODY_BYTES", default_value_t = 4 * 1024 * 1024, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// The most requests in flight at once (a POST counts until its answer, streamed or not, ends).
    #[arg(id = "http_max_requests",
        long = "http-max-requests", env = "CAM_HTTP_MAX_REQUESTS", default_value_t = 64, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_requests: u32,
    /// The most standalone event streams (GET /mcp) open at once.
    #[arg(id = "http_max_streams",
        long = "http-max-streams", env = "CAM_HTTP_MAX_STREAMS", default_value_t = 16, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_streams: u32,
    /// Test-only: also offer the fixtures the MCP conformance suite calls. Only a build with
    /// the `conformance-fixtures` feature (the conformance tests') has them: a release has no
    /// such argument.
    #[cfg(feature = "conformance-fixtures")]
    #[arg(
        long = "conformance-fixtures",
        env = "CAM_CONFORMANCE_FIXTURES",
        hide = true,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub conformance_fixtures: bool,
}

fn parse_base(value: &str) -> Result<Base, String> {
    match value {
        "working" => Ok(Base::WorkingState),
        "head" => Ok(Base::Head),
        other => Err(format!("unknown base `{other}`: expected working or head")),
    }
}
