//! Each CLI's real headless command line, built from a request.
//!
//! The prompt never becomes an argument: it is written to the CLI's stdin, which is then
//! closed, so no prompt can be read as a flag and none is limited by the argv size or shown
//! by `ps`. Every other user-supplied value goes in a `--flag=value` form for the same reason.

use std::ffi::OsString;
use std::path::Path;

use crate::environment::{self, EnvPattern};
use crate::request::RunRequest;

/// A program, its arguments and its whole environment: the variables the engine sets, then
/// those it inherits (see [`crate::environment`]); nothing else reaches the CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLine {
    /// The program: a path, or a name looked up on PATH.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment.
    pub env: Vec<(OsString, OsString)>,
}

impl CommandLine {
    pub(crate) fn new(program: &Path) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    pub(crate) fn arg(&mut self, arg: impl Into<String>) -> &mut Self {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn args<const N: usize>(&mut self, args: [&str; N]) -> &mut Self {
        self.args.extend(args.map(str::to_owned));
        self
    }

    /// `--name=value`: the value cannot be mistaken for a flag.
    pub(crate) fn flag_value(&mut self, name: &str, value: &str) -> &mut Self {
        self.arg(format!("{name}={value}"))
    }

    /// `--model=` the request's model and `<session_flag>=` its session id, for those it names.
    pub(crate) fn model_and_session(
        &mut self,
        request: &RunRequest,
        session_flag: &str,
    ) -> &mut Self {
        if let Some(model) = &request.model {
            self.flag_value("--model", model);
        }
        if let Some(session_id) = &request.session_id {
            self.flag_value(session_flag, session_id);
        }
        self
    }

    pub(crate) fn set_env(&mut self, name: &str, value: &str) -> &mut Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Set `name` to `value`, replacing the value it had.
    pub(crate) fn replace_env(&mut self, name: &str, value: &std::ffi::OsStr) -> &mut Self {
        self.env.retain(|(set, _)| set != name);
        self.env.push((name.into(), value.into()));
        self
    }

    /// Add options before the end-of-options marker `--` if there is one: every value the
    /// engine puts on a command line is bound with `=`, so a bare `--` can only be that marker,
    /// and what follows it (a session id, the `-` that reads the prompt from stdin) stays last.
    pub(crate) fn insert_options(&mut self, options: &[String]) {
        let at = self
            .args
            .iter()
            .position(|arg| arg == "--")
            .unwrap_or(self.args.len());
        self.args.splice(at..at, options.iter().cloned());
    }

    /// Add what the CLI inherits from `parent`: the base set, `own` and `passed`, except the
    /// variables the engine already set.
    pub(crate) fn inherit(
        &mut self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
        own: &[&str],
        passed: &[EnvPattern],
    ) {
        let inherited = environment::inherited(parent, own, passed);
        let fresh: Vec<_> = inherited
            .into_iter()
            .filter(|(name, _)| self.env.iter().all(|(set, _)| set != name))
            .collect();
        self.env.extend(fresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variables_the_engine_sets_win_over_inherited_ones() {
        let parent = [
            ("OPENCODE_PERMISSION", r#"{"bash":"allow"}"#),
            ("OPENCODE_CONFIG", "/cfg.json"),
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "ghp_x"),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let agent = crate::clis::OPENCODE;
        let mut cmd = agent
            .cli()
            .command_line(
                &crate::request::flag_prompt_request(),
                Path::new("opencode"),
            )
            .unwrap();
        cmd.inherit(parent, agent.cli().own_env(), &[]);
        let names: Vec<_> = cmd.env.iter().map(|(name, _)| name.clone()).collect();
        assert_eq!(
            names,
            ["OPENCODE_PERMISSION", "OPENCODE_CONFIG", "PATH"],
            "{:?}",
            cmd.env
        );
        assert!(cmd.env[0].1.to_string_lossy().contains("deny"));
    }
}
