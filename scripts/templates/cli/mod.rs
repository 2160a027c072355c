//! {{name}}: a throwaway CLI made by `scripts/new-cli-check` from scripts/templates/cli. It is
//! a fork of qwen: qwen's command line, dialect and quirks under a name and variables of its own.

use std::path::Path;

use super::Cli;
use super::qwen::Qwen;
use crate::command_line::CommandLine;
use crate::dialect::Dialect;
use crate::error::SetupError;
use crate::request::RunRequest;

pub struct {{Type}};

impl Cli for {{Type}} {
    fn name(&self) -> &'static str {
        "{{name}}"
    }

    fn title(&self) -> &'static str {
        "{{Type}} (a template)"
    }

    fn description(&self) -> &'static str {
        "Delegate a coding task to {{name}}, a throwaway CLI that proves a new CLI needs only \
         its module, its fixtures and one registry line."
    }

    fn npm_package(&self) -> &'static str {
        Qwen.npm_package()
    }

    fn verified_version(&self) -> &'static str {
        Qwen.verified_version()
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["{{NAME}}_*"]
    }

    fn command_line(
        &self,
        request: &RunRequest,
        program: &Path,
    ) -> Result<CommandLine, SetupError> {
        Qwen.command_line(request, program)
    }

    fn dialect(&self) -> Box<dyn Dialect> {
        Qwen.dialect()
    }

    fn reserved_flags(&self) -> &'static [&'static str] {
        Qwen.reserved_flags()
    }

    fn usage_is_cumulative(&self) -> bool {
        Qwen.usage_is_cumulative()
    }
}
