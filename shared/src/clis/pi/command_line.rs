//! `pi -p --mode json`: permission by the tools it is given, prompt from stdin.

use std::path::Path;

use crate::command_line::CommandLine;
use crate::request::{Effort, Permission, RunRequest};

/// The built-in tools that only read.
const READ_TOOLS: &str = "read,grep,find,ls";
/// Every built-in tool: the read tools, the shell and the two that write files.
const ALL_BUILTIN_TOOLS: &str = "read,grep,find,ls,bash,edit,write";

pub(super) fn command_line(request: &RunRequest, program: &Path) -> CommandLine {
    let mut cmd = CommandLine::new(program);
    // `-p` takes a following word that is not a flag as a prompt, so a flag always follows it.
    cmd.args(["-p", "--mode", "json"]);
    if let Some(tools) = tools(request.permission) {
        cmd.args(["--tools", tools]);
    }
    // pi reads `--flag value` only (`--flag=value` is taken for an extension's flag), and takes
    // the word after a value flag as its value whatever it starts with, so none becomes a flag.
    if let Some(model) = &request.model {
        cmd.args(["--model", model]);
    }
    if let Some(session_id) = &request.session_id {
        // `--fork` starts a new session from the given one's context; the original stays.
        let flag = if request.fork { "--fork" } else { "--session" };
        cmd.args([flag, session_id]);
    }
    cmd
}

/// The models `pi --list-models` prints (a table under a `provider  model  …` header), as
/// `provider/model`, which `--model` takes whatever other provider has a model of that name.
pub(super) fn listed_models(printed: &str) -> Option<Vec<String>> {
    let mut lines = printed
        .lines()
        .skip_while(|line| !line.starts_with("provider"));
    lines.next()?;
    let models = lines.filter_map(|line| {
        let mut columns = line.split_whitespace();
        Some(format!("{}/{}", columns.next()?, columns.next()?))
    });
    Some(models.collect())
}

/// `--thinking LEVEL` (two words: see above); pi's strongest level is `xhigh`.
pub(super) fn effort_words(effort: Effort) -> Vec<String> {
    vec![
        "--thinking".to_owned(),
        effort.name_up_to_xhigh().to_owned(),
    ]
}

/// pi asks no permission: a tool it is given runs, so a level is the set of tools offered
/// (an allowlist also drops the tools of extensions). `unlimited` leaves pi's own choice:
/// its default tools and those of the user's extensions.
fn tools(permission: Permission) -> Option<&'static str> {
    match permission {
        Permission::ReadOnly => Some(READ_TOOLS),
        Permission::WorkspaceWrite => Some(ALL_BUILTIN_TOOLS),
        Permission::Unlimited => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_offers_no_shell_edit_or_write_and_passes_no_prompt_argument() {
        let cmd = command_line(&crate::request::flag_prompt_request(), Path::new("pi"));
        assert_eq!(
            cmd.args,
            ["-p", "--mode", "json", "--tools", "read,grep,find,ls"]
        );
    }

    #[test]
    fn workspace_write_adds_the_shell_and_the_writers_and_values_stay_values() {
        let mut request = crate::request::flag_prompt_request();
        request.permission = Permission::WorkspaceWrite;
        request.model = Some("--no-tools".into());
        request.session_id = Some("01a2-c051".into());
        let cmd = command_line(&request, Path::new("pi"));
        assert!(cmd.args.ends_with(&[
            "--tools".into(),
            ALL_BUILTIN_TOOLS.into(),
            "--model".into(),
            "--no-tools".into(),
            "--session".into(),
            "01a2-c051".into()
        ]));
    }

    #[test]
    fn a_fork_names_the_session_with_fork_and_effort_is_thinking_in_two_words() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("01a2-c051".into());
        request.fork = true;
        let cmd = command_line(&request, Path::new("pi"));
        assert!(cmd.args.ends_with(&["--fork".into(), "01a2-c051".into()]));
        assert!(!cmd.args.contains(&"--session".into()));
        assert_eq!(effort_words(Effort::Low), ["--thinking", "low"]);
        assert_eq!(effort_words(Effort::Max), ["--thinking", "xhigh"]);
    }

    #[test]
    fn the_models_are_read_from_its_table_as_provider_and_model() {
        // What pi 0.73.1 printed (on stderr) with one provider configured.
        let printed = "provider  model       context  max-out  thinking  images\n\
                       mock      fake-model  128K     16.4K    yes       no    \n";
        assert_eq!(listed_models(printed), Some(vec!["mock/fake-model".into()]));
        assert_eq!(listed_models(""), None);
    }

    #[test]
    fn unlimited_leaves_the_tools_to_pi() {
        let mut request = crate::request::flag_prompt_request();
        request.permission = Permission::Unlimited;
        let cmd = command_line(&request, Path::new("pi"));
        assert_eq!(cmd.args, ["-p", "--mode", "json"]);
    }
}
