//! The layout's promises, checked on every run: no import circle between the modules of
//! `src/` (`scripts/import-cycles`), no function of the engine or the job store over 50
//! lines (`scripts/long-functions`), and no OS's own calls outside its platform module
//! (`scripts/os-calls`).

use std::path::Path;
use std::process::Command;

fn script_passes(script: &str) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(repo.join(script))
        .current_dir(repo)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {script} with python3: {error}"));
    assert!(
        output.status.success(),
        "{script} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_modules_of_src_import_each_other_in_one_direction() {
    script_passes("scripts/import-cycles");
}

#[test]
fn engine_and_job_store_functions_are_at_most_50_lines() {
    script_passes("scripts/long-functions");
}

#[test]
fn each_oss_own_calls_stay_in_its_platform_module() {
    script_passes("scripts/os-calls");
}
