//! The config file through the real binary: where it is found, flags over env over file over
//! defaults with `config` naming each source, errors on their file and line, per-agent
//! settings reaching the CLI, and docs/configuration.md's example loading.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::temp_dir;
use serde_json::Value;

/// The binary with none of the caller's settings, and a config home of its own (APPDATA on
/// Windows): the config file is found there unless a test names one.
fn cam(home: &Path) -> Command {
    let mut cmd = common::cam_command();
    cmd.env_remove("CAM_CONFIG")
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("APPDATA", home.join("config"))
        .env("CAM_STATE_DIR", home.join("state"));
    cmd
}

fn write_config(home: &Path, text: &str) -> PathBuf {
    // Joined a part at a time: the path as the server names it, with the OS's separators.
    let path = home
        .join("config")
        .join("cli-agent-mcp")
        .join("config.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn config_json(cmd: &mut Command) -> Value {
    let output = cmd.args(["config", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn setting<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|setting| setting["name"] == name)
        .unwrap_or_else(|| panic!("no setting {name}: {report:#}"))
}

fn describe(output: &Output) -> String {
    format!(
        "{:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn flags_win_over_env_over_the_file_over_defaults_and_config_says_which() {
    let home = temp_dir("cam-config-layers");
    let file = write_config(
        home.path(),
        "max_runs = 3\nhandoff_secs = 7\nmax_result_chars = 999\nidle_timeout_secs = 5\n",
    );
    let report = config_json(
        cam(home.path())
            .env("CAM_HANDOFF_SECS", "8")
            .env("CAM_MAX_RESULT_CHARS", "1000")
            .args(["--max-result-chars", "1001"]),
    );
    let at = |line: usize| format!("{}:{line}", file.display());
    assert_eq!(report["file"], file.display().to_string());
    let max_runs = setting(&report, "max_runs");
    assert_eq!(max_runs["value"], "3");
    assert_eq!(max_runs["from"], "file");
    assert_eq!(max_runs["at"], at(1));
    let handoff = setting(&report, "handoff_secs");
    assert_eq!(
        (&handoff["value"], &handoff["from"]),
        (&"8".into(), &"env".into())
    );
    assert_eq!(handoff["var"], "CAM_HANDOFF_SECS");
    let chars = setting(&report, "max_result_chars");
    assert_eq!(
        (&chars["value"], &chars["from"]),
        (&"1001".into(), &"flag".into())
    );
    let idle = setting(&report, "idle_timeout_secs");
    assert_eq!((&idle["value"], &idle["at"]), (&"5".into(), &at(4).into()));
    let grace = setting(&report, "grace_secs");
    assert_eq!(
        (&grace["value"], &grace["from"]),
        (&"3".into(), &"default".into())
    );
}

/// Accepted here; what `1` does is shown by tests/policy.rs, which parks with
/// `CAM_PARK_QUESTIONS=1`.
#[test]
fn yes_no_settings_take_the_words_people_write_in_an_environment() {
    let home = temp_dir("cam-config-yes-no");
    let words = ["1", "0", "yes", "no", "on", "off", "true", "false"];
    for var in ["CAM_PARK_QUESTIONS", "CAM_NO_LOGIN_SHELL"] {
        let name = var.trim_start_matches("CAM_").to_ascii_lowercase();
        for word in words {
            let report = config_json(cam(home.path()).env(var, word));
            let given = setting(&report, &name);
            assert_eq!(
                (&given["value"], &given["from"]),
                (&word.into(), &"env".into()),
                "{var}={word}"
            );
        }
    }
    let output = cam(home.path())
        .env("CAM_PARK_QUESTIONS", "maybe")
        .arg("config")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("maybe"),
        "{}",
        describe(&output)
    );
}

#[test]
fn the_text_report_names_the_file_line_of_each_file_setting() {
    let home = temp_dir("cam-config-text");
    let file = write_config(home.path(), "\n\nmax_runs = 4\n");
    let output = cam(home.path()).arg("config").output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|line| line.starts_with("max_runs "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.ends_with(&format!("file {}:3", file.display())),
        "{line}"
    );
}

/// Run `cmd`, which must stop at start (exit 2) on line `line` of `file`; its stderr.
fn refused(cmd: &mut Command, file: &Path, line: usize) -> String {
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let place = format!("{}:{line}:", file.display());
    assert!(stderr.contains(&place), "not on {place}: {stderr}");
    stderr
}

#[test]
fn an_unknown_key_fails_at_start_naming_the_file_line_and_key() {
    let home = temp_dir("cam-config-unknown");
    let file = write_config(
        home.path(),
        "max_runs = 2\n\n[agents.claude]\nmodle = \"x\"\n",
    );
    for command in ["config", "doctor", "serve"] {
        let stderr = refused(cam(home.path()).arg(command), &file, 4);
        assert!(stderr.contains("modle"), "{command}: {stderr}");
    }
    let file = write_config(home.path(), "max_run = 2\n");
    let stderr = refused(cam(home.path()).arg("config"), &file, 1);
    assert!(stderr.contains("max_run"), "{stderr}");
}

#[test]
fn a_bad_value_fails_on_its_line_with_the_arguments_own_reason() {
    let home = temp_dir("cam-config-bad-value");
    for (text, line, reason) in [
        (
            "max_runs = 2\nmax_permission = \"root\"\n",
            2,
            "max_permission",
        ),
        ("\nmax_runs = 0\n", 2, "max_runs"),
        ("max_result_chars = 10\n", 1, "max_result_chars"),
        ("max_runs = \"many\"\n", 1, "max_runs"),
    ] {
        let file = write_config(home.path(), text);
        let stderr = refused(cam(home.path()).arg("config"), &file, line);
        assert!(stderr.contains(reason), "{text}: {stderr}");
    }
}

#[test]
fn a_missing_default_file_is_fine_and_a_missing_explicit_one_is_an_error() {
    let home = temp_dir("cam-config-missing");
    let report = config_json(&mut cam(home.path()));
    assert_eq!(report["file"], Value::Null);
    let missing = home.path().join("nowhere.toml");
    for how in ["flag", "env"] {
        let mut cmd = cam(home.path());
        match how {
            "flag" => cmd.arg("--config").arg(&missing),
            _ => cmd.env("CAM_CONFIG", &missing),
        };
        let output = cmd.arg("config").output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{how}: {}",
            describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("nowhere.toml"), "{how}: {stderr}");
    }
}

#[test]
fn the_config_flag_wins_over_cam_config_and_the_default_file() {
    let home = temp_dir("cam-config-which");
    write_config(home.path(), "max_runs = 2\n");
    let by_env = home.path().join("env.toml");
    std::fs::write(&by_env, "max_runs = 3\n").unwrap();
    let by_flag = home.path().join("flag.toml");
    std::fs::write(&by_flag, "max_runs = 4\n").unwrap();
    let value = |cmd: &mut Command| setting(&config_json(cmd), "max_runs")["value"].clone();
    assert_eq!(value(&mut cam(home.path())), "2");
    assert_eq!(value(cam(home.path()).env("CAM_CONFIG", &by_env)), "3");
    assert_eq!(
        value(
            cam(home.path())
                .env("CAM_CONFIG", &by_env)
                .arg("--config")
                .arg(&by_flag)
        ),
        "4"
    );
}

#[test]
fn an_agents_settings_reach_its_cli_and_leave_the_prompt_on_stdin() {
    let home = temp_dir("cam-config-agent");
    // The sandbox makes a CLI's missing state directory: keep it in the test's own.
    let codex_home = home.path().join("file-home");
    let fake = common::fake_cli("codex");
    write_config(
        home.path(),
        &format!(
            "[agents.codex]\nbin = {}\nmodel = \"from-file\"\n\
             effort = \"high\"\nargs = [\"--config=model_verbosity=low\"]\nenv = {{ CODEX_HOME = {} }}\n",
            common::toml_path(&fake),
            common::toml_path(&codex_home)
        ),
    );
    let argv_out = home.path().join("argv.json");
    // The fake writes argv-out into the workspace: the sandbox allows that at workspace-write.
    let output = cam(home.path())
        .args(["run", "codex", &format!("argv-out={}", argv_out.display())])
        .args(["--permission", "workspace-write", "--workspace"])
        .arg(home.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&argv_out).unwrap()).unwrap();
    let argv: Vec<&str> = seen["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect();
    assert_eq!(
        &argv[argv.len() - 5..],
        [
            "--config=model=\"from-file\"",
            "--config=model_reasoning_effort=\"high\"",
            "--config=model_verbosity=low",
            "--",
            "-"
        ],
        "{argv:?}"
    );
    assert_eq!(
        seen["env"]["CODEX_HOME"],
        codex_home.display().to_string().as_str()
    );
    assert!(seen["prompt"].as_str().unwrap().contains("argv-out="));
}

#[test]
fn reserved_or_positional_args_are_refused_at_start_on_their_line() {
    let home = temp_dir("cam-config-args");
    for (args, reason) in [
        ("[\"--output-format=text\"]", "set by cli-agent-mcp"),
        (
            "[\"--dangerously-skip-permissions\"]",
            "set by cli-agent-mcp",
        ),
        ("[\"do something else\"]", "not a flag"),
        ("[\"--\", \"-\"]", "not a flag"),
    ] {
        let file = write_config(home.path(), &format!("[agents.claude]\n\nargs = {args}\n"));
        let stderr = refused(cam(home.path()).arg("config"), &file, 3);
        assert!(stderr.contains(reason), "{args}: {stderr}");
    }
}

/// `effort` is set by the agent's own key, never smuggled in its `args`, and only for a CLI
/// that has the notion.
#[test]
fn effort_is_the_agents_key_for_a_cli_that_has_one() {
    let home = temp_dir("cam-config-effort");
    for (agent, settings, reason) in [
        (
            "claude",
            "args = [\"--effort=max\"]",
            "set by cli-agent-mcp",
        ),
        (
            "codex",
            "args = [\"-c=model_reasoning_effort=low\"]",
            "`effort` instead",
        ),
        ("gemini", "effort = \"high\"", "gemini cannot take `effort`"),
        ("codex", "effort = \"extreme\"", "unknown variant `extreme`"),
    ] {
        let file = write_config(home.path(), &format!("[agents.{agent}]\n\n{settings}\n"));
        let stderr = refused(cam(home.path()).arg("config"), &file, 3);
        assert!(stderr.contains(reason), "{settings}: {stderr}");
    }
    write_config(home.path(), "[agents.codex]\neffort = \"max\"\n");
    let report = config_json(&mut cam(home.path()));
    let agents = report["agents"].as_array().expect("agents");
    let codex = agents.iter().find(|agent| agent["name"] == "codex");
    assert_eq!(
        codex.map(|agent| &agent["effort"]),
        Some(&serde_json::json!("max")),
        "{report:#}"
    );
}

#[test]
fn the_store_settings_of_the_file_reach_the_job_store() {
    let home = temp_dir("cam-config-store");
    let state = home.path().join("from-file-state");
    write_config(
        home.path(),
        &format!("state_dir = {}\n", common::toml_path(&state)),
    );
    let output = cam(home.path())
        .env_remove("CAM_STATE_DIR")
        .env("CAM_CODEX_BIN", common::fake_cli("codex"))
        .args(["run", "codex", "hello", "--workspace"])
        .arg(home.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert!(state.join("jobs.sqlite3").exists(), "{}", describe(&output));
    let report = config_json(cam(home.path()).env_remove("CAM_STATE_DIR"));
    assert_eq!(
        setting(&report, "state_dir (CAM_STATE_DIR)")["from"],
        "file"
    );
}

#[test]
fn the_readme_example_loads_with_its_agents() {
    let home = temp_dir("cam-config-example");
    // docs/configuration.md's example, as a user would copy it.
    let example = home.path().join("example.toml");
    std::fs::write(&example, common::readme_snippet("config-example")).unwrap();
    let report = config_json(
        cam(home.path())
            .env_remove("CAM_STATE_DIR")
            .arg("--config")
            .arg(&example),
    );
    let agents: Vec<(&str, &str)> = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| {
            (
                agent["name"].as_str().unwrap(),
                agent["cli"].as_str().unwrap(),
            )
        })
        .collect();
    // Every built-in CLI but opencode, which the example disables, then its custom agents.
    let builtins = cli_agent_engine::clis::BUILTINS
        .iter()
        .map(|cli| (cli.name(), cli.name()))
        .filter(|(name, _)| *name != "opencode");
    let expected: Vec<(&str, &str)> = builtins
        .chain([("claude-review", "claude"), ("codex-work", "codex")])
        .collect();
    assert_eq!(agents, expected);
    let example_text = std::fs::read_to_string(&example).unwrap();
    for setting in report["settings"].as_array().unwrap() {
        let name = setting["name"].as_str().unwrap();
        let key = name.split(' ').next().unwrap();
        if example_text
            .lines()
            .any(|line| line.starts_with(&format!("{key} =")))
        {
            assert_eq!(setting["from"], "file", "{setting}");
        }
    }
}

#[test]
fn run_takes_a_custom_agent_by_name_and_refuses_an_unknown_one() {
    let home = temp_dir("cam-config-run-custom");
    write_config(home.path(), "[agents.codex-work]\nbase = \"codex\"\n");
    let run = |agent: &str| {
        cam(home.path())
            .env("CAM_CODEX_BIN", common::fake_cli("codex"))
            .args(["run", agent, "answer=from_the_work_codex", "--workspace"])
            .arg(home.path())
            .output()
            .unwrap()
    };
    let output = run("codex-work");
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "from the work codex"
    );
    let unknown = run("codex-home");
    assert_eq!(unknown.status.code(), Some(2), "{}", describe(&unknown));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("unknown agent `codex-home`") && stderr.contains("codex-work"),
        "{stderr}"
    );
}

#[test]
fn the_sandbox_setting_shows_its_source_and_an_agents_writable_dirs_show_too() {
    let home = temp_dir("cam-config-sandbox");
    let report = config_json(&mut cam(home.path()));
    let sandbox = setting(&report, "sandbox");
    assert_eq!(
        (&sandbox["value"], &sandbox["from"]),
        (&"auto".into(), &"default".into())
    );
    let report = config_json(cam(home.path()).env("CAM_SANDBOX", "required"));
    let sandbox = setting(&report, "sandbox");
    assert_eq!(
        (&sandbox["value"], &sandbox["var"]),
        (&"required".into(), &"CAM_SANDBOX".into())
    );

    let extra = home.path().join("extra");
    let file = write_config(
        home.path(),
        &format!(
            "sandbox = \"off\"\n\n[agents.keeper]\nbase = \"codex\"\nwritable = [{}]\n",
            common::toml_path(&extra)
        ),
    );
    let report = config_json(&mut cam(home.path()));
    let sandbox = setting(&report, "sandbox");
    assert_eq!(
        (&sandbox["value"], &sandbox["from"]),
        (&"off".into(), &"file".into())
    );
    assert_eq!(sandbox["at"], format!("{}:1", file.display()));
    let keeper = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|agent| agent["name"] == "keeper")
        .unwrap_or_else(|| panic!("no keeper: {report:#}"));
    assert_eq!(
        keeper["writable"],
        serde_json::json!([extra.display().to_string()])
    );
    let output = cam(home.path()).arg("config").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.lines()
            .any(|line| line.trim_start().starts_with("writable") && line.contains("extra")),
        "{text}"
    );
}
