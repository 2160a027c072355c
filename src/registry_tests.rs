//! Every CLI of the registry reaches every place a CLI must be: its `--<cli>-bin` flag and
//! `CAM_<CLI>_BIN` variable, its tool, its doctor row, its dialect in the fake CLI, and its
//! golden captures. A CLI added to `BUILTINS` and forgotten elsewhere fails here by name.

use std::path::{Path, PathBuf};

use cli_agent_engine::AgentEvent;
use cli_agent_engine::clis::{BUILTINS, Cli};

use crate::args;
use crate::mcp::Catalogue;
use crate::offer::Offer;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn agents() -> Vec<cli_agent_engine::Agent> {
    cli_agent_engine::clis::builtin_agents().collect()
}

#[test]
fn every_cli_has_its_bin_flag_and_variable() {
    let command = args::command();
    for cli in BUILTINS {
        let flag = format!("{}-bin", cli.name());
        let arg = command
            .get_arguments()
            .find(|arg| arg.get_long() == Some(flag.as_str()))
            .unwrap_or_else(|| panic!("no --{flag}"));
        let env = arg.get_env().map(|env| env.to_string_lossy().into_owned());
        let expected = format!("CAM_{}_BIN", cli.name().to_ascii_uppercase());
        assert_eq!(env.as_deref(), Some(expected.as_str()), "{flag}");
        // The flag alone: the whole command would also read the user's CAM_* variables.
        let matches = clap::Command::new("cli-agent-mcp")
            .arg(arg.clone())
            .try_get_matches_from(["cli-agent-mcp", &format!("--{flag}=/opt/x")])
            .expect("parses");
        let bin = matches.get_one::<PathBuf>(&args::bin_arg_id(*cli));
        assert_eq!(bin, Some(&PathBuf::from("/opt/x")), "{flag}");
    }
}

#[test]
fn every_cli_has_its_tool() {
    let offers: Vec<Offer> = agents().into_iter().map(Offer::from).collect();
    let catalogue = Catalogue::new(&offers, &[], &[]).expect("tools");
    let tools = catalogue.tools();
    for cli in BUILTINS {
        let tool = tools
            .iter()
            .find(|tool| tool.name == cli.name())
            .unwrap_or_else(|| panic!("no {} tool", cli.name()));
        assert_eq!(tool.title.as_deref(), Some(cli.title()));
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(description.starts_with(cli.description()), "{description}");
    }
}

#[test]
fn every_cli_has_golden_captures_its_parser_reads_whole() {
    for cli in BUILTINS {
        let dir = fixtures().join("captures").join(cli.name());
        let plain = std::fs::read_to_string(dir.join("plain.jsonl"))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_completes(*cli, &plain);
    }
}

fn assert_completes(cli: &dyn Cli, stream: &str) {
    let mut dialect = cli.dialect();
    let mut events = Vec::new();
    for line in stream.lines() {
        dialect
            .parse_line(line, &mut events)
            .unwrap_or_else(|issue| panic!("{}: {issue:?} in {line}", cli.name()));
    }
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::TurnCompleted { .. })),
        "{}: plain.jsonl does not complete a turn",
        cli.name()
    );
}

/// What only runs through the fake CLI, a POSIX script: Unix only until it has a Windows
/// build.
#[cfg(unix)]
mod through_the_fake_cli {
    use cli_agent_engine::{Engine, EngineConfig, RunRequest, Status};
    use cli_agent_test_support::common::temp_dir;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::commands::doctor::{self, State};

    /// The engine settings that run the fake CLI under every CLI's name.
    fn fake_config() -> EngineConfig {
        EngineConfig {
            binaries: BUILTINS
                .iter()
                .map(|cli| {
                    (
                        cli.name().to_owned(),
                        fixtures().join("bin").join(cli.name()),
                    )
                })
                .collect(),
            ..EngineConfig::default()
        }
    }

    #[tokio::test]
    async fn every_cli_has_its_doctor_row() {
        let reports = doctor::check_all(&fake_config(), &agents()).await;
        for cli in BUILTINS {
            let report = reports
                .iter()
                .find(|report| report.agent.name() == cli.name())
                .unwrap_or_else(|| panic!("no doctor row for {}", cli.name()));
            assert_eq!(report.state, State::Verified, "{report:?}");
            assert_eq!(report.verified_version, cli.verified_version());
        }
    }

    #[tokio::test]
    async fn every_cli_is_spoken_by_the_fake_cli() {
        let engine = Engine::new(fake_config());
        let workspace = temp_dir("registry-spoken");
        for agent in agents() {
            let request = RunRequest::new("answer=spoken tool", workspace.path());
            let mut tools = 0;
            let outcome = engine
                .run(agent, request, CancellationToken::new(), &mut |events| {
                    let finished =
                        |event: &&AgentEvent| matches!(event, AgentEvent::ToolFinished { .. });
                    tools += events.iter().filter(finished).count();
                })
                .await
                .expect("starts");
            assert_eq!(outcome.status, Status::Completed, "{agent}: {outcome:?}");
            assert_eq!(outcome.answer, "spoken", "{agent}");
            assert_eq!(tools, 1, "{agent}: the fake's tool call was not parsed");
            assert!(
                outcome.warnings.is_empty(),
                "{agent}: {:?}",
                outcome.warnings
            );
        }
    }
}
