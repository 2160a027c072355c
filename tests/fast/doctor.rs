//! `cli-agent-mcp doctor` against real binaries: the fake CLI, a missing one, a broken one
//! and, where installed, the real CLIs; and its report of the kernel sandbox.

use crate::common;
#[cfg(unix)]
use crate::real;

use std::process::{Output, Stdio};

use cli_agent_engine::{Agent, clis};
use serde_json::Value;

/// `doctor --json` with every CLI pointed at `bin(agent)` and a PATH that holds none of them;
/// its CLIs' reports.
fn doctor(bin: impl Fn(Agent) -> String, extra_env: &[(&str, &str)]) -> (Output, Vec<Value>) {
    let (output, report) = doctor_json(bin, extra_env);
    let clis = serde_json::from_value(report["clis"].clone())
        .unwrap_or_else(|error| panic!("doctor's report has no `clis` ({error}): {report:#}"));
    (output, clis)
}

/// `doctor --json` as [`doctor`] runs it; its whole report.
fn doctor_json(bin: impl Fn(Agent) -> String, extra_env: &[(&str, &str)]) -> (Output, Value) {
    doctor_json_with(&[], bin, extra_env)
}

/// [`doctor_json`] with `flags` as well.
fn doctor_json_with(
    flags: &[&str],
    bin: impl Fn(Agent) -> String,
    extra_env: &[(&str, &str)],
) -> (Output, Value) {
    let mut cmd = common::cam_command();
    cmd.args(["doctor", "--json"])
        .args(flags)
        .env("PATH", common::bare_path())
        .env("CAM_CONFIG", common::NO_CONFIG)
        .stdin(Stdio::null());
    for agent in clis::builtin_agents() {
        cmd.env(agent.env_var("BIN"), bin(agent));
    }
    for (key, value) in extra_env {
        cmd.env(key, value);
    }
    let output = cmd.output().expect("run doctor");
    let reports = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("doctor printed no JSON report ({error}): {output:?}"));
    (output, reports)
}

fn fake(agent: Agent) -> String {
    common::fake_bin(agent).display().to_string()
}

fn report(reports: &[Value], agent: Agent) -> &Value {
    reports
        .iter()
        .find(|report| report["agent"] == agent.name())
        .unwrap_or_else(|| panic!("no report for {agent}: {reports:?}"))
}

#[test]
fn verified_versions_are_reported_ok() {
    let (output, reports) = doctor(fake, &[]);
    assert!(output.status.success(), "{output:?}");
    for agent in clis::builtin_agents() {
        let report = report(&reports, agent);
        assert_eq!(report["state"], "verified", "{report}");
        assert_eq!(
            report["version"],
            agent.cli().verified_version(),
            "{report}"
        );
        assert_eq!(report["path"], fake(agent), "{report}");
    }
}

/// `doctor` with every fake CLI answering `--version` with `version`: its exit status, its
/// JSON reports and its text report.
fn doctor_at_version(version: &str) -> (Output, Vec<Value>, String) {
    let (output, reports) = doctor(fake, &[("FAKE_CLI_VERSION", version)]);
    let text = common::cam_command()
        .arg("doctor")
        .env("PATH", common::bare_path())
        .env("CAM_CONFIG", common::NO_CONFIG)
        .env("FAKE_CLI_VERSION", version)
        .envs(clis::builtin_agents().map(|agent| (agent.env_var("BIN"), fake(agent))))
        .stdin(Stdio::null())
        .output()
        .expect("run doctor");
    (
        output,
        reports,
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

/// The text report's line for `agent` and the advice line under it.
fn text_rows(text: &str, agent: Agent) -> (&str, &str) {
    let mut lines = text.lines();
    let row = lines
        .find(|line| line.split_whitespace().next() == Some(agent.name()))
        .unwrap_or_else(|| panic!("no row for {agent}:\n{text}"));
    (row, lines.next().unwrap_or_default())
}

#[test]
fn a_newer_release_is_usable_unverified_and_never_to_be_replaced() {
    let (output, reports, text) = doctor_at_version("9.9.9");
    assert!(output.status.success(), "{output:?}");
    for agent in clis::builtin_agents() {
        let report = report(&reports, agent);
        assert_eq!(report["state"], "unverified", "{report}");
        assert_eq!(report["release"], "newer", "{report}");
        assert_eq!(report["version"], "9.9.9", "{report}");
        let advice = report["advice"].as_str().unwrap_or_default();
        let verified = agent.cli().verified_version();
        assert!(
            advice.starts_with(&format!("newer than the verified {verified}, unverified"))
                && advice.contains("JSONL stream or its flags")
                && advice.contains("report it"),
            "{advice}"
        );
        assert!(!advice.contains("npm install"), "a downgrade: {advice}");
        let (row, advice_line) = text_rows(&text, agent);
        assert_eq!(row.split_whitespace().nth(1), Some("newer"), "{row}");
        assert!(!advice_line.contains("npm install"), "{advice_line}");
    }
}

#[test]
fn an_older_release_is_told_to_upgrade_to_the_verified_one() {
    let (output, reports, text) = doctor_at_version("0.0.1");
    assert!(output.status.success(), "{output:?}");
    for agent in clis::builtin_agents() {
        let report = report(&reports, agent);
        assert_eq!(report["state"], "unverified", "{report}");
        assert_eq!(report["release"], "older", "{report}");
        let advice = report["advice"].as_str().unwrap_or_default();
        let upgrade = format!(
            "Upgrade with `npm install -g {}@{}`",
            agent.cli().npm_package(),
            agent.cli().verified_version()
        );
        assert!(advice.contains(&upgrade), "{advice}");
        let (row, _) = text_rows(&text, agent);
        assert_eq!(row.split_whitespace().nth(1), Some("older"), "{row}");
    }
}

#[test]
fn missing_and_broken_clis_say_what_to_do_and_fail_when_none_is_usable() {
    let (output, reports) = doctor(
        |agent| match agent.name() {
            "claude" => common::fake_cli::failing_program().display().to_string(),
            _ => format!("/nonexistent/{agent}"),
        },
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let missing = report(&reports, clis::CODEX);
    assert_eq!(missing["state"], "missing", "{missing}");
    let advice = missing["advice"].as_str().unwrap_or_default();
    let install = format!(
        "npm install -g @openai/codex@{}",
        clis::CODEX.cli().verified_version()
    );
    assert!(
        advice.contains("CAM_CODEX_BIN") && advice.contains(&install),
        "{advice}"
    );
    let broken = report(&reports, clis::CLAUDE);
    assert_eq!(broken["state"], "broken", "{broken}");
    assert!(
        broken["advice"]
            .as_str()
            .unwrap_or_default()
            .contains("--version")
    );
}

#[test]
fn one_usable_cli_is_enough_and_the_text_report_names_each_state() {
    let mut command = common::cam_command();
    for agent in clis::builtin_agents() {
        command.env_remove(agent.env_var("BIN"));
    }
    let output = command
        .arg("doctor")
        .env("PATH", common::bare_path())
        .env("CAM_CONFIG", common::NO_CONFIG)
        .env("CAM_CODEX_BIN", fake(clis::CODEX))
        .env("CAM_CLAUDE_BIN", "/nonexistent/claude")
        .stdin(Stdio::null())
        .output()
        .expect("run doctor");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("codex     ok"), "{text}");
    assert!(text.contains("claude    missing"), "{text}");
    let usable = format!("1 of {} CLIs usable", clis::BUILTINS.len());
    assert!(text.contains(&usable), "{text}");
    assert!(
        text.contains("for a missing one within seconds of its install"),
        "{text}"
    );
}

// A real CLI installed by scripts/install-clis.sh (the real module: Unix only).
#[cfg(unix)]
#[test]
fn the_installed_real_clis_are_the_verified_versions() {
    let Some(bins) = clis::builtin_agents()
        .map(|agent| real::installed(agent).map(|bin| (agent, bin)))
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let (output, reports) = doctor(
        |agent| {
            bins.iter()
                .find(|(a, _)| *a == agent)
                .map(|(_, bin)| bin.display().to_string())
                .unwrap_or_default()
        },
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    for agent in clis::builtin_agents() {
        let report = report(&reports, agent);
        // The canary's newest releases are the verified ones or newer, never to be replaced.
        let newest = real::Releases::chosen() == real::Releases::Latest;
        let newer = report["state"] == "unverified" && report["release"] == "newer";
        assert!(
            report["state"] == "verified" || newest && newer,
            "{report:#}"
        );
    }
}

#[test]
fn the_sandbox_report_names_the_kernels_landlock_the_mode_and_each_levels_bound() {
    let (output, report) = doctor_json(fake, &[("CAM_SANDBOX", "required")]);
    assert!(output.status.success(), "{output:?}");
    let sandbox = &report["sandbox"];
    let support = cli_agent_engine::sandbox::KernelSupport::current();
    assert_eq!(sandbox["kernel"], support.to_string(), "{sandbox:#}");
    assert_eq!(sandbox["mode"], "required", "{sandbox:#}");
    match support.missing_reason() {
        None => {
            assert!(support.to_string().starts_with("Landlock ABI "));
            assert_eq!(sandbox["effect"], "confined", "{sandbox:#}");
            assert!(sandbox["missing"].is_null(), "{sandbox:#}");
        }
        Some(reason) => {
            assert_eq!(sandbox["effect"], "refused", "{sandbox:#}");
            assert_eq!(sandbox["missing"], reason, "{sandbox:#}");
        }
    }
    let enforces = |level: &str| {
        sandbox["levels"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|row| row["level"] == level)
            .and_then(|row| row["enforces"].as_str())
            .unwrap_or_else(|| panic!("no {level} row: {sandbox:#}"))
            .to_owned()
    };
    let read_only = enforces("read-only");
    assert!(
        read_only.contains("state dirs") && read_only.contains("private temp dir"),
        "{read_only}"
    );
    assert!(enforces("workspace-write").contains("workspace"));
    assert_eq!(enforces("unlimited"), "not confined");
}

#[test]
fn the_text_report_says_the_sandbox_mode_in_effect_and_one_line_per_level() {
    let output = common::cam_command()
        .args(["doctor", "--sandbox", "off"])
        .env("PATH", common::bare_path())
        .env("CAM_CODEX_BIN", fake(clis::CODEX))
        .output()
        .expect("run doctor");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let support = cli_agent_engine::sandbox::KernelSupport::current();
    assert!(
        text.contains(&format!(
            "sandbox: {support}, --sandbox off: runs are not confined"
        )),
        "{text}"
    );
    for level in ["read-only", "workspace-write", "unlimited"] {
        assert!(
            text.lines()
                .any(|line| line.trim_start().starts_with(level)),
            "no {level} line: {text}"
        );
    }
}

/// `doctor --models` lists what codex and opencode offer (the fakes print the real CLIs'
/// captured listings), the agent's configured model marked as the default; the CLIs that
/// cannot list say so. Plain doctor runs no listing.
#[test]
fn models_are_listed_where_a_cli_can_with_the_configured_default() {
    let dir = common::temp_dir("doctor-models");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[agents.codex]\nmodel = \"gpt-5.5\"\n").expect("config");
    let config = config.display().to_string();
    let (plain, reports) = doctor(fake, &[("CAM_CONFIG", &config)]);
    assert!(plain.status.success(), "{plain:?}");
    assert!(
        report(&reports, clis::CODEX).get("models").is_none(),
        "{reports:?}"
    );

    let (output, report_json) = doctor_json_with(&["--models"], fake, &[("CAM_CONFIG", &config)]);
    assert!(output.status.success(), "{output:?}");
    let reports: Vec<Value> = serde_json::from_value(report_json["clis"].clone()).expect("clis");
    let codex = &report(&reports, clis::CODEX)["models"];
    assert_eq!(codex["default"], "gpt-5.5", "{codex:#}");
    let listed = codex["models"].to_string();
    assert!(
        listed.contains("\"gpt-5.5\"") && !listed.contains("codex-auto-review"),
        "{codex:#}"
    );
    let opencode = &report(&reports, clis::OPENCODE)["models"];
    assert!(
        opencode["models"]
            .to_string()
            .contains("opencode/big-pickle"),
        "{opencode:#}"
    );
    let claude = &report(&reports, clis::CLAUDE)["models"];
    assert!(
        claude["note"]
            .as_str()
            .is_some_and(|n| n.contains("cannot list")),
        "{claude:#}"
    );
}
