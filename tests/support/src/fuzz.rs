//! What the engine's fuzzers share: the committed corpus in `tests/fixtures/fuzz/` and a
//! proptest configuration whose failures are saved there, so each is replayed on every run.
//! The engine's fuzzers (`shared/tests/fuzz`) and the server's (`src/transport/stdio/fuzz.rs`)
//! share it.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Map, Number, Value};

/// The workspace's `tests/fixtures`.
pub fn fixtures() -> PathBuf {
    crate::common::repo().join("tests/fixtures")
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

/// Every non-empty line of `file`, invalid UTF-8 replaced.
pub fn jsonl_lines(file: &Path) -> Vec<String> {
    let text =
        std::fs::read(file).unwrap_or_else(|error| panic!("read {}: {error}", file.display()));
    String::from_utf8_lossy(&text)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// Every non-empty line of the `.jsonl` files in `dir`, in file name order.
pub fn jsonl_dir_lines(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("read {}: {error}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    files.iter().flat_map(|file| jsonl_lines(file)).collect()
}

/// A JSON value of any type, the kinds a reader is least ready for included.
pub fn hostile_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![Just(u64::MAX), Just(0), Just(1 << 53)].prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        any::<String>().prop_map(Value::String),
        "[a-z_.]{0,12}".prop_map(Value::String),
        (0usize..100_000).prop_map(|n| Value::String("x".repeat(n))),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,10}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}
