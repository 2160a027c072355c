//! What tests/packaging/packaging.rs installs and runs: the packages `scripts/package` builds (once
//! per run of the test binary, into this run's own directory: a developer's dist/ is left alone,
//! and two runs at once do not race on it), a sandbox (a fresh temp dir with its own home and a
//! PATH of node, npm, python3 and a few basics, with no cargo and no checkout), and the installs
//! made in it from those files alone: npm (the launcher and this platform's binary), a venv with
//! the wheel, uv running the wheel.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::{self, repo};

/// The platform scripts/package builds, as npm and the packages name it.
pub const PLATFORM: &str = "linux-x64";
pub const BINARY: &str = "cli-agent-mcp";
/// The workspace's version, which this crate shares with the binary's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Generous for a loaded 2-core machine; every wait polls until it.
pub const INSTALL_DEADLINE: Duration = Duration::from_secs(300);

/// packaging/names.json: the names every package is published under.
pub fn names() -> serde_json::Value {
    let path = repo().join("packaging/names.json");
    let text = std::fs::read_to_string(&path).expect("read packaging/names.json");
    serde_json::from_str(&text).expect("packaging/names.json is JSON")
}

/// Run `command` to its end, within `limit` (polled; killed and failed past it). Its output
/// is read as it comes, so a command that prints much does not block on a full pipe.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

/// What a command printed, for a failure's message (each stream's last 4000 characters).
pub fn report(output: &Output) -> String {
    let tail = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let skip = text.chars().count().saturating_sub(4000);
        text.chars().skip(skip).collect::<String>()
    };
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        tail(&output.stdout),
        tail(&output.stderr)
    )
}

/// Run `command`, which must succeed; its stdout.
pub fn succeed(command: &mut Command, limit: Duration) -> String {
    let output = output_within(command, limit);
    assert!(
        output.status.success(),
        "{command:?} failed\n{}",
        report(&output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The files scripts/package made.
pub struct Dist {
    pub npm_main: PathBuf,
    pub npm_platform: PathBuf,
    pub wheel: PathBuf,
    /// Every file scripts/package made.
    pub files: Vec<PathBuf>,
    /// uv, which scripts/package installs beside maturin in .tools/package.
    pub uv: PathBuf,
}

/// The packages, built by scripts/package once per run of this test binary; `None` when
/// skipped.
pub fn dist() -> Option<&'static Dist> {
    static DIST: OnceLock<Option<Dist>> = OnceLock::new();
    DIST.get_or_init(build_dist).as_ref()
}

fn build_dist() -> Option<Dist> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        eprintln!("skipped: scripts/package builds the Linux x86_64 packages, on Linux x86_64");
        return None;
    }
    for tool in ["npm", "python3"] {
        if which(tool).is_none() {
            common::skip_unless_required(&format!(
                "the packaging tests need {tool} on PATH (Node.js 18+ with npm, python3 with venv)"
            ));
            return None;
        }
    }
    let dir = work_dir().join("dist");
    run_package(&dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read the packages' directory")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    let named = |name: &str| dir.join(name);
    let wheel = files
        .iter()
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .cloned()
        .unwrap_or_else(|| panic!("no wheel among {files:?}"));
    Some(Dist {
        npm_main: named(&format!("{BINARY}-{VERSION}.tgz")),
        npm_platform: named(&format!("{BINARY}-{PLATFORM}-{VERSION}.tgz")),
        wheel,
        files,
        uv: repo().join(".tools/package/bin/uv"),
    })
}

/// `scripts/package DIR`, its summary shown (the whole output when it fails).
fn run_package(dir: &Path) {
    let started = Instant::now();
    let output = output_within(
        Command::new(repo().join("scripts/package"))
            .arg(dir)
            .current_dir(repo()),
        Duration::from_secs(3600),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(80).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "scripts/package failed ({}):\n{}",
            output.status,
            tail.join("\n")
        );
    }
    let summary = |line: &&str| line.starts_with("package:") || line.starts_with("  ");
    for line in stderr.lines().filter(summary) {
        eprintln!("{line}");
    }
    let took = started.elapsed().as_secs_f64();
    eprintln!("scripts/package took {took:.1} s");
}

/// `tool` on this process's PATH.
pub fn which(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(tool))
        .find(|path| path.is_file())
}

/// Where a tool comes from on the machine, outside the checkout and Rust's own directories:
/// the first on PATH that is neither (python3: the system's /usr/bin one first, as pyenv's
/// shims need pyenv on PATH).
fn system_tool(tool: &str) -> Option<PathBuf> {
    let preferred = Path::new("/usr/bin").join(tool);
    if tool == "python3" && preferred.is_file() {
        return Some(preferred);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    std::env::split_paths(&std::env::var_os("PATH")?)
        .filter(|dir| !dir.starts_with(repo()) && !dir.starts_with(home.join(".cargo")))
        .filter(|dir| !dir.starts_with(home.join(".pyenv")))
        .map(|dir| dir.join(tool))
        .find(|path| path.is_file())
}

/// A fresh directory with its own home, and a PATH holding only links to `node` and the
/// system's npm, npx, python3 and what the fake CLI runs (sh, sleep): no cargo, no checkout.
pub struct Sandbox {
    pub dir: PathBuf,
    pub home: PathBuf,
    pub bin: PathBuf,
    pub node: PathBuf,
}

/// The tools each sandbox's PATH links to (besides node).
const SYSTEM_TOOLS: [&str; 6] = ["npm", "npx", "python3", "sh", "sleep", "env"];

impl Sandbox {
    /// A sandbox named `name` under this run's work dir, whose `node` is `node`.
    pub fn new(name: &str, node: &Path) -> Self {
        let dir = work_dir().join(name);
        let home = dir.join("home");
        let bin = dir.join("bin");
        std::fs::create_dir_all(&home).expect("create the sandbox's home");
        std::fs::create_dir_all(&bin).expect("create the sandbox's bin");
        link(node, &bin.join("node"));
        for tool in SYSTEM_TOOLS {
            let found = system_tool(tool)
                .unwrap_or_else(|| panic!("no system {tool} for the sandbox's PATH"));
            link(&found, &bin.join(tool));
        }
        let sandbox = Self {
            dir,
            home,
            bin,
            node: node.to_owned(),
        };
        sandbox.assert_no_cargo_on_path();
        sandbox
    }

    pub fn path(&self) -> PathBuf {
        self.bin.clone()
    }

    fn assert_no_cargo_on_path(&self) {
        let path = self.path();
        assert!(
            !path.join("cargo").exists(),
            "cargo is on {}",
            path.display()
        );
        assert!(!path.starts_with(repo()), "the PATH is in the checkout");
    }

    /// A command with the sandbox's environment only: its home, XDG dirs, caches and PATH.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        command.env_clear().current_dir(&self.dir);
        for (key, value) in self.env() {
            command.env(key, value);
        }
        command
    }

    /// The sandbox's environment, for commands and servers started in it.
    pub fn env(&self) -> Vec<(String, PathBuf)> {
        let home = &self.home;
        [
            ("HOME", home.clone()),
            ("PATH", self.path()),
            ("LANG", PathBuf::from("C.UTF-8")),
            ("XDG_CONFIG_HOME", home.join(".config")),
            ("XDG_DATA_HOME", home.join(".local/share")),
            ("XDG_STATE_HOME", home.join(".local/state")),
            ("XDG_CACHE_HOME", home.join(".cache")),
            ("npm_config_cache", home.join(".npm")),
            ("npm_config_update_notifier", PathBuf::from("false")),
            ("PIP_DISABLE_PIP_VERSION_CHECK", PathBuf::from("1")),
            ("PIP_CONFIG_FILE", PathBuf::from("/dev/null")),
            ("UV_CACHE_DIR", home.join(".cache/uv")),
            ("UV_TOOL_DIR", home.join(".local/share/uv/tools")),
            ("UV_PYTHON_DOWNLOADS", PathBuf::from("never")),
            ("UV_NO_CONFIG", PathBuf::from("1")),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
    }
}

fn link(target: &Path, at: &Path) {
    let target = target.canonicalize().unwrap_or_else(|_| target.to_owned());
    let _ = std::fs::remove_file(at);
    std::os::unix::fs::symlink(&target, at)
        .unwrap_or_else(|error| panic!("link {} to {}: {error}", at.display(), target.display()));
}

/// This run's directory under the temp dir (`cam-packaging-<pid>`); those of runs that are
/// gone are removed first.
pub fn work_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let temp = std::env::temp_dir();
        for entry in std::fs::read_dir(&temp).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name
                .strip_prefix("cam-packaging-")
                .and_then(|pid| pid.parse::<u32>().ok());
            if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = temp.join(format!("cam-packaging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the packaging tests' dir");
        dir
    })
}

/// The machine's Node.js (the first on PATH outside the checkout and Rust's directories).
pub fn system_node() -> PathBuf {
    system_tool("node").expect("node on PATH")
}

/// Whether `node` has process.execve (Node.js 22.15+ and 23.11+ on POSIX).
pub fn has_execve(node: &Path) -> bool {
    let output = output_within(
        Command::new(node).args(["-p", "typeof process.execve"]),
        Duration::from_secs(60),
    );
    String::from_utf8_lossy(&output.stdout).trim() == "function"
}

pub fn node_version(node: &Path) -> String {
    succeed(Command::new(node).arg("--version"), Duration::from_secs(60))
        .trim()
        .to_owned()
}

/// The Node.js 22 that scripts/install-conformance.sh installs, if it is there.
pub fn conformance_node() -> Option<PathBuf> {
    let node = repo().join(".tools/conformance/node_modules/node/bin/node");
    node.is_file().then_some(node)
}

/// The npm install, made once in its own sandbox with the machine's Node.js.
pub struct NpmInstall {
    pub sandbox: Sandbox,
    /// The project the packages are installed into.
    pub project: PathBuf,
    /// `node_modules/.bin/cli-agent-mcp`: the launcher, as npm linked it.
    pub launcher: PathBuf,
    /// The binary inside this platform's package.
    pub binary: PathBuf,
    pub took: Duration,
}

/// The two tarballs installed with `npm install --offline`, the platform package as a file
/// dependency beside the main one; `None` when skipped.
pub fn npm_install() -> Option<&'static NpmInstall> {
    static INSTALL: OnceLock<Option<NpmInstall>> = OnceLock::new();
    INSTALL
        .get_or_init(|| {
            dist().map(|dist| install_from_tarballs(dist, Sandbox::new("npm", &system_node())))
        })
        .as_ref()
}

fn install_from_tarballs(dist: &Dist, sandbox: Sandbox) -> NpmInstall {
    let project = sandbox.dir.join("project");
    std::fs::create_dir_all(&project).expect("create the project");
    let manifest = serde_json::json!({
        "name": "packaging-test",
        "private": true,
        "dependencies": {
            BINARY: format!("file:{}", dist.npm_main.display()),
            format!("{BINARY}-{PLATFORM}"): format!("file:{}", dist.npm_platform.display()),
        },
    });
    std::fs::write(project.join("package.json"), manifest.to_string()).expect("package.json");
    let started = Instant::now();
    succeed(
        sandbox
            .command("npm")
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .current_dir(&project),
        INSTALL_DEADLINE,
    );
    let took = started.elapsed();
    let modules = project.join("node_modules");
    NpmInstall {
        launcher: modules.join(".bin").join(BINARY),
        binary: modules.join(format!("{BINARY}-{PLATFORM}/bin/{BINARY}")),
        project,
        sandbox,
        took,
    }
}

/// A venv made by the system's python3, with the wheel installed from the packages alone.
pub struct PipInstall {
    pub sandbox: Sandbox,
    /// The venv's `bin/cli-agent-mcp`.
    pub command: PathBuf,
    pub took: Duration,
}

pub fn pip_install() -> Option<&'static PipInstall> {
    static INSTALL: OnceLock<Option<PipInstall>> = OnceLock::new();
    INSTALL
        .get_or_init(|| dist().map(|dist| install_wheel(dist, Sandbox::new("pip", &system_node()))))
        .as_ref()
}

fn install_wheel(dist: &Dist, sandbox: Sandbox) -> PipInstall {
    let venv = sandbox.dir.join("venv");
    let started = Instant::now();
    succeed(
        sandbox.command("python3").args(["-m", "venv"]).arg(&venv),
        INSTALL_DEADLINE,
    );
    let find_links = dist.wheel.parent().expect("the packages' directory");
    succeed(
        sandbox
            .command(venv.join("bin/pip"))
            .args(["install", "--quiet", "--no-index", "--find-links"])
            .arg(find_links)
            .arg(BINARY),
        INSTALL_DEADLINE,
    );
    PipInstall {
        command: venv.join("bin").join(BINARY),
        sandbox,
        took: started.elapsed(),
    }
}

/// `uvx --from <wheel> cli-agent-mcp` in a sandbox whose PATH also has uv: the program and the
/// arguments before the command's own.
pub struct Uvx {
    pub sandbox: Sandbox,
    pub uv: PathBuf,
    pub prefix: Vec<String>,
}

pub fn uvx(dist: &Dist) -> Uvx {
    let sandbox = Sandbox::new("uvx", &system_node());
    link(&dist.uv, &sandbox.bin.join("uv"));
    let prefix = ["tool", "run", "--offline", "--from"]
        .into_iter()
        .map(str::to_owned)
        .chain([dist.wheel.display().to_string(), BINARY.to_owned()])
        .collect();
    Uvx {
        uv: sandbox.bin.join("uv"),
        sandbox,
        prefix,
    }
}
