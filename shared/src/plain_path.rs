//! Real paths as a person writes them. On Windows `std::fs::canonicalize` gives the verbatim
//! form (`\\?\C:\work\repo`): cmd.exe refuses it as a working directory (a CLI installed as a
//! batch file would start elsewhere), many programs mishandle it and nobody types it, so a root
//! given as `C:\work` would not match it either. The plain form (`C:\work\repo`) is used
//! wherever it names the same file, by the engine (a run's workspace, the CLI's working
//! directory) and the app (roots, workspaces) alike; on Unix the real path is already plain.

use std::path::{Path, PathBuf};

/// The longest path Windows' plain form reaches without the verbatim prefix (`MAX_PATH`, its
/// terminating NUL aside).
const MAX_PLAIN: usize = 259;

/// Names Windows reads as devices in a plain path, whatever their extension.
const DEVICES: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// `path` resolved (links followed, `..` and `.` gone), in the plain form where it has one.
pub fn canonicalize(path: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(path).map(|real| plain_form(&real))
}

/// `path` in the plain form where it has one (a path another part resolved, the engine's
/// included); as it is on Unix.
pub fn plain_form(path: &Path) -> PathBuf {
    if !cfg!(windows) {
        return path.to_path_buf();
    }
    path.to_str()
        .and_then(plain)
        .map_or_else(|| path.to_path_buf(), PathBuf::from)
}

/// A path git printed (`--show-toplevel`, `--git-dir`, `worktree list`), in the plain form: Git
/// for Windows writes `C:/work/repo` and `//server/share/repo`, which name the same files but
/// would be shown with the wrong separators and never match a path written the Windows way as
/// text (a stored workspace, a root); as it is on Unix.
pub fn from_git(printed: &str) -> PathBuf {
    if cfg!(windows) {
        PathBuf::from(windows_separators(printed))
    } else {
        PathBuf::from(printed)
    }
}

/// `printed` with Windows' separator: git's `/` is a separator there, never part of a name.
fn windows_separators(printed: &str) -> String {
    printed.replace('/', "\\")
}

/// `\\?\C:\a` as `C:\a` and `\\?\UNC\server\share\a` as `\\server\share\a`; `None` for any
/// other form, or when the plain form would name another file or could not be written: a part
/// ending in a dot or a space (Windows trims them), a device name, a `/`, or a path longer
/// than `MAX_PATH`.
fn plain(verbatim: &str) -> Option<String> {
    let plain = if let Some(unc) = verbatim.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{unc}")
    } else {
        let rest = verbatim.strip_prefix(r"\\?\")?;
        let bytes = rest.as_bytes();
        let drive = bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && &bytes[1..3] == b":\\";
        if !drive {
            return None;
        }
        rest.to_owned()
    };
    let parts = plain.trim_start_matches('\\').split('\\').skip(1);
    let same_file = !plain.contains('/')
        && plain.len() <= MAX_PLAIN
        && parts.filter(|part| !part.is_empty()).all(plain_part);
    same_file.then_some(plain)
}

/// A path part the plain form keeps as it is.
fn plain_part(part: &str) -> bool {
    let stem = part.split('.').next().unwrap_or(part).trim_end();
    !part.ends_with(['.', ' '])
        && !DEVICES
            .iter()
            .any(|device| stem.eq_ignore_ascii_case(device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verbatim_drive_or_unc_path_is_written_plain() {
        assert_eq!(
            plain(r"\\?\C:\Users\Ann Lee\work & play\repo").as_deref(),
            Some(r"C:\Users\Ann Lee\work & play\repo")
        );
        assert_eq!(plain(r"\\?\D:\").as_deref(), Some(r"D:\"));
        assert_eq!(
            plain(r"\\?\UNC\server\share\repo").as_deref(),
            Some(r"\\server\share\repo")
        );
    }

    #[test]
    fn a_path_git_for_windows_printed_gets_windows_separators() {
        assert_eq!(
            windows_separators("C:/Users/Ann Lee/work & play/repo"),
            r"C:\Users\Ann Lee\work & play\repo"
        );
        assert_eq!(
            windows_separators("//server/share/repo/.git/worktrees/x"),
            r"\\server\share\repo\.git\worktrees\x"
        );
        assert_eq!(windows_separators(r"C:\already\plain"), r"C:\already\plain");
    }

    #[test]
    fn a_path_the_plain_form_would_change_stays_verbatim() {
        let long = format!(r"\\?\C:\{}", "a".repeat(300));
        for verbatim in [
            r"\\?\C:\work\trailing.",
            r"\\?\C:\work\trailing ",
            r"\\?\C:\work\nul",
            r"\\?\C:\work\CON.txt",
            r"\\?\C:\work\com1 .md",
            r"\\?\C:\odd/slash",
            r"\\?\Volume{0b1c2d3e}\work",
            r"\\?\GLOBALROOT\Device\x",
            r"C:\already\plain",
            long.as_str(),
        ] {
            assert_eq!(plain(verbatim), None, "{verbatim}");
        }
        assert_eq!(
            plain(r"\\?\C:\work\console").as_deref(),
            Some(r"C:\work\console")
        );
    }
}
