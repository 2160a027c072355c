//! The answer: what the fake received, as one JSON document, so a test compares the working
//! directory, the arguments and the prompt the engine meant with what arrived. The prompt is
//! given as hex too, since its bytes need not be UTF-8; on Windows the raw command line is given
//! as well (what a `.cmd` shim's quoting or std's own produced).

use std::ffi::OsString;
use std::fmt::Write;

use serde_json::{Value, json};

/// The run's marker variable (the engine's `cli_agent_engine::marker::MARKER_VAR`).
pub const MARKER_VAR: &str = "CAM_RUN_ID";

/// The document: `cwd`, `argv` (without the program), `command_line` (Windows), `prompt`,
/// `prompt_hex`, `marker`, `env_names` (the environment's variable names, sorted; not their
/// values), and `tree` when one was built.
pub fn received(args: &[OsString], prompt: &[u8], tree: Option<Value>) -> Value {
    let cwd = std::env::current_dir()
        .map_or_else(|e| format!("<{e}>"), |d| d.to_string_lossy().into_owned());
    json!({
        "cwd": cwd,
        "argv": args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "command_line": command_line(),
        "prompt": String::from_utf8_lossy(prompt),
        "prompt_hex": hex(prompt),
        "marker": std::env::var(MARKER_VAR).ok(),
        "env_names": env_names(),
        "tree": tree,
    })
}

/// The names of the variables this process got, sorted.
fn env_names() -> Vec<String> {
    let mut names: Vec<String> = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Lower-case hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The process's command line as Windows handed it over, before any argv splitting.
#[cfg(windows)]
fn command_line() -> Option<String> {
    use windows_sys::Win32::System::Environment::GetCommandLineW;
    // SAFETY: GetCommandLineW takes nothing and returns a pointer to the process's own
    // NUL-terminated command line, valid and unchanged for the process's lifetime.
    let wide = unsafe { GetCommandLineW() };
    if wide.is_null() {
        return None;
    }
    let mut len = 0;
    // SAFETY: `wide` is non-null and NUL-terminated (above); we read up to the NUL only.
    while unsafe { *wide.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` units before the NUL are initialised and stay valid (above).
    Some(String::from_utf16_lossy(unsafe {
        std::slice::from_raw_parts(wide, len)
    }))
}

/// Not Windows: there is no single command line, only argv.
#[cfg(not(windows))]
fn command_line() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_comes_back_byte_for_byte_in_hex_and_lossy_text() {
        let prompt = b"quote \" % ^ & | ! \n\xff end";
        let doc = received(&["exec".into(), "--json".into()], prompt, None);
        assert_eq!(doc["prompt_hex"], hex(prompt));
        assert_eq!(hex(b"\x00\xff a"), "00ff2061");
        assert_eq!(doc["argv"], json!(["exec", "--json"]));
        assert_eq!(
            doc["cwd"],
            std::env::current_dir().unwrap().to_string_lossy().as_ref()
        );
        assert!(doc["prompt"].as_str().unwrap().ends_with("\u{fffd} end"));
        let names = doc["env_names"].as_array().unwrap();
        assert!(names.iter().any(|name| name == "PATH" || name == "Path"));
    }
}
