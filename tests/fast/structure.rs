//! The layout's promises, checked on every run: no import circle between the modules of
//! either crate (`scripts/import-cycles`), no arrow back up from `mcp`, `config` and the `jobs`
//! command to what stands above them (read from the sources), no function of either crate
//! over 50 lines (`scripts/long-functions`), no OS's own calls outside its platform module
//! (`scripts/os-calls`), and no relative link of the markdown to a missing page or heading
//! (`scripts/doc-links`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use regex::Regex;

/// `script` of the repository run with python3 from its root, with `args`.
fn run_script(script: &str, args: &[&Path]) -> Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    Command::new("python3")
        .arg(repo.join(script))
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {script} with python3: {error}"))
}

/// Writes `text` to `path` under `root`, making its directories.
fn write_file(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("make the tree");
    std::fs::write(path, text).expect("write a file");
}

fn script_passes(script: &str) {
    let output = run_script(script, &[]);
    assert!(
        output.status.success(),
        "{script} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_modules_of_both_crates_import_each_other_in_one_direction() {
    script_passes("scripts/import-cycles");
}

/// The Rust files at `path`: the file itself, or every one below the directory.
fn rust_files(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_owned()];
    }
    let entries = std::fs::read_dir(path).expect("read a source directory");
    let paths = entries.map(|entry| entry.expect("a directory entry").path());
    let rust = |path: &PathBuf| path.is_dir() || path.extension().is_some_and(|ext| ext == "rs");
    paths
        .filter(rust)
        .flat_map(|path| rust_files(&path))
        .collect()
}

/// The places at `path` (of the app crate) whose code names `crate::<module>`, directly or in
/// a `use crate::{…}` group, as `file:line: code`; comments are left out.
fn imports_of(path: &str, module: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let named = Regex::new(&format!(r"crate::(?:\{{[^;]*?\b)?{module}\b")).expect("a regex");
    let mut found = Vec::new();
    for file in rust_files(&root.join(path)) {
        let text = std::fs::read_to_string(&file).expect("read a source file");
        let code: Vec<&str> = text
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect();
        let code = code.join("\n");
        let shown = file.strip_prefix(root).unwrap_or(&file).display();
        for hit in named.find_iter(&code) {
            let line = code[..hit.start()].lines().count().max(1);
            found.push(format!("{shown}:{line}: {}", hit.as_str()));
        }
    }
    found
}

/// The arrows the web front and the moves below took away stay away: `mcp` reaches nothing of
/// the dashboard (a run's question endpoint takes its token from `web`), `config` nothing of
/// `mcp` (the tools on offer are `offer`'s), nor does the `jobs` command (the changes report is
/// `changes_report`'s). The reader is not blind: it sees `serve` compose `mcp` and the dashboard.
#[test]
fn mcp_config_and_the_jobs_command_import_nothing_above_them() {
    for (dir, above) in [
        ("src/mcp", "dashboard"),
        ("src/config", "mcp"),
        ("src/commands/jobs", "mcp"),
    ] {
        let found = imports_of(dir, above);
        assert!(
            found.is_empty(),
            "{dir} imports crate::{above}:\n{}",
            found.join("\n")
        );
    }
    for composed in ["mcp", "dashboard"] {
        let found = imports_of("src/commands/serve.rs", composed);
        assert!(
            !found.is_empty(),
            "serve's import of crate::{composed} went unseen"
        );
    }
}

/// The places under `path` (of the app crate) whose code matches `pattern`, as `file:line:
/// code`; comments are left out.
fn code_matching(path: &str, pattern: &Regex) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for file in rust_files(&root.join(path)) {
        let text = std::fs::read_to_string(&file).expect("read a source file");
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if pattern.is_match(code) {
                found.push(format!("{shown}:{}: {}", number + 1, code.trim()));
            }
        }
    }
    found
}

/// One road for a run: the engine's steps of a run (prepare, place, run) are called by the
/// jobs alone, so every door (an MCP call, `run`) goes through `Jobs::submit`. The reader is
/// not blind: it sees the jobs call them.
#[test]
fn only_the_jobs_run_a_run() {
    let steps =
        Regex::new(r"\.(prepare|place|run_placed)\s*\(\s*(agent|prepared|placed)|\bEngine::run\b")
            .expect("a regex");
    let outside: Vec<String> = ["src/commands", "src/mcp", "src/transport", "src/dashboard"]
        .iter()
        .flat_map(|dir| code_matching(dir, &steps))
        .chain(code_matching("src/lib.rs", &steps))
        .collect();
    assert!(
        outside.is_empty(),
        "a run goes around the jobs:\n{}",
        outside.join("\n")
    );
    assert!(
        code_matching("src/jobs", &steps).len() >= 3,
        "the jobs' own calls of the engine went unseen"
    );
}

/// The binary is thin: the command line, the guardian, the runtime and the library's run.
#[test]
fn the_binary_is_a_thin_main_over_the_library() {
    let main = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/main.rs");
    let lines = std::fs::read_to_string(main)
        .expect("src/main.rs")
        .lines()
        .count();
    assert!(
        lines <= 60,
        "src/main.rs has {lines} lines: keep it under 60, the rest in the library"
    );
}

#[test]
fn the_functions_of_both_crates_are_at_most_50_lines() {
    script_passes("scripts/long-functions");
}

#[test]
fn each_oss_own_calls_stay_in_its_platform_module() {
    script_passes("scripts/os-calls");
}

/// The cycle script is not blind: in a small crate it finds a circle between two sibling files
/// that import each other through a multi-line `use` group, and none through a test module.
#[test]
fn the_cycle_script_finds_a_circle_between_sibling_files_but_not_through_tests() {
    let dir = common::temp_dir("cam-cycles");
    let write = |path: &str, text: &str| write_file(dir.path(), path, text);
    write("src/lib.rs", "mod tools;\n");
    write("src/tools/mod.rs", "mod job;\nmod job_wait;\n");
    write(
        "src/tools/job.rs",
        "use super::{\n    job_wait,\n};\npub struct Context;\n",
    );
    write(
        "src/tools/job_wait.rs",
        "#[cfg(test)]\nmod tests {\n    use super::super::job::Context;\n}\n",
    );
    let run = || {
        let output = run_script("scripts/import-cycles", &[&dir.path().join("src")]);
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        (output.status.success(), text)
    };
    let (passed, text) = run();
    assert!(passed, "a test module closed a circle:\n{text}");
    write("src/tools/job_wait.rs", "use super::job::Context;\n");
    let (passed, text) = run();
    assert!(!passed, "the circle was missed:\n{text}");
    assert!(
        text.contains("tools::job -> tools::job_wait")
            && text.contains("tools::job_wait -> tools::job"),
        "{text}"
    );
}

#[test]
fn every_relative_link_of_the_docs_leads_to_a_page_and_a_heading() {
    script_passes("scripts/doc-links");
}

#[test]
fn doc_links_names_a_missing_page_and_a_missing_heading() {
    let root = common::temp_dir("cam-doc-links");
    let page = |path: &str, text: &str| write_file(root.path(), path, text);
    page(
        "README.md",
        "# Top\n\n[fine](docs/a.md#a-heading-with-code) [gone](docs/missing.md)\n\
         ```sh\n[in code](nowhere.md)\n```\n",
    );
    page(
        "docs/a.md",
        "# A heading with `code`\n\n[back](../README.md#top) [lost](../README.md#no-such-heading)\n",
    );
    let output = run_script("scripts/doc-links", &[root.path()]);
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{printed}");
    let expected = "README.md:3: docs/missing.md: no such file: docs/missing.md\n\
                    docs/a.md:3: ../README.md#no-such-heading: no heading #no-such-heading in README.md\n";
    assert_eq!(printed, expected);
}
