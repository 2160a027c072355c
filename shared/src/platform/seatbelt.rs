//! The Seatbelt confinement of one run on macOS, the counterpart of Landlock on Linux: read
//! and run anything, write only beneath the writable roots and a few device files.
//!
//! The profile text is fixed but for the number of roots; the roots themselves travel as
//! `-D WRITABLE_<i>=<path>` parameters, so no path can change what the profile says. Seatbelt
//! matches resolved paths (`/var`, `/tmp` and `/etc` are links into `/private`), so roots must
//! be [`canonical`]: any other spelling silently grants nothing. Sandboxes do not nest: a CLI
//! started under this profile cannot apply a Seatbelt sandbox of its own.
//!
//! Platform-neutral (std only), so it is unit-tested on Linux.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

/// `sandbox-exec` by absolute path, so the run's `PATH` cannot swap it.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Everything not allowed below is denied; what follows opens all but writing files.
const HEADER: &str = "(version 1)\n(deny default)\n";

/// Reads are free, as on Linux: CLIs read the user's config, toolchains and the system.
const READS: &str = "(allow file-read*)\n";

/// Children inherit the sandbox, so exec and fork are safe; signals, process information and
/// task ports stay among the run's own processes.
const PROCESSES: &str = "\
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow mach-priv-task-port (target same-sandbox))
";

/// What runtimes ask at start: libuv reads CPUs and memory (sysctl, `host_processor_info`),
/// V8 sets a per-thread sysctl and Java reads its CPU type through one the kernel counts as a
/// write; system frameworks read IOKit properties and preferences. Preference writes stay
/// denied: cfprefsd would write `~/Library/Preferences` on the run's behalf.
const SYSTEM: &str = "\
(allow sysctl-read)
(allow sysctl-write (sysctl-name \"kern.grade_cputype\") (sysctl-name \"kern.tcsm_enable\"))
(allow mach-host*)
(allow iokit-open)
(allow iokit-get-properties)
(allow user-preference-read)
";

/// System services (user lookup, TLS trust, DNS, logging) and POSIX shared memory and
/// semaphores, unrestricted as IPC is on Linux. Apple Events and LaunchServices opens stay
/// denied: they would let another app write for the run.
const IPC: &str = "\
(allow mach-lookup)
(allow mach-register)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow distributed-notification-post)
";

/// The network is not restricted: the CLIs need their model APIs (nor is it on Linux).
const NETWORK: &str = "\
(allow network*)
(allow system-socket)
";

/// Opening pseudo-terminals, for CLIs that run their tools in a pty.
const PTY: &str = "(allow pseudo-tty)\n";

/// Device files every CLI may write and ioctl: the null sinks, the terminal and ptys, the
/// descriptor aliases (`/dev/stdout` resolves to `/dev/fd/1`), the random devices, and the
/// dtrace helper node registers its probes with. Data and ioctl only, as Landlock grants on a
/// file: a device can be written, never removed or renamed.
const DEVICES: &str = "\
(allow file-write-data file-ioctl
  (literal \"/dev/null\")
  (literal \"/dev/zero\")
  (literal \"/dev/random\")
  (literal \"/dev/urandom\")
  (literal \"/dev/tty\")
  (literal \"/dev/dtracehelper\")
  (literal \"/dev/ptmx\")
  (regex #\"^/dev/ttys[0-9]+$\")
  (subpath \"/dev/fd\"))
";

/// The Seatbelt confinement of one run: a profile text that holds no path, and the writable
/// roots passed as `-D` parameters, so no path can change the profile's meaning.
#[derive(Clone, Debug)]
pub struct SeatbeltProfile {
    /// The profile: fixed text plus one `file-write*` rule per root, naming its parameter.
    text: String,
    /// Each root's parameter name (`WRITABLE_<i>`) and path, in the order given.
    params: Vec<(String, PathBuf)>,
}

impl SeatbeltProfile {
    /// The profile for already-canonical, absolute writable roots (see [`canonical`]).
    pub fn new(writable: &[PathBuf]) -> Self {
        let params: Vec<(String, PathBuf)> = writable
            .iter()
            .enumerate()
            .map(|(i, root)| (format!("WRITABLE_{i}"), root.clone()))
            .collect();
        let mut text = [HEADER, READS, PROCESSES, SYSTEM, IPC, NETWORK, PTY, DEVICES].concat();
        for (name, _) in &params {
            // One rule per root: an `(allow file-write*)` with no filter would open every path.
            text.push_str("(allow file-write* (subpath (param \"");
            text.push_str(name);
            text.push_str("\")))\n");
        }
        Self { text, params }
    }

    /// The profile text, passed to `sandbox-exec -p`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Each writable root's parameter name and path, in the order given to [`Self::new`].
    pub fn params(&self) -> &[(String, PathBuf)] {
        &self.params
    }

    /// The command line that runs `program args` under this profile: [`SANDBOX_EXEC`] with
    /// `-p TEXT -D WRITABLE_0=/abs … -- program args…`. The `--` ends sandbox-exec's options,
    /// so a program or argument starting with `-` is never read as one.
    pub fn wrap<A: AsRef<OsStr>>(&self, program: &OsStr, args: &[A]) -> (PathBuf, Vec<OsString>) {
        let mut line: Vec<OsString> = vec!["-p".into(), self.text.as_str().into()];
        for (name, root) in &self.params {
            line.push("-D".into());
            line.push(definition(name, root));
        }
        line.push("--".into());
        line.push(program.to_owned());
        line.extend(args.iter().map(|arg| arg.as_ref().to_owned()));
        (PathBuf::from(SANDBOX_EXEC), line)
    }
}

/// `NAME=path`, built as an `OsString` so a path that is not UTF-8 passes unchanged.
fn definition(name: &str, root: &Path) -> OsString {
    let mut arg = OsString::from(name);
    arg.push("=");
    arg.push(root);
    arg
}

/// The path Seatbelt will match for `path`: absolute, with every link resolved. A path that
/// does not exist yet (a directory made later) keeps its missing tail, placed under its
/// nearest existing ancestor's real path. Fails only when `path` is empty or the current
/// directory cannot be read for a relative one.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    Ok(canonical_with(&absolute, |prefix| {
        std::fs::canonicalize(prefix)
    }))
}

/// [`canonical`] with the link resolver given, so the macOS layout is testable on Linux.
///
/// Walks `path` one component at a time, resolving each prefix: a `..` then pops a real
/// directory or a missing one, never a link, and a missing middle is no reason to stop
/// resolving what follows it (`missing/../link`).
fn canonical_with(path: &Path, resolve: impl Fn(&Path) -> io::Result<PathBuf>) -> PathBuf {
    let mut real = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                real.pop();
            }
            other => {
                real.push(other);
                // A prefix that cannot be resolved (missing, unreadable) stays as written.
                if let Ok(resolved) = resolve(&real) {
                    real = resolved;
                }
            }
        }
    }
    real
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The profile's top-level forms, split by parenthesis depth (no string in it holds one).
    fn rules(text: &str) -> Vec<&str> {
        let (mut forms, mut depth, mut start) = (Vec::new(), 0usize, 0usize);
        for (i, c) in text.char_indices() {
            match c {
                '(' if depth == 0 => {
                    start = i;
                    depth = 1;
                }
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        forms.push(&text[start..=i]);
                    }
                }
                _ => {}
            }
        }
        assert_eq!(depth, 0, "unbalanced profile:\n{text}");
        forms
    }

    /// Whether a rule can grant a write: it names a file-write operation or a file wildcard.
    fn grants_writes(rule: &str) -> bool {
        rule.starts_with("(allow")
            && (rule.contains("file-write") || rule.contains("file*") || rule.contains("default"))
    }

    /// The quoted strings of a rule, e.g. the paths of its filters.
    fn quoted(rule: &str) -> Vec<&str> {
        rule.split('"').skip(1).step_by(2).collect()
    }

    /// Asserts that `profile` lets its process write beneath exactly `roots` (each through its
    /// own parameter) and the device files, and nowhere else.
    fn assert_writes_exactly(profile: &SeatbeltProfile, roots: &[PathBuf]) {
        let writers: Vec<&str> = rules(profile.text())
            .into_iter()
            .filter(|r| grants_writes(r))
            .collect();
        assert_eq!(writers.len(), roots.len() + 1, "{writers:#?}");
        assert_eq!(writers[0], DEVICES.trim_end());
        for path in quoted(writers[0]) {
            assert!(
                path.starts_with("/dev/") || path.starts_with("^/dev/"),
                "{path}"
            );
        }
        for (i, rule) in writers[1..].iter().enumerate() {
            assert_eq!(
                *rule,
                format!("(allow file-write* (subpath (param \"WRITABLE_{i}\")))")
            );
        }
        let expected: Vec<(String, PathBuf)> = roots
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("WRITABLE_{i}"), r.clone()))
            .collect();
        assert_eq!(profile.params(), expected.as_slice());
        assert!(profile.text().starts_with("(version 1)\n(deny default)\n"));
    }

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn profile_grants_writes_only_beneath_each_root_and_the_devices() {
        let none = paths(&[]);
        let read_only = paths(&[
            "/private/var/folders/x/T/cam-run-1",
            "/Users/me/.claude",
            "/Users/me/Library/Caches/claude-cli-nodejs",
            "/Users/me/Library/Application Support/cli-agent-mcp/runs/1",
        ]);
        let workspace_write = [
            read_only.clone(),
            paths(&[
                "/Users/me/proj/.cam/worktrees/run-1",
                "/Users/me/proj/.git/worktrees/run-1",
                "/Users/me/proj/.git/objects",
                "/Users/me/proj/.git/refs",
                "/Users/me/proj/.git/logs",
            ]),
        ]
        .concat();
        for roots in [none, read_only, workspace_write] {
            assert_writes_exactly(&SeatbeltProfile::new(&roots), &roots);
        }
    }

    #[test]
    fn profile_opens_what_a_cli_needs_to_start_but_file_writes() {
        let text = SeatbeltProfile::new(&paths(&["/Users/me/proj"]))
            .text()
            .to_owned();
        for rule in [
            "(allow file-read*)",
            "(allow process-exec)",
            "(allow process-fork)",
            "(allow signal (target same-sandbox))",
            "(allow process-info* (target same-sandbox))",
            "(allow sysctl-read)",
            "(allow mach-lookup)",
            "(allow ipc-posix-shm)",
            "(allow network*)",
            "(allow pseudo-tty)",
        ] {
            assert!(rules(&text).contains(&rule), "missing {rule}");
        }
        assert!(!text.contains("(allow default"));
    }

    #[test]
    fn symlinked_dir_and_path_with_spaces_canonicalize_to_their_real_path() {
        let tmp = tempfile::Builder::new()
            .prefix("cam-seatbelt-links-")
            .tempdir()
            .expect("create temp dir");
        let real = tmp.path().join("my project (copy)");
        std::fs::create_dir(&real).expect("create dir");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let real = std::fs::canonicalize(&real).expect("canonicalize");

        assert_eq!(canonical(&link).expect("canonical link"), real);
        assert_eq!(
            canonical(&tmp.path().join("my project (copy)")).expect("spaces"),
            real
        );
        let later = link.join("not yet").join("run-1");
        assert_eq!(
            canonical(&later).expect("missing tail"),
            real.join("not yet/run-1")
        );
        let back = link.join("not yet/../../link");
        assert_eq!(canonical(&back).expect("dot-dot"), real);
    }

    /// A resolver with macOS's layout: `/var`, `/tmp` and `/etc` link into `/private`, and
    /// only the directories in `existing` (real paths) exist.
    fn macos(existing: &'static [&'static str]) -> impl Fn(&Path) -> io::Result<PathBuf> {
        move |path| {
            let linked = ["/var", "/tmp", "/etc"]
                .iter()
                .find(|l| path.starts_with(l));
            let real = match linked {
                Some(_) => Path::new("/private").join(path.strip_prefix("/").unwrap_or(path)),
                None => path.to_owned(),
            };
            if existing.iter().any(|e| Path::new(e) == real) {
                Ok(real)
            } else {
                Err(io::ErrorKind::NotFound.into())
            }
        }
    }

    #[test]
    fn macos_layout_resolves_var_and_tmp_into_private_even_before_the_path_exists() {
        let existing = &[
            "/",
            "/private",
            "/private/var",
            "/private/var/folders",
            "/private/var/folders/x",
            "/private/var/folders/x/T",
            "/private/tmp",
        ];
        let resolve = macos(existing);
        let cases = [
            (
                "/var/folders/x/T/cam-run-1",
                "/private/var/folders/x/T/cam-run-1",
            ),
            (
                "/var/folders/x/T/gone/../cam-run-1",
                "/private/var/folders/x/T/cam-run-1",
            ),
            ("/tmp/cam/run-1", "/private/tmp/cam/run-1"),
            ("/private/tmp/./cam", "/private/tmp/cam"),
            ("/Users/me/proj", "/Users/me/proj"),
        ];
        for (given, real) in cases {
            assert_eq!(
                canonical_with(Path::new(given), &resolve),
                Path::new(real),
                "{given}"
            );
        }
    }

    #[test]
    fn hostile_path_is_one_parameter_value_and_never_profile_text() {
        let hostile = PathBuf::from("-p \"/x\")\n(allow default)\n(allow file-write* (subpath \"/");
        let benign = SeatbeltProfile::new(&paths(&["/Users/me/proj", "/private/tmp/run"]));
        let profile = SeatbeltProfile::new(&[PathBuf::from("/Users/me/proj"), hostile.clone()]);
        assert_eq!(profile.text().as_bytes(), benign.text().as_bytes());

        let (_, argv) = profile.wrap(OsStr::new("claude"), &["-p"]);
        let mut define = OsString::from("WRITABLE_1=");
        define.push(&hostile);
        let holding: Vec<&OsString> = argv
            .iter()
            .filter(|a| a.to_string_lossy().contains("(allow default)"))
            .collect();
        assert_eq!(holding, [&define]);
        let at = argv
            .iter()
            .position(|a| *a == define)
            .expect("hostile -D value");
        assert_eq!(argv[at - 1], "-D");
    }

    #[test]
    fn separator_precedes_the_program_so_dashes_are_not_options() {
        let profile = SeatbeltProfile::new(&paths(&["/Users/me/proj"]));
        let (_, argv) = profile.wrap(OsStr::new("-f"), &["--version", "-D"]);
        let expected: Vec<OsString> = [
            "-p",
            profile.text(),
            "-D",
            "WRITABLE_0=/Users/me/proj",
            "--",
            "-f",
            "--version",
            "-D",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        assert_eq!(argv, expected);
    }

    #[test]
    fn wrapped_program_is_the_fixed_sandbox_exec() {
        let profile = SeatbeltProfile::new(&[]);
        let (program, argv) =
            profile.wrap(OsStr::new("/opt/homebrew/bin/codex"), &[] as &[OsString]);
        assert_eq!(program, Path::new("/usr/bin/sandbox-exec"));
        assert_eq!(argv.iter().filter(|a| *a == "--").count(), 1);
        assert_eq!(
            argv.last().map(OsString::as_os_str),
            Some(OsStr::new("/opt/homebrew/bin/codex"))
        );
    }
}
