//! Helpers shared by the integration tests: where the repository and the built binary are,
//! the fake CLI, unique names and temporary directories, and the process table, which is where
//! "nothing is left behind" is checked: read through the engine's platform module, so the same
//! checks hold on Linux and macOS.

pub mod cli_fixtures;
pub mod fake_cli;

pub use fake_cli::fake_cli;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cli_agent_engine::{Agent, EngineConfig, clis, platform};
use tempfile::TempDir;

/// Long enough for a loaded 2-core machine; conditions are polled, never slept on.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The repository's root, where `tests/fixtures`, `scripts/` and the docs are: this crate is
/// its `tests/support`.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tests/support lies two levels below the repository's root")
}

/// The built `cli-agent-mcp`, which cargo builds for every test tier and bench of its package:
/// beside the running test's or bench's executable (see [`binary_beside`]), as assert_cmd finds
/// it. A string, as the tests write it into the configs of the hosts that start it.
pub fn binary() -> &'static str {
    static BINARY: OnceLock<String> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("the running test's executable");
        let binary = binary_beside(&exe);
        assert!(
            binary.is_file(),
            "the built cli-agent-mcp is not at {}: cargo builds it for the tests and benches of \
             the cli-agent-mcp package (`cargo test --test <tier>`, `cargo bench --bench \
             server`); else run `cargo build` (`--release` for a bench) first",
            binary.display()
        );
        binary
            .into_os_string()
            .into_string()
            .expect("a UTF-8 path to the built binary")
    })
}

/// Where cargo puts the package's binary for the test or bench executable `exe`: its profile's
/// directory, `exe`'s own or the one above its `deps/` (`target/debug/deps/fast-<hash>` →
/// `target/debug/cli-agent-mcp`).
pub fn binary_beside(exe: &Path) -> PathBuf {
    let dir = exe.parent().expect("an executable's directory");
    let profile = if dir.ends_with("deps") {
        dir.parent().expect("the profile's directory")
    } else {
        dir
    };
    profile.join(format!("cli-agent-mcp{}", std::env::consts::EXE_SUFFIX))
}

pub fn fake_bin(agent: Agent) -> PathBuf {
    fake_cli(agent.name())
}

/// An engine configuration that runs the fake CLI for every agent.
pub fn fake_config() -> EngineConfig {
    EngineConfig {
        binaries: clis::builtin_agents()
            .map(|agent| (agent.name().to_owned(), fake_bin(agent)))
            .collect(),
        grace: Duration::from_secs(1),
        ..EngineConfig::default()
    }
}

/// The built `cli-agent-mcp` with none of the caller's settings: no inherited `CAM_*`,
/// `FAKE_CLI_*` or `IS_SANDBOX`, no config file, and a home and XDG directories (on Windows
/// the profile and its AppData) of the tests' own under the temp dir, so nothing of the
/// user's reaches it; stdin closed.
pub fn cam_command() -> std::process::Command {
    let mut command = std::process::Command::new(binary());
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CAM_") || key.starts_with("FAKE_CLI_") || key == "IS_SANDBOX" {
            command.env_remove(&*key);
        }
    }
    let home = std::env::temp_dir().join("cam-test-home");
    command.env("HOME", &home);
    for (key, dir) in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ] {
        command.env(key, home.join(dir));
    }
    // Where Windows keeps what XDG names: the config in APPDATA, the job store in LOCALAPPDATA.
    #[cfg(windows)]
    for (key, dir) in [
        ("USERPROFILE", ""),
        ("APPDATA", "AppData/Roaming"),
        ("LOCALAPPDATA", "AppData/Local"),
    ] {
        command.env(key, home.join(dir));
    }
    command.env("CAM_CONFIG", NO_CONFIG);
    command.stdin(std::process::Stdio::null());
    command
}

/// `cli-agent-mcp jobs show ID --json` on the job store in `state`: the job, or `None` when
/// it printed none (no such job, yet).
pub fn shown_job(state: &Path, id: &str) -> Option<serde_json::Value> {
    let output = cam_command()
        .args(["jobs", "show", id, "--json"])
        .env("CAM_STATE_DIR", state)
        .output()
        .expect("run jobs show");
    serde_json::from_slice(&output.stdout).ok()
}

/// How many events of job `id` the store in `state` holds, as `jobs show --json` says.
pub fn recorded_events(state: &Path, id: &str) -> u64 {
    shown_job(state, id).map_or(0, |job| job["transcript"]["events"].as_u64().unwrap_or(0))
}

/// A name no other test (or earlier run) uses.
pub fn unique(name: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{name}-{}-{nanos:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// An empty config file: the null device.
pub const NO_CONFIG: &str = if cfg!(windows) { "NUL" } else { "/dev/null" };

/// A PATH on which a server finds none of the machine's CLIs, only what the fake CLI needs:
/// the system's dirs on Unix; on Windows the dir of the `python` its shims name (see
/// [`fake_cli`]) and the system's.
pub fn bare_path() -> std::ffi::OsString {
    if !cfg!(windows) {
        return "/usr/bin:/bin".into();
    }
    let system = std::env::var_os("SystemRoot").map(|root| PathBuf::from(root).join("System32"));
    let python = which::which("python")
        .ok()
        .and_then(|python| Some(python.parent()?.to_owned()));
    std::env::join_paths(python.into_iter().chain(system)).expect("a PATH of plain dirs")
}

/// `path` as a TOML string, its `\` escaped: a Windows path written into a config file.
pub fn toml_path(path: &Path) -> String {
    toml::Value::String(path.display().to_string()).to_string()
}

/// A fresh directory under the temp dir, named `<name>-<random>` (whose it is, should one be
/// left), removed when dropped.
pub fn temp_dir(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir()
        .unwrap_or_else(|error| panic!("create a temp dir for {name}: {error}"))
}

/// Live processes whose environment carries `FAKE_CLI_TAG=<tag>`.
pub fn tagged_pids(tag: &str) -> Vec<i32> {
    pids_with_env(&format!("FAKE_CLI_TAG={tag}"))
}

/// Live processes whose environment holds the entry `NAME=value`.
pub fn pids_with_env(entry: &str) -> Vec<i32> {
    let (name, value) = entry
        .split_once('=')
        .unwrap_or_else(|| panic!("{entry} is no NAME=value entry"));
    pids_with_variable(name, |found| found == value)
}

/// Live processes started by any run of the server `server_pid`: they carry its run marker
/// (`CAM_RUN_ID=<pid>.<start>-<n>`).
pub fn run_processes_of(server_pid: i32) -> Vec<i32> {
    let prefix = format!("{server_pid}.");
    pids_with_variable("CAM_RUN_ID", |found| found.starts_with(&prefix))
}

/// Live processes (not zombies: those are dead, only not yet reaped) whose variable `name`
/// has a value that `matches`, as the engine's platform module reads the process table.
fn pids_with_variable(name: &str, matches: impl Fn(&str) -> bool) -> Vec<i32> {
    platform::process_ids()
        .into_iter()
        .filter(|&pid| platform::environment_value(pid, name).is_some_and(|value| matches(&value)))
        .filter(|&pid| platform::is_alive(pid))
        .filter_map(|pid| i32::try_from(pid).ok())
        .collect()
}

/// The guardian of the running server (or `run`) `pid`: its child started with `__guardian`.
pub fn guardian_of(pid: i32) -> Option<i32> {
    platform::children(u32::try_from(pid).ok()?)
        .into_iter()
        .filter_map(|child| i32::try_from(child).ok())
        .find(|&child| is_guardian(child))
}

/// Whether a guardian of the server (or `run`) that ran as `pid` is alive: found by the runs it
/// guards (`CAM_RUN_ID=<pid>.<hex>-`), so also once that process is gone and it has another
/// parent.
pub fn guardian_alive(pid: i32) -> bool {
    let guarded = format!("CAM_RUN_ID={pid}.");
    platform::process_ids().into_iter().any(|other| {
        let args = platform::arguments(other).unwrap_or_default();
        args.get(1).is_some_and(|a| a == "__guardian")
            && args
                .get(2)
                .is_some_and(|prefix| prefix.starts_with(&guarded))
            && platform::is_alive(other)
    })
}

/// Alive (not a zombie) and running as a guardian.
pub fn is_guardian(pid: i32) -> bool {
    let Ok(pid) = u32::try_from(pid) else {
        return false;
    };
    platform::is_alive(pid)
        && platform::arguments(pid)
            .is_some_and(|args| args.get(1).is_some_and(|a| a == "__guardian"))
}

/// Poll `condition` until it holds, panicking with `what` after [`DEADLINE`].
pub async fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Wait until `count` processes carry `tag`, so a later "none survive" check means something.
pub async fn wait_for_tagged(tag: &str, count: usize) {
    wait_until(&format!("{count} processes tagged {tag} run"), || {
        tagged_pids(tag).len() >= count
    })
    .await;
}

/// Assert that no process carrying `tag` is alive.
pub fn assert_none_tagged(tag: &str) {
    assert_none_with_env(&format!("FAKE_CLI_TAG={tag}"));
}

/// Assert that no process whose environment holds `entry` (`NAME=value`) is alive.
pub fn assert_none_with_env(entry: &str) {
    let survivors = pids_with_env(entry);
    assert!(
        survivors.is_empty(),
        "processes with {entry} survived: {survivors:?} ({})",
        describe(&survivors)
    );
}

/// Each process's pid and arguments, for a failure's message.
fn describe(pids: &[i32]) -> String {
    pids.iter()
        .filter_map(|&pid| u32::try_from(pid).ok())
        .map(|pid| format!("{pid}: {:?}", platform::arguments(pid)))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Make this test process the subreaper, as the server makes itself.
pub fn adopt_orphans() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| cli_agent_engine::process::adopt_orphans().expect("PR_SET_CHILD_SUBREAPER"));
}

/// A tool a test drives is missing: skip with `message`, unless `CAM_TEST_REQUIRE_ALL=1`
/// (CI), where that is a failure.
pub fn skip_unless_required(message: &str) {
    assert!(
        std::env::var("CAM_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
        "{message} (CAM_TEST_REQUIRE_ALL=1 forbids skipping)"
    );
    eprintln!("skipped: {message}");
}

/// The fenced block after `<!-- check: <name> -->` in README.md or a page of docs/, wherever the
/// snippet lives now; the marker must be in exactly one place.
pub fn readme_snippet(name: &str) -> String {
    let marker = format!("<!-- check: {name} -->");
    let (page, text) = doc_page_with(&marker);
    let after = text.split_once(&marker).expect("the page has the marker").1;
    fenced_body(after)
        .unwrap_or_else(|| panic!("{page}: {marker} is not followed by a fenced block"))
        .to_owned()
}

/// The body of the first fenced block in `text`, without its info string.
fn fenced_body(text: &str) -> Option<&str> {
    let opened = text.split_once("```")?.1;
    let body = opened.split_once('\n')?.1;
    Some(body.split_once("```")?.0)
}

/// The one page of the documentation (README.md, docs/**/*.md) that holds `needle`, by its path
/// relative to the repository, with its text. Panics if none or more than one does, or if that
/// page holds it twice: a test reading a snippet must know which one it reads.
pub fn doc_page_with(needle: &str) -> (String, String) {
    let holders: Vec<(String, String)> = doc_pages()
        .into_iter()
        .filter(|(_, text)| text.contains(needle))
        .collect();
    match holders.as_slice() {
        [(page, text)] if text.matches(needle).count() == 1 => (page.clone(), text.clone()),
        [(page, _)] => panic!("{page} holds `{needle}` more than once"),
        [] => panic!("neither README.md nor a page of docs/ holds `{needle}`"),
        many => {
            let pages: Vec<&str> = many.iter().map(|(page, _)| page.as_str()).collect();
            panic!("`{needle}` is in more than one page: {}", pages.join(", "))
        }
    }
}

/// README.md and every markdown page under docs/, as (path relative to the repository, text).
pub fn doc_pages() -> Vec<(String, String)> {
    let root = repo();
    let mut paths = vec![root.join("README.md")];
    markdown_under(&root.join("docs"), &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
            let relative = path.strip_prefix(root).expect("under the repository");
            (relative.display().to_string(), text)
        })
        .collect()
}

fn markdown_under(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|error| panic!("read {}: {error}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            markdown_under(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "md") {
            found.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_found_in_the_profile_directory_of_a_test_or_a_bench() {
        let built = Path::new("/repo/target/debug/cli-agent-mcp");
        let test = Path::new("/repo/target/debug/deps/fast-0123456789abcdef");
        assert_eq!(binary_beside(test), built);
        let copied_beside = Path::new("/repo/target/debug/fast");
        assert_eq!(binary_beside(copied_beside), built);
        let bench = Path::new("/repo/target/x86_64-unknown-linux-gnu/release/deps/server-42");
        let built = Path::new("/repo/target/x86_64-unknown-linux-gnu/release/cli-agent-mcp");
        assert_eq!(binary_beside(bench), built);
    }

    #[test]
    fn the_repository_holds_this_crate_and_the_fixtures() {
        assert!(repo().join("tests/support/Cargo.toml").is_file());
        assert!(repo().join("tests/fixtures/bin").is_dir());
    }
}
