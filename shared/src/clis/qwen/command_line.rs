//! `qwen --output-format stream-json`: permission by approval mode, prompt from stdin.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::request::{Permission, RunRequest};

/// The name of qwen's shell tool, as its permission rules know it.
const SHELL_TOOL: &str = "run_shell_command";

pub(super) fn command_line(request: &RunRequest, program: &Path) -> CommandLine {
    let mut cmd = CommandLine::new(program);
    cmd.args([
        "--output-format",
        "stream-json",
        "--approval-mode",
        approval_mode(request.permission),
    ]);
    if request.permission == Permission::WorkspaceWrite {
        cmd.flag_value("--allowed-tools", SHELL_TOOL);
    }
    cmd.model_and_session(request, "--resume");
    if request.fork {
        cmd.arg("--fork-session");
    }
    cmd
}

/// Headless, qwen declines every tool that would need a person's approval. `plan` allows only
/// read-only tools (its shell and edit tools are declined); `auto-edit` approves edits, and
/// workspace-write also pre-approves the shell, as for claude; `yolo` approves everything.
/// Explicit in every case, so a user's `defaultApprovalMode` setting cannot raise the level.
fn approval_mode(permission: Permission) -> &'static str {
    match permission {
        Permission::ReadOnly => "plan",
        Permission::WorkspaceWrite => "auto-edit",
        Permission::Unlimited => "yolo",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_is_plan_mode_and_passes_no_prompt_argument() {
        let cmd = command_line(&crate::request::flag_prompt_request(), Path::new("qwen"));
        assert_eq!(
            cmd.args,
            ["--output-format", "stream-json", "--approval-mode", "plan"]
        );
    }

    #[test]
    fn workspace_write_pre_approves_only_the_shell_and_values_are_bound() {
        let mut request = crate::request::flag_prompt_request();
        request.permission = Permission::WorkspaceWrite;
        request.model = Some("--yolo".into());
        request.session_id = Some("c051".into());
        let cmd = command_line(&request, Path::new("qwen"));
        assert!(cmd.args.ends_with(&[
            "auto-edit".into(),
            "--allowed-tools=run_shell_command".into(),
            "--model=--yolo".into(),
            "--resume=c051".into()
        ]));
    }

    #[test]
    fn a_fork_resumes_with_fork_session() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("c051".into());
        request.fork = true;
        let cmd = command_line(&request, Path::new("qwen"));
        assert!(
            cmd.args
                .ends_with(&["--resume=c051".into(), "--fork-session".into()])
        );
    }
}
