//! `codex exec --json`: an OS sandbox per permission level (`-s`), prompt read from stdin (`-`).

use std::path::Path;

use crate::command_line::CommandLine;
use crate::request::{Effort, Permission, RunRequest};

pub(super) fn command_line(request: &RunRequest, program: &Path) -> CommandLine {
    let mut cmd = CommandLine::new(program);
    cmd.arg("exec");
    let sandbox = sandbox_mode(request.permission);
    match &request.session_id {
        // `exec resume` and `exec fork` take no `-s`, and a resumed turn is read-only unless
        // told otherwise.
        Some(_) => {
            cmd.arg(if request.fork { "fork" } else { "resume" });
            cmd.args(["--json", "--skip-git-repo-check"]);
            cmd.flag_value(
                "--config",
                &format!("sandbox_mode={}", toml_string(sandbox)),
            );
        }
        None => {
            cmd.args(["--json", "--skip-git-repo-check", "-s", sandbox]);
        }
    }
    if let Some(model) = &request.model {
        cmd.flag_value("--config", &format!("model={}", toml_string(model)));
    }
    if let Some(session_id) = &request.session_id {
        cmd.args(["--", session_id]);
    } else {
        cmd.arg("--");
    }
    cmd.arg("-");
    cmd
}

/// `model_reasoning_effort`: codex 0.171's levels are ours by the same names (and `xhigh`,
/// `ultra`); its catalog (`codex debug models`) says which a model takes.
pub(super) fn effort_option(effort: Effort) -> String {
    format!(
        "--config=model_reasoning_effort={}",
        toml_string(effort.name())
    )
}

/// `codex debug models`: `{"models": [{"slug": …, "visibility": "list" | "hide"}, …]}`.
#[derive(serde::Deserialize)]
struct Catalog {
    models: Vec<CatalogModel>,
}

#[derive(serde::Deserialize)]
struct CatalogModel {
    slug: String,
    visibility: Option<String>,
}

/// The models its catalog lists for people to pick (the hidden ones left out).
pub(super) fn listed_models(printed: &str) -> Option<Vec<String>> {
    let catalog: Catalog = serde_json::from_str(printed).ok()?;
    let listed = catalog.models.into_iter();
    let listed = listed.filter(|model| model.visibility.as_deref() != Some("hide"));
    Some(listed.map(|model| model.slug).collect())
}

fn sandbox_mode(permission: Permission) -> &'static str {
    match permission {
        Permission::ReadOnly => "read-only",
        Permission::WorkspaceWrite => "workspace-write",
        Permission::Unlimited => "danger-full-access",
    }
}

/// A TOML basic string: JSON's string escapes are valid TOML.
fn toml_string(value: &str) -> String {
    serde_json::Value::from(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_run_sets_the_sandbox_and_reads_the_prompt_from_stdin() {
        let cmd = command_line(&crate::request::flag_prompt_request(), Path::new("codex"));
        assert_eq!(
            cmd.args,
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-s",
                "read-only",
                "--",
                "-"
            ]
        );
    }

    #[test]
    fn resume_sets_the_sandbox_through_config_because_resume_has_no_s_flag() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("0199-thread".into());
        request.permission = Permission::WorkspaceWrite;
        request.model = Some("gpt-5.5".into());
        let cmd = command_line(&request, Path::new("codex"));
        assert_eq!(
            cmd.args,
            [
                "exec",
                "resume",
                "--json",
                "--skip-git-repo-check",
                "--config=sandbox_mode=\"workspace-write\"",
                "--config=model=\"gpt-5.5\"",
                "--",
                "0199-thread",
                "-",
            ]
        );
    }

    #[test]
    fn unlimited_is_danger_full_access() {
        let mut request = crate::request::flag_prompt_request();
        request.permission = Permission::Unlimited;
        assert!(
            command_line(&request, Path::new("codex"))
                .args
                .contains(&"danger-full-access".to_owned())
        );
    }

    #[test]
    fn a_fork_is_exec_fork_and_effort_a_config_value_before_the_session() {
        let mut request = crate::request::flag_prompt_request();
        request.session_id = Some("0199-thread".into());
        request.fork = true;
        request.effort = Some(Effort::Max);
        let codex = crate::agent::Agent::builtin(&super::super::Codex);
        let cmd = codex
            .command_line(&request, Path::new("codex"), &[])
            .unwrap();
        assert_eq!(
            cmd.args,
            [
                "exec",
                "fork",
                "--json",
                "--skip-git-repo-check",
                "--config=sandbox_mode=\"read-only\"",
                "--config=model_reasoning_effort=\"max\"",
                "--",
                "0199-thread",
                "-",
            ]
        );
        assert_eq!(
            effort_option(Effort::Low),
            "--config=model_reasoning_effort=\"low\""
        );
    }

    #[test]
    fn the_models_its_catalog_lists_are_read_and_hidden_ones_left_out() {
        let printed = include_str!("../../../../tests/fixtures/captures/codex/models.json");
        let models = listed_models(printed).expect("a catalog");
        assert!(models.contains(&"gpt-5.5".to_owned()), "{models:?}");
        assert!(
            !models.contains(&"codex-auto-review".to_owned()),
            "{models:?}"
        );
        assert_eq!(listed_models("not json"), None);
    }
}
