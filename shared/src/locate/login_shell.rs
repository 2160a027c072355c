//! The PATH the user's login shell sets up. A host started from a desktop gives its servers a
//! bare PATH (`/usr/bin:/bin`); the user's shell knows where nvm, Homebrew and the rest put
//! their binaries. It is asked once per process, and only when a CLI is not on our PATH:
//! `$SHELL -i -l -c` (interactive too, since nvm and most installers set PATH in `.zshrc` or
//! `.bashrc`), with stdin closed, stdout bounded, in a session of its own (no terminal to
//! stop on, one group to kill) and killed after [`DEADLINE`] or once it has answered.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How long a shell may take over its rc files: long enough for a heavy `.zshrc`, short
/// enough that a first call barely notices.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// The most of the shell's output read; a PATH is far shorter.
const OUTPUT_LIMIT: u64 = 64 * 1024;

/// Brackets the PATH in the output, so whatever the rc files print around it is left out.
const MARK: &str = "__CAM_LOGIN_PATH__";

/// The login shell's PATH, asked the first time only; `None` when it gave none.
pub fn cached() -> Option<OsString> {
    static ANSWER: OnceLock<Option<OsString>> = OnceLock::new();
    ANSWER
        .get_or_init(|| {
            let shell = user_shell()?;
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let answer = ask(&shell, home.as_deref(), DEADLINE);
            match &answer {
                Some(path) => tracing::debug!(shell = %shell.display(), path = %path.to_string_lossy(), "login shell PATH"),
                None => tracing::info!(shell = %shell.display(), "the login shell gave no PATH"),
            }
            answer
        })
        .clone()
}

/// `$SHELL` when absolute, else the user's shell in the password database.
fn user_shell() -> Option<PathBuf> {
    let from_env = std::env::var_os("SHELL")
        .map(PathBuf::from)
        .filter(|shell| shell.is_absolute());
    from_env.or_else(|| {
        let user = nix::unistd::User::from_uid(nix::unistd::getuid()).ok()??;
        Some(user.shell).filter(|shell| shell.is_absolute())
    })
}

/// Run `shell -i -l -c` to print its PATH, in `home` (where a terminal's shell starts, so no
/// project's `.nvmrc` or `.envrc` changes the answer); `None` when it gives none within
/// `deadline`. Whatever it started is killed before this returns.
pub fn ask(shell: &Path, home: Option<&Path>, deadline: Duration) -> Option<OsString> {
    let script = format!("printf '%s%s%s' {MARK} \"$PATH\" {MARK}");
    let mut command = Command::new(shell);
    command
        .args(["-i", "-l", "-c", &script])
        .current_dir(home.filter(|home| home.is_dir()).unwrap_or(Path::new("/")))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    let mut child = command.spawn().ok()?;
    let group = i32::try_from(child.id()).ok().map(Pid::from_raw);
    let stdout = child.stdout.take();
    let (sender, answer) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(stdout.map(read_answer).unwrap_or_default());
    });
    let output = answer.recv_timeout(deadline).ok();
    // The leader is not reaped yet, so its group cannot have been reused.
    if let Some(group) = group {
        let _ = killpg(group, Signal::SIGKILL);
    }
    let _ = child.wait();
    marked_path(&output?)
}

/// The shell's output up to its answer, its end or [`OUTPUT_LIMIT`]: a process the rc files
/// left in the background may hold the pipe open long after the answer came.
fn read_answer(stdout: impl Read) -> Vec<u8> {
    let mut stdout = stdout.take(OUTPUT_LIMIT);
    let mut output = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        match stdout.read(&mut chunk) {
            Ok(0) => return output,
            Ok(read) => output.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return output,
        }
        if marked(&output).is_some() {
            return output;
        }
    }
}

/// The PATH between the two marks, when it is not empty.
fn marked_path(output: &[u8]) -> Option<OsString> {
    use std::os::unix::ffi::OsStrExt;
    let path = marked(output)?;
    (!path.is_empty()).then(|| std::ffi::OsStr::from_bytes(path).to_owned())
}

/// What lies between the first two marks.
fn marked(output: &[u8]) -> Option<&[u8]> {
    let mark = MARK.as_bytes();
    let start = memchr::memmem::find(output, mark)? + mark.len();
    let length = memchr::memmem::find(&output[start..], mark)?;
    Some(&output[start..start + length])
}
