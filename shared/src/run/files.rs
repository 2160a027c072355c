//! A run's own files, each in a directory of its own in the temp dir (which the sandbox lets
//! the CLI write), named by this server instance so that its guardian can remove them after a
//! SIGKILL: the output schema a CLI reads from a file, and the usage a CLI writes to one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::agent::Agent;
use crate::cli::{SchemaFlag, UsageFile};
use crate::command_line::CommandLine;
use crate::error::SetupError;
use crate::event::AgentEvent;
use crate::output_schema::SchemaFile;
use crate::request::RunRequest;
use crate::transcript::Transcript;

/// The files of one run, their flags already on its command line.
#[derive(Debug)]
pub(super) struct RunFiles {
    /// Where the CLI is told to write its usage, for a CLI that prints none.
    pub(super) usage: Option<UsageFileAt>,
    /// The output schema's file, for a CLI that reads it from one; removed when dropped, at
    /// the run's end.
    _schema: Option<SchemaFile>,
}

/// Where a CLI writes its usage (see [`crate::cli::Cli::usage_file`]).
#[derive(Debug)]
pub(super) struct UsageFileAt {
    file: UsageFile,
    path: PathBuf,
}

impl RunFiles {
    /// The files `agent`'s CLI needs for `request`, made, and their flags added to `command`.
    pub(super) fn hand_over(
        agent: Agent,
        request: &RunRequest,
        command_line: &mut CommandLine,
    ) -> Result<Self, SetupError> {
        let usage = match agent.cli().usage_file() {
            Some(file) => {
                let path = run_file_path("usage", "usage.json").map_err(|source| {
                    SetupError::UsageFile {
                        dir: std::env::temp_dir(),
                        source,
                    }
                })?;
                command_line.flag_value(file.flag, &path.to_string_lossy());
                Some(UsageFileAt { file, path })
            }
            None => None,
        };
        let schema = hand_over_schema(agent, request, command_line)?;
        Ok(Self {
            usage,
            _schema: schema,
        })
    }

    /// The directory the CLI writes its usage in, which the sandbox must let it write.
    pub(super) fn usage_dir(&self) -> Option<&Path> {
        self.usage.as_ref().and_then(|usage| usage.path.parent())
    }
}

impl UsageFileAt {
    /// Records the usage the CLI wrote, unless its stdout reported some; the file goes.
    pub(super) async fn read_into(self, transcript: &mut Transcript) {
        let path = self.path.clone();
        let text = tokio::task::spawn_blocking(move || {
            let text = std::fs::read_to_string(&path);
            if let Some(dir) = path.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
            text
        })
        .await
        .ok()
        .and_then(Result::ok);
        if transcript.usage_mut().is_some() {
            return;
        }
        // A run that was killed, or failed before its end, writes none.
        let Some(text) = text else {
            return;
        };
        match (self.file.read)(&text) {
            Some(usage) => transcript.record(AgentEvent::Usage(usage)),
            None => {
                tracing::warn!(file = %self.path.display(), "the CLI's usage file did not read as usage")
            }
        }
    }
}

/// Gives the CLI the request's output schema by its own flag, where it has one; a schema
/// read from a file is written to one, which goes when the returned guard is dropped.
fn hand_over_schema(
    agent: Agent,
    request: &RunRequest,
    command_line: &mut CommandLine,
) -> Result<Option<SchemaFile>, SetupError> {
    let Some(schema) = &request.output_schema else {
        return Ok(None);
    };
    match agent.cli().schema_flag() {
        None => Ok(None),
        Some(SchemaFlag::Inline(flag)) => {
            command_line.insert_options(&[format!("{flag}={}", schema.schema())]);
            Ok(None)
        }
        Some(SchemaFlag::File(flag)) => {
            let file = run_file_path("schema", "schema.json")
                .and_then(|path| SchemaFile::write(schema, path))
                .map_err(|source| SetupError::SchemaFile {
                    dir: std::env::temp_dir(),
                    source,
                })?;
            command_line.insert_options(&[format!("{flag}={}", file.path().display())]);
            Ok(Some(file))
        }
    }
}

/// A fresh path for one of a run's files (`kind` names it), in a directory of its own made in
/// the temp dir.
fn run_file_path(kind: &str, file: &str) -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // Named by this process instance, so its guardian can remove it after a SIGKILL.
    let dir = std::env::temp_dir().join(format!("cam-{kind}-{}-{n}", crate::marker::instance()));
    crate::platform::private_dir().create(&dir)?;
    Ok(dir.join(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clis::{CLAUDE, CODEX, GEMINI};
    use crate::output_schema::OutputSchema;
    use crate::run::supervise::take_prompt;

    fn with_schema(agent: Agent) -> (RunRequest, CommandLine) {
        let mut request = crate::request::flag_prompt_request();
        let schema = serde_json::json!({"type": "object", "required": ["a"]});
        request.output_schema = Some(OutputSchema::new(schema).unwrap());
        let cmd = agent
            .cli()
            .command_line(&request, Path::new("cli"))
            .unwrap();
        (request, cmd)
    }

    #[test]
    fn the_schema_goes_by_file_inline_or_in_the_prompt_as_the_cli_takes_it() {
        let (request, mut cmd) = with_schema(CODEX);
        let file = hand_over_schema(CODEX, &request, &mut cmd)
            .unwrap()
            .expect("a file");
        let flag = format!("--output-schema={}", file.path().display());
        assert_eq!(
            cmd.args[cmd.args.len() - 3..],
            [flag, "--".into(), "-".into()]
        );
        let written = std::fs::read_to_string(file.path()).unwrap();
        assert_eq!(written, r#"{"required":["a"],"type":"object"}"#);
        let dir = file.path().parent().unwrap().to_owned();
        drop(file);
        assert!(!dir.exists(), "the schema's directory outlived the run");

        let (request, mut cmd) = with_schema(CLAUDE);
        assert!(
            hand_over_schema(CLAUDE, &request, &mut cmd)
                .unwrap()
                .is_none()
        );
        let inline = r#"--json-schema={"required":["a"],"type":"object"}"#;
        assert!(cmd.args.contains(&inline.to_owned()), "{:?}", cmd.args);

        let (mut request, mut cmd) = with_schema(GEMINI);
        let before = cmd.args.clone();
        assert!(
            hand_over_schema(GEMINI, &request, &mut cmd)
                .unwrap()
                .is_none()
        );
        assert_eq!(cmd.args, before);
        assert!(take_prompt(GEMINI, &mut request).contains("exactly one JSON value"));
    }
}
