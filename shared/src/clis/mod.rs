//! The registry of coding-agent CLIs: one module each, behind the [`Cli`] trait.
//!
//! Adding a CLI means writing its module (command line, dialect parser, trait impl, its own
//! error wording) and listing it in [`BUILTINS`]; no other production code of the engine
//! depends on which CLIs exist.

mod claude;
mod cline;
mod codex;
mod copilot;
mod gemini;
mod opencode;
mod pi;
mod qwen;

use crate::agent::Agent;
// The app names these through the registry.
pub use crate::cli::{Cli, check_extra_args};

/// Every built-in CLI, in the order of the tool list and of `doctor`.
pub static BUILTINS: &[&dyn Cli] = &[
    &codex::Codex,
    &claude::Claude,
    &gemini::Gemini,
    &opencode::Opencode,
    &qwen::Qwen,
    &copilot::Copilot,
    &pi::Pi,
    &cline::Cline,
];

/// The built-in CLI called `name`.
pub fn builtin(name: &str) -> Option<&'static dyn Cli> {
    BUILTINS.iter().copied().find(|cli| cli.name() == name)
}

/// The built-in agents: each built-in CLI under its own name, without overrides.
pub fn builtin_agents() -> impl Iterator<Item = Agent> {
    BUILTINS.iter().map(|cli| Agent::builtin(*cli))
}

/// The names of the built-in CLIs, for messages.
pub fn builtin_names() -> String {
    let names: Vec<_> = BUILTINS.iter().map(|cli| cli.name()).collect();
    names.join(", ")
}

/// OpenAI's Codex CLI under its own name.
pub const CODEX: Agent = Agent::builtin(&codex::Codex);
/// Anthropic's Claude Code under its own name.
pub const CLAUDE: Agent = Agent::builtin(&claude::Claude);
/// Google's Gemini CLI under its own name.
pub const GEMINI: Agent = Agent::builtin(&gemini::Gemini);
/// opencode under its own name.
pub const OPENCODE: Agent = Agent::builtin(&opencode::Opencode);
/// Qwen Code under its own name.
pub const QWEN: Agent = Agent::builtin(&qwen::Qwen);
/// GitHub Copilot CLI under its own name.
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
    fn docs_name_the_verified_version_of_every_builtin() {
        let table = include_str!("../../../docs/clis.md");
        let install = include_str!("../../../docs/install.md");
        let questions = include_str!("../../../docs/bounds-and-questions.md");
        for cli in BUILTINS {
            let (name, package, version) = (cli.name(), cli.npm_package(), cli.verified_version());
            let row = format!("| {name} | `{package}` | {version} |");
            assert!(table.contains(&row), "docs/clis.md has no row {row}");
            let pinned = format!(" {package}@{version}");
            assert!(
                install.contains(&pinned),
                "docs/install.md installs no{pinned}"
            );
            let row = format!("| {name} {version} |");
            assert!(
                questions.contains(&row),
                "docs/bounds-and-questions.md has no {row}"
            );
        }
    }

    /// Which built-ins fork and take `effort`, and that the others refuse saying why, as
    /// does a fork without its session; no custom agent's `args` can set either.
    #[test]
    fn fork_and_effort_are_taken_or_refused_with_the_reason() {
        use crate::request::{Effort, RunRequest};
        const PI: Agent = Agent::builtin(&pi::Pi);
        const CLINE: Agent = Agent::builtin(&cline::Cline);
        let run = |agent: Agent, fork: bool, effort: Option<Effort>| {
            let mut request = RunRequest::new("hi", "/tmp");
            request.session_id = fork.then(|| "s-1".to_owned());
            request.fork = fork;
            request.effort = effort;
            agent.command_line(&request, std::path::Path::new("cli"), &[])
        };
        let forks = [CODEX, CLAUDE, OPENCODE, QWEN, PI];
        let efforts = [CODEX, CLAUDE, OPENCODE, COPILOT, PI, CLINE];
        for agent in [CODEX, CLAUDE, GEMINI, OPENCODE, QWEN, COPILOT, PI, CLINE] {
            for (argument, taken, result) in [
                ("fork", forks.contains(&agent), run(agent, true, None)),
                (
                    "effort",
                    efforts.contains(&agent),
                    run(agent, false, Some(Effort::High)),
                ),
            ] {
                match result {
                    Ok(_) => assert!(taken, "{agent} took {argument}"),
                    Err(error) => {
                        let error = error.to_string();
                        assert!(!taken, "{agent}: {error}");
                        assert!(error.starts_with(&format!("{agent} cannot take `{argument}`: ")));
                        assert!(error.contains("leave"), "{error}");
                    }
                }
            }
        }
        let mut resumed = RunRequest::new("hi", "/tmp");
        resumed.session_id = Some("s-1".to_owned());
        let error = CLINE.command_line(&resumed, std::path::Path::new("cline"), &[]);
        assert!(
            error
                .unwrap_err()
                .to_string()
                .starts_with("cline cannot take `session_id`: ")
        );
        let mut fork_alone = RunRequest::new("hi", "/tmp");
        fork_alone.fork = true;
        let error = CLAUDE.command_line(&fork_alone, std::path::Path::new("claude"), &[]);
        assert!(
            error
                .unwrap_err()
                .to_string()
                .contains("pass its `session_id`")
        );
    }

    #[test]
    fn a_custom_agents_args_cannot_set_fork_or_effort() {
        let cases = [
            (CLAUDE, "--effort=max"),
            (CLAUDE, "--fork-session"),
            (CODEX, "-c=model_reasoning_effort=high"),
            (CODEX, "--config=model_reasoning_effort=\"high\""),
            (OPENCODE, "--variant=max"),
            (OPENCODE, "--fork"),
            (QWEN, "--fork-session"),
            (COPILOT, "--reasoning-effort=high"),
        ];
        for (agent, arg) in cases {
            let error = check_extra_args(agent.cli(), &[arg.to_owned()]);
            assert!(error.is_err(), "{agent} lets {arg} through");
        }
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
