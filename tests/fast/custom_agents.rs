//! Custom agents end to end: `[agents.<name>]` with a `base` becomes one more MCP tool of the
//! real binary, run by its base CLI's module (here the fake CLI) with its own binary,
//! environment and description; a bad one stops the server at start, on its line.

use crate::common;
use crate::mcp;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::temp_dir;
use mcp::{Server, all_text, is_error};
use serde_json::{Value, json};
use tempfile::TempDir;

fn write_config(dir: &TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).expect("write config");
    path
}

async fn serve_with(config: &Path) -> Server {
    // Unconfined: the fake CLI records its argv outside the workspace, as a test instrument.
    let builder = Server::builder().env("CAM_SANDBOX", "off");
    let mut server = builder.arg("--config").arg(config).spawn();
    server.initialize().await;
    server
}

/// Call `tool` with `argv-out`: the CLI's argv and environment as it saw them.
async fn seen_by(server: &mut Server, tool: &str, dir: &TempDir) -> Value {
    let argv_out = dir.path().join(format!("{tool}-argv.json"));
    let prompt = format!("argv-out={} answer=seen", argv_out.display());
    let result = server.call(tool, json!({ "prompt": prompt })).await;
    assert!(!is_error(&result), "{result:#}");
    serde_json::from_slice(&std::fs::read(&argv_out).expect("argv-out")).expect("argv json")
}

#[tokio::test]
async fn a_custom_agent_on_claude_is_a_tool_that_answers_under_its_own_name() {
    let dir = temp_dir("cam-custom-claude");
    let config = write_config(
        &dir,
        "[agents.reviewer]\nbase = \"claude\"\ndescription = \"Reviews diffs for the team.\"\n",
    );
    let mut server = serve_with(&config).await;
    let id = server.request("tools/list", json!({})).await;
    let list = server.result(id).await;
    let tool = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "reviewer")
        .unwrap_or_else(|| panic!("no reviewer tool: {list:#}"));
    let description = tool["description"].as_str().unwrap();
    assert!(
        description.starts_with("Reviews diffs for the team."),
        "{description}"
    );
    assert!(description.contains("Claude Code"), "{description}");
    assert!(tool["inputSchema"]["properties"]["append_system_prompt"].is_object());

    let result = server
        .call("reviewer", json!({"prompt": "answer=looks_good"}))
        .await;
    assert!(!is_error(&result), "{result:#}");
    assert_eq!(result["structuredContent"]["status"], "completed");
    assert_eq!(result["structuredContent"]["agent"], "reviewer");
    assert!(all_text(&result).contains("looks good"), "{result:#}");
}

#[tokio::test]
async fn a_second_codex_gets_its_own_environment_and_the_first_does_not() {
    let dir = temp_dir("cam-custom-codex");
    let home = dir.path().join("work-codex-home");
    let config = write_config(
        &dir,
        &format!(
            "[agents.codex-work]\nbase = \"codex\"\nmodel = \"work-model\"\n\
             env = {{ CODEX_HOME = {} }}\n",
            common::toml_path(&home)
        ),
    );
    let mut server = serve_with(&config).await;
    let work = seen_by(&mut server, "codex-work", &dir).await;
    assert_eq!(work["env"]["CODEX_HOME"], home.display().to_string());
    let argv = work["argv"].to_string();
    assert!(argv.contains(r#"--config=model=\"work-model\""#), "{argv}");
    let plain = seen_by(&mut server, "codex", &dir).await;
    assert_ne!(plain["env"]["CODEX_HOME"], home.display().to_string());
    assert!(!plain["argv"].to_string().contains("work-model"));
}

#[tokio::test]
async fn a_custom_agent_runs_its_own_binary() {
    let dir = temp_dir("cam-custom-bin");
    let config = write_config(
        &dir,
        &format!(
            "[agents.wrapped]\nbase = \"gemini\"\nbin = {}\n",
            common::toml_path(&common::fake_cli("gemini"))
        ),
    );
    let mut server = Server::builder()
        .env("CAM_GEMINI_BIN", "/nonexistent/gemini")
        .arg("--config")
        .arg(&config)
        .spawn();
    server.initialize().await;
    let broken = server.call("gemini", json!({"prompt": "hi"})).await;
    assert!(is_error(&broken), "{broken:#}");
    let wrapped = server
        .call("wrapped", json!({"prompt": "answer=wrapped"}))
        .await;
    assert!(!is_error(&wrapped), "{wrapped:#}");
    assert!(all_text(&wrapped).contains("wrapped"), "{wrapped:#}");
}

#[tokio::test]
async fn a_disabled_agent_has_no_tool() {
    let dir = temp_dir("cam-custom-disabled");
    let config = write_config(
        &dir,
        "[agents.gemini]\nenabled = false\n\n[agents.second]\nbase = \"opencode\"\n",
    );
    let mut server = serve_with(&config).await;
    let names = server.tool_names().await;
    assert!(!names.contains(&"gemini".to_owned()), "{names:?}");
    assert!(names.contains(&"second".to_owned()), "{names:?}");
    assert!(names.contains(&"opencode".to_owned()), "{names:?}");
}

#[tokio::test]
async fn clashes_and_unknown_bases_stop_the_server_at_start_on_their_line() {
    let cases = [
        (
            "\n[agents.job_wait]\nbase = \"codex\"\n",
            2,
            "already a tool",
        ),
        ("\n[agents.claude]\nbase = \"codex\"\n", 3, "has no `base`"),
        (
            "\n[agents.cursor]\nbase = \"cursor\"\n",
            3,
            "unknown base `cursor`",
        ),
        ("\n[agents.helper]\nmodel = \"x\"\n", 2, "needs `base"),
        ("\n[agents.Upper]\nbase = \"codex\"\n", 2, "lowercase"),
        (
            "[agents.a-b]\nbase = \"codex\"\n[agents.a_b]\nbase = \"codex\"\n",
            3,
            "CAM_A_B_MAX_RUNS",
        ),
    ];
    for (text, line, reason) in cases {
        let dir = temp_dir("cam-custom-clash");
        let config = write_config(&dir, text);
        let mut server = Server::builder().arg("--config").arg(&config).spawn();
        let status = server.wait_exit(Duration::from_secs(30)).await;
        // The reader of its stderr may still be catching up with the exit.
        common::wait_until("the error on stderr", || server.stderr().contains('\n')).await;
        let stderr = server.stderr();
        assert_eq!(status.code(), Some(2), "{text}: {stderr}");
        assert!(stderr.contains(reason), "{text}: {stderr}");
        assert!(
            stderr.contains(&format!("{}:{line}:", config.display())),
            "{text}: {stderr}"
        );
    }
}

#[test]
fn doctor_checks_custom_agents_too() {
    let dir = temp_dir("cam-custom-doctor");
    let config = write_config(
        &dir,
        "[agents.reviewer]\nbase = \"claude\"\n\n[agents.broken]\nbase = \"codex\"\nbin = \"/nonexistent/codex\"\n",
    );
    let output = common::cam_command()
        .args(["doctor", "--json", "--config"])
        .arg(&config)
        .env("CAM_CLAUDE_BIN", common::fake_cli("claude"))
        .env("CAM_CODEX_BIN", common::fake_cli("codex"))
        .output()
        .expect("doctor");
    let report: Value = serde_json::from_slice(&output.stdout).expect("json");
    let reports = report["clis"].as_array().expect("the CLIs' rows");
    let row = |name: &str| {
        reports
            .iter()
            .find(|report| report["agent"] == name)
            .unwrap_or_else(|| panic!("no row for {name}: {reports:#?}"))
            .clone()
    };
    assert_eq!(row("reviewer")["cli"], "claude");
    assert_eq!(row("reviewer")["state"], "verified");
    assert_eq!(row("broken")["state"], "missing");
    let advice = row("broken")["advice"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(advice.contains("[agents.broken]"), "{advice}");
}

#[tokio::test]
async fn an_agents_own_timeout_ends_its_runs_and_not_the_base_clis() {
    let dir = temp_dir("cam-custom-timeout");
    let config = write_config(&dir, "[agents.hasty]\nbase = \"codex\"\ntimeout_secs = 1\n");
    let mut server = serve_with(&config).await;
    let hasty = server
        .call(
            "hasty",
            json!({"prompt": "stream=60", "handoff_after_secs": 0}),
        )
        .await;
    assert_eq!(
        hasty["structuredContent"]["status"], "timed_out",
        "{hasty:#}"
    );
    let codex = server
        .call("codex", json!({"prompt": "stream=2 answer=patient"}))
        .await;
    assert_eq!(
        codex["structuredContent"]["status"], "completed",
        "{codex:#}"
    );
}

/// `job_wait` on one job until it ends; its result.
async fn wait_job(server: &mut Server, job: &Value) -> Value {
    let id = job["structuredContent"]["job_id"].clone();
    server
        .call("job_wait", json!({"job_ids": [id], "timeout_secs": 30}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_max_runs_queues_its_calls_and_not_its_base_clis() {
    let dir = temp_dir("cam-custom-cap");
    let tag = common::unique("cam-custom-cap");
    let config = write_config(&dir, "[agents.solo]\nbase = \"codex\"\nmax_runs = 1\n");
    let mut server = serve_with(&config).await;
    let background = |prompt: &str| json!({"prompt": prompt, "background": true});
    let first = server
        .call("solo", background(&format!("hang children=1 tag={tag}")))
        .await;
    common::wait_for_tagged(&tag, 1).await;
    let second = server.call("solo", background("answer=second")).await;
    let other = server.call("codex", background("answer=free")).await;
    let free = wait_job(&mut server, &other).await;
    assert!(all_text(&free).contains("free"), "{free:#}");
    let listed = server
        .call("job_list", json!({"agent": "solo", "status": "queued"}))
        .await;
    let second_id = second["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(all_text(&listed).contains(&second_id), "{listed:#}");

    let first_id = first["structuredContent"]["job_id"].clone();
    let cancelled = server.call("job_cancel", json!({"job_id": first_id})).await;
    assert!(!is_error(&cancelled), "{cancelled:#}");
    let waited = wait_job(&mut server, &second).await;
    assert!(all_text(&waited).contains("second"), "{waited:#}");
    common::assert_none_tagged(&tag);
}
