//! The fake CLI for the tests on Windows: a stand-in for codex (`codex exec --json`) that the
//! engine starts as it starts the real one, built for Windows and run under Wine by
//! scripts/check-windows (Linux's fake CLI is the Python script tests/fixtures/fake-cli, which
//! cannot run there: Python for Windows does not start under Wine 8).
//!
//! It reads its prompt on stdin to EOF and prints codex's JSONL events; the answer is a JSON
//! document of what it received (working directory, arguments, command line, the prompt's bytes),
//! so a test compares them byte for byte. Directives in the prompt or in `FAKE_CLI_DIRECTIVES`
//! (see `directives.rs`) make it build a process tree the Windows ways and hang, or exit with a
//! code. Every process of the tree carries the run's marker (`CAM_RUN_ID=<value>`, from its
//! environment) on its command line, so Linux's `pgrep -f` sees them under Wine.

mod directives;
mod echo;
mod stream;
#[cfg(windows)]
mod tree;

use std::ffi::OsString;
use std::io::Read;
use std::process::ExitCode;

use directives::Directives;
use stream::Stream;

/// codex's version as the tests' fixture names it (tests/fixtures/clis/codex/cli.toml).
const CLI_TOML: &str = include_str!("../../fixtures/clis/codex/cli.toml");

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    #[cfg(windows)]
    if let Some(role) = tree::child_role(&args) {
        tree::run_child(role);
    }
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("{}", version());
        return ExitCode::SUCCESS;
    }
    run(&args)
}

/// The CLI's part: the prompt, the stream, the tree if asked, the exit.
fn run(args: &[OsString]) -> ExitCode {
    let mut prompt = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut prompt) {
        eprintln!("fake-cli-windows: reading the prompt on stdin failed: {e}");
        return ExitCode::from(2);
    }
    let directives = Directives::read(&prompt);
    let mut out = Stream::new(thread_id(args));
    out.started();
    let tree = build_tree(&directives);
    if let Some(report) = &tree {
        out.reasoning(&report.to_string());
    }
    if directives.hang {
        sleep_until_killed();
    }
    out.answer(&echo::received(args, &prompt, tree).to_string());
    out.completed();
    ExitCode::from(directives.exit)
}

#[cfg(windows)]
fn build_tree(directives: &Directives) -> Option<serde_json::Value> {
    directives.tree.then(tree::build)
}

/// The tree is made of Windows process kinds; elsewhere the directive is refused loudly, so a
/// test that asks for it cannot pass by accident.
#[cfg(not(windows))]
fn build_tree(directives: &Directives) -> Option<serde_json::Value> {
    if directives.tree {
        eprintln!(
            "fake-cli-windows: the `tree` directive builds Windows processes; this build is not for Windows"
        );
        std::process::exit(2);
    }
    None
}

/// Sleeps until the process is killed (a run's cancel, timeout or teardown).
fn sleep_until_killed() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// `exec resume <id>` continues that thread, as codex does; otherwise a new one.
fn thread_id(args: &[OsString]) -> String {
    let mut words = args
        .iter()
        .filter_map(|a| a.to_str())
        .filter(|a| !a.starts_with('-'));
    if let (Some("exec" | "e"), Some("resume"), Some(id)) =
        (words.next(), words.next(), words.next())
    {
        return id.to_owned();
    }
    stream::uuid7()
}

/// The `[fake] version` line of codex's cli.toml.
fn version() -> &'static str {
    CLI_TOML
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or("0.0.0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_is_the_fixtures_codex_version() {
        assert!(CLI_TOML.contains(&format!("version = \"{}\"", version())));
        assert_ne!(version(), "0.0.0");
    }

    #[test]
    fn exec_resume_keeps_the_thread_id_and_a_new_run_gets_a_uuid7() {
        let args: Vec<OsString> = ["exec", "--json", "resume", "abc-1", "-"]
            .map(Into::into)
            .to_vec();
        assert_eq!(thread_id(&args), "abc-1");
        let fresh = thread_id(&["exec".into(), "--json".into(), "-".into()]);
        assert_eq!(fresh.len(), 36);
        assert_eq!(&fresh[14..15], "7");
    }
}
