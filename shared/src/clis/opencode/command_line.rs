//! `opencode run --format json`: permission through `OPENCODE_PERMISSION`, prompt from stdin.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::request::{Effort, Permission, RunRequest};

/// opencode's own variables (`OPENCODE_*`) and the keys of the model providers it reads from
/// the environment. Keys saved by `opencode auth login` need nothing; cloud providers
/// (`AWS_*`, `AZURE_*`, Vertex) and GitHub Copilot's `GITHUB_TOKEN` are passed with
/// `CAM_PASS_ENV`.
pub(super) const OWN_ENV: &[&str] = &[
    "OPENCODE_*",
    "ANTHROPIC_*",
    "OPENAI_*",
    "GEMINI_*",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "OPENROUTER_*",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "XAI_API_KEY",
];

pub(super) fn command_line(request: &RunRequest, program: &Path) -> CommandLine {
    let mut cmd = CommandLine::new(program);
    cmd.args(["run", "--format", "json", "--thinking"]);
    if request.permission == Permission::Unlimited {
        // Approve what a user's own policy would otherwise leave to an unanswerable prompt.
        cmd.arg("--auto");
    }
    cmd.model_and_session(request, "--session");
    if request.fork {
        cmd.arg("--fork");
    }
    cmd.set_env("OPENCODE_PERMISSION", policy(request.permission));
    cmd
}

/// `--variant`: the model's provider names the levels (Anthropic's models take `high` and
/// `max`, OpenAI's `low` to `high`); ours are passed as they are.
pub(super) fn effort_option(effort: Effort) -> String {
    format!("--variant={effort}")
}

/// `opencode models` prints one `provider/model` a line; anything else is not a listing.
pub(super) fn listed_models(printed: &str) -> Option<Vec<String>> {
    let lines = printed
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty());
    lines
        .map(|line| line.contains('/').then(|| line.to_owned()))
        .collect()
}

/// opencode has no OS sandbox: a denied tool is removed from what the model is offered.
fn policy(permission: Permission) -> &'static str {
    match permission {
        Permission::ReadOnly => r#"{"edit":"deny","bash":"deny","external_directory":"deny"}"#,
        Permission::WorkspaceWrite => {
            r#"{"edit":"allow","bash":"allow","external_directory":"deny"}"#
        }
        Permission::Unlimited => {
            r#"{"edit":"allow","bash":"allow","webfetch":"allow","external_directory":"allow"}"#
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_denies_edits_and_the_shell() {
        let cmd = command_line(
            &crate::request::flag_prompt_request(),
            Path::new("opencode"),
        );
        assert_eq!(cmd.args, ["run", "--format", "json", "--thinking"]);
        let policy = cmd.env[0].1.to_str().unwrap();
        let policy: serde_json::Value = serde_json::from_str(policy).unwrap();
        assert_eq!(
            (policy["edit"].as_str(), policy["bash"].as_str()),
            (Some("deny"), Some("deny"))
        );
    }

    #[test]
    fn resume_names_the_session() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("ses_abc".into());
        assert!(
            command_line(&request, Path::new("opencode"))
                .args
                .contains(&"--session=ses_abc".into())
        );
    }

    #[test]
    fn a_fork_forks_the_named_session_and_effort_is_the_variant() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("ses_abc".into());
        request.fork = true;
        request.effort = Some(Effort::High);
        let opencode = crate::agent::Agent::builtin(&super::super::Opencode);
        let cmd = opencode
            .command_line(&request, Path::new("opencode"), &[])
            .unwrap();
        assert!(cmd.args.ends_with(&[
            "--session=ses_abc".into(),
            "--fork".into(),
            "--variant=high".into()
        ]));
    }

    #[test]
    fn the_models_it_lists_are_read_from_its_own_output() {
        let printed = include_str!("../../../../tests/fixtures/captures/opencode/models.txt");
        let models = listed_models(printed).expect("a listing");
        assert!(
            models.contains(&"opencode/big-pickle".to_owned()),
            "{models:?}"
        );
        assert_eq!(listed_models("Error: no providers\n"), None);
    }
}
