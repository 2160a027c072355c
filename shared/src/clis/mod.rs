//! One module per coding-agent CLI, each behind the [`Cli`] trait, and the registry of them.
//!
//! Everything the engine, the server, `doctor` and the command line know about a CLI comes
//! from its module through this trait: adding a CLI means writing its module (command line,
//! dialect parser, trait impl) and listing it in [`BUILTINS`].

mod claude;
mod codex;
mod copilot;
mod gemini;
mod opencode;
mod qwen;

use std::path::Path;

use crate::agent::Agent;
use crate::command::CommandLine;
use crate::dialect::Dialect;
use crate::error::SetupError;
use crate::outcome::Usage;
use crate::request::RunRequest;

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
    fn command(&self, request: &RunRequest, program: &Path) -> Result<CommandLine, SetupError>;

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

    /// Whether it resumes a session only from the directory the session started in.
    fn resumes_only_from_origin(&self) -> bool {
        true
    }
}

/// A file a CLI writes its token usage to at the end of a run (see [`Cli::usage_file`]).
#[derive(Clone, Copy, Debug)]
pub struct UsageFile {
    /// The flag that names the file, given as `<flag>=<path>`.
    pub flag: &'static str,
    /// The usage the file's content reports, if it reads as one.
    pub read: fn(&str) -> Option<Usage>,
}

/// Every built-in CLI, in the order of the tool list and of `doctor`.
pub static BUILTINS: &[&dyn Cli] = &[
    &codex::Codex,
    &claude::Claude,
    &gemini::Gemini,
    &opencode::Opencode,
    &qwen::Qwen,
    &copilot::Copilot,
];

/// The built-in CLI called `name`.
pub fn builtin(name: &str) -> Option<&'static dyn Cli> {
    BUILTINS.iter().copied().find(|cli| cli.name() == name)
}

/// The built-in agents: each built-in CLI under its own name, without overrides.
pub fn builtin_agents() -> impl Iterator<Item = Agent> {
    BUILTINS.iter().map(|cli| Agent::builtin(*cli))
}

/// Why an agent's extra arguments cannot be used.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadArg {
    #[error(
        "`{0}` is not a flag: extra arguments are flags only, with any value bound by `=` \
         (`--flag=value`), so none can be read as the prompt or swallow the next argument"
    )]
    NotAFlag(String),
    #[error(
        "`{arg}` is set by cli-agent-mcp for {cli} (output format, permission, session, model \
         or working directory): use the tool's arguments or the agent's `model` instead"
    )]
    Reserved { arg: String, cli: &'static str },
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

/// The names of the built-in CLIs, for messages.
pub fn builtin_names() -> String {
    let names: Vec<_> = BUILTINS.iter().map(|cli| cli.name()).collect();
    names.join(", ")
}

pub const CODEX: Agent = Agent::builtin(&codex::Codex);
pub const CLAUDE: Agent = Agent::builtin(&claude::Claude);
pub const GEMINI: Agent = Agent::builtin(&gemini::Gemini);
pub const OPENCODE: Agent = Agent::builtin(&opencode::Opencode);
pub const QWEN: Agent = Agent::builtin(&qwen::Qwen);
pub const COPILOT: Agent = Agent::builtin(&copilot::Copilot);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verified_versions_are_the_ones_the_real_cli_tests_install() {
        let pins: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/real/package.json")).unwrap();
        for cli in BUILTINS {
            assert_eq!(
                pins["dependencies"][cli.npm_package()],
                cli.verified_version(),
                "{}",
                cli.name()
            );
        }
    }

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

    #[test]
    fn names_are_unique_lowercase_words() {
        for (i, cli) in BUILTINS.iter().enumerate() {
            let name = cli.name();
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
                "{name}"
            );
            assert!(
                BUILTINS[..i].iter().all(|other| other.name() != name),
                "{name}"
            );
        }
    }
}
