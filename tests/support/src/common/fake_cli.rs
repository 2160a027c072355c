//! The fake CLI (`tests/fixtures/fake-cli`, a Python script) as each CLI's program: a script
//! `<name>` that runs the fake under that name (the name picks the dialect), installed in a
//! temp dir of the checkout's. On Unix the script is the program (`#!/usr/bin/env python3`,
//! executable). On Windows, where a script is no program, it is installed as npm installs a
//! CLI written in a script language: beside it `<name>.cmd`, the shim npm's cmd-shim writes
//! for a `#!/usr/bin/env python` script, which the server starts as `python <script>` (as it
//! starts an npm-installed codex as `node <script>`: no cmd.exe, the arguments exact). So the
//! whole suite on Linux runs the script Windows runs. `tests/fixtures/bin` keeps links to the
//! fake for a person's shell.

use std::path::{Path, PathBuf};

/// The interpreter the Windows shims name: `python` on PATH (a Windows runner's setup-python).
const INTERPRETER: &str = "python";

/// The fake CLI as `name`: a CLI of `tests/fixtures/clis`, whose dialect it speaks.
pub fn fake_cli(name: &str) -> PathBuf {
    install(&install_dir(), name)
}

/// The dir of the fake CLIs, every built-in CLI's installed, each named after it: for a client
/// that points each `CAM_<CLI>_BIN` at `<dir>/<cli>` itself (the programs on Unix).
pub fn fake_cli_dir() -> PathBuf {
    let dir = install_dir();
    for name in super::cli_fixtures::names() {
        install(&dir, name);
    }
    dir
}

/// A program that exists and fails whatever it is asked: `/bin/false`, on Windows a batch file
/// that exits 1 (beside the fake CLIs' shims).
pub fn failing_program() -> PathBuf {
    if !cfg!(windows) {
        return PathBuf::from("/bin/false");
    }
    let dir = install_dir();
    std::fs::create_dir_all(&dir).expect("create the fake CLIs' dir");
    let program = dir.join("false.cmd");
    write_if_changed(&program, "@exit /b 1\r\n");
    program
}

/// Where the fake CLIs of this checkout are: a temp dir of its own, shared by its tests.
fn install_dir() -> PathBuf {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let checkout = BuildHasherDefault::<DefaultHasher>::default().hash_one(super::repo());
    std::env::temp_dir()
        .join("cli-agent-mcp-fake-clis")
        .join(format!("{checkout:016x}"))
}

/// Writes `name`'s script (and on Windows its shim) into `dir`, unless they are there
/// already; the program to run: the script, or on Windows the shim.
fn install(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the fake CLIs' dir");
    let fake = super::repo()
        .join("tests")
        .join("fixtures")
        .join("fake-cli");
    let fake = fake.to_str().expect("a UTF-8 checkout path");
    // A Rust string's debug form is a Python string literal for a path. The fake runs as the
    // main module with its own `__file__` (where its fixtures are) and this script's argv[0],
    // whose name picks the dialect (runpy would put the fake's own path there).
    let script = format!(
        "#!/usr/bin/env python3\n\
         # The fake CLI as {name} (tests/support/src/common/fake_cli.rs).\n\
         fake = {fake:?}\n\
         with open(fake, \"rb\") as source:\n    \
             code = compile(source.read(), fake, \"exec\")\n\
         exec(code, {{\"__name__\": \"__main__\", \"__file__\": fake}})\n"
    );
    let program = dir.join(name);
    write_if_changed(&program, &script);
    if !cfg!(windows) {
        return program;
    }
    let shim = dir.join(format!("{name}.cmd"));
    write_if_changed(&shim, &cmd_shim(INTERPRETER, name));
    shim
}

/// The shim cmd-shim (npm's, 8.0) writes for the script `script` beside it whose first line
/// is `#!/usr/bin/env <interpreter>`: the interpreter beside the shim if there is one, else
/// the one on PATH. Made from the shim npm wrote for codex (`#!/usr/bin/env node`), its script
/// and interpreter renamed.
pub fn cmd_shim(interpreter: &str, script: &str) -> String {
    const CODEX: &str = include_str!("../../../fixtures/windows-shims/codex.cmd");
    const CODEX_SCRIPT: &str = r"node_modules\@openai\codex\bin\codex.js";
    CODEX
        .replace(CODEX_SCRIPT, script)
        .replace("node", interpreter)
}

/// Writes `text` to `path` through a temp file and a rename, unless it holds `text` already:
/// tests of several threads and processes install the same files.
fn write_if_changed(path: &Path, text: &str) {
    let same = |path: &Path| std::fs::read_to_string(path).is_ok_and(|old| old == text);
    if same(path) {
        return;
    }
    // A temp name of this call's own: the tests of one process install at once too.
    let name = path.file_name().expect("a file name").to_string_lossy();
    let temp = path.with_file_name(super::unique(&format!("{name}.tmp")));
    std::fs::write(&temp, text).expect("write a fake CLI's file");
    // Runnable on Unix, as a program is (Windows runs a file by its extension).
    #[cfg(unix)]
    std::fs::set_permissions(&temp, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make a fake CLI's file runnable");
    if let Err(error) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        assert!(same(path), "install {}: {error}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use cli_agent_engine::locate::{ShimProgram, resolve_shim};

    use super::*;

    #[test]
    fn the_windows_shim_is_one_the_server_starts_as_the_interpreter_and_its_script() {
        let dir = Path::new("/work/fake-clis");
        let target = resolve_shim(&cmd_shim("python", "codex"), dir).expect("npm's template");
        assert_eq!(
            target.program,
            ShimProgram::Interpreter {
                beside: dir.join("python.exe"),
                name: "python".to_owned(),
            }
        );
        assert_eq!(target.args, [dir.join("codex").to_str().unwrap()]);
    }

    #[test]
    fn only_the_interpreter_and_the_script_are_renamed() {
        let python = cmd_shim("python", "codex");
        assert_eq!(python.matches("python").count(), 3, "{python}");
        assert!(!python.contains("node"), "{python}");
        assert!(python.ends_with("\"%dp0%\\codex\" %*\r\n"), "{python}");
    }

    #[test]
    fn installing_twice_leaves_the_same_files() {
        let dir = crate::common::temp_dir("cam-fake-clis");
        let program = install(dir.path(), "qwen");
        let first = std::fs::read_to_string(&program).unwrap();
        assert_eq!(install(dir.path(), "qwen"), program);
        assert_eq!(std::fs::read_to_string(&program).unwrap(), first);
    }

    #[test]
    fn the_installed_script_runs_the_fake_as_the_cli_it_is_named_after() {
        let dir = crate::common::temp_dir("cam-fake-clis");
        install(dir.path(), "copilot");
        let python = if cfg!(windows) { "python" } else { "python3" };
        let out = std::process::Command::new(python)
            .arg(dir.path().join("copilot"))
            .arg("--version")
            .env_remove("FAKE_CLI_DIALECT")
            .env_remove("FAKE_CLI_VERSION")
            .output()
            .expect("run the interpreter");
        assert!(out.status.success(), "{out:?}");
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(printed.trim(), copilot_version());
    }

    /// The version the fake prints as copilot (tests/fixtures/clis/copilot/cli.toml).
    fn copilot_version() -> String {
        crate::common::cli_fixtures::fixture(cli_agent_engine::clis::COPILOT)
            .fake
            .version
    }
}
