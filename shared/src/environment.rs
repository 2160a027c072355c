//! The environment a CLI starts with: not the server's whole environment (which may hold other
//! tools' secrets: a `GITHUB_TOKEN`, AWS keys), but what any program needs to run ([`BASE`]),
//! the CLI's own variables (its API keys and config homes, listed next to its command line),
//! and whatever the person who runs the server passes on with `CAM_PASS_ENV`.

use std::ffi::{OsStr, OsString};

/// What every CLI gets: the basics of a Unix process, locale, temp and XDG directories, the
/// session bus (where a CLI keeps its login in the desktop keyring), and the proxy and
/// CA-bundle settings without which a CLI behind a corporate proxy cannot reach its model.
pub const BASE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "TZ",
    "TMPDIR",
    "XDG_*",
    "DBUS_SESSION_BUS_ADDRESS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// What every CLI gets on Windows besides [`BASE`]: what a Windows program needs to run at all
/// (Node resolves names and makes random numbers through `SystemRoot`, finds its home through
/// `USERPROFILE`, and a batch file's cmd.exe is `ComSpec`), the profile's folders and the
/// machine's description.
pub const WINDOWS_BASE: &[&str] = &[
    "SystemRoot",
    "windir",
    "SystemDrive",
    "ComSpec",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "USERNAME",
    "USERDOMAIN",
    "COMPUTERNAME",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ALLUSERSPROFILE",
    "PUBLIC",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "CommonProgramFiles",
    "CommonProgramFiles(x86)",
    "CommonProgramW6432",
    "OS",
    "PROCESSOR_ARCHITECTURE",
    "NUMBER_OF_PROCESSORS",
];

/// Windows reads variable names without regard to case (`Path` is `PATH`).
const NAMES_FOLD_CASE: bool = cfg!(windows);

/// A variable name, or a prefix when it ends in `*` (`OPENAI_*`; `*` alone passes everything).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvPattern(String);

/// A `CAM_PASS_ENV` entry that is neither a variable's name nor a prefix ending in `*`.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{0}` is not a variable name or prefix (--pass-env / CAM_PASS_ENV): use names such as \
     `MY_API_KEY` or prefixes such as `AWS_*`, separated by commas"
)]
pub struct BadEnvPattern(String);

impl std::str::FromStr for EnvPattern {
    type Err = BadEnvPattern;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = text.trim();
        let stem = name.strip_suffix('*').unwrap_or(name);
        let valid = stem.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid || name.is_empty() {
            return Err(BadEnvPattern(text.to_owned()));
        }
        Ok(Self(name.to_owned()))
    }
}

impl EnvPattern {
    fn matches(&self, name: &OsStr) -> bool {
        matches(&self.0, name, NAMES_FOLD_CASE)
    }
}

impl std::fmt::Display for EnvPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `name` is `pattern`, or starts with it when it ends in `*`; ignoring ASCII case when
/// `fold_case`.
fn matches(pattern: &str, name: &OsStr, fold_case: bool) -> bool {
    let name = name.as_encoded_bytes();
    let (stem, prefix) = match pattern.strip_suffix('*') {
        Some(stem) => (stem.as_bytes(), true),
        None => (pattern.as_bytes(), false),
    };
    let head = match name.get(..stem.len()) {
        Some(head) if prefix || name.len() == stem.len() => head,
        _ => return false,
    };
    if fold_case {
        head.eq_ignore_ascii_case(stem)
    } else {
        head == stem
    }
}

/// The variables every CLI gets on this OS.
fn base() -> impl Iterator<Item = &'static &'static str> {
    let windows = if cfg!(windows) { WINDOWS_BASE } else { &[] };
    BASE.iter().chain(windows)
}

/// The variables of `parent` a CLI whose own variables are `own` receives, with `passed`.
pub fn inherited(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    own: &[&str],
    passed: &[EnvPattern],
) -> Vec<(OsString, OsString)> {
    parent
        .into_iter()
        .filter(|(name, _)| {
            let named = |pattern: &&str| matches(pattern, name, NAMES_FOLD_CASE);
            base().any(named)
                || own.iter().any(named)
                || passed.iter().any(|pattern| pattern.matches(name))
        })
        .collect()
}

/// A CLI's environment as its command line sets it: where its home and config homes are.
#[derive(Clone, Copy, Debug)]
pub struct CliEnv<'a>(pub &'a [(OsString, OsString)]);

impl CliEnv<'_> {
    /// A variable's value as the CLI sees it (the last setting wins, as in `execve`), unless
    /// empty.
    pub fn var(&self, name: &str) -> Option<std::path::PathBuf> {
        self.0
            .iter()
            .rev()
            .find(|(key, value)| matches(name, key, NAMES_FOLD_CASE) && !value.is_empty())
            .map(|(_, value)| value.into())
    }

    /// `<home>/<relative>`: the home is `$HOME`, on Windows `%USERPROFILE%` (where Node's
    /// `os.homedir()` and Rust's home dir are, whatever `HOME` Git Bash set).
    pub fn home(&self, relative: &str) -> Option<std::path::PathBuf> {
        let home = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        self.var(home).map(|home| home.join(relative))
    }

    /// An XDG base directory (`XDG_CONFIG_HOME`, ...) or its default under the home.
    pub fn xdg(&self, name: &str, default: &str) -> Option<std::path::PathBuf> {
        self.var(name).or_else(|| self.home(default))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .map(|name| (OsString::from(name), OsString::from("v")))
            .collect()
    }

    fn names(env: Vec<(OsString, OsString)>) -> Vec<String> {
        env.into_iter()
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_cli_gets_the_base_its_own_prefixes_and_what_is_passed_and_nothing_else() {
        let parent = parent(&[
            "PATH",
            "LC_ALL",
            "https_proxy",
            "OPENAI_API_KEY",
            "CODEX_HOME",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "MY_VAR",
            "MY_VARIANT",
        ]);
        let passed = ["AWS_REGION".parse().unwrap(), "MY_VAR".parse().unwrap()];
        assert_eq!(
            names(inherited(parent, &["OPENAI_*", "CODEX_*"], &passed)),
            [
                "PATH",
                "LC_ALL",
                "https_proxy",
                "OPENAI_API_KEY",
                "CODEX_HOME",
                "AWS_REGION",
                "MY_VAR"
            ]
        );
    }

    #[test]
    fn on_windows_names_match_in_any_case() {
        let name = |text: &str| OsString::from(text);
        assert!(matches("PATH", &name("Path"), true));
        assert!(matches("SystemRoot", &name("SYSTEMROOT"), true));
        assert!(matches("OPENAI_*", &name("openai_api_key"), true));
        assert!(!matches("PATH", &name("PATHEXT"), true));
        assert!(!matches("PATHEXT", &name("PATH"), true));
        assert!(!matches("PATH", &name("Path"), false));
        assert!(matches("OPENAI_*", &name("OPENAI_"), false));
        assert!(!matches("OPENAI_*", &name("OPENAI"), false));
    }

    #[test]
    fn a_windows_program_gets_what_windows_needs_to_run_it() {
        for needed in [
            "SystemRoot",
            "ComSpec",
            "PATHEXT",
            "TEMP",
            "USERPROFILE",
            "APPDATA",
        ] {
            assert!(WINDOWS_BASE.contains(&needed), "{needed}");
        }
        assert_eq!(
            base().count(),
            BASE.len() + WINDOWS_BASE.len() * usize::from(cfg!(windows))
        );
    }

    #[test]
    fn a_passed_prefix_passes_every_variable_that_starts_with_it() {
        let parent = parent(&["FAKE_CLI_DIRECTIVES", "FAKE_CLI_TAG", "FAKE", "OTHER"]);
        let passed = ["FAKE_CLI_*".parse().unwrap()];
        assert_eq!(
            names(inherited(parent, &[], &passed)),
            ["FAKE_CLI_DIRECTIVES", "FAKE_CLI_TAG"]
        );
    }

    #[test]
    fn a_pattern_is_a_name_or_a_prefix() {
        for good in ["MY_KEY", "AWS_*", " GH_TOKEN ", "*"] {
            assert!(good.parse::<EnvPattern>().is_ok(), "{good}");
        }
        for bad in ["", "A*B", "MY-KEY", "A=B", "$HOME"] {
            let error = bad.parse::<EnvPattern>().unwrap_err().to_string();
            assert!(error.contains("CAM_PASS_ENV"), "{error}");
        }
    }
}
