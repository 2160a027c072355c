//! `copilot --output-format json`: permission by tool rules, prompt from stdin.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::request::{Effort, Permission, RunRequest};

pub(super) fn command_line(request: &RunRequest, program: &Path) -> CommandLine {
    let mut cmd = CommandLine::new(program);
    // Nobody can answer its ask_user tool in a headless run.
    cmd.args(["--output-format", "json", "--no-ask-user"]);
    match request.permission {
        // A deny rule wins over any allow rule in the user's own configuration.
        Permission::ReadOnly => cmd.args(["--deny-tool=shell", "--deny-tool=write"]),
        Permission::WorkspaceWrite => cmd.args(["--allow-tool=write", "--allow-tool=shell"]),
        Permission::Unlimited => cmd.args(["--allow-all"]),
    };
    cmd.model_and_session(request, "--resume");
    cmd
}

/// `--reasoning-effort`, whose levels (none to max) include every one of ours.
pub(super) fn effort_option(effort: Effort) -> String {
    format!("--reasoning-effort={effort}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_denies_the_shell_and_writes_and_passes_no_prompt_argument() {
        let cmd = command_line(&crate::request::flag_prompt_request(), Path::new("copilot"));
        assert_eq!(
            cmd.args,
            [
                "--output-format",
                "json",
                "--no-ask-user",
                "--deny-tool=shell",
                "--deny-tool=write"
            ]
        );
    }

    #[test]
    fn resume_and_model_are_bound_values() {
        let mut request = crate::request::flag_prompt_request();
        request.permission = Permission::Unlimited;
        request.model = Some("--allow-all".into());
        request.session_id = Some("8501240f".into());
        let cmd = command_line(&request, Path::new("copilot"));
        assert!(cmd.args.ends_with(&[
            "--allow-all".into(),
            "--model=--allow-all".into(),
            "--resume=8501240f".into()
        ]));
    }

    #[test]
    fn effort_is_its_reasoning_effort() {
        let mut request = crate::request::flag_prompt_request();
        request.effort = Some(Effort::Medium);
        let copilot = crate::agent::Agent::builtin(&super::super::Copilot);
        let cmd = copilot
            .command_line(&request, Path::new("copilot"), &[])
            .unwrap();
        assert!(cmd.args.ends_with(&["--reasoning-effort=medium".into()]));
    }
}
