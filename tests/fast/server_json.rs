//! server.json, this server's entry in the MCP Registry (`mcp-publisher publish` sends it from
//! the release workflow), checked before any release:
//! - it matches the registry's own schema of 2025-12-11, vendored in tests/fixtures/registry/,
//!   which does reject a broken copy of it (the check is not vacuous);
//! - its version is Cargo.toml's, in every package; its name, repository and package names are
//!   those of packaging/names.json, where scripts/package takes them from;
//! - every variable it offers a user is one the server reads: the built binary's `config
//!   --json`, with all of them set, names each as the source of a setting; each choice it
//!   lists is accepted and a made-up value refused; each default it states is the binary's;
//! - the `mcp-name:` line, the registry's proof that the PyPI package is this server's, is in
//!   README.md and in the README the PyPI package is built with.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::temp_dir;
use serde_json::{Value, json};
use tempfile::TempDir;

const SCHEMA_URL: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path))
        .unwrap_or_else(|error| panic!("cannot read {path}: {error}"))
}

fn json_file(path: &str) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn server() -> Value {
    json_file("server.json")
}

fn cargo_version() -> String {
    let manifest: toml::Table = read("Cargo.toml").parse().expect("Cargo.toml is TOML");
    manifest["workspace"]["package"]["version"]
        .as_str()
        .expect("[workspace.package] version")
        .to_owned()
}

/// The package of server.json for `registry` (`npm` or `pypi`); there is exactly one.
fn package(server: &Value, registry: &str) -> Value {
    let packages: Vec<&Value> = server["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| package["registryType"] == registry)
        .collect();
    assert_eq!(packages.len(), 1, "one {registry} package: {packages:?}");
    packages[0].clone()
}

fn variables(server: &Value) -> Vec<Value> {
    package(server, "npm")["environmentVariables"]
        .as_array()
        .expect("environmentVariables")
        .clone()
}

fn field<'a>(variable: &'a Value, key: &str) -> Option<&'a str> {
    variable[key].as_str()
}

#[test]
fn server_json_matches_the_registrys_schema_which_rejects_a_broken_copy() {
    let schema = json_file("tests/fixtures/registry/server.schema.json");
    assert_eq!(schema["$id"], SCHEMA_URL, "the vendored schema");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the registry's schema compiles");
    let server = server();
    assert_eq!(server["$schema"], SCHEMA_URL);
    let errors: Vec<String> = validator
        .iter_errors(&server)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "server.json:\n{}", errors.join("\n"));

    // What the registry refuses, the vendored schema refuses too.
    let broken = [
        ("/description", json!("x".repeat(101))),
        ("/name", json!("cli-agent-mcp")),
        ("/packages/0/version", json!("latest")),
        ("/packages/0/transport", json!({"type": "carrier-pigeon"})),
    ];
    for (pointer, value) in broken {
        let mut copy = server.clone();
        *copy.pointer_mut(pointer).expect(pointer) = value;
        assert!(
            !validator.is_valid(&copy),
            "{pointer} broken is still valid"
        );
    }
}

#[test]
fn its_version_is_cargo_tomls_and_its_names_are_the_packagings() {
    let server = server();
    let version = cargo_version();
    assert_eq!(server["version"], version.as_str(), "server.json version");
    let names = json_file("packaging/names.json");
    assert_eq!(server["name"], names["mcpName"]);
    assert_eq!(server["repository"]["url"], names["repository"]);
    assert_eq!(server["repository"]["source"], "github");
    // The io.github.<owner> namespace is proven by a GitHub login of <owner>: the repository's.
    let owner = server["name"]
        .as_str()
        .and_then(|name| name.strip_prefix("io.github."))
        .and_then(|name| name.split_once('/'))
        .expect("an io.github.<owner>/<name> name")
        .0;
    let url = server["repository"]["url"]
        .as_str()
        .expect("repository url");
    assert!(
        url.starts_with(&format!("https://github.com/{owner}/")),
        "{url} is not under {owner}"
    );

    for (registry, runtime) in [("npm", "npx"), ("pypi", "uvx")] {
        let package = package(&server, registry);
        assert_eq!(package["identifier"], names[registry], "{registry}");
        assert_eq!(package["version"], version.as_str(), "{registry}");
        assert_eq!(package["runtimeHint"], runtime, "{registry}");
        assert_eq!(package["transport"], json!({"type": "stdio"}), "{registry}");
        assert_eq!(
            package["environmentVariables"],
            json!(variables(&server)),
            "{registry} offers the same variables as npm"
        );
    }
}

/// `cli-agent-mcp config --json` with only `vars` of the caller's environment (and a throwaway
/// home): its JSON, or what it printed on stderr when it refused.
fn config_json(home: &Path, vars: &[(String, String)]) -> Result<Value, String> {
    let output = Command::new(common::binary())
        .args(["config", "--json"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .envs(vars.iter().map(|(name, value)| (name, value)))
        .output()
        .expect("run cli-agent-mcp config --json");
    if output.status.success() {
        Ok(serde_json::from_slice(&output.stdout).expect("config --json prints JSON"))
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// The setting `config --json` says the variable `name` set.
fn set_by<'a>(config: &'a Value, name: &str) -> Option<&'a Value> {
    config["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .find(|setting| setting["var"] == name && setting["from"] == "env")
}

/// A value to set the variable to, other than its default where it has one, so that the
/// setting `config --json` reports is visibly the variable's.
fn sample(variable: &Value, dir: &TempDir) -> String {
    let name = field(variable, "name").expect("a name");
    let default = field(variable, "default");
    if let Some(choices) = variable["choices"].as_array() {
        return choices
            .iter()
            .filter_map(Value::as_str)
            .find(|choice| Some(*choice) != default)
            .expect("a choice besides the default")
            .to_owned();
    }
    match field(variable, "format").unwrap_or("string") {
        "boolean" => (if default == Some("true") {
            "false"
        } else {
            "true"
        })
        .to_owned(),
        "number" => {
            let default: u64 = default.map_or(0, |d| d.parse().expect("a numeric default"));
            (default + 1).to_string()
        }
        "filepath" => {
            // A file that exists: the config file must (an empty one is a valid config).
            let path: PathBuf = dir.path().join(name.to_lowercase());
            std::fs::write(&path, "").expect("write the sample file");
            path.display().to_string()
        }
        _ => field(variable, "placeholder")
            .unwrap_or_else(|| panic!("{name}: a string variable needs a placeholder"))
            .to_owned(),
    }
}

#[test]
fn every_variable_it_offers_is_read_by_the_server_with_its_choices_and_defaults() {
    let server = server();
    let variables = variables(&server);
    assert!(!variables.is_empty());
    let dir = temp_dir("server-json");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");

    for variable in &variables {
        let name = field(variable, "name").expect("a name");
        assert!(name.starts_with("CAM_"), "{name}");
        assert!(
            field(variable, "description").is_some_and(|d| d.len() > 10),
            "{name} needs a description"
        );
        assert_eq!(variable["isRequired"], false, "{name}: nothing is required");
        let secret = ["TOKEN", "SECRET", "KEY", "PASSWORD"]
            .iter()
            .any(|word| name.ends_with(word));
        assert_eq!(variable["isSecret"], secret, "{name}: isSecret");
    }

    // All of them set at once: each is the source of a setting, with the value given.
    let samples: Vec<(String, String)> = variables
        .iter()
        .map(|variable| {
            let name = field(variable, "name").expect("a name").to_owned();
            let value = sample(variable, &dir);
            (name, value)
        })
        .collect();
    let config = config_json(&home, &samples)
        .unwrap_or_else(|error| panic!("config --json refused the samples {samples:?}: {error}"));
    let mut setting_of = Vec::new();
    for (variable, (name, value)) in variables.iter().zip(&samples) {
        let setting = set_by(&config, name)
            .unwrap_or_else(|| panic!("the server reads no {name}: {config:#}"));
        // Lists are reported in the server's own form (`:` becomes `,`); the rest as given.
        if field(variable, "format") != Some("string") || variable["choices"].is_array() {
            assert_eq!(setting["value"], value.as_str(), "{name}");
        }
        setting_of.push(setting["name"].clone());
    }

    // Each choice is accepted, and a value not among them refused.
    for variable in variables.iter().filter(|v| v["choices"].is_array()) {
        let name = field(variable, "name").expect("a name").to_owned();
        for choice in variable["choices"].as_array().expect("choices") {
            let choice = choice.as_str().expect("a string choice").to_owned();
            let config = config_json(&home, &[(name.clone(), choice.clone())])
                .unwrap_or_else(|error| panic!("{name}={choice} refused: {error}"));
            assert_eq!(
                set_by(&config, &name).expect(&name)["value"],
                choice.as_str()
            );
        }
        let refused = config_json(&home, &[(name.clone(), "not-a-choice".to_owned())]);
        assert!(refused.is_err(), "{name}=not-a-choice accepted");
    }

    // Unset, each setting has the default server.json states.
    let defaults = config_json(&home, &[]).expect("config --json with nothing set");
    for (variable, setting) in variables.iter().zip(&setting_of) {
        let Some(default) = field(variable, "default") else {
            continue;
        };
        let reported = defaults["settings"]
            .as_array()
            .expect("settings")
            .iter()
            .find(|s| s["name"] == *setting)
            .unwrap_or_else(|| panic!("no setting {setting}"));
        assert_eq!(reported["value"], default, "{}", variable["name"]);
    }
}

#[test]
fn the_mcp_name_line_is_in_the_readme_and_in_the_pypi_packages_readme() {
    let line = format!("mcp-name: {}", server()["name"].as_str().expect("a name"));
    let pyproject: toml::Table = read("packaging/python/pyproject.toml")
        .parse()
        .expect("pyproject.toml is TOML");
    let pypi_readme = Path::new("packaging/python").join(
        pyproject["project"]["readme"]
            .as_str()
            .expect("[project] readme"),
    );
    for readme in [PathBuf::from("README.md"), pypi_readme] {
        let text = read(readme.to_str().expect("a UTF-8 path"));
        assert!(
            text.lines().any(|l| l.contains(&line)),
            "{} lacks the line `{line}`",
            readme.display()
        );
    }
}
