//! What the engine's fuzzers share: the committed corpus in `tests/fixtures/fuzz/` and a
//! proptest configuration whose failures are saved there, so each is replayed on every run.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use proptest::test_runner::{Config, FileFailurePersistence};

/// The workspace's `tests/fixtures`.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A configuration of `default_cases` cases (`PROPTEST_CASES` overrides it for a long run)
/// whose failing inputs are kept in `tests/fixtures/fuzz/<name>.proptest-regressions`.
pub fn config(name: &str, default_cases: u32) -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default_cases;
    }
    let path = fixtures().join(format!("fuzz/{name}.proptest-regressions"));
    config.failure_persistence = Some(Box::new(FileFailurePersistence::Direct(Box::leak(
        path.to_string_lossy().into_owned().into_boxed_str(),
    ))));
    config
}

/// Every non-empty line of the `.jsonl` files in `dir`, sorted by file name.
pub fn jsonl_lines(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("read {}: {error}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read(file).expect("read corpus file");
            String::from_utf8_lossy(&text)
                .lines()
                .filter(|line| !line.trim().is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}
