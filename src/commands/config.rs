//! `cli-agent-mcp config`: print the effective settings and agents, and where each came from.

use crate::config::Loaded;
use crate::config::report::{render, report};

/// Print the report; 0, or 1 if it cannot be encoded.
#[allow(clippy::print_stdout)] // the report is this command's output
pub fn run(loaded: &Loaded, json: bool) -> u8 {
    let report = report(loaded);
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(error) => {
                eprintln!("error: could not encode the settings: {error}");
                return 1;
            }
        }
    } else {
        print!("{}", render(&report));
    }
    0
}
