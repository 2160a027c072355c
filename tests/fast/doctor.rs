//! `cli-agent-mcp doctor` against real binaries: the fake CLI, a missing one, a broken one
//! and, where installed, the real CLIs; and its report of the kernel sandbox.

use crate::common;
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
    let mut cmd = common::cam_command();
    cmd.args(["doctor", "--json"])
        .env("PATH", "/usr/bin:/bin")
        .env("CAM_CONFIG", "/dev/null")
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

#[test]
fn an_unverified_version_is_usable_with_a_warning() {
    let (output, reports) = doctor(fake, &[("FAKE_CLI_VERSION", "9.9.9")]);
    assert!(output.status.success(), "{output:?}");
    let report = report(&reports, clis::GEMINI);
    assert_eq!(report["state"], "unverified", "{report}");
    assert_eq!(report["version"], "9.9.9");
    let advice = report["advice"].as_str().unwrap_or_default();
    assert!(advice.contains("@google/gemini-cli@0.61.0"), "{advice}");
}

#[test]
fn missing_and_broken_clis_say_what_to_do_and_fail_when_none_is_usable() {
    let (output, reports) = doctor(
        |agent| match agent.name() {
            "claude" => "/bin/false".to_owned(),
            _ => format!("/nonexistent/{agent}"),
        },
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let missing = report(&reports, clis::CODEX);
    assert_eq!(missing["state"], "missing", "{missing}");
    let advice = missing["advice"].as_str().unwrap_or_default();
    assert!(
        advice.contains("CAM_CODEX_BIN") && advice.contains("npm install -g @openai/codex@0.169.0"),
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
    let output = common::cam_command()
        .arg("doctor")
        .env("PATH", "/usr/bin:/bin")
        .env("CAM_CONFIG", "/dev/null")
        .env("CAM_CODEX_BIN", fake(clis::CODEX))
        .env("CAM_CLAUDE_BIN", "/nonexistent/claude")
        .env_remove("CAM_GEMINI_BIN")
        .env_remove("CAM_OPENCODE_BIN")
        .env_remove("CAM_QWEN_BIN")
        .env_remove("CAM_COPILOT_BIN")
        .stdin(Stdio::null())
        .output()
        .expect("run doctor");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("codex     ok"), "{text}");
    assert!(text.contains("claude    missing"), "{text}");
    assert!(text.contains("1 of 6 CLIs usable"), "{text}");
}

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
        assert_eq!(report(&reports, agent)["state"], "verified", "{reports:#?}");
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
        .env("PATH", "/usr/bin:/bin")
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
