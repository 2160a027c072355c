//! A CLI installed as a `.cmd` file, in a directory whose path holds what `cmd.exe` reads as
//! syntax (a space, `&`, `%`, `^`, `!`), with a workspace there too: npm's shim starts its
//! script without `cmd.exe`, a hand-written one runs through it with std's batch-file quoting,
//! and either way the working directory, the arguments and the prompt (on stdin) arrive as the
//! server meant them; an argument `cmd.exe` cannot be given safely is refused before anything
//! starts.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common;
use crate::mcp;
use crate::rig::{Rig, Wine, received, win_path};

/// A directory name `cmd.exe` would rewrite if it ever parsed it unquoted.
const ODD: &str = "odd dir & 100% ^caret !bang";

/// A prompt with quotes and `cmd.exe`'s syntax, over two lines.
const PROMPT: &str = "say \"hi\" to 'all' & 100% of ^you | more !bang!\nsecond line %PATH%";

/// A model name with the same: it reaches the CLI as an argument (`--config=model="..."`).
const MODEL: &str = "gpt \"x\" & 5% ^ | !y!";

/// [`MODEL`] without its `%`, for a batch file: std passes a `%` to `cmd.exe` as
/// `%%cd:~,%` (an empty substring of `%cd%` that stops `%VAR%` expansion), which Windows'
/// `cmd.exe` reads back as `%` (std's own tests prove it there) and Wine 8's drops.
const BATCH_MODEL: &str = "gpt \"x\" & 5 ^ | !y!";

/// The arguments codex's command line has for a fresh read-only call with `model`
/// (shared/src/clis/codex/command_line.rs), as the CLI must receive them.
fn codex_arguments(model: &str) -> Vec<String> {
    let model = format!("--config=model={}", Value::from(model));
    [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-s",
        "read-only",
        &model,
        "--",
        "-",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Lower-case hex, as the fake CLI gives the prompt's bytes.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The rig's odd directory with a workspace in it.
fn odd_workspace(rig: &Rig) -> PathBuf {
    rig.dir(&format!("{ODD}/work space"))
}

/// Calls codex with [`PROMPT`] and `model` in `workspace`; what the fake CLI received, after
/// checking the working directory and the prompt's bytes.
async fn call_and_check(server: &mut mcp::Server, workspace: &Path, model: &str) -> Value {
    let arguments = json!({"prompt": PROMPT, "model": model});
    let seen = received(&server.call("codex", arguments).await);
    assert_eq!(seen["cwd"], win_path(workspace), "{seen:#}");
    assert_eq!(seen["prompt_hex"], hex(PROMPT.as_bytes()), "{seen:#}");
    // What the server gave as the working directory, as its log says: Wine's own cmd.exe and
    // programs accept the verbatim form (\\?\Z:\...) and report it plain, Windows' cmd.exe
    // refuses it.
    let meant = format!("workspace={} bin=", win_path(workspace));
    assert!(server.stderr().contains(&meant), "{}", server.stderr());
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_npm_shim_in_an_odd_path_starts_its_script_with_the_arguments_exact() {
    let Some(wine) = Wine::from_env() else {
        return;
    };
    let rig = Rig::new(wine, "shim");
    let bin = rig.dir(&format!("{ODD}/npm"));
    let script = bin.join("node_modules/@openai/codex/bin/codex.js");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::write(&script, "#!/usr/bin/env node\n").unwrap();
    let shim = common::repo().join("tests/fixtures/windows-shims/codex.cmd");
    std::fs::copy(shim, bin.join("codex.cmd")).unwrap();
    // The interpreter beside the shim, as npm's shim prefers it: the fake, which echoes argv.
    rig.copy_fake_cli(&bin.join("node.exe"));
    let workspace = odd_workspace(&rig);
    let mut server = rig.server(&bin.join("codex.cmd"), &workspace).await;

    let seen = call_and_check(&mut server, &workspace, MODEL).await;
    let mut expected = vec![win_path(&script)];
    expected.extend(codex_arguments(MODEL));
    assert_eq!(seen["argv"], json!(expected), "{seen:#}");
}

/// A hand-written `.cmd` that starts the fake CLI (beside it) with all its arguments, at
/// `relative` in the rig.
fn hand_written_cmd(rig: &Rig, relative: &str) -> PathBuf {
    let bin = rig.dir(relative);
    rig.copy_fake_cli(&bin.join("codex-real.exe"));
    let cmd = bin.join("codex.cmd");
    std::fs::write(&cmd, "@echo off\r\n\"%~dp0codex-real.exe\" %*\r\n").unwrap();
    cmd
}

/// Calls codex with `arguments`: refused for `reason`, and nothing of the rig runs.
async fn refused(rig: &Rig, server: &mut mcp::Server, arguments: Value, reason: &str) {
    let result = server.call("codex", arguments).await;
    assert!(mcp::is_error(&result), "{result:#}");
    let text = mcp::all_text(&result);
    assert!(
        text.contains(reason) && text.contains("nothing was started"),
        "{text}"
    );
    // The prompt would have built a tree and hung: a moment shows whether anything started.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(rig.processes().is_empty(), "{:#?}", rig.processes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_written_cmd_gets_the_directory_arguments_and_prompt_exact_or_is_refused() {
    let Some(wine) = Wine::from_env() else {
        return;
    };
    let rig = Rig::new(wine, "batch");
    // std quotes the file's path for cmd.exe; a `%` in it is refused (below).
    let cmd = hand_written_cmd(&rig, "odd dir & ^caret !bang/hand");
    let workspace = odd_workspace(&rig);
    let mut server = rig.server(&cmd, &workspace).await;

    let seen = call_and_check(&mut server, &workspace, BATCH_MODEL).await;
    assert_eq!(
        seen["argv"],
        json!(codex_arguments(BATCH_MODEL)),
        "{seen:#}"
    );

    // A line break in an argument would end cmd.exe's command there.
    let resumed = json!({"prompt": "tree hang", "session_id": "one\ntwo"});
    refused(&rig, &mut server, resumed, "line break").await;

    let cmd = hand_written_cmd(&rig, &format!("{ODD}/hand"));
    let mut server = rig.server(&cmd, &workspace).await;
    refused(
        &rig,
        &mut server,
        json!({"prompt": "tree hang"}),
        "holds a `%`",
    )
    .await;
}
