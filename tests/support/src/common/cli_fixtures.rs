//! What the tests know of each CLI, read from `tests/fixtures/clis/<cli>/cli.toml`: the fake
//! CLI's dialect, the variables policy expects it to receive, and how a real-CLI sandbox points
//! it at the mock model. A new CLI adds that file rather than editing test code.

use std::collections::BTreeMap;

use cli_agent_engine::{Agent, Permission, clis};
use serde::Deserialize;

/// One CLI's `cli.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CliFixture {
    /// Read by the fake CLI itself (`tests/fixtures/fake-cli`).
    pub fake: Fake,
    #[serde(default)]
    pub policy: Policy,
    #[serde(default)]
    pub real: Real,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fake {
    pub dialect: String,
    pub version: String,
}

/// Its part of the policy test: variables of its own the server holds, and which of the
/// server's variables it must receive besides the base set.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    pub server_env: BTreeMap<String, String>,
    #[serde(default)]
    pub receives: Vec<String>,
}

/// How a sandbox configures the installed CLI. Strings may hold `{root}` (the sandbox),
/// `{base}` (the mock model's URL) and `{port}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Real {
    /// The permission under which it offers its shell tool without asking.
    #[serde(default = "unlimited")]
    pub shell_permission: Permission,
    /// A prompt whose shell call sleeps `{secs}` seconds.
    #[serde(default = "plain_sleep")]
    pub sleep_prompt: String,
    #[serde(flatten)]
    pub always: Setup,
    /// Added when the CLI's own retries are shortened.
    #[serde(default)]
    pub shortened: Setup,
}

fn unlimited() -> Permission {
    Permission::Unlimited
}

fn plain_sleep() -> String {
    "RUN_SHELL: sleep {secs}".to_owned()
}

/// Environment and files under the sandbox's root.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub files: Vec<FileSpec>,
}

/// A file under the sandbox's root. Several specs of one path combine: `text` is appended,
/// `json` merged into what is there.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    pub path: String,
    pub text: Option<String>,
    pub json: Option<String>,
}

/// `agent`'s fixture; panics naming the file to write when it is missing or malformed.
pub fn fixture(agent: Agent) -> CliFixture {
    let file = super::repo()
        .join("tests/fixtures/clis")
        .join(agent.name())
        .join("cli.toml");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|error| {
        panic!(
            "{}: {error}; every CLI of the registry needs one (tests/fixtures/clis/README.md)",
            file.display()
        )
    });
    toml::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", file.display()))
}

/// The names of every built-in CLI, in the registry's order (the order of the tool list).
pub fn names() -> Vec<&'static str> {
    clis::BUILTINS.iter().map(|cli| cli.name()).collect()
}
