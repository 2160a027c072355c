//! `gemini --output-format stream-json`: permission by approval mode, prompt from stdin.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::request::{Permission, RunRequest};

pub(super) fn command_line(request: &RunRequest, program: &Path) -> CommandLine {
    let mut cmd = CommandLine::new(program);
    cmd.args([
        "--output-format",
        "stream-json",
        "--approval-mode",
        approval_mode(request.permission),
    ]);
    cmd.model_and_session(request, "--resume");
    cmd
}

/// `default` offers no shell and no write tool; `auto_edit` edits but has no shell.
fn approval_mode(permission: Permission) -> &'static str {
    match permission {
        Permission::ReadOnly => "default",
        Permission::WorkspaceWrite => "auto_edit",
        Permission::Unlimited => "yolo",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_is_the_default_approval_mode() {
        let cmd = command_line(&crate::request::flag_prompt_request(), Path::new("gemini"));
        assert_eq!(
            cmd.args,
            [
                "--output-format",
                "stream-json",
                "--approval-mode",
                "default"
            ]
        );
    }

    #[test]
    fn resume_and_model_are_bound_values() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("e59b".into());
        request.model = Some("gemini-2.5-flash".into());
        request.permission = Permission::Unlimited;
        let cmd = command_line(&request, Path::new("gemini"));
        assert!(cmd.args.ends_with(&[
            "yolo".into(),
            "--model=gemini-2.5-flash".into(),
            "--resume=e59b".into()
        ]));
    }
}
