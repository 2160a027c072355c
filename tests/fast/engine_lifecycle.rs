//! The engine's lifecycle contract against real processes (the fake CLI): nothing survives a
//! run, however it ends; stubborn processes and pipe holders cannot hang it; runs are
//! independent; no line is lost. See REFACTOR_SPEC.md.

use crate::common;
use cli_agent_test_support::long_run;

use std::time::Duration;

use cli_agent_engine::{
    Agent, AgentEvent, Engine, EngineConfig, ErrorKind, Outcome, RunRequest, SetupError, Status,
    clis,
};
use common::{assert_none_tagged, fake_config, temp_dir, unique, wait_for_tagged};
use tokio_util::sync::CancellationToken;

async fn run_with(
    config: EngineConfig,
    agent: Agent,
    prompt: impl Into<String>,
    cancel: CancellationToken,
) -> Outcome {
    common::adopt_orphans();
    let workspace = temp_dir("ws");
    let engine = Engine::new(config);
    engine
        .run(
            agent,
            RunRequest::new(prompt, workspace.path()),
            cancel,
            &mut |_: &[AgentEvent]| {},
        )
        .await
        .expect("the run starts")
}

async fn run(agent: Agent, prompt: &str) -> Outcome {
    run_with(fake_config(), agent, prompt, CancellationToken::new()).await
}

/// Start a run in the background and wait until its tagged descendants are all up.
async fn start_then_cancel(agent: Agent, prompt: &str, tag: &str, descendants: usize) -> Outcome {
    let cancel = CancellationToken::new();
    let handle = tokio::spawn(run_with(
        fake_config(),
        agent,
        prompt.to_owned(),
        cancel.clone(),
    ));
    wait_for_tagged(tag, descendants).await;
    cancel.cancel();
    handle.await.expect("the run task")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_descendant_survives_a_normal_exit() {
    let tag = unique("exit");
    let outcome = run(
        clis::CODEX,
        &format!("children=2 session-child daemon tag={tag}"),
    )
    .await;
    assert_eq!(outcome.status, Status::Completed, "{outcome:?}");
    assert_eq!(outcome.answer, "hello from fake codex");
    assert_none_tagged(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_descendant_survives_a_cancel_in_any_dialect() {
    for agent in clis::builtin_agents() {
        let tag = unique(agent.name());
        let prompt = format!("hang children=2 session-child daemon tag={tag}");
        let outcome = start_then_cancel(agent, &prompt, &tag, 4).await;
        assert_eq!(outcome.status, Status::Cancelled, "{agent}: {outcome:?}");
        assert_eq!(outcome.error.map(|e| e.kind), Some(ErrorKind::Cancelled));
        assert_none_tagged(&tag);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_descendant_survives_a_total_timeout() {
    let tag = unique("total");
    let mut config = fake_config();
    config.total_timeout = Duration::from_secs(2);
    let prompt = format!("hang children=1 session-child daemon tag={tag}");
    let outcome = run_with(config, clis::GEMINI, &prompt, CancellationToken::new()).await;
    assert_eq!(outcome.status, Status::TimedOut, "{outcome:?}");
    assert_eq!(outcome.error.map(|e| e.kind), Some(ErrorKind::TotalTimeout));
    assert_none_tagged(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_timeout_fires_when_no_event_arrives_and_names_itself() {
    let tag = unique("idle");
    let mut config = fake_config();
    config.idle_timeout = Some(Duration::from_secs(2));
    let outcome = run_with(
        config,
        clis::OPENCODE,
        &format!("hang session-child tag={tag}"),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(outcome.status, Status::TimedOut, "{outcome:?}");
    let error = outcome.error.expect("an error");
    assert_eq!(error.kind, ErrorKind::IdleTimeout);
    assert!(error.message.contains("no event"), "{}", error.message);
    assert_none_tagged(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waiting_on_the_person_is_not_idle_and_its_idle_limit_runs_from_the_answer() {
    common::adopt_orphans();
    let tag = unique("person-wait");
    let mut config = fake_config();
    let idle = Duration::from_secs(1);
    config.idle_timeout = Some(idle);
    let workspace = temp_dir("ws");
    let request = RunRequest::new(format!("hang session-child tag={tag}"), workspace.path());
    let asking = request.person_wait.begin();
    let engine = Engine::new(config);
    let mut observe = |_: &[AgentEvent]| {};
    let run = engine.run(
        clis::OPENCODE,
        request,
        CancellationToken::new(),
        &mut observe,
    );
    tokio::pin!(run);
    // Three idle limits of silence while the person is asked: the run goes on.
    let silent = tokio::time::sleep(idle * 3);
    tokio::select! {
        outcome = &mut run => panic!("a run waiting on the person ended: {outcome:?}"),
        () = silent => {}
    }
    let answered = tokio::time::Instant::now();
    drop(asking);
    let outcome = run.await.expect("the run starts");
    assert!(answered.elapsed() >= idle, "the limit ran from the answer");
    assert_eq!(outcome.status, Status::TimedOut, "{outcome:?}");
    assert_eq!(outcome.error.map(|e| e.kind), Some(ErrorKind::IdleTimeout));
    assert_none_tagged(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stubborn_cli_and_stubborn_children_die_after_the_grace() {
    let tag = unique("stubborn");
    let prompt = format!("hang ignore-signals stubborn-children=2 tag={tag}");
    let outcome = start_then_cancel(clis::CLAUDE, &prompt, &tag, 2).await;
    assert_eq!(outcome.status, Status::Cancelled, "{outcome:?}");
    // Windows has no signal: its job is terminated (at once on a runner, which has no console
    // for Ctrl-Break).
    if cfg!(unix) {
        assert_eq!(
            outcome.exit_signal,
            Some(9),
            "the CLI ignored SIGINT, so SIGKILL ended it"
        );
    }
    assert_none_tagged(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchild_holding_stdout_cannot_hang_the_run() {
    let tag = unique("holder");
    let outcome = run(clis::CODEX, &format!("hold-stdout tag={tag}")).await;
    assert_eq!(outcome.status, Status::Completed, "{outcome:?}");
    assert_eq!(outcome.answer, "hello from fake codex");
    assert_none_tagged(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_one_run_lets_a_concurrent_one_finish() {
    common::adopt_orphans();
    let (doomed_tag, survivor_tag) = (unique("doomed"), unique("survivor"));
    let doomed_cancel = CancellationToken::new();
    let doomed = tokio::spawn(run_with(
        fake_config(),
        clis::CODEX,
        format!("hang children=1 session-child tag={doomed_tag}"),
        doomed_cancel.clone(),
    ));
    let survivor = tokio::spawn(run_with(
        fake_config(),
        clis::CLAUDE,
        format!("stream=3 children=1 session-child answer=still_here tag={survivor_tag}"),
        CancellationToken::new(),
    ));
    wait_for_tagged(&doomed_tag, 2).await;
    wait_for_tagged(&survivor_tag, 2).await;
    doomed_cancel.cancel();
    let doomed = doomed.await.expect("doomed run");
    assert_eq!(doomed.status, Status::Cancelled);
    assert_none_tagged(&doomed_tag);
    assert_eq!(
        common::tagged_pids(&survivor_tag).len(),
        2,
        "the other run's processes were touched"
    );

    let survivor = survivor.await.expect("surviving run");
    assert_eq!(
        (survivor.status, survivor.answer.as_str()),
        (Status::Completed, "still here")
    );
    assert_ne!(survivor.session_id, doomed.session_id);
    assert_none_tagged(&survivor_tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_8_mib_answer_arrives_whole_in_every_dialect() {
    const SIZE: usize = 8 * 1024 * 1024;
    for agent in clis::builtin_agents() {
        let outcome = run(agent, &format!("answer-bytes={SIZE}")).await;
        assert_eq!(outcome.status, Status::Completed, "{agent}");
        assert_eq!(outcome.answer.len(), SIZE, "{agent}");
        assert!(outcome.answer.bytes().all(|b| b == b'x'), "{agent}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_cap_fails_the_run_instead_of_dropping_it() {
    let mut config = fake_config();
    config.max_line_bytes = 1024 * 1024;
    let outcome = run_with(
        config,
        clis::CODEX,
        "answer-bytes=2000000",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(outcome.status, Status::Failed, "{outcome:?}");
    let error = outcome.error.expect("an error");
    assert_eq!(error.kind, ErrorKind::OutputTooLarge);
    assert!(error.message.contains("1048576"), "{}", error.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_unknown_events_and_invalid_utf8_are_counted_not_fatal() {
    for agent in clis::builtin_agents() {
        let outcome = run(agent, "garbage").await;
        assert_eq!(outcome.status, Status::Completed, "{agent}");
        let warnings = outcome.warnings.join("\n");
        for expected in ["not JSON", "mystery.event", "invalid UTF-8"] {
            assert!(
                warnings.contains(expected),
                "{agent}: {expected} missing from {warnings}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_stderr_flood_neither_blocks_the_cli_nor_fills_memory() {
    let outcome = run(clis::GEMINI, "stderr-bytes=50000000").await;
    assert_eq!(outcome.status, Status::Completed, "{outcome:?}");
    assert!(!outcome.stderr_tail.is_empty());
    assert!(outcome.stderr_tail.len() < 64 * 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_with_the_exit_code_and_the_stderr_message() {
    let outcome = run(clis::OPENCODE, "crash=config_file_is_broken").await;
    assert_eq!(
        (outcome.status, outcome.exit_code),
        (Status::Failed, Some(3))
    );
    let error = outcome.error.expect("an error");
    assert_eq!(error.kind, ErrorKind::Crashed);
    assert!(
        error.message.contains("config file is broken") && error.message.contains("code 3"),
        "{}",
        error.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reported_failure_is_failed_even_when_the_exit_code_is_zero() {
    let outcome = run(clis::GEMINI, "fail=API_Error:_429_Too_Many_Requests exit=0").await;
    assert_eq!(
        (outcome.status, outcome.exit_code),
        (Status::Failed, Some(0))
    );
    assert_eq!(outcome.error.map(|e| e.kind), Some(ErrorKind::RateLimited));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_event_stands_even_when_the_exit_code_is_not_zero() {
    let outcome = run(clis::CODEX, "exit=1").await;
    assert_eq!(
        (outcome.status, outcome.exit_code),
        (Status::Completed, Some(1))
    );
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("after completing its turn"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_lingering_after_its_turn_is_torn_down_and_keeps_its_answer() {
    let tag = unique("linger");
    let outcome = run(clis::CLAUDE, &format!("linger=600 session-child tag={tag}")).await;
    assert_eq!(
        (outcome.status, outcome.answer.as_str()),
        (Status::Completed, "hello from fake claude")
    );
    assert_none_tagged(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_the_observer_as_they_are_parsed() {
    common::adopt_orphans();
    let workspace = temp_dir("observer");
    let mut seen = Vec::new();
    let engine = Engine::new(fake_config());
    let request = RunRequest::new("tool reasoning", workspace.path());
    let outcome = engine
        .run(
            clis::CODEX,
            request,
            CancellationToken::new(),
            &mut |events: &[AgentEvent]| seen.extend_from_slice(events),
        )
        .await
        .expect("the run starts");
    assert!(
        matches!(seen.first(), Some(AgentEvent::SessionStarted { .. })),
        "{seen:?}"
    );
    assert!(seen.iter().any(|e| matches!(
        e,
        AgentEvent::ToolFinished {
            exit_code: Some(0),
            ..
        }
    )));
    assert!(matches!(
        seen.last(),
        Some(AgentEvent::TurnCompleted { .. })
    ));
    assert_eq!(outcome.tools.calls, 1);
    assert!(outcome.reasoning.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_reaches_the_observer_whole_in_order_in_bounded_batches() {
    common::adopt_orphans();
    let workspace = temp_dir("batches");
    let stream = workspace.path().join("stream.jsonl");
    std::fs::write(&stream, long_run::long_codex_stream(20_000)).expect("write the stream");
    let quick =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick-cli/codex");
    let mut config = fake_config();
    config.binaries.insert(clis::CODEX.name().to_owned(), quick);
    let prompt = format!("stream={}\n", stream.display());
    let mut batches = Vec::new();
    let mut seen = Vec::new();
    let outcome = Engine::new(config)
        .run(
            clis::CODEX,
            RunRequest::new(&prompt, workspace.path()),
            CancellationToken::new(),
            &mut |events: &[AgentEvent]| {
                batches.push(events.len());
                seen.extend_from_slice(events);
            },
        )
        .await
        .expect("the run starts");
    assert_eq!(outcome.answer, "long-run-done");
    assert!(
        batches.iter().all(|&size| (1..=256).contains(&size)),
        "{batches:?}"
    );
    assert!(
        batches.len() < seen.len(),
        "a burst comes in batches: {batches:?}"
    );
    // Every command item: started, then finished, in the order written.
    let commands: Vec<String> = seen
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolFinished { command, .. } => command.clone(),
            _ => None,
        })
        .collect();
    let written: Vec<String> = (0..19_996)
        .step_by(10)
        .map(|n| format!("cargo test m{n}"))
        .collect();
    assert_eq!(commands, written);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_a_claude_session_from_another_workspace_is_refused_with_the_original() {
    common::adopt_orphans();
    let (first, other) = (temp_dir("first"), temp_dir("other"));
    let engine = Engine::new(fake_config());
    let started = engine
        .run(
            clis::CLAUDE,
            RunRequest::new("hi", first.path()),
            CancellationToken::new(),
            &mut |_: &[AgentEvent]| {},
        )
        .await
        .expect("first run");
    let session_id = started.session_id.expect("a session id");

    let mut resume = RunRequest::new("again", other.path());
    resume.session_id = Some(session_id.clone());
    let refused = engine
        .run(
            clis::CLAUDE,
            resume.clone(),
            CancellationToken::new(),
            &mut |_: &[AgentEvent]| {},
        )
        .await;
    let error = refused
        .expect_err("resume from another workspace is refused")
        .to_string();
    assert!(
        error.contains(&first.path().canonicalize().unwrap().display().to_string()),
        "{error}"
    );

    resume.workspace = first.path().to_path_buf();
    let resumed = engine
        .run(
            clis::CLAUDE,
            resume,
            CancellationToken::new(),
            &mut |_: &[AgentEvent]| {},
        )
        .await
        .expect("resume");
    assert_eq!(resumed.session_id.as_deref(), Some(session_id.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_refused_before_anything_starts() {
    let engine = Engine::new(fake_config());
    let missing = RunRequest::new("hi", "/nonexistent/dir");
    let error = engine
        .run(
            clis::CODEX,
            missing,
            CancellationToken::new(),
            &mut |_: &[AgentEvent]| {},
        )
        .await
        .expect_err("refused");
    assert!(matches!(error, SetupError::WorkspaceMissing(_)), "{error}");

    let workspace = temp_dir("empty");
    let empty = RunRequest::new("  ", workspace.path());
    let error = engine
        .run(
            clis::CODEX,
            empty,
            CancellationToken::new(),
            &mut |_: &[AgentEvent]| {},
        )
        .await
        .expect_err("refused");
    assert!(matches!(error, SetupError::EmptyPrompt), "{error}");
}

/// copilot prints no token counts: the engine names a file for them, reads it after the run,
/// and removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_a_cli_writes_to_a_file_is_read_and_the_file_removed() {
    common::adopt_orphans();
    // Confined (workspace-write): the usage file is the engine's own, writable at any level.
    let dir = temp_dir("usage-file");
    let record = dir.path().join("argv.json");
    let prompt = format!("argv-out={}", record.display());
    let mut request = RunRequest::new(prompt, dir.path());
    request.permission = cli_agent_engine::Permission::WorkspaceWrite;
    let engine = Engine::new(fake_config());
    let outcome = engine
        .run(
            clis::COPILOT,
            request,
            CancellationToken::new(),
            &mut |_: &[AgentEvent]| {},
        )
        .await
        .expect("run");
    assert_eq!(outcome.status, Status::Completed, "{outcome:?}");
    let usage = outcome.usage.expect("usage from the file");
    assert_eq!((usage.input_tokens, usage.output_tokens), (100, 7));
    let argv: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).expect("argv record"))
            .expect("argv JSON");
    let file = argv["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|arg| arg.as_str()?.strip_prefix("--usage-output-file="))
        .next()
        .expect("the engine names a usage file");
    assert!(!std::path::Path::new(file).exists(), "{file} was left");
}
