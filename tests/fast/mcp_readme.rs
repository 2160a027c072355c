//! The client snippets of the documentation, checked wherever they live (README.md or docs/,
//! found by their `<!-- check: … -->` markers): those that run an installed `cli-agent-mcp`, and
//! those that run `npx -y cli-agent-mcp`. Each one, read from its page, starts the built server,
//! which must answer `initialize` and list the tools the snippet's environment asks for. `npx -y cli-agent-mcp` stands for the published
//! package, which holds this same binary (scripts/package): here it resolves to the built
//! binary, since the registry is not reached and this version may not be published yet. The
//! Cursor install link must carry the Cursor snippet's entry. When the real CLIs are installed
//! (scripts/install-clis.sh), Claude Code must write each `claude mcp add` line (`-e` included)
//! into its config as the line means it and connect to it and to the Claude Desktop snippet (the
//! npx lines through a stand-in `npx` that runs the built binary), Codex must read the Codex
//! snippets as written, and Gemini CLI must turn its line into the Cursor snippet's entry;
//! without them this part skips locally and fails in CI.

use crate::common;
use crate::mcp;

use std::collections::BTreeMap;
use std::process::Command;

use common::{doc_page_with, readme_snippet};
use mcp::Server;
use serde_json::Value;

// What the real clients' checks use (Unix only, as the real module is).
#[cfg(unix)]
use crate::real;
#[cfg(unix)]
use cli_agent_engine::clis;
#[cfg(unix)]
use common::temp_dir;
#[cfg(unix)]
use serde_json::json;
#[cfg(unix)]
use std::path::Path;
#[cfg(unix)]
use tempfile::TempDir;

const NAME: &str = "cli-agent-mcp";

/// How a snippet starts the server.
#[derive(Debug, PartialEq)]
struct Launch {
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

impl Launch {
    /// `claude mcp add … NAME -e K=V … -- COMMAND ARGS…`
    fn from_claude_code(line: &str) -> Self {
        let words: Vec<&str> = line.split_whitespace().collect();
        let split = words.iter().position(|w| *w == "--").expect("a `--`");
        let env = words[..split]
            .windows(2)
            .filter(|pair| pair[0] == "-e")
            .filter_map(|pair| pair[1].split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Self {
            command: words[split + 1].to_owned(),
            args: words[split + 2..].iter().map(|w| (*w).to_owned()).collect(),
            env,
        }
    }

    /// One entry of `{"command", "args", "env"}`, as in an `mcpServers` map.
    fn from_entry(entry: &Value) -> Self {
        let strings = |value: &Value| -> Vec<String> {
            value
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let env = entry["env"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect();
        Self {
            command: entry["command"].as_str().expect("a command").to_owned(),
            args: strings(&entry["args"]),
            env,
        }
    }

    /// `gemini mcp add [-s SCOPE] NAME COMMAND ARGS…`
    fn from_gemini(line: &str) -> Self {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[..3], ["gemini", "mcp", "add"], "{line}");
        let name = words.iter().position(|w| *w == NAME).expect("the name");
        Self {
            command: words[name + 1].to_owned(),
            args: words[name + 2..].iter().map(|w| (*w).to_owned()).collect(),
            env: BTreeMap::new(),
        }
    }

    /// The arguments the snippet gives the server itself: after the installed binary, or after
    /// `npx -y cli-agent-mcp`, which runs the published package's binary.
    fn server_args(&self) -> &[String] {
        let args = self.args.as_slice();
        match self.command.as_str() {
            "npx" if args.starts_with(&["-y".to_owned(), NAME.to_owned()]) => &args[2..],
            command if command == NAME || command.ends_with(&format!("/{NAME}")) => args,
            command => panic!("the snippet runs {command} {args:?}"),
        }
    }

    /// Start the built binary the way the snippet says and list its tools.
    async fn listed_tools(&self) -> Vec<String> {
        let mut builder = Server::bare();
        for arg in self.server_args() {
            builder = builder.arg(arg);
        }
        for (key, value) in &self.env {
            builder = builder.env(key, value);
        }
        let mut server = builder.spawn();
        server.initialize().await;
        server.tool_names().await
    }
}

fn mcp_servers_entry(json_text: &str) -> Value {
    let config: Value = serde_json::from_str(json_text).expect("the snippet is JSON");
    config["mcpServers"][NAME].clone()
}

/// The Codex snippet as JSON, read by Python's TOML parser (python3 runs the fake CLI anyway).
fn codex_toml_as_json(toml: &str) -> Value {
    let script = "import json, sys, tomllib; print(json.dumps(tomllib.loads(sys.argv[1])))";
    let output = Command::new("python3")
        .args(["-c", script, toml])
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_readme_snippet_starts_a_server_with_the_tools_it_asks_for() {
    let claude_code = Launch::from_claude_code(&readme_snippet("claude-code"));
    let claude_code_env = Launch::from_claude_code(&readme_snippet("install-claude-code-env"));
    let desktop = Launch::from_entry(&mcp_servers_entry(&readme_snippet("claude-desktop")));
    let cursor = Launch::from_entry(&mcp_servers_entry(&readme_snippet("cursor")));
    let codex =
        Launch::from_entry(&codex_toml_as_json(&readme_snippet("codex"))["mcp_servers"][NAME]);
    // The host's own CLI disabled (CAM_DISABLE), two enabled (CAM_ENABLE), or every CLI.
    let all_but = |host: &str| {
        let mut agents = mcp::agents();
        agents.retain(|agent| *agent != host);
        agents
    };
    let cases = [
        (&claude_code, all_but("claude")),
        (&claude_code_env, vec!["codex", "gemini"]),
        (&desktop, vec!["codex", "gemini"]),
        (&cursor, mcp::agents()),
        (&codex, all_but("codex")),
    ];
    for (launch, agents) in cases {
        let expected = [agents, mcp::JOB_TOOLS.to_vec()].concat();
        assert_eq!(launch.listed_tools().await, expected, "{launch:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_install_snippet_starts_a_server_with_every_tool() {
    let launches = [
        Launch::from_claude_code(&readme_snippet("install-claude-code")),
        Launch::from_entry(&mcp_servers_entry(&readme_snippet(
            "install-claude-desktop",
        ))),
        Launch::from_entry(&mcp_servers_entry(&readme_snippet("install-cursor"))),
        Launch::from_entry(
            &codex_toml_as_json(&readme_snippet("install-codex"))["mcp_servers"][NAME],
        ),
        Launch::from_gemini(&readme_snippet("install-gemini")),
    ];
    let expected = [mcp::agents(), mcp::JOB_TOOLS.to_vec()].concat();
    for launch in launches {
        assert_eq!(launch.command, "npx", "{launch:?}");
        assert_eq!(launch.listed_tools().await, expected, "{launch:?}");
    }
}

/// The Cursor install link's query: `name` and the base64 `config`, decoded.
fn cursor_link() -> (String, Value) {
    let prefix = "cursor://anysphere.cursor-deeplink/mcp/install?";
    let (_, page) = doc_page_with(prefix);
    let query = page
        .split_once(prefix)
        .expect("the page has the link")
        .1
        .split(|c: char| c == '`' || c.is_whitespace())
        .next()
        .expect("the link's query");
    let param = |key: &str| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("the link has no {key}: {query}"))
            .to_owned()
    };
    let script = "import base64, sys; sys.stdout.write(base64.b64decode(sys.argv[1], validate=True).decode())";
    let output = Command::new("python3")
        .args(["-c", script, &param("config")])
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let config = serde_json::from_slice(&output.stdout).expect("the config is JSON");
    (param("name"), config)
}

#[test]
fn the_cursor_install_link_carries_the_cursor_snippets_entry() {
    let (name, config) = cursor_link();
    assert_eq!(name, NAME);
    assert_eq!(config, mcp_servers_entry(&readme_snippet("install-cursor")));
}

// The real clients' home and checks: Unix only, as the real module is.
#[cfg(unix)]
/// A home of its own for a real client, with the built server first on PATH, after only the
/// home's `bin/` (where `stand_in_npx` puts its `npx`).
struct ClientHome {
    dir: TempDir,
}

#[cfg(unix)]
impl ClientHome {
    fn new() -> Self {
        let dir = temp_dir("mcp-readme-home");
        std::fs::create_dir_all(dir.path().join("project")).expect("project dir");
        std::fs::create_dir_all(dir.path().join("bin")).expect("bin dir");
        Self { dir }
    }

    /// An `npx` that runs `npx -y cli-agent-mcp ARGS…` as the published package would: the
    /// built binary with ARGS. Anything else fails, so nothing reaches the npm registry.
    fn stand_in_npx(&self) {
        use std::os::unix::fs::PermissionsExt;
        let npx = self.dir.path().join("bin/npx");
        let script = format!(
            "#!/bin/sh\n\
             if [ \"$1\" = -y ] && [ \"$2\" = {NAME} ]; then shift 2; exec '{}' \"$@\"; fi\n\
             echo \"stand-in npx: only -y {NAME}, not: $*\" >&2\n\
             exit 1\n",
            common::binary()
        );
        std::fs::write(&npx, script).expect("write the stand-in npx");
        std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// Run the documentation's `<client> mcp add …` line `snippet` with the client at `bin`.
    fn run_add_line(&self, bin: &Path, client: &str, snippet: &str) {
        let words: Vec<String> = readme_snippet(snippet)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        assert_eq!(words[..3], [client, "mcp", "add"], "{words:?}");
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        self.run(bin, &args);
    }

    /// What codex makes of the documentation's config file `snippet`: `codex mcp get --json`.
    fn codex_reads(&self, codex: &Path, snippet: &str) -> Value {
        std::fs::write(self.dir.path().join("config.toml"), readme_snippet(snippet))
            .expect("config");
        serde_json::from_str(&self.run(codex, &["mcp", "get", NAME, "--json"]))
            .expect("codex mcp get --json")
    }

    /// The entry Claude Code keeps for our server in its user config.
    fn claude_user_entry(&self) -> Value {
        let file = self.dir.path().join(".claude/.claude.json");
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|error| panic!("Claude Code wrote no {}: {error}", file.display()));
        let config: Value = serde_json::from_str(&text).expect("Claude Code's config is JSON");
        config["mcpServers"][NAME].clone()
    }

    fn run(&self, bin: &Path, args: &[&str]) -> String {
        let built = Path::new(common::binary()).parent().expect("target dir");
        let path = format!(
            "{}:{}:{}",
            self.dir.path().join("bin").display(),
            built.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let output = Command::new(bin)
            .args(args)
            .current_dir(self.dir.path().join("project"))
            // Every client keeps its state here, never in the user's own config.
            .env("HOME", self.dir.path())
            .env("CODEX_HOME", self.dir.path())
            .env("CLAUDE_CONFIG_DIR", self.dir.path().join(".claude"))
            .env("XDG_CONFIG_HOME", self.dir.path().join(".config"))
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("PATH", path)
            .output()
            .expect("run the client");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{bin:?} {args:?}: {}\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }
}

#[cfg(unix)]
fn assert_connected(listing: &str) {
    let line = listing
        .lines()
        .find(|line| line.starts_with(NAME))
        .unwrap_or_else(|| panic!("{NAME} is not listed:\n{listing}"));
    assert!(line.contains("Connected"), "{line}");
}

/// Each `claude mcp add` line of the documentation: the entry the installed Claude Code wrote
/// into its user config is what the line means (the server's command, arguments and `-e`
/// environment), and Claude Code connects to it (the npx lines through a stand-in `npx`).
// A real CLI installed by scripts/install-clis.sh (the real module: Unix only).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_writes_each_documented_line_as_meant_and_connects() {
    let Some(claude) = real::installed(clis::CLAUDE) else {
        return;
    };
    for snippet in [
        "claude-code",
        "install-claude-code",
        "install-claude-code-env",
    ] {
        let home = ClientHome::new();
        home.stand_in_npx();
        home.run_add_line(&claude, "claude", snippet);
        let written = Launch::from_entry(&home.claude_user_entry());
        let meant = Launch::from_claude_code(&readme_snippet(snippet));
        assert_eq!(written, meant, "{snippet}");
        assert_connected(&home.run(&claude, &["mcp", "list"]));
    }
}

// A real CLI installed by scripts/install-clis.sh (the real module: Unix only).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_connects_to_the_claude_desktop_snippet() {
    let Some(claude) = real::installed(clis::CLAUDE) else {
        return;
    };
    let home = ClientHome::new();
    let mut entry = mcp_servers_entry(&readme_snippet("claude-desktop"));
    entry["command"] = json!(common::binary());
    let entry = entry.to_string();
    home.run(
        &claude,
        &["mcp", "add-json", "--scope", "user", NAME, &entry],
    );
    assert_connected(&home.run(&claude, &["mcp", "list"]));
}

// A real CLI installed by scripts/install-clis.sh (the real module: Unix only).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_reads_the_codex_snippet_as_written() {
    let Some(codex) = real::installed(clis::CODEX) else {
        return;
    };
    let seen = ClientHome::new().codex_reads(&codex, "codex");
    assert_eq!(seen["transport"]["command"], NAME, "{seen}");
    assert_eq!(seen["transport"]["args"], json!(["serve"]), "{seen}");
    assert_eq!(seen["transport"]["env"]["CAM_DISABLE"], "codex", "{seen}");
    assert_eq!(seen["tool_timeout_sec"], 1800.0, "{seen}");

    let seen = ClientHome::new().codex_reads(&codex, "install-codex");
    assert_eq!(seen["transport"]["command"], "npx", "{seen}");
    assert_eq!(seen["transport"]["args"], json!(["-y", NAME]), "{seen}");
    assert_eq!(seen["startup_timeout_sec"], 60.0, "{seen}");
    assert_eq!(seen["tool_timeout_sec"], 1800.0, "{seen}");
}

// A real CLI installed by scripts/install-clis.sh (the real module: Unix only).
#[cfg(unix)]
#[test]
fn gemini_turns_its_line_into_the_same_entry_as_the_others() {
    let Some(gemini) = real::installed(clis::GEMINI) else {
        return;
    };
    let home = ClientHome::new();
    home.run_add_line(&gemini, "gemini", "install-gemini");
    let settings = home.dir.path().join(".gemini/settings.json");
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(&settings).expect("gemini wrote its user settings"),
    )
    .expect("settings.json is JSON");
    assert_eq!(
        settings["mcpServers"][NAME],
        mcp_servers_entry(&readme_snippet("install-cursor")),
        "{settings}"
    );
}
