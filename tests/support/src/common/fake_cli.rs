//! The fake CLI (`tests/fixtures/fake-cli`, a Python script) as each CLI's program. On Unix it
//! is `tests/fixtures/bin/<name>`, a link whose name picks the dialect. On Windows, where a
//! script is no program and links are checked out as text, it is installed as npm installs a
//! CLI written in a script language: `<name>.cmd`, the shim npm's cmd-shim writes for a
//! `#!/usr/bin/env python` script, beside the script `<name>`, which runs the fake under that
//! name. The server starts that shim as `python <script>`, as it starts an npm-installed codex
//! as `node <script>`: no cmd.exe, the arguments exact.

use std::path::{Path, PathBuf};

/// The interpreter the Windows shims name: `python` on PATH (a Windows runner's setup-python).
const INTERPRETER: &str = "python";

/// The fake CLI as `name`: a CLI of `tests/fixtures/clis`, whose dialect it speaks.
pub fn fake_cli(name: &str) -> PathBuf {
    if cfg!(windows) {
        install(&shim_dir(), name)
    } else {
        super::repo().join("tests/fixtures/bin").join(name)
    }
}

/// A program that exists and fails whatever it is asked: `/bin/false`, on Windows a batch file
/// that exits 1 (beside the fake CLIs' shims).
pub fn failing_program() -> PathBuf {
    if !cfg!(windows) {
        return PathBuf::from("/bin/false");
    }
    let dir = shim_dir();
    std::fs::create_dir_all(&dir).expect("create the fake CLIs' dir");
    let program = dir.join("false.cmd");
    write_if_changed(&program, "@exit /b 1\r\n");
    program
}

/// Where the Windows shims of this checkout are: a temp dir of its own, shared by its tests.
fn shim_dir() -> PathBuf {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let checkout = BuildHasherDefault::<DefaultHasher>::default().hash_one(super::repo());
    std::env::temp_dir()
        .join("cli-agent-mcp-fake-clis")
        .join(format!("{checkout:016x}"))
}

/// Writes `name`'s script and shim into `dir` (unless they are there already); the shim.
fn install(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the fake CLIs' dir");
    let fake = super::repo()
        .join("tests")
        .join("fixtures")
        .join("fake-cli");
    let fake = fake.to_str().expect("a UTF-8 checkout path");
    // A Rust string's debug form is a Python string literal for a path.
    let script = format!(
        "# The fake CLI as {name} (tests/support/src/common/fake_cli.rs).\n\
         import runpy\n\
         runpy.run_path({fake:?}, run_name=\"__main__\")\n"
    );
    write_if_changed(&dir.join(name), &script);
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
/// tests of several processes install the same files.
fn write_if_changed(path: &Path, text: &str) {
    let same = |path: &Path| std::fs::read_to_string(path).is_ok_and(|old| old == text);
    if same(path) {
        return;
    }
    let name = path.file_name().expect("a file name").to_string_lossy();
    let temp = path.with_file_name(format!("{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, text).expect("write a fake CLI's file");
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
        let shim = install(dir.path(), "qwen");
        let first = std::fs::read_to_string(&shim).unwrap();
        assert_eq!(install(dir.path(), "qwen"), shim);
        assert_eq!(std::fs::read_to_string(&shim).unwrap(), first);
        let script = std::fs::read_to_string(dir.path().join("qwen")).unwrap();
        assert!(script.contains("runpy.run_path("), "{script}");
    }
}
