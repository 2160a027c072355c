//! One module per subcommand. Each turns the command line's values ([`crate::args`]) into the
//! plain settings of the parts it composes (the MCP handler, the transports, the jobs, the
//! dashboard, the config) and returns the exit code; `main` dispatches to them.

pub mod config;
pub mod dashboard;
pub mod doctor;
pub mod jobs;
pub mod run;
pub mod serve;
