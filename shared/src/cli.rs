//! The [`Cli`] trait: everything the engine, the server, `doctor` and the command line need
//! to know about one coding-agent CLI. Its provided methods are the common behaviour, so a
//! CLI's module (under [`crate::clis`]) states only where it differs, and nothing outside that
//! module has to name it.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::environment::CliEnv;
use crate::error::SetupError;
use crate::event::Usage;
use crate::outcome::ErrorKind;
use crate::request::{Effort, Permission, QuestionEndpoint, RunRequest};
use crate::version;

/// What the engine needs to drive one CLI headless. The provided methods are the common
/// behaviour; a CLI overrides the ones where it differs.
pub trait Cli: Send + Sync + 'static {
    /// Its name: the tool name, the `--<name>-bin` flag, `CAM_<NAME>_*` variables and the
    /// captures directory.
    fn name(&self) -> &'static str;

    /// A human title for its tool, e.g. "Codex (OpenAI)".
    fn title(&self) -> &'static str;

    /// What it is good at, the first paragraph of its tool's description.
    fn description(&self) -> &'static str;

    /// The npm package that installs it.
    fn npm_package(&self) -> &'static str;

    /// The version whose output the parser and tests were last checked against
    /// (`tests/real/package.json` pins the same; `doctor` warns about others).
    fn verified_version(&self) -> &'static str;

    /// The executable looked up on PATH when no binary is configured.
    fn binary(&self) -> &'static str {
        self.name()
    }

    /// Patterns of the server's variables it receives besides the base set (its key, base
    /// URL, home). See [`crate::environment`].
    fn own_env(&self) -> &'static [&'static str];

    /// Its headless command line for `request`, the permission level mapped onto its own
    /// mechanism. The prompt is not part of it: it goes to stdin.
    fn command_line(&self, request: &RunRequest, program: &Path)
    -> Result<CommandLine, SetupError>;

    /// A fresh parser of its stdout.
    fn dialect(&self) -> Box<dyn Dialect>;

    /// Flags that a configured `args` list may not carry, because they would change the
    /// output format, the permission mapping or where the prompt is read from.
    fn reserved_flags(&self) -> &'static [&'static str];

    /// Tool arguments beyond the common ones that it understands.
    fn extra_arguments(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether it reports usage summed over a whole session rather than per turn, so a
    /// resumed run must subtract what the session had used before.
    fn usage_is_cumulative(&self) -> bool {
        false
    }

    /// For a CLI that prints no token counts on stdout but writes them to a file it is told
    /// of: that flag and the reader of the file.
    fn usage_file(&self) -> Option<UsageFile> {
        None
    }

    /// The flag that hands it a JSON Schema for its final answer, where it takes one
    /// natively. Without one the schema is spelled out in the prompt; the answer is validated
    /// either way (see [`crate::output_schema`]).
    fn schema_flag(&self) -> Option<SchemaFlag> {
        None
    }

    /// Whether it resumes a session headless ([`RunRequest::session_id`]); `Err` says why it
    /// cannot and what to do instead.
    fn resumes(&self) -> Result<(), &'static str> {
        Ok(())
    }

    /// Whether its command line spells [`RunRequest::fork`] (resume a session as a new one,
    /// the original left as it was); `Err` says why it cannot and what it can do instead.
    fn forks(&self) -> Result<(), &'static str> {
        Err(
            "it has no way to branch a session: pass `session_id` without `fork` to continue \
             the session itself, or leave both out to start afresh",
        )
    }

    /// Its words for `effort`: one `--flag=value` where the CLI reads that form, two where
    /// it reads only `--flag value` (pi); `Err` says why it has none.
    fn effort_option(&self, _effort: Effort) -> Result<Vec<String>, &'static str> {
        Err(
            "it has no per-run reasoning effort: leave `effort` out (the model's default \
             applies) or choose a faster or stronger `model`",
        )
    }

    /// How it lists the models it offers, headless, where it can; `None` when it cannot.
    fn model_listing(&self) -> Option<ModelListing> {
        None
    }

    /// Whether it resumes a session only from the directory the session started in.
    fn resumes_only_from_origin(&self) -> bool {
        true
    }

    /// Its own wording of failures, by the kind each means, for messages that carry no HTTP
    /// status. It is tried along with the wording every CLI shares
    /// ([`ErrorKind::classify`]), so list only sentences this CLI writes itself.
    fn error_wording(&self) -> &'static [(ErrorKind, &'static [&'static str])] {
        &[]
    }

    /// Where it keeps its own state, caches and logs, given the environment it starts with:
    /// writable under the sandbox at every level (made when missing). By default
    /// `~/.<name>`; a CLI that writes elsewhere names its places.
    fn state_dirs(&self, env: CliEnv) -> Vec<std::path::PathBuf> {
        env.home(&format!(".{}", self.name())).into_iter().collect()
    }

    /// The level its own flags get when the kernel sandbox already bounds the run at `level`
    /// (see [`crate::sandbox`]): by default the same, both bounds holding.
    fn own_level_when_confined(&self, level: Permission) -> Permission {
        level
    }

    /// How it hands the permission questions it would otherwise refuse headless to an MCP
    /// tool (a run's [`RunRequest::questions`]); none by default. Used below `unlimited`
    /// only, where the CLI still asks.
    fn question_hook(&self) -> Option<QuestionHook> {
        None
    }

    /// The version in what its `--version` printed (`doctor` compares it with
    /// [`Cli::verified_version`]): by default the first `X.Y.Z` word.
    fn version_from(&self, output: &str) -> Option<String> {
        version::first_version(version::words(output))
    }
}

/// Adds the flags and variables that send a CLI's permission questions to an endpoint.
pub type QuestionHook = fn(&QuestionEndpoint, &mut CommandLine);

/// A file a CLI writes its token usage to at the end of a run (see [`Cli::usage_file`]).
#[derive(Clone, Copy, Debug)]
pub struct UsageFile {
    /// The flag that names the file, given as `<flag>=<path>`.
    pub flag: &'static str,
    /// The usage the file's content reports, if it reads as one.
    pub read: fn(&str) -> Option<Usage>,
}

/// A CLI's headless listing of the models it offers (see [`Cli::model_listing`]).
#[derive(Clone, Copy, Debug)]
pub struct ModelListing {
    /// The arguments that print the list.
    pub args: &'static [&'static str],
    /// The model names in what it printed on stdout (or, when that reads as no list, on
    /// stderr, where pi prints it when stdin is not a terminal); `None` when neither reads as
    /// a list.
    pub read: fn(&str) -> Option<Vec<String>>,
}

/// How a CLI takes a JSON Schema for its final answer (see [`Cli::schema_flag`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaFlag {
    /// `<flag>=<the schema as JSON>`.
    Inline(&'static str),
    /// `<flag>=<path of a file holding the schema>`.
    File(&'static str),
}

/// Why an agent's extra arguments cannot be used.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadArg {
    /// An argument that is not a flag.
    #[error(
        "`{0}` is not a flag: extra arguments are flags only, with any value bound by `=` \
         (`--flag=value`), so none can be read as the prompt or swallow the next argument"
    )]
    NotAFlag(String),
    /// A flag the engine sets itself.
    #[error(
        "`{arg}` is set by cli-agent-mcp for {cli} (output format, permission, session, model, \
         effort or working directory): use the tool's arguments or the agent's `model` or \
         `effort` instead"
    )]
    Reserved {
        /// The argument.
        arg: String,
        /// The CLI that reserves it.
        cli: &'static str,
    },
}

/// Check extra arguments for `cli`: flags only, none of its [`Cli::reserved_flags`].
pub fn check_extra_args(cli: &dyn Cli, args: &[String]) -> Result<(), BadArg> {
    for arg in args {
        if !arg.starts_with('-') || arg == "-" || arg == "--" {
            return Err(BadArg::NotAFlag(arg.clone()));
        }
        let reserved = cli.reserved_flags().iter().any(|flag| {
            arg == flag
                || arg
                    .strip_prefix(flag)
                    .is_some_and(|rest| rest.starts_with('='))
        });
        if reserved {
            return Err(BadArg::Reserved {
                arg: arg.clone(),
                cli: cli.name(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clis::{CLAUDE, CODEX};

    #[test]
    fn extra_args_are_flags_that_leave_output_permission_and_prompt_alone() {
        let cli = CODEX.cli();
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check_extra_args(cli, &args(&["--config=model_provider=\"x\"", "--oss"])),
            Ok(())
        );
        for bad in [
            "-s=danger-full-access",
            "--json",
            "--config=sandbox_mode=\"x\"",
            "-C=/",
        ] {
            let error = check_extra_args(cli, &args(&[bad])).unwrap_err();
            assert!(matches!(error, BadArg::Reserved { .. }), "{bad}: {error}");
        }
        for bad in ["prompt", "-", "--"] {
            let error = check_extra_args(cli, &args(&[bad])).unwrap_err();
            assert!(matches!(error, BadArg::NotAFlag(_)), "{bad}: {error}");
        }
        let claude = CLAUDE.cli();
        assert!(check_extra_args(claude, &args(&["--dangerously-skip-permissions"])).is_err());
        assert!(check_extra_args(claude, &args(&["--max-turns=3"])).is_ok());
    }
}
