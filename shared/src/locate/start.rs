//! How a found CLI is started. On Windows a `.cmd` or `.bat` CLI (npm's shims) cannot be
//! started without `cmd.exe`, whose quoting is not any program's: a shim npm wrote is read
//! and its program started instead (`node <script>`, see [`super::shim`]); any other batch
//! file is left to Rust's own batch-file quoting, which refuses an argument it cannot pass
//! safely. Never a hand-built `cmd /c` line.

use std::path::{Path, PathBuf};

use super::search::{Places, Probe, search};
use super::shim::{self, ShimProgram};
use crate::command_line::CommandLine;

/// How a found CLI starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// As found: a program of its own.
    AsFound,
    /// An npm shim read: its `program` with its `args` (the script) before the CLI's own.
    Shim {
        /// The interpreter (`node.exe`) or the program the shim starts.
        program: PathBuf,
        /// The interpreter's own arguments and the script.
        args: Vec<String>,
    },
    /// A batch file that is not a shim npm wrote (or whose interpreter was not found): it
    /// runs through `cmd.exe` with Rust's batch-file quoting, and a call whose arguments
    /// cannot be passed safely that way is refused.
    BatchFile,
}

impl Start {
    /// What `doctor` says of it; `None` for a program started as found.
    pub fn note(&self) -> Option<String> {
        match self {
            Self::AsFound => None,
            Self::Shim { program, args } => Some(format!(
                "an npm shim: started as `{} {}`, without cmd.exe",
                program.display(),
                args.join(" ")
            )),
            Self::BatchFile => Some(
                "a batch file npm did not write: it runs through cmd.exe with Rust's own \
                 quoting, and a call with an argument cmd.exe cannot be given safely (a \
                 prompt is never one: it goes on stdin) is refused; install the CLI with npm \
                 or point its _BIN setting at its .exe to avoid cmd.exe"
                    .to_owned(),
            ),
        }
    }

    /// `command_line`, built for the found file, made to start this way.
    pub fn apply(&self, command_line: &mut CommandLine) {
        if let Self::Shim { program, args } = self {
            command_line.program = program.into();
            command_line.args.splice(0..0, args.iter().cloned());
        }
    }
}

/// Why `cmd.exe` cannot be given this batch file's command line safely, when it cannot: std
/// quotes a batch file's arguments for `cmd.exe` (and refuses a line break only when it starts
/// it), but passes the file's own path with its `%` as they are, for `cmd.exe` to expand
/// against the arguments' escapes. Checked before anything starts, so the call says why.
pub fn batch_file_refusal(command_line: &CommandLine) -> Option<&'static str> {
    if command_line.program.to_string_lossy().contains('%') {
        return Some(
            "its path holds a `%`, which cmd.exe would read as the start of a variable \
             (Rust's batch-file quoting does not escape the file's own path)",
        );
    }
    if command_line.args.iter().any(|a| a.contains(['\r', '\n'])) {
        return Some(
            "an argument of its command line holds a line break, where cmd.exe would end \
             the command",
        );
    }
    None
}

/// How `path` starts: on Windows ([`Places::windows`]) a batch file is read as an npm shim
/// when it is one; everything else, and everything on Unix, as found.
pub fn start_of(path: &Path, places: Places<'_>, probe: &dyn Probe) -> Start {
    if places.windows.is_none() || !is_batch(path) {
        return Start::AsFound;
    }
    let target = path
        .parent()
        .zip(probe.read(path))
        .and_then(|(dir, text)| shim::resolve(&text, dir));
    let Some(target) = target else {
        return Start::BatchFile;
    };
    let program = match target.program {
        ShimProgram::File(file) => probe.is_executable(&file).then_some(file),
        // As the shim does: the interpreter beside it, else the one on PATH (here also
        // where installers put node, for a server started with a bare PATH).
        ShimProgram::Interpreter { beside, name } => match probe.is_executable(&beside) {
            true => Some(beside),
            false => search(&name, places, probe).ok().map(|(path, _)| path),
        },
    };
    match program {
        Some(program) => Start::Shim {
            program,
            args: target.args,
        },
        None => Start::BatchFile,
    }
}

/// A `.cmd` or `.bat` file, which Windows starts only through `cmd.exe`.
pub fn is_batch(path: &Path) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| ext.eq_ignore_ascii_case("cmd") || ext.eq_ignore_ascii_case("bat"))
}
