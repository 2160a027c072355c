//! A private temporary directory per confined run: its `TMPDIR`, writable under the sandbox,
//! removed when the run ends, or by the server's guardian when the server was killed first.

use std::path::{Path, PathBuf};

/// Where the runs of one server instance keep files in the temp dir: a run's `TMPDIR`
/// (`cam-run-<instance>-<n>`), a usage file's directory (`cam-usage-<instance>-<n>`), an
/// output schema file's (`cam-schema-<instance>-<n>`) and a snapshot's index
/// (`cam-index-<instance>-<n>`, a file, kept through a run in place).
const RUN_DIR_PREFIXES: [&str; 4] = ["cam-run-", "cam-usage-", "cam-schema-", "cam-index-"];

/// Removes the temp-dir directories and files of the runs of server `instance` (`<pid>.<hex>`): its
/// guardian calls this once the server is gone, since a killed server removes nothing
/// itself. Returns how many it removed.
pub fn remove_left_by(instance: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let ours = |name: &str| {
        RUN_DIR_PREFIXES.iter().any(|prefix| {
            name.strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix(instance))
                .is_some_and(|rest| rest.starts_with('-'))
        })
    };
    entries
        .flatten()
        .filter(|entry| ours(&entry.file_name().to_string_lossy()))
        .filter(|entry| {
            let path = entry.path();
            std::fs::remove_dir_all(&path)
                .or_else(|_| std::fs::remove_file(&path))
                .is_ok()
        })
        .count()
}

/// Removed, with whatever the run left in it, when dropped.
#[derive(Debug)]
pub struct RunTmp {
    path: PathBuf,
}

impl RunTmp {
    /// A new directory, readable by this user only, under the server's temp dir.
    pub fn create(marker: &str) -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!("cam-run-{marker}"));
        crate::platform::private_dir().create(&path)?;
        Ok(Self { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunTmp {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(dir = %self.path.display(), %error, "could not remove a run's temporary directory");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_servers_run_directories_and_index_files_are_removed_and_no_others() {
        let instance = format!("4194305.{:x}", std::process::id());
        let other = format!("4194306.{:x}", std::process::id());
        let tmp = std::env::temp_dir();
        let run_dir = tmp.join(format!("cam-run-{instance}-0"));
        std::fs::create_dir_all(run_dir.join("inside")).unwrap();
        let index = tmp.join(format!("cam-index-{instance}-1"));
        std::fs::write(&index, b"DIRC").unwrap();
        let not_ours = tmp.join(format!("cam-index-{other}-0"));
        std::fs::write(&not_ours, b"DIRC").unwrap();

        assert_eq!(remove_left_by(&instance), 2);

        assert!(!run_dir.exists() && !index.exists());
        assert!(not_ours.exists());
        std::fs::remove_file(not_ours).unwrap();
    }
}
