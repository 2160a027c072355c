//! `cline --json`: permission by Cline's plan/act modes, the prompt from stdin.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::request::{Effort, Permission, RunRequest};

/// With `--json` Cline refuses to start without a prompt argument, and appends what it reads
/// from a piped stdin to that argument. A lone space after `--` is such an argument: it can be
/// read as no flag, Cline trims it away, and the model's prompt is exactly the stdin text.
const NO_PROMPT_ARGUMENT: &str = " ";

pub(super) fn command_line(request: &RunRequest, program: &Path) -> CommandLine {
    let mut cmd = CommandLine::new(program);
    cmd.args(["--json", mode(request.permission)]);
    // Tools run without asking in either mode: headless, an approval is a refusal, and plan
    // mode's own refusal of writes is what keeps read-only from writing.
    cmd.flag_value("--auto-approve", "true");
    if let Some(model) = &request.model {
        cmd.flag_value("--model", model);
    }
    // Its default backend starts a hub daemon that outlives the run (in a session of its own,
    // state under ~/.cline whatever `--config` says); the local one runs in this process.
    cmd.set_env("CLINE_SESSION_BACKEND_MODE", "local");
    cmd.args(["--", NO_PROMPT_ARGUMENT]);
    cmd
}

/// `--thinking=LEVEL`; Cline's strongest level is `xhigh`.
pub(super) fn effort_option(effort: Effort) -> String {
    format!("--thinking={}", effort.name_up_to_xhigh())
}

/// `--plan` offers the model its read tools, and refuses the shell commands and edits that
/// would change files; `--act` (its default, stated so a user's saved `planActMode` cannot
/// change it) does the work. Cline has no level between: workspace-write and unlimited are
/// both act mode, told apart by the kernel sandbox.
fn mode(permission: Permission) -> &'static str {
    match permission {
        Permission::ReadOnly => "--plan",
        Permission::WorkspaceWrite | Permission::Unlimited => "--act",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_is_plan_mode_and_the_prompt_is_no_argument() {
        let cmd = command_line(&crate::request::flag_prompt_request(), Path::new("cline"));
        assert_eq!(
            cmd.args,
            ["--json", "--plan", "--auto-approve=true", "--", " "]
        );
        assert_eq!(
            cmd.env,
            [("CLINE_SESSION_BACKEND_MODE".into(), "local".into())]
        );
    }

    #[test]
    fn writing_levels_act_and_the_model_is_bound() {
        let mut request = crate::request::flag_prompt_request();
        request.model = Some("--yolo".into());
        for permission in [Permission::WorkspaceWrite, Permission::Unlimited] {
            request.permission = permission;
            let cmd = command_line(&request, Path::new("cline"));
            assert_eq!(
                cmd.args,
                [
                    "--json",
                    "--act",
                    "--auto-approve=true",
                    "--model=--yolo",
                    "--",
                    " "
                ]
            );
        }
    }
}
