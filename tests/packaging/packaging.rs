//! Installing without Rust: the packages `scripts/package` builds — npm's
//! `cli-agent-mcp` (the launcher) with this platform's `cli-agent-mcp-linux-x64`, and the PyPI
//! wheel — installed from those files alone, in fresh directories whose PATH has no cargo and
//! no checkout (node, npm and python3 from the machine), then used through each installed
//! command: `--version` is Cargo.toml's, `doctor --json` parses, and an MCP session lists the
//! tools and answers a call to the fake CLI. A SIGKILL of the npm launcher with a run in flight
//! leaves no process of ours, whether the launcher runs the server as its child (Node.js before
//! 22.15: the server watches the launcher's pipe) or replaces itself with it (execve). The
//! Linux binary asks for glibc 2.17 at most, holds none of the conformance fixtures (nor their
//! flag), and every package carries Cargo.toml's version.
//!
//! `scripts/package` runs once per run of this test binary: the release build takes about
//! 8 min cold, seconds when cargo finds it fresh. Only on Linux x86_64, which it builds for.
//! Without npm or python3 the tests skip saying so, and so does the execve mode without a
//! Node.js that has execve (scripts/install-conformance.sh installs one), unless
//! `CAM_TEST_REQUIRE_ALL=1` (CI), where that is a failure. Figures printed: the packed sizes,
//! the install times, the launcher's added start-up time.

use crate::common;
use crate::mcp;
use crate::packages;

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcp::Server;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use packages::{BINARY, NpmInstall, PLATFORM, Sandbox, VERSION};
use serde_json::{Value, json};
use tokio::sync::RwLock;

/// The start-up timing takes this alone; everything else that runs servers shares it.
static MACHINE: RwLock<()> = RwLock::const_new(());

const SHORT: Duration = Duration::from_secs(60);

/// A run that leaves processes everywhere (as tests/fast/guardian.rs): children that ignore SIGINT
/// and SIGTERM, one in a session of its own, a double-forked daemon, one holding stdout.
const DIRECTIVES: &str =
    "hang ignore-signals children=2 stubborn-children=1 session-child daemon hold-stdout";
const TAGGED: usize = 6;

/// How the npm launcher starts the binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// As its child, with the launcher's pipe (Node.js without process.execve).
    Spawn,
    /// In its place (process.execve, Node.js 22.15+).
    Execve,
}

/// The npm-installed launcher, run by a Node.js that starts the binary in `mode`.
struct Launcher {
    mode: Mode,
    install: &'static NpmInstall,
    /// PATH (its `node`) and, for a Node.js with execve made to spawn, a preload hiding it.
    env: Vec<(String, OsString)>,
    node_version: String,
}

impl Launcher {
    fn describe(&self) -> String {
        format!("{:?} mode, node {}", self.mode, self.node_version)
    }

    /// The launcher's command with the sandbox's environment.
    fn command(&self) -> Command {
        let mut command = self.install.sandbox.command(&self.install.launcher);
        command.envs(self.env.iter().map(|(key, value)| (key, value)));
        command
    }

    /// A server started through the launcher, in the sandbox.
    fn server(&self) -> mcp::Builder {
        serve_builder(
            &self.install.launcher,
            &[],
            &self.install.sandbox,
            &self.env,
        )
    }
}

/// The launcher in `mode`, or `None` when that mode cannot run here (skipped).
fn launcher(mode: Mode) -> Option<Launcher> {
    let install = packages::npm_install()?;
    let system = packages::system_node();
    let system_execs = packages::has_execve(&system);
    let path = |sandbox: &Sandbox| vec![("PATH".to_owned(), sandbox.path().into_os_string())];
    let (env, node) = match (mode, system_execs) {
        (Mode::Spawn, false) | (Mode::Execve, true) => (path(&install.sandbox), system),
        (Mode::Spawn, true) => {
            let preload = packages::work_dir().join("no-execve.js");
            std::fs::write(&preload, "delete process.execve;\n").expect("write the preload");
            let mut env = path(&install.sandbox);
            env.push((
                "NODE_OPTIONS".to_owned(),
                format!("--require={}", preload.display()).into(),
            ));
            (env, system)
        }
        (Mode::Execve, false) => {
            let node = packages::conformance_node().filter(|node| packages::has_execve(node));
            let Some(node) = node else {
                common::skip_unless_required(
                    "the launcher's execve mode needs a Node.js with process.execve (22.15+): \
                     run scripts/install-conformance.sh",
                );
                return None;
            };
            (path(execve_sandbox(&node)), node)
        }
    };
    Some(Launcher {
        mode,
        install,
        env,
        node_version: packages::node_version(&node),
    })
}

/// A sandbox whose `node` is `node` (made once).
fn execve_sandbox(node: &Path) -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| Sandbox::new("node-execve", node))
}

/// A server: `program` with `prefix` then `serve`, the sandbox's environment (and `extra`),
/// every CLI the fake, in the sandbox's directory.
fn serve_builder(
    program: &Path,
    prefix: &[String],
    sandbox: &Sandbox,
    extra: &[(String, OsString)],
) -> mcp::Builder {
    let mut builder = Server::bare_program(program);
    for arg in prefix {
        builder = builder.arg(arg);
    }
    builder = builder.arg("serve").cwd(&sandbox.dir);
    for (key, value) in sandbox.env() {
        builder = builder.env(&key, value);
    }
    for (key, value) in extra {
        builder = builder.env(key, value);
    }
    builder
}

/// Each fake CLI's variable, for the commands that look for CLIs (doctor).
fn fake_clis() -> Vec<(String, PathBuf)> {
    mcp::agents()
        .into_iter()
        .map(|agent| (mcp::bin_env_var(agent), common::fake_cli(agent)))
        .collect()
}

/// One installed command, checked the same way whatever installed it.
struct Installed<'a> {
    what: &'a str,
    program: &'a Path,
    prefix: Vec<String>,
    sandbox: &'a Sandbox,
    extra: Vec<(String, OsString)>,
}

impl Installed<'_> {
    fn command(&self) -> Command {
        let mut command = self.sandbox.command(self.program);
        command
            .args(&self.prefix)
            .envs(self.extra.iter().map(|(key, value)| (key, value)))
            .env("CAM_CONFIG", "/dev/null");
        command
    }

    /// `--version`, `doctor --json`, and an MCP session with one call to the fake CLI.
    async fn check(&self) {
        let _machine = MACHINE.read().await;
        self.check_the_command_line();
        self.check_an_mcp_session().await;
        eprintln!(
            "{}: --version, doctor --json and an MCP call answered",
            self.what
        );
    }

    fn check_the_command_line(&self) {
        let version = packages::succeed(self.command().arg("--version"), SHORT);
        let expected = format!("{BINARY} {VERSION}");
        assert_eq!(version.trim(), expected, "{}", self.what);
        let doctor = packages::output_within(
            self.command().args(["doctor", "--json"]).envs(fake_clis()),
            SHORT,
        );
        let report: Value = serde_json::from_slice(&doctor.stdout).unwrap_or_else(|error| {
            let output = packages::report(&doctor);
            panic!("{}: doctor --json: {error}\n{output}", self.what)
        });
        let clis = report["clis"].as_array();
        assert!(clis.is_some_and(|clis| !clis.is_empty()), "{report}");
    }

    async fn check_an_mcp_session(&self) {
        let mut server =
            serve_builder(self.program, &self.prefix, self.sandbox, &self.extra).spawn();
        server.initialize().await;
        let tools = server.tool_names().await;
        assert!(
            tools.iter().any(|tool| tool == "codex"),
            "{}: {tools:?}",
            self.what
        );
        let result = server
            .call("codex", json!({"prompt": "answer=served_from_the_package"}))
            .await;
        assert!(!mcp::is_error(&result), "{}: {result}", self.what);
        assert_eq!(mcp::texts(&result)[0], "served from the package");
        server.close_stdin();
        let status = server.wait_exit(mcp::DEADLINE).await;
        assert!(
            status.success(),
            "{}: {status}\n{}",
            self.what,
            server.stderr()
        );
    }
}

// --- What was packed ---------------------------------------------------------------------

/// `file` inside the npm tarball `tarball` (under `package/`).
fn packed_file(tarball: &Path, file: &str) -> String {
    packages::succeed(
        Command::new("tar")
            .arg("-xzOf")
            .arg(tarball)
            .arg(format!("package/{file}")),
        SHORT,
    )
}

/// The entries of an npm tarball: (mode string, path).
fn packed_entries(tarball: &Path) -> Vec<(String, String)> {
    packages::succeed(Command::new("tar").arg("-tvzf").arg(tarball), SHORT)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            Some((fields.first()?.to_string(), fields.last()?.to_string()))
        })
        .collect()
}

/// `name` from the wheel (a zip), read with python3's zipfile.
fn wheel_file(wheel: &Path, suffix: &str) -> Vec<u8> {
    let script = "import sys, zipfile\n\
                  z = zipfile.ZipFile(sys.argv[1])\n\
                  [name] = [n for n in z.namelist() if n.endswith(sys.argv[2])]\n\
                  sys.stdout.buffer.write(z.read(name))";
    let output = packages::output_within(
        Command::new("python3")
            .args(["-c", script])
            .arg(wheel)
            .arg(suffix),
        SHORT,
    );
    assert!(output.status.success(), "{}", packages::report(&output));
    output.stdout
}

#[test]
fn dist_holds_the_two_npm_tarballs_and_one_wheel_and_no_sdist() {
    let Some(dist) = packages::dist() else { return };
    let names: Vec<String> = dist
        .files
        .iter()
        .map(|path| {
            path.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    eprintln!("packed: {names:?}");
    assert_eq!(dist.files.len(), 3, "{names:?}");
    assert!(
        dist.npm_main.is_file() && dist.npm_platform.is_file(),
        "{names:?}"
    );
    let wheel = dist.wheel.file_name().expect("a name").to_string_lossy();
    assert!(
        wheel.starts_with(&format!("cli_agent_mcp-{VERSION}-py3-none-")),
        "{wheel}"
    );
    assert!(
        wheel.contains("manylinux_2_17_x86_64"),
        "glibc 2.17's tag: {wheel}"
    );
}

#[test]
fn the_npm_main_package_pins_every_platform_to_cargo_tomls_version_and_runs_no_script() {
    let Some(dist) = packages::dist() else { return };
    let names = packages::names();
    let main: Value =
        serde_json::from_str(&packed_file(&dist.npm_main, "package.json")).expect("JSON");
    assert_eq!(main["name"], names["npm"]);
    assert_eq!(main["version"], VERSION);
    assert_eq!(main["mcpName"], names["mcpName"]);
    assert_eq!(main["bin"][BINARY], "bin/cli-agent-mcp.js");
    assert_eq!(main["engines"]["node"], ">=18");
    assert!(main.get("scripts").is_none(), "no install script: {main}");
    let platforms = names["platforms"].as_object().expect("platforms");
    let pinned = main["optionalDependencies"]
        .as_object()
        .expect("optionalDependencies");
    assert_eq!(pinned.len(), platforms.len(), "{pinned:?}");
    for platform in platforms.values() {
        let package = platform["package"].as_str().expect("a name");
        assert_eq!(pinned[package], VERSION, "pinned exactly: {pinned:?}");
    }
    let entries = packed_entries(&dist.npm_main);
    let mut paths: Vec<&str> = entries.iter().map(|(_, path)| path.as_str()).collect();
    paths.sort_unstable();
    let expected = [
        "package/README.md",
        "package/bin/cli-agent-mcp.js",
        "package/package.json",
    ];
    assert_eq!(paths, expected);
}

#[test]
fn the_npm_platform_package_holds_the_executable_for_linux_x64_with_glibc() {
    let Some(dist) = packages::dist() else { return };
    let names = packages::names();
    let platform: Value =
        serde_json::from_str(&packed_file(&dist.npm_platform, "package.json")).expect("JSON");
    let expected = &names["platforms"][PLATFORM];
    assert_eq!(platform["name"], expected["package"]);
    assert_eq!(platform["version"], VERSION);
    assert_eq!(platform["os"], json!([expected["os"]]));
    assert_eq!(platform["cpu"], json!([expected["cpu"]]));
    assert_eq!(platform["libc"], json!(["glibc"]));
    let quiet = platform.get("scripts").is_none() && platform.get("bin").is_none();
    assert!(quiet, "no script, no command of its own: {platform}");
    let binary = packed_entries(&dist.npm_platform)
        .into_iter()
        .find(|(_, path)| path == &format!("package/bin/{BINARY}"))
        .expect("the binary in the platform package");
    assert!(binary.0.starts_with("-rwx"), "executable: {binary:?}");
}

#[test]
fn the_wheel_carries_cargo_tomls_version_and_proves_the_mcp_name() {
    let Some(dist) = packages::dist() else { return };
    let names = packages::names();
    let metadata = wheel_file(&dist.wheel, ".dist-info/METADATA");
    let metadata = String::from_utf8(metadata).expect("UTF-8");
    let field = |line: String| metadata.lines().any(|found| found == line);
    let pypi = names["pypi"].as_str().expect("pypi");
    assert!(field(format!("Name: {pypi}")), "{metadata}");
    assert!(field(format!("Version: {VERSION}")), "{metadata}");
    let mcp_name = format!("mcp-name: {}", names["mcpName"].as_str().expect("mcpName"));
    assert!(
        metadata.contains(&mcp_name),
        "for the MCP Registry: {metadata}"
    );
}

/// The highest `GLIBC_x.y[.z]` version `binary` needs, from `objdump -T`'s dynamic symbols.
fn highest_glibc(binary: &Path) -> Option<(u32, u32, u32)> {
    let objdump = packages::which("objdump")?;
    let symbols = packages::succeed(Command::new(objdump).arg("-T").arg(binary), SHORT);
    let version = regex::Regex::new(r"GLIBC_(\d+)\.(\d+)(?:\.(\d+))?").expect("regex");
    let highest = version
        .captures_iter(&symbols)
        .map(|found| {
            let part = |n: usize| found.get(n).map_or(0, |m| m.as_str().parse().unwrap_or(0));
            (part(1), part(2), part(3))
        })
        .max();
    Some(highest.expect("the binary links glibc symbols"))
}

/// The binary the npm platform package ships: its bytes, and where they are written out,
/// executable (once per run: the tests that read it run at the same time).
fn shipped_binary(dist: &packages::Dist) -> &'static (Vec<u8>, PathBuf) {
    static SHIPPED: OnceLock<(Vec<u8>, PathBuf)> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let binary = packages::work_dir().join("binary-from-npm");
        let bytes = packages::output_within(
            Command::new("tar")
                .arg("-xzOf")
                .arg(&dist.npm_platform)
                .arg(format!("package/bin/{BINARY}")),
            SHORT,
        )
        .stdout;
        std::fs::write(&binary, &bytes).expect("write the binary");
        let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&binary, executable).expect("make the binary executable");
        (bytes, binary)
    })
}

#[test]
fn the_linux_binary_needs_glibc_2_17_at_most_and_both_registries_ship_the_same_build() {
    let Some(dist) = packages::dist() else { return };
    let (bytes, binary) = shipped_binary(dist);
    let from_wheel = wheel_file(&dist.wheel, &format!(".data/scripts/{BINARY}"));
    assert!(
        *bytes == from_wheel,
        "npm's binary and the wheel's differ: two builds"
    );
    eprintln!(
        "the binary: {} KiB, stripped, the same in npm and PyPI",
        bytes.len() / 1024
    );
    let Some((major, minor, patch)) = highest_glibc(binary) else {
        common::skip_unless_required("the glibc check reads the binary with objdump (binutils)");
        return;
    };
    eprintln!("the highest glibc symbol version the binary needs: GLIBC_{major}.{minor}.{patch}");
    assert!(
        (major, minor, patch) <= (2, 17, 0),
        "needs glibc {major}.{minor}.{patch} > 2.17"
    );
}

/// A release holds none of the conformance fixtures (the `conformance-fixtures` feature is for
/// the conformance tests' build alone): neither their names nor the flag, which it refuses.
#[test]
fn the_shipped_binary_holds_no_conformance_fixture_and_refuses_their_flag() {
    let Some(dist) = packages::dist() else { return };
    let (bytes, binary) = shipped_binary(dist);
    let fixture_names = [
        "conformance-fixtures",
        "CAM_CONFORMANCE_FIXTURES",
        "test_simple_text",
        "test_input_required_result",
        "test_missing_capability",
        "test_streaming_elicitation",
        "slow_compute",
        "protocol_error_job",
        "json_schema_2020_12_tool",
        "test_trigger_tool_change",
        "fixture-task-",
    ];
    let found = regex::bytes::Regex::new(&fixture_names.join("|")).expect("regex");
    let held: Vec<String> = found
        .find_iter(bytes)
        .map(|name| String::from_utf8_lossy(name.as_bytes()).into_owned())
        .collect();
    assert!(
        held.is_empty(),
        "the shipped binary holds fixtures: {held:?}"
    );
    let refused = packages::output_within(
        Command::new(binary).args(["serve", "--http", "127.0.0.1:0", "--conformance-fixtures"]),
        SHORT,
    );
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("unexpected argument '--conformance-fixtures'"),
        "{said}"
    );
}

// --- Installed, then used ----------------------------------------------------------------

#[tokio::test]
async fn the_npm_install_from_the_tarballs_serves_through_the_launcher_in_both_modes() {
    let Some(install) = packages::npm_install() else {
        return;
    };
    eprintln!(
        "npm install of the two tarballs (offline): {:.1} s",
        install.took.as_secs_f64()
    );
    for mode in [Mode::Spawn, Mode::Execve] {
        let Some(launcher) = launcher(mode) else {
            continue;
        };
        let what = format!("npm's launcher ({})", launcher.describe());
        Installed {
            what: &what,
            program: &install.launcher,
            prefix: Vec::new(),
            sandbox: &install.sandbox,
            extra: launcher.env.clone(),
        }
        .check()
        .await;
    }
}

#[tokio::test]
async fn the_wheel_installed_by_pip_into_a_venv_serves() {
    let Some(install) = packages::pip_install() else {
        return;
    };
    eprintln!(
        "python3 -m venv and pip install of the wheel (offline): {:.1} s",
        install.took.as_secs_f64()
    );
    Installed {
        what: "the wheel, installed by pip",
        program: &install.command,
        prefix: Vec::new(),
        sandbox: &install.sandbox,
        extra: Vec::new(),
    }
    .check()
    .await;
}

#[tokio::test]
async fn the_wheel_run_by_uvx_serves() {
    let Some(dist) = packages::dist() else { return };
    if !dist.uv.is_file() {
        common::skip_unless_required("uv is not in .tools/package: run scripts/package");
        return;
    }
    let uvx = packages::uvx(dist);
    Installed {
        what: "the wheel, run by uvx",
        program: &uvx.uv,
        prefix: uvx.prefix.clone(),
        sandbox: &uvx.sandbox,
        extra: Vec::new(),
    }
    .check()
    .await;
}

// --- The launcher ------------------------------------------------------------------------

/// The process `/proc/<pid>/exe` names.
fn exe(pid: i32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default()
}

/// Alive: in the process table and not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// The children of `pid`, from every process's stat.
fn children(pid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// The server the launcher `pid` started: itself after execve, else its child running the
/// binary; checked to be so.
fn server_process(launcher: &Launcher, pid: i32) -> i32 {
    let binary = launcher.install.binary.canonicalize().expect("the binary");
    match launcher.mode {
        Mode::Execve => {
            assert_eq!(
                exe(pid),
                binary,
                "the launcher replaced itself with the binary"
            );
            pid
        }
        Mode::Spawn => {
            assert_ne!(
                exe(pid),
                binary,
                "the launcher runs the binary as its child"
            );
            let found = children(pid)
                .into_iter()
                .filter(|&child| exe(child) == binary)
                .collect::<Vec<_>>();
            assert_eq!(
                found.len(),
                1,
                "one server, a child of the launcher: {found:?}"
            );
            found[0]
        }
    }
}

async fn sigkill_of_the_launcher_leaves_no_process(mode: Mode) {
    let Some(launcher) = launcher(mode) else {
        return;
    };
    let _machine = MACHINE.read().await;
    let tag = common::unique("packaging-sigkill");
    let mut server = launcher.server().spawn();
    server.initialize().await;
    let prompt = format!("{DIRECTIVES} tag={tag}");
    server
        .start_call("claude", json!({"prompt": prompt}), None)
        .await;
    common::wait_for_tagged(&tag, TAGGED).await;
    let server_pid = server_process(&launcher, server.pid());
    common::wait_until("every process of the run carries its marker", || {
        common::run_processes_of(server_pid).len() > TAGGED
    })
    .await;

    server.signal(Signal::SIGKILL);
    let killed = Instant::now();
    loop {
        let tagged = common::tagged_pids(&tag);
        let marked = common::run_processes_of(server_pid);
        let server_alive = alive(server_pid);
        if tagged.is_empty() && marked.is_empty() && !server_alive {
            break;
        }
        assert!(
            killed.elapsed() < common::DEADLINE,
            "{:?} after the SIGKILL of the launcher ({}): the server {server_pid} alive: \
             {server_alive}; its run's processes: {marked:?} (tagged: {tagged:?})",
            killed.elapsed(),
            launcher.describe()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    eprintln!(
        "SIGKILL of the launcher ({}): the server and its run's {} processes gone in {:?}",
        launcher.describe(),
        TAGGED + 1,
        killed.elapsed()
    );
}

#[tokio::test]
async fn sigkill_of_the_launcher_running_the_server_as_its_child_leaves_no_process() {
    sigkill_of_the_launcher_leaves_no_process(Mode::Spawn).await;
}

#[tokio::test]
async fn sigkill_of_the_launcher_that_became_the_server_leaves_no_process() {
    sigkill_of_the_launcher_leaves_no_process(Mode::Execve).await;
}

#[tokio::test]
async fn the_launcher_passes_signals_on_and_ends_as_the_server_did() {
    let Some(launcher) = launcher(Mode::Spawn) else {
        return;
    };
    let _machine = MACHINE.read().await;
    let usage = packages::output_within(launcher.command().arg("--no-such-flag"), SHORT);
    assert_eq!(
        usage.status.code(),
        Some(2),
        "the usage error's code: {}",
        packages::report(&usage)
    );

    // SIGTERM to the launcher reaches the server, which shuts down and exits 0: so does it.
    let mut server = launcher.server().spawn();
    server.initialize().await;
    let server_pid = server_process(&launcher, server.pid());
    server.signal(Signal::SIGTERM);
    let status = server.wait_exit(mcp::DEADLINE).await;
    assert!(status.success(), "{status}\n{}", server.stderr());
    assert!(server.stderr().contains("Sigterm"), "{}", server.stderr());
    common::wait_until("the server exits", || !alive(server_pid)).await;

    // The server killed by a signal: the launcher ends by the same signal.
    let mut server = launcher.server().spawn();
    server.initialize().await;
    let server_pid = server_process(&launcher, server.pid());
    nix::sys::signal::kill(Pid::from_raw(server_pid), Signal::SIGKILL).expect("kill the server");
    let status = server.wait_exit(mcp::DEADLINE).await;
    assert_eq!(status.signal(), Some(Signal::SIGKILL as i32), "{status}");
}

const FROM_SOURCE: &str =
    "cargo install --git https://github.com/cli-agent-mcp/cli-agent-mcp cli-agent-mcp";

/// A copy of the installed main package alone (as npm leaves it with --omit=optional) under
/// `name`; the path of its launcher.
fn main_package_alone(install: &NpmInstall, name: &str) -> PathBuf {
    let alone = packages::work_dir()
        .join(name)
        .join("node_modules")
        .join(BINARY);
    std::fs::create_dir_all(alone.join("bin")).expect("create the copy");
    let installed = install.project.join("node_modules").join(BINARY);
    for file in ["package.json", "bin/cli-agent-mcp.js"] {
        std::fs::copy(installed.join(file), alone.join(file)).expect("copy the main package");
    }
    alone.join("bin/cli-agent-mcp.js")
}

/// `node <launcher> --version` in the sandbox, with `env`.
fn version_through(install: &NpmInstall, launcher: &Path, env: &[(&str, &Path)]) -> Output {
    let mut command = install.sandbox.command("node");
    command.arg(launcher).arg("--version");
    for (key, value) in env {
        command.env(key, value);
    }
    packages::output_within(&mut command, SHORT)
}

#[test]
fn without_this_platforms_package_the_launcher_says_how_to_get_it_or_runs_the_override() {
    let Some(install) = packages::npm_install() else {
        return;
    };
    let launcher = main_package_alone(install, "alone");
    let missing = version_through(install, &launcher, &[]);
    let said = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(
        missing.status.code(),
        Some(1),
        "{}",
        packages::report(&missing)
    );
    let package = format!("{BINARY}-{PLATFORM}@{VERSION}");
    assert!(
        said.contains(&package) && said.contains("is not installed"),
        "{said}"
    );
    assert!(said.contains(FROM_SOURCE), "{said}");

    let env = [("CLI_AGENT_MCP_BINARY", install.binary.as_path())];
    let overridden = version_through(install, &launcher, &env);
    assert!(
        overridden.status.success(),
        "{}",
        packages::report(&overridden)
    );
    let version = String::from_utf8_lossy(&overridden.stdout);
    assert_eq!(version.trim(), format!("{BINARY} {VERSION}"));
}

#[test]
fn on_a_platform_without_a_binary_the_launcher_names_those_with_one_and_the_source_install() {
    let Some(install) = packages::npm_install() else {
        return;
    };
    let launcher = main_package_alone(install, "unsupported");
    let manifest_path = launcher
        .parent()
        .and_then(Path::parent)
        .expect("the package");
    let manifest_path = manifest_path.join("package.json");
    let text = std::fs::read_to_string(&manifest_path).expect("read");
    let mut manifest: Value = serde_json::from_str(&text).expect("JSON");
    let pinned = manifest["optionalDependencies"]
        .as_object_mut()
        .expect("optionalDependencies");
    pinned.remove(&format!("{BINARY}-{PLATFORM}"));
    std::fs::write(&manifest_path, manifest.to_string()).expect("write");

    let unsupported = version_through(install, &launcher, &[]);
    let said = String::from_utf8_lossy(&unsupported.stderr);
    assert_eq!(
        unsupported.status.code(),
        Some(1),
        "{}",
        packages::report(&unsupported)
    );
    assert!(
        said.contains(&format!("no prebuilt binary for {PLATFORM}")),
        "{said}"
    );
    for other in ["linux-arm64", "darwin-x64", "darwin-arm64"] {
        assert!(
            said.contains(other),
            "names the platforms with a binary: {said}"
        );
    }
    assert!(said.contains(FROM_SOURCE), "{said}");
}

/// Spawn to the `initialize` response, `RUNS` times each, taking turns: the launcher's
/// median and the bare binary's.
async fn start_up_medians(launcher: &Launcher) -> (Duration, Duration) {
    const RUNS: usize = 11;
    let sandbox = &launcher.install.sandbox;
    let mut bare = Vec::new();
    let mut through = Vec::new();
    for _ in 0..RUNS {
        for (program, extra, times) in [
            (&launcher.install.binary, Vec::new(), &mut bare),
            (
                &launcher.install.launcher,
                launcher.env.clone(),
                &mut through,
            ),
        ] {
            let started = Instant::now();
            let mut server = serve_builder(program, &[], sandbox, &extra).spawn();
            server.initialize().await;
            times.push(started.elapsed());
            server.close_stdin();
            server.wait_exit(mcp::DEADLINE).await;
        }
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    (median(&mut bare), median(&mut through))
}

#[tokio::test]
async fn the_launchers_added_start_up_time() {
    for mode in [Mode::Spawn, Mode::Execve] {
        let Some(launcher) = launcher(mode) else {
            continue;
        };
        let _machine = MACHINE.write().await;
        let (bare, through) = start_up_medians(&launcher).await;
        let added = through.saturating_sub(bare);
        eprintln!(
            "start-up to the initialize response, median of 11: the bare binary {:.1} ms, \
             the npm launcher ({}) {:.1} ms: {:.1} ms added",
            bare.as_secs_f64() * 1e3,
            launcher.describe(),
            through.as_secs_f64() * 1e3,
            added.as_secs_f64() * 1e3
        );
        assert!(
            added < Duration::from_secs(2),
            "the launcher adds {added:?}"
        );
    }
}
