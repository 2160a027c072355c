//! Interop with a real MCP client: the official Python SDK (`mcp==2.3.0`, in `.venv`) runs
//! tests/interop/client.py against the built server, over the `initialize` handshake and over
//! the 2026-07-28 lifecycle it negotiates in `auto` mode, on stdio and on Streamable HTTP (by
//! URL, with a bearer token): a call with progress, a cancel by timeout, and a background job
//! waited for and paged back. tests/interop/elicit.py has the SDK answer the server's
//! questions (elicitation) about calls past its bounds; tests/interop/logging_and_result.py
//! has it hear the server's warnings and read a failed job's complete job_result;
//! tests/interop/resources.py reads and subscribes to jobs as resources, gets a prompt and
//! completes its arguments; tests/interop/delegate_questions.py answers the real claude's own
//! permission questions; tests/interop/output_schema.py gets answers validated against a schema.
//!
//! Without `.venv` the test is skipped with the command that sets it up, unless
//! `CAM_TEST_REQUIRE_ALL=1` (CI), where a missing client is a failure.

use crate::common;
use crate::mcp;
#[cfg(unix)]
use crate::real;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{assert_none_tagged, unique};
use tokio::process::Command;

const SETUP: &str = "python3 -m venv .venv && .venv/bin/pip install mcp==2.3.0";

fn venv_python() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let has_sdk = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    has_sdk.then_some(python)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_calls_gets_progress_cancels_by_timeout_and_collects_a_background_job_on_stdio_and_http()
 {
    let Some(python) = venv_python() else {
        common::skip_unless_required(&format!(
            "the Python MCP SDK is not installed: run `{SETUP}`"
        ));
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/client.py");
    let combinations = [
        ("legacy", "stdio"),
        ("auto", "stdio"),
        ("legacy", "http"),
        ("auto", "http"),
    ];
    let runs: Vec<_> = combinations
        .into_iter()
        .map(|(mode, transport)| {
            let tag = unique(&format!("interop-{mode}-{transport}"));
            let mut command = Command::new(&python);
            command
                .arg(&script)
                .arg(common::binary())
                .arg(common::fake_cli::fake_cli_dir())
                .arg(&tag)
                .arg(mode)
                .arg(transport)
                .env("INTEROP_AGENTS", mcp::agents().join(","))
                .kill_on_drop(true);
            // All at once: each spends most of its time waiting for its timeout.
            let output = tokio::spawn(async move { command.output().await });
            (format!("{mode} over {transport}"), tag, output)
        })
        .collect();
    for (mode, tag, output) in runs {
        let output = output
            .await
            .expect("the client task")
            .expect("run the Python client");
        assert!(
            output.status.success(),
            "{mode}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(String::from_utf8_lossy(&output.stdout).contains(&format!("ok ({mode})")));
        assert_none_tagged(&tag);
    }
}

/// The SDK as the person asked to lift a bound: tests/interop/elicit.py says what it checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_is_asked_before_a_call_past_the_bounds_runs_on_stdio_and_http() {
    let Some(python) = venv_python() else {
        common::skip_unless_required(&format!(
            "the Python MCP SDK is not installed: run `{SETUP}`"
        ));
        return;
    };
    for transport in ["stdio", "http"] {
        let stdout = run_script(&python, "elicit.py", &[transport]).await;
        assert!(
            stdout.contains(&format!("ok (elicitation over {transport})")),
            "{stdout}"
        );
    }
}

/// The SDK sets its log level and hears a warning; a failed job's job_result is complete:
/// tests/interop/logging_and_result.py says what it checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_hears_warnings_at_its_level_and_job_result_of_a_failed_job_is_complete() {
    let Some(python) = venv_python() else {
        common::skip_unless_required(&format!(
            "the Python MCP SDK is not installed: run `{SETUP}`"
        ));
        return;
    };
    for transport in ["stdio", "http"] {
        let stdout = run_script(&python, "logging_and_result.py", &[transport]).await;
        assert!(
            stdout.contains(&format!("ok (logging over {transport})")),
            "{stdout}"
        );
    }
}

/// The SDK reads jobs as resources and hears a subscribed job end (resources/subscribe after
/// the handshake, subscriptions/listen at 2026-07-28), gets a prompt and completes arguments:
/// tests/interop/resources.py says what it checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_reads_and_subscribes_to_jobs_gets_prompts_and_completes_on_stdio_and_http()
{
    let Some(python) = venv_python() else {
        common::skip_unless_required(&format!(
            "the Python MCP SDK is not installed: run `{SETUP}`"
        ));
        return;
    };
    for mode in ["legacy", "auto"] {
        for transport in ["stdio", "http"] {
            let stdout = run_script(&python, "resources.py", &[mode, transport]).await;
            assert!(
                stdout.contains(&format!("ok ({mode} over {transport})")),
                "{stdout}"
            );
        }
    }
}

/// The SDK gets a schema-validated answer from codex (by its flag) and gemini (by its prompt),
/// an error naming why for a non-conforming one, and a refusal for an invalid schema:
/// tests/interop/output_schema.py says what it checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_gets_answers_validated_against_an_output_schema_on_stdio_and_http() {
    let Some(python) = venv_python() else {
        common::skip_unless_required(&format!(
            "the Python MCP SDK is not installed: run `{SETUP}`"
        ));
        return;
    };
    for transport in ["stdio", "http"] {
        let stdout = run_script(&python, "output_schema.py", &[transport]).await;
        assert!(
            stdout.contains(&format!("ok (output_schema over {transport})")),
            "{stdout}"
        );
    }
}

/// The SDK as the person the real claude's permission question reaches (against the mock), on
/// stdio and on Streamable HTTP: tests/interop/delegate_questions.py says what it checks.
// The real claude in its sandbox (the real module: Unix only).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_answers_the_real_claudes_own_permission_questions() {
    let Some(python) = venv_python() else {
        common::skip_unless_required(&format!(
            "the Python MCP SDK is not installed: run `{SETUP}`"
        ));
        return;
    };
    let Some(bin) = real::installed(cli_agent_engine::clis::CLAUDE) else {
        return;
    };
    let mock = real::MockModel::start();
    let sandbox = real::Sandbox::new(
        cli_agent_engine::clis::CLAUDE,
        &bin,
        mock.port,
        real::Retries::Shortened,
    );
    let mut env: std::collections::BTreeMap<String, String> =
        sandbox.env().iter().cloned().collect();
    env.insert(
        "CAM_CLAUDE_BIN".into(),
        sandbox.wrapper.display().to_string(),
    );
    env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/delegate_questions.py");
    for transport in ["stdio", "http"] {
        let output = Command::new(&python)
            .arg(&script)
            .arg(common::binary())
            .arg(&sandbox.workspace)
            .arg(transport)
            .env(
                "SERVER_ENV",
                serde_json::to_string(&env).expect("the env as JSON"),
            )
            .env("INTEROP_AGENTS", "claude")
            .kill_on_drop(true)
            .output()
            .await
            .expect("run the Python client");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success()
                && stdout.contains(&format!("ok (delegate questions over {transport})")),
            "{transport}: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Run tests/interop/`script` with `args` (its transport, after its mode if it takes one); its
/// stdout, once it has succeeded.
async fn run_script(python: &Path, script: &str, args: &[&str]) -> String {
    let output = Command::new(python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/interop")
                .join(script),
        )
        .arg(common::binary())
        .arg(common::fake_cli::fake_cli_dir())
        .args(args)
        .env("INTEROP_AGENTS", mcp::agents().join(","))
        .kill_on_drop(true)
        .output()
        .await
        .expect("run the Python client");
    assert!(
        output.status.success(),
        "{script} {args:?}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
