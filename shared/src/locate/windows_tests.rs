//! The Windows search and npm's shims, on any OS: shims as npm's `cmd-shim` writes them
//! (`tests/fixtures/windows-shims`), and a Windows environment of temp dirs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::*;

const CODEX_SHIM: &str = include_str!("../../../tests/fixtures/windows-shims/codex.cmd");
const GEMINI_SHIM: &str = include_str!("../../../tests/fixtures/windows-shims/gemini.cmd");
const NATIVE_SHIM: &str = include_str!("../../../tests/fixtures/windows-shims/native.cmd");

/// The npm prefix a shim sits in.
fn npm_dir() -> PathBuf {
    PathBuf::from("/users/u/appdata/roaming/npm")
}

fn node_beside() -> ShimProgram {
    ShimProgram::Interpreter {
        beside: npm_dir().join("node.exe"),
        name: "node".to_owned(),
    }
}

fn script(parts: &[&str]) -> String {
    let mut path = npm_dir();
    path.extend(parts);
    path.to_str().expect("utf-8").to_owned()
}

#[test]
fn npm_s_shim_of_a_node_script_resolves_to_node_and_the_script() {
    let target = resolve_shim(CODEX_SHIM, &npm_dir()).expect("a shim npm wrote");
    assert_eq!(target.program, node_beside());
    let codex = script(&["node_modules", "@openai", "codex", "bin", "codex.js"]);
    assert_eq!(target.args, [codex]);
}

#[test]
fn the_interpreter_s_own_arguments_come_before_the_script() {
    let target = resolve_shim(GEMINI_SHIM, &npm_dir()).expect("a shim npm wrote");
    assert_eq!(target.program, node_beside());
    let gemini = script(&["node_modules", "@google", "gemini-cli", "dist", "index.js"]);
    assert_eq!(target.args, ["--no-warnings=DEP0040".to_owned(), gemini]);
}

#[test]
fn a_shim_of_a_program_the_package_ships_resolves_to_that_program() {
    let target = resolve_shim(NATIVE_SHIM, &npm_dir()).expect("a shim npm wrote");
    let native = script(&["node_modules", "native-cli", "bin", "native.exe"]);
    assert_eq!(target.program, ShimProgram::File(PathBuf::from(native)));
    assert!(target.args.is_empty());
}

#[test]
fn a_shim_changed_in_any_way_is_left_to_run_as_a_batch_file() {
    let changed = [
        // Variables set before the program (`#!/usr/bin/env -S NAME=value node`).
        CODEX_SHIM.replace("CALL :find_dp0\r\n", "CALL :find_dp0\r\n@SET \"X=1\"\r\n"),
        // Something run after it.
        CODEX_SHIM.replace(" %*\r\n", " %* & calc.exe\r\n"),
        // A script path or an argument that cmd.exe would expand or split.
        CODEX_SHIM.replace("@openai", "%OTHER%"),
        CODEX_SHIM.replace("@openai", "a&b"),
        GEMINI_SHIM.replace("DEP0040", "^DEP0040"),
        // A program name that is a path, or a drive in the script's.
        CODEX_SHIM.replace("_prog=node\"", "_prog=C:\\x\\node\""),
        CODEX_SHIM.replace("%dp0%\\node_modules", "%dp0%\\C:\\node_modules"),
        // Unix line ends, a missing last line end.
        CODEX_SHIM.replace("\r\n", "\n"),
        CODEX_SHIM.trim_end().to_owned(),
        String::new(),
        "@echo off\r\nnode \"%~dp0\\cli.js\" %*\r\n".to_owned(),
    ];
    for text in changed {
        assert_eq!(resolve_shim(&text, &npm_dir()), None, "{text}");
    }
}

/// The filesystem inside `root`, every file counted as runnable (as Windows counts one whose
/// extension PATHEXT names).
struct Files<'a>(&'a Path);

impl Probe for Files<'_> {
    fn is_executable(&self, path: &Path) -> bool {
        path.starts_with(self.0) && path.is_file()
    }

    fn entries(&self, dir: &Path) -> Vec<std::ffi::OsString> {
        let listed = std::fs::read_dir(dir).into_iter().flatten().flatten();
        listed.map(|entry| entry.file_name()).collect()
    }

    fn read(&self, file: &Path) -> Option<String> {
        file.starts_with(self.0)
            .then(|| std::fs::read_to_string(file).ok())?
    }
}

/// A Windows profile under a temp dir: `APPDATA`, `LOCALAPPDATA` and `USERPROFILE` in it.
struct Profile {
    dir: tempfile::TempDir,
    env: WindowsEnv,
}

impl Profile {
    fn new(pathext: &str, extra: &[&str]) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("cam-locate-windows-")
            .tempdir()
            .expect("create temp dir");
        let root = dir.path().to_owned();
        let env = WindowsEnv::from_vars(|name| {
            let set = ["APPDATA", "LOCALAPPDATA", "USERPROFILE", "PATHEXT"]
                .iter()
                .chain(extra)
                .any(|set| *set == name);
            match name {
                _ if !set => None,
                "PATHEXT" => Some(pathext.into()),
                _ => Some(root.join(name.to_ascii_lowercase()).into_os_string()),
            }
        });
        Self { dir, env }
    }

    /// `relative` (written with `/`) under the profile, in the OS's own separators.
    fn path(&self, relative: &str) -> PathBuf {
        let mut path = self.dir.path().to_path_buf();
        path.extend(relative.split('/'));
        path
    }

    fn file(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
        std::fs::write(&path, text).expect("write file");
        path
    }

    fn search(&self, binary: &str, path: &OsStr) -> Result<(PathBuf, CliSource), Vec<String>> {
        let home = self.path("userprofile");
        search(binary, self.places(&home, path), &Files(self.dir.path()))
    }

    fn places<'a>(&'a self, home: &'a Path, path: &'a OsStr) -> Places<'a> {
        Places {
            home: Some(home),
            path,
            login: &LoginPath::Off,
            windows: Some(&self.env),
        }
    }
}

#[test]
fn a_bare_name_takes_pathext_s_extensions_in_order_and_npm_s_sh_script_never_counts() {
    let profile = Profile::new(".COM;.EXE;.BAT;.CMD", &[]);
    profile.file("appdata/npm/codex", "#!/bin/sh\n");
    let shim = profile.file("appdata/npm/codex.cmd", CODEX_SHIM);
    assert_eq!(
        profile.search("codex", OsStr::new("")).expect("found"),
        (shim, CliSource::Dir(r"%APPDATA%\npm"))
    );
    let exe = profile.file("appdata/npm/codex.exe", "MZ");
    assert_eq!(
        profile.search("codex", OsStr::new("")).expect("found").0,
        exe
    );
    let named = profile.search("codex.cmd", OsStr::new("")).expect("found");
    assert_eq!(named.0, profile.path("appdata/npm/codex.cmd"));
    let only_cmd = Profile::new(".CMD", &[]);
    only_cmd.file("appdata/npm/codex.exe", "MZ");
    assert!(only_cmd.search("codex", OsStr::new("")).is_err());
}

#[test]
fn the_windows_installers_dirs_come_after_path_and_each_unset_variable_is_named() {
    let profile = Profile::new(".EXE;.CMD", &[]);
    let local = profile.file("userprofile/.local/bin/claude.exe", "MZ");
    profile.file("localappdata/pnpm/claude.cmd", CODEX_SHIM);
    assert_eq!(
        profile.search("claude", OsStr::new("")).expect("found"),
        (local, CliSource::Dir(r"%USERPROFILE%\.local\bin"))
    );
    let on_path = profile.file("path/claude.exe", "MZ");
    let path = profile.path("path").into_os_string();
    assert_eq!(
        profile.search("claude", &path).expect("found"),
        (on_path, CliSource::Path)
    );
    let looked = profile
        .search("gemini", OsStr::new(""))
        .expect_err("nowhere");
    assert_eq!(looked[0], r"%NVM_SYMLINK% (NVM_SYMLINK is not set)");
    assert!(looked.contains(&r"%SCOOP%\shims (SCOOP is not set)".to_owned()));
    assert!(looked.contains(&r"%APPDATA%\npm".to_owned()));
    assert!(looked.iter().all(|place| !place.contains("login shell")));
}

#[test]
fn volta_scoop_and_nvm_windows_are_searched_where_their_variables_say() {
    let profile = Profile::new(".EXE;.CMD", &["VOLTA_HOME", "SCOOP", "NVM_SYMLINK"]);
    let scoop = profile.file("scoop/shims/opencode.exe", "MZ");
    profile.file("userprofile/scoop/shims/opencode.exe", "MZ");
    assert_eq!(
        profile.search("opencode", OsStr::new("")).expect("found"),
        (scoop, CliSource::Dir(r"%SCOOP%\shims"))
    );
    let volta = profile.file("volta_home/bin/opencode.exe", "MZ");
    assert_eq!(
        profile.search("opencode", OsStr::new("")).expect("found"),
        (volta, CliSource::Dir(r"%VOLTA_HOME%\bin"))
    );
    let nvm = profile.file("nvm_symlink/opencode.cmd", CODEX_SHIM);
    assert_eq!(
        profile.search("opencode", OsStr::new("")).expect("found"),
        (nvm, CliSource::Dir("%NVM_SYMLINK%"))
    );
}

#[test]
fn nvm_windows_other_node_versions_are_searched_newest_first_after_the_active_one() {
    let profile = Profile::new(".CMD", &["NVM_SYMLINK", "NVM_HOME"]);
    profile.file("nvm_home/v20.19.0/qwen.cmd", CODEX_SHIM);
    let newest = profile.file("nvm_home/v22.11.0/qwen.cmd", CODEX_SHIM);
    profile.file("nvm_home/v9.11.2/qwen.cmd", CODEX_SHIM);
    profile.file("appdata/npm/qwen.cmd", CODEX_SHIM);
    let version = "v22.11.0".to_owned();
    assert_eq!(
        profile.search("qwen", OsStr::new("")).expect("found"),
        (newest, CliSource::Nvm { version })
    );
    let active = profile.file("nvm_symlink/qwen.cmd", CODEX_SHIM);
    assert_eq!(
        profile.search("qwen", OsStr::new("")).expect("found"),
        (active, CliSource::Dir("%NVM_SYMLINK%"))
    );
    let looked = profile.search("pi", OsStr::new("")).expect_err("nowhere");
    assert_eq!(looked[..2], [r"%NVM_SYMLINK%", r"%NVM_HOME%\*"]);
}

#[test]
fn the_npmrc_prefix_is_the_dir_of_the_shims_on_windows() {
    let profile = Profile::new(".CMD", &[]);
    let prefix = profile.path("userprofile/npm-prefix");
    let npmrc = format!("prefix={}\n", prefix.display());
    profile.file("userprofile/.npmrc", &npmrc);
    let shim = profile.file("userprofile/npm-prefix/codex.cmd", CODEX_SHIM);
    profile.file("appdata/npm/codex.cmd", CODEX_SHIM);
    assert_eq!(
        profile.search("codex", OsStr::new("")).expect("found"),
        (shim, CliSource::NpmrcPrefix)
    );
}

#[test]
fn a_found_npm_shim_starts_as_node_and_its_script_beside_or_on_path() {
    let profile = Profile::new(".EXE;.CMD", &[]);
    let shim = profile.file("appdata/npm/codex.cmd", CODEX_SHIM);
    let home = profile.path("userprofile");
    let path_dir = profile.path("program files/nodejs");
    let on_path = profile.file("program files/nodejs/node.exe", "MZ");
    let places = profile.places(&home, path_dir.as_os_str());
    let probe = Files(profile.dir.path());
    let script = profile.path("appdata/npm/node_modules/@openai/codex/bin/codex.js");
    let script = script.to_str().expect("utf-8").to_owned();
    assert_eq!(
        start_of(&shim, places, &probe),
        Start::Shim {
            program: on_path,
            args: vec![script.clone()],
        }
    );
    let beside = profile.file("appdata/npm/node.exe", "MZ");
    let start = start_of(&shim, places, &probe);
    assert_eq!(
        start,
        Start::Shim {
            program: beside.clone(),
            args: vec![script.clone()],
        }
    );
    let mut line = CommandLine::new(&shim);
    line.args(["exec", "--json", "-"]);
    start.apply(&mut line);
    assert_eq!(line.program, beside.as_os_str());
    assert_eq!(line.args, [script.as_str(), "exec", "--json", "-"]);
}

#[test]
fn a_batch_file_npm_did_not_write_or_without_its_node_runs_as_a_batch_file() {
    let profile = Profile::new(".EXE;.CMD", &[]);
    let home = profile.path("userprofile");
    let places = profile.places(&home, OsStr::new(""));
    let probe = Files(profile.dir.path());
    let hand_written = profile.file("bin/tool.bat", "@echo off\r\nnode x.js %*\r\n");
    assert_eq!(start_of(&hand_written, places, &probe), Start::BatchFile);
    let no_node = profile.file("appdata/npm/codex.cmd", CODEX_SHIM);
    assert_eq!(start_of(&no_node, places, &probe), Start::BatchFile);
    assert!(Start::BatchFile.note().expect("said").contains("cmd.exe"));
    let exe = profile.file("bin/tool.exe", "MZ");
    assert_eq!(start_of(&exe, places, &probe), Start::AsFound);
    let unix = Places {
        windows: None,
        ..places
    };
    assert_eq!(start_of(&no_node, unix, &probe), Start::AsFound);
}

#[test]
fn a_batch_file_whose_path_holds_a_percent_or_an_argument_a_line_break_is_refused() {
    let line = |program: &str, arg: &str| {
        let mut line = CommandLine::new(Path::new(program));
        line.arg("exec").arg(arg);
        line
    };
    let odd = r"C:\Users\Ann Lee\work & play ^ !\bin\codex.cmd";
    assert_eq!(
        batch_file_refusal(&line(odd, "say \"hi\" & 5% ^ | !")),
        None
    );
    let percent = batch_file_refusal(&line(r"C:\100% sure\codex.cmd", "x"));
    assert!(percent.expect("refused").contains('%'));
    for arg in ["one\ntwo", "one\rtwo"] {
        let broken = batch_file_refusal(&line(odd, arg));
        assert!(broken.expect("refused").contains("line break"), "{arg:?}");
    }
}
