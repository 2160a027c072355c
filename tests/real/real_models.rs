//! `doctor --models` with the real CLIs, each in its sandbox pointed at the mock: what codex's
//! catalog and opencode's and pi's configured providers offer, the configured default marked.

use crate::common;
use crate::real;

use std::process::Stdio;

use cli_agent_engine::clis;
use real::{MockModel, Retries, Sandbox};
use serde_json::Value;

#[test]
fn doctor_lists_the_models_of_the_real_clis_that_can_list_them() {
    let mock = MockModel::start();
    // Every CLI that can list its models headless.
    let sandboxes: Vec<Sandbox> = clis::builtin_agents()
        .filter(|agent| agent.cli().model_listing().is_some())
        .filter_map(|agent| {
            let bin = real::installed(agent)?;
            Some(Sandbox::new(agent, &bin, mock.port, Retries::Shortened))
        })
        .collect();
    let Some(first) = sandboxes.first() else {
        return;
    };
    let config = first.root().join("cam.toml");
    let defaults = "[agents.codex]\nmodel = \"gpt-5.5\"\n[agents.opencode]\nmodel = \
                    \"fake/fake-model\"\n[agents.pi]\nmodel = \"mock/fake-model\"\n";
    std::fs::write(&config, defaults).expect("config");
    let mut cmd = common::cam_command();
    cmd.args(["doctor", "--models", "--json"])
        .env("PATH", "/usr/bin:/bin")
        .env("CAM_NO_LOGIN_SHELL", "1")
        .env("CAM_CONFIG", &config)
        .stdin(Stdio::null());
    for sandbox in &sandboxes {
        cmd.env(sandbox.agent.env_var("BIN"), &sandbox.wrapper);
    }
    let output = cmd.output().expect("run doctor");
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("no JSON report ({error}): {output:?}"));
    for sandbox in &sandboxes {
        let name = sandbox.agent.name();
        let clis = report["clis"].as_array().expect("clis");
        let cli = clis.iter().find(|cli| cli["agent"] == name).expect(name);
        let (listed, default) = (&cli["models"]["models"], &cli["models"]["default"]);
        let default = default.as_str().expect("a configured default");
        // Its configured model is one it lists: the mock's provider for opencode.
        let has = |model: &str| {
            listed
                .as_array()
                .is_some_and(|all| all.contains(&model.into()))
        };
        assert!(has(default), "{name}: {cli:#}");
    }
}
