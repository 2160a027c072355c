//! `claude -p --output-format stream-json`: permission by tool policy, prompt from stdin.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::error::SetupError;
use crate::request::{Effort, Permission, QuestionEndpoint, RunRequest};

/// claude's own variables: its key, base URL and model settings (`ANTHROPIC_*`), its config
/// dir and switches (`CLAUDE_*`, `DISABLE_*`), the root bypass (`IS_SANDBOX`), its tool and
/// request timeouts and limits, and the Vertex regions. Bedrock's `AWS_*` and Vertex's
/// credentials file are passed with `CAM_PASS_ENV`.
pub(super) const OWN_ENV: &[&str] = &[
    "ANTHROPIC_*",
    "CLAUDE_*",
    "DISABLE_*",
    "IS_SANDBOX",
    "MAX_THINKING_TOKENS",
    "MAX_MCP_OUTPUT_TOKENS",
    "MCP_TIMEOUT",
    "MCP_TOOL_TIMEOUT",
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_MAX_TIMEOUT_MS",
    "BASH_MAX_OUTPUT_LENGTH",
    "API_TIMEOUT_MS",
    "CLOUD_ML_REGION",
    "VERTEX_REGION_*",
];

pub(super) fn command_line(
    request: &RunRequest,
    program: &Path,
    as_root: bool,
) -> Result<CommandLine, SetupError> {
    let mut cmd = CommandLine::new(program);
    cmd.args(["-p", "--output-format", "stream-json", "--verbose"]);
    match request.permission {
        // Explicit, so a user's `defaultMode` setting cannot raise the level. 2.1.332 lists
        // this mode as `manual` but still takes `default` (and reports either as `default`),
        // which is the only name older releases know.
        Permission::ReadOnly => {
            cmd.args(["--permission-mode", "default"]);
        }
        Permission::WorkspaceWrite => {
            cmd.args(["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]);
        }
        Permission::Unlimited => {
            refuse_bypass_as_root(as_root)?;
            cmd.arg("--dangerously-skip-permissions");
        }
    }
    cmd.model_and_session(request, "--resume");
    if request.fork {
        cmd.arg("--fork-session");
    }
    if let Some(extra) = &request.append_system_prompt {
        cmd.flag_value("--append-system-prompt", extra);
    }
    Ok(cmd)
}

/// `--effort`, whose levels (low, medium, high, xhigh, max) include every one of ours.
pub(super) fn effort_option(effort: Effort) -> String {
    format!("--effort={effort}")
}

/// The MCP server name claude knows a run's question endpoint by.
const QUESTIONS_SERVER: &str = "cam_questions";

/// The variable that carries the endpoint's token: claude expands `${VAR}` in an MCP server's
/// headers, so the token stays out of the command line (which every user can read). Not
/// `CAM_*`: no server setting reaches a CLI.
const QUESTIONS_TOKEN_ENV: &str = "CLI_AGENT_MCP_QUESTIONS_TOKEN";

/// `--permission-prompt-tool` naming the endpoint's tool, with `--mcp-config` (JSON given
/// inline, so no file outlives the run) describing the endpoint as an HTTP MCP server.
pub(super) fn hand_questions(endpoint: &QuestionEndpoint, cmd: &mut CommandLine) {
    let config = serde_json::json!({ "mcpServers": { QUESTIONS_SERVER: {
        "type": "http",
        "url": endpoint.url,
        "headers": { "Authorization": format!("Bearer ${{{QUESTIONS_TOKEN_ENV}}}") },
    } } });
    cmd.flag_value("--mcp-config", &config.to_string());
    let tool = format!("mcp__{QUESTIONS_SERVER}__{}", endpoint.tool);
    cmd.flag_value("--permission-prompt-tool", &tool);
    cmd.set_env(QUESTIONS_TOKEN_ENV, &endpoint.token);
}

/// claude refuses its bypass flag as root unless the environment says it is a sandbox.
fn refuse_bypass_as_root(as_root: bool) -> Result<(), SetupError> {
    if !as_root || std::env::var_os("IS_SANDBOX").is_some_and(|v| v == "1") {
        return Ok(());
    }
    // The CLI's own refusal, whichever agent runs it: named by the CLI.
    Err(SetupError::PermissionUnavailable {
        agent: "claude",
        permission: Permission::Unlimited,
        reason:
            "claude refuses --dangerously-skip-permissions when run as root. Run the server as \
                 a regular user, or, if this machine is a disposable sandbox, set IS_SANDBOX=1 in \
                 the server's environment; or ask for workspace-write"
                .to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_pins_the_default_permission_mode_and_passes_no_prompt_argument() {
        let cmd = command_line(
            &crate::request::flag_prompt_request(),
            Path::new("claude"),
            false,
        )
        .unwrap();
        assert_eq!(
            cmd.args,
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "default"
            ]
        );
    }

    #[test]
    fn values_are_bound_to_their_flags() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("f683".into());
        request.model = Some("--evil".into());
        request.append_system_prompt = Some("-- be brief".into());
        let cmd = command_line(&request, Path::new("claude"), false).unwrap();
        assert!(cmd.args.ends_with(&[
            "--model=--evil".into(),
            "--resume=f683".into(),
            "--append-system-prompt=-- be brief".into()
        ]));
    }

    #[test]
    fn questions_go_to_the_endpoints_tool_with_the_token_in_the_environment_only() {
        let mut request = crate::request::flag_prompt_request();
        request.questions = Some(QuestionEndpoint {
            url: "http://127.0.0.1:4242/mcp".into(),
            token: "s3cret".into(),
            tool: "approve".into(),
        });
        let claude = crate::agent::Agent::builtin(&super::super::Claude);
        let cmd = claude
            .command_line(&request, Path::new("claude"), &[])
            .unwrap();
        assert!(
            cmd.args
                .contains(&"--permission-prompt-tool=mcp__cam_questions__approve".into())
        );
        let config = cmd.args.iter().find(|a| a.starts_with("--mcp-config="));
        let config = config.expect("an --mcp-config flag");
        assert!(config.contains("http://127.0.0.1:4242/mcp"), "{config}");
        assert!(
            config.contains("Bearer ${CLI_AGENT_MCP_QUESTIONS_TOKEN}"),
            "{config}"
        );
        assert!(!cmd.args.iter().any(|a| a.contains("s3cret")));
        assert!(
            cmd.env
                .contains(&("CLI_AGENT_MCP_QUESTIONS_TOKEN".into(), "s3cret".into()))
        );

        // Nothing asks at unlimited (as root without IS_SANDBOX=1 the level is refused).
        request.permission = Permission::Unlimited;
        if let Ok(cmd) = claude.command_line(&request, Path::new("claude"), &[]) {
            assert!(!cmd.args.iter().any(|a| a.starts_with("--mcp-config")));
        }
    }

    #[test]
    fn unlimited_as_root_without_is_sandbox_is_refused_with_what_to_do() {
        if std::env::var_os("IS_SANDBOX").is_some() {
            return;
        }
        let mut request = crate::request::flag_prompt_request();
        request.permission = Permission::Unlimited;
        let error = command_line(&request, Path::new("claude"), true)
            .unwrap_err()
            .to_string();
        assert!(error.contains("IS_SANDBOX=1"), "{error}");
        assert!(command_line(&request, Path::new("claude"), false).is_ok());
    }

    #[test]
    fn a_fork_resumes_the_session_as_a_new_one_at_the_effort_asked() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("f683".into());
        request.fork = true;
        request.effort = Some(Effort::Max);
        let claude = crate::agent::Agent::builtin(&super::super::Claude);
        let cmd = claude
            .command_line(&request, Path::new("claude"), &[])
            .unwrap();
        assert!(cmd.args.ends_with(&[
            "--resume=f683".into(),
            "--fork-session".into(),
            "--effort=max".into()
        ]));
    }
}
