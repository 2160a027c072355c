//! The search over temp dirs (never the real home), and the login shell asked through fake
//! shells.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::login_shell;
use super::*;

/// A directory under the system's temp dir to lay a machine's files out in, removed when
/// dropped.
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new(tag: &str) -> Self {
        let prefix = format!("cam-locate-{tag}-");
        let dir = tempfile::Builder::new().prefix(&prefix).tempdir();
        Self(dir.expect("create temp dir"))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// An executable at `relative`, its dirs made.
    fn executable(&self, relative: &str) -> PathBuf {
        self.file(relative, "#!/bin/sh\n", 0o755)
    }

    fn file(&self, relative: &str, text: &str, mode: u32) -> PathBuf {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
        std::fs::write(&path, text).expect("write file");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        path
    }
}

/// The real filesystem inside `root` only, so a CLI installed on this machine
/// (`/usr/local/bin/codex`) never answers a test.
struct Within<'a>(&'a Path);

impl Probe for Within<'_> {
    fn is_executable(&self, path: &Path) -> bool {
        path.starts_with(self.0) && RealFs.is_executable(path)
    }

    fn entries(&self, dir: &Path) -> Vec<OsString> {
        match dir.starts_with(self.0) {
            true => RealFs.entries(dir),
            false => Vec::new(),
        }
    }

    fn read(&self, file: &Path) -> Option<String> {
        file.starts_with(self.0).then(|| RealFs.read(file))?
    }
}

fn find(tmp: &Scratch, path: &str, login: &LoginPath) -> Result<(PathBuf, CliSource), Vec<String>> {
    let home = tmp.path().join("home");
    let places = Places {
        home: Some(&home),
        path: OsStr::new(path),
        login,
        windows: None,
    };
    search("codex", places, &Within(tmp.path()))
}

fn nvm(version: &str) -> CliSource {
    CliSource::Nvm {
        version: version.to_owned(),
    }
}

#[test]
fn the_newest_nvm_node_version_wins_by_number_not_by_name() {
    let tmp = Scratch::new("nvm");
    for version in ["v18.0.0", "v9.11.2", "v22.11.0", "v22.2.0"] {
        tmp.executable(&format!("home/.nvm/versions/node/{version}/bin/codex"));
    }
    tmp.executable("home/.nvm/versions/node/system/bin/codex");
    tmp.executable("home/.local/bin/codex");
    let (path, source) = find(&tmp, "/usr/bin:/bin", &LoginPath::Off).expect("found");
    assert_eq!(source, nvm("v22.11.0"));
    assert_eq!(
        path,
        tmp.path()
            .join("home/.nvm/versions/node/v22.11.0/bin/codex")
    );
}

#[test]
fn a_node_version_without_the_binary_is_passed_over() {
    let tmp = Scratch::new("nvm-gap");
    std::fs::create_dir_all(tmp.path().join("home/.nvm/versions/node/v24.0.0/bin")).expect("mkdir");
    tmp.executable("home/.nvm/versions/node/v20.1.0/bin/codex");
    let (_, source) = find(&tmp, "", &LoginPath::Off).expect("found");
    assert_eq!(source, nvm("v20.1.0"));
}

#[test]
fn the_servers_path_then_the_login_shells_path_come_before_any_install_dir() {
    let tmp = Scratch::new("order");
    tmp.executable("home/.nvm/versions/node/v22.0.0/bin/codex");
    let on_login = tmp.executable("login/bin/codex");
    let on_path = tmp.executable("path/bin/codex");
    let login = LoginPath::Known(tmp.path().join("login/bin").into_os_string());
    let path = format!("relative/bin::{}", tmp.path().join("path/bin").display());
    assert_eq!(
        find(&tmp, &path, &login).expect("found"),
        (on_path, CliSource::Path)
    );
    assert_eq!(
        find(&tmp, "/usr/bin", &login).expect("found"),
        (on_login, CliSource::LoginShell)
    );
}

#[test]
fn install_dirs_are_tried_in_their_order_and_only_executables_count() {
    let tmp = Scratch::new("dirs");
    tmp.file("home/.volta/bin/codex", "not executable", 0o644);
    std::fs::create_dir_all(tmp.path().join("home/.npm-global/bin/codex")).expect("a dir");
    let local = tmp.executable("home/.local/bin/codex");
    tmp.executable("home/.bun/bin/codex");
    assert_eq!(
        find(&tmp, "/usr/bin", &LoginPath::NoAnswer).expect("found"),
        (local, CliSource::Dir("~/.local/bin"))
    );
}

#[test]
fn the_npm_prefix_of_npmrc_is_searched_after_nvm() {
    let tmp = Scratch::new("npmrc");
    let prefixed = tmp.executable("home/npm-prefix/bin/codex");
    tmp.executable("home/.local/bin/codex");
    for npmrc in [
        "; a comment\nprefix = ~/npm-prefix\n",
        "prefix=${HOME}/npm-prefix",
        "prefix=\"$HOME/npm-prefix\"",
    ] {
        tmp.file("home/.npmrc", npmrc, 0o644);
        assert_eq!(
            find(&tmp, "", &LoginPath::Off).expect("found"),
            (prefixed.clone(), CliSource::NpmrcPrefix),
            "{npmrc}"
        );
    }
    tmp.file("home/.npmrc", "prefix=relative/dir\n", 0o644);
    assert_eq!(
        find(&tmp, "", &LoginPath::Off).expect("found").1,
        CliSource::Dir("~/.local/bin")
    );
}

#[test]
fn a_missing_cli_lists_every_place_looked() {
    let tmp = Scratch::new("missing");
    tmp.file("home/.npmrc", "prefix=~/pfx", 0o644);
    let looked = find(&tmp, "/usr/bin:/bin", &LoginPath::Off).expect_err("nowhere");
    assert_eq!(
        looked[..3],
        [
            "the login shell's PATH (not asked: CAM_NO_LOGIN_SHELL)".to_owned(),
            "~/.nvm/versions/node/*/bin".to_owned(),
            "~/pfx/bin (the npm prefix of ~/.npmrc)".to_owned(),
        ]
    );
    assert_eq!(
        looked[3..],
        INSTALL_DIRS
            .iter()
            .map(|dir| dir.to_string())
            .collect::<Vec<_>>()
    );
    for dir in [
        "~/.local/bin",
        "~/.claude/local",
        "/opt/homebrew/bin",
        "~/.bun/bin",
    ] {
        assert!(looked.iter().any(|place| place == dir), "{dir}: {looked:?}");
    }
    let login = LoginPath::Known("/nowhere".into());
    let looked = find(&tmp, "", &login).expect_err("nowhere");
    assert_eq!(looked[0], "the login shell's PATH");
}

#[test]
fn without_a_home_only_the_absolute_dirs_are_searched() {
    let tmp = Scratch::new("no-home");
    let places = Places {
        home: None,
        path: OsStr::new(""),
        login: &LoginPath::NoAnswer,
        windows: None,
    };
    let looked = search("codex", places, &Within(tmp.path())).expect_err("nowhere");
    assert!(looked.contains(&"no dir under ~ (HOME is not set)".to_owned()));
    assert!(
        looked.iter().all(|place| !place.starts_with("~/")),
        "{looked:?}"
    );
    assert!(looked.contains(&"/opt/homebrew/bin".to_owned()));
}

#[test]
fn node_versions_parse_as_numbers() {
    assert_eq!(node_version("v22.11.0"), Some((22, 11, 0)));
    assert_eq!(node_version("18.20.4"), Some((18, 20, 4)));
    assert_eq!(node_version("v23.0.0-rc.1"), Some((23, 0, 0)));
    assert!(node_version("v22.11.0") > node_version("v9.99.99"));
    for name in ["system", "v22", "v22.x.0", ".DS_Store", "v22.1."] {
        assert_eq!(node_version(name), None, "{name}");
    }
}

#[test]
fn a_cli_found_off_path_runs_with_its_dir_first_then_path_then_the_login_shells_dirs() {
    let login = LoginPath::Known("/opt/homebrew/bin:/usr/bin".into());
    let path = cli_search_path(
        Path::new("/h/.nvm/bin"),
        OsStr::new("/usr/bin:/bin"),
        &login,
    );
    assert_eq!(
        path.as_deref(),
        Some(OsStr::new("/h/.nvm/bin:/usr/bin:/bin:/opt/homebrew/bin"))
    );
    let path = cli_search_path(
        Path::new("/usr/bin"),
        OsStr::new("/usr/bin"),
        &LoginPath::Off,
    );
    assert_eq!(path.as_deref(), Some(OsStr::new("/usr/bin")));
}

#[test]
fn doctor_s_words_name_the_dir_and_the_kind_of_place() {
    let home = Path::new("/home/u");
    let found = |path: &str, source| FoundCli {
        path: PathBuf::from(path),
        source,
        dir: search::tilde(Path::new(path).parent().expect("a dir"), home),
        start: Start::AsFound,
        search_path: None,
    };
    let nvm_found = found(
        "/home/u/.nvm/versions/node/v22.1.0/bin/codex",
        nvm("v22.1.0"),
    );
    assert_eq!(
        nvm_found.describe().as_deref(),
        Some("found in ~/.nvm/versions/node/v22.1.0/bin (nvm), not on PATH")
    );
    assert_eq!(nvm_found.source.to_string(), "nvm node v22.1.0");
    let local = found("/home/u/.local/bin/claude", CliSource::Dir("~/.local/bin"));
    assert_eq!(
        local.describe().as_deref(),
        Some("found in ~/.local/bin, not on PATH")
    );
    let shell = found("/opt/x/bin/gemini", CliSource::LoginShell);
    assert_eq!(
        shell.describe().as_deref(),
        Some("found in /opt/x/bin (login shell PATH), not on PATH")
    );
    assert_eq!(found("/usr/bin/codex", CliSource::Path).describe(), None);
}

/// A fake login shell: `body`, then the command it is given (its last argument).
fn fake_shell(tmp: &Scratch, body: &str) -> PathBuf {
    let script = format!("#!/bin/sh\nfor last; do :; done\n{body}\n");
    tmp.file("shell", &script, 0o755)
}

fn gone(pid_file: &Path) -> bool {
    let pid: i32 = std::fs::read_to_string(pid_file)
        .expect("the shell wrote its pid")
        .trim()
        .parse()
        .expect("a pid");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) == Err(nix::errno::Errno::ESRCH)
}

#[test]
fn the_login_shell_s_path_is_read_between_the_marks_whatever_its_rc_files_print() {
    let tmp = Scratch::new("shell");
    let shell = fake_shell(
        &tmp,
        "echo 'Welcome!'; PATH=/from/rc/bin:/usr/bin:/bin; eval \"$last\"; echo bye",
    );
    let path = login_shell::ask(&shell, Some(tmp.path()), Duration::from_secs(30));
    assert_eq!(
        path.as_deref(),
        Some(OsStr::new("/from/rc/bin:/usr/bin:/bin"))
    );
}

#[test]
fn a_shell_that_answers_and_lingers_is_killed_at_its_answer() {
    let tmp = Scratch::new("linger");
    let pid_file = tmp.path().join("pid");
    let body = format!(
        "echo $$ > '{}'; sleep 30 & PATH=/x/bin; eval \"$last\"; wait",
        pid_file.display()
    );
    let shell = fake_shell(&tmp, &body);
    let started = Instant::now();
    let path = login_shell::ask(&shell, None, Duration::from_secs(25));
    assert_eq!(path.as_deref(), Some(OsStr::new("/x/bin")));
    assert!(started.elapsed() < Duration::from_secs(25), "waited it out");
    assert!(gone(&pid_file), "the shell survived");
}

#[test]
fn a_shell_that_never_answers_is_killed_at_the_deadline() {
    let tmp = Scratch::new("hang");
    let pid_file = tmp.path().join("pid");
    let body = format!(
        "echo $$ > '{}'; echo no path; exec sleep 30",
        pid_file.display()
    );
    let shell = fake_shell(&tmp, &body);
    let started = Instant::now();
    let path = login_shell::ask(&shell, None, Duration::from_secs(1));
    assert_eq!(path, None);
    assert!(started.elapsed() < Duration::from_secs(20), "not killed");
    if pid_file.exists() {
        assert!(gone(&pid_file), "the shell survived");
    }
}

#[test]
fn a_shell_that_fails_or_is_missing_gives_no_path() {
    let tmp = Scratch::new("fail");
    let shell = fake_shell(&tmp, "exit 1");
    assert_eq!(
        login_shell::ask(&shell, None, Duration::from_secs(30)),
        None
    );
    let missing = tmp.path().join("no-such-shell");
    assert_eq!(
        login_shell::ask(&missing, None, Duration::from_secs(30)),
        None
    );
}
