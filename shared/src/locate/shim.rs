//! npm's `.cmd` shims read as the program they start, so a CLI installed by npm on Windows
//! runs as `node <script>` without `cmd.exe` (whose parsing of `%`, `^`, `&` and quotes
//! differs from every program's argv rules).
//!
//! A shim is resolved only when its text is, line for line, what npm's `cmd-shim` writes
//! for the program and script it names (the template of cmd-shim 4.1 to 8): one written by
//! hand, by another tool or with variables set before the program may do more than start
//! it, and is left to run as the batch file it is. Plain text in, plain paths out: no
//! filesystem and no OS, so it is tested on any machine against shims as npm writes them.

use std::path::{Path, PathBuf};

/// What a shim starts, its paths under the shim's dir.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShimTarget {
    /// The program.
    pub program: ShimProgram,
    /// Its leading arguments: the interpreter's own (from the script's `#!` line), then
    /// the script. The caller's arguments follow them.
    pub args: Vec<String>,
}

/// The program a shim starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShimProgram {
    /// A file in the shim's dir tree, started as it is.
    File(PathBuf),
    /// An interpreter: `beside` (`node.exe` next to the shim) when it exists, else `name`
    /// found on PATH, as the shim itself decides.
    Interpreter {
        /// `<dir>\<name>.exe`.
        beside: PathBuf,
        /// `node`.
        name: String,
    },
}

/// The head every shim of the template opens with: it finds its own dir (`%dp0%`).
const HEAD: &[&str] = &[
    "@ECHO off",
    "GOTO start",
    ":find_dp0",
    "SET dp0=%~dp0",
    "EXIT /b",
    ":start",
    "SETLOCAL",
    "CALL :find_dp0",
];

/// What the last line of an interpreter's shim says before the program's arguments.
const INTERPRETER_CALL: &str =
    "endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & \"%_prog%\" ";

/// The script path as the template writes it, relative to the shim's dir.
const DP0: &str = "\"%dp0%\\";

/// What the shim at `dir` whose text is `text` starts; `None` when it is not exactly a
/// shim of npm's template or names anything `cmd.exe` would rewrite (a `%`, `^`, `&`, `!`,
/// `|`, `<`, `>` or quote inside a path or an argument).
pub fn resolve(text: &str, dir: &Path) -> Option<ShimTarget> {
    let lines: Vec<&str> = text.strip_suffix("\r\n")?.split("\r\n").collect::<Vec<_>>();
    let body = lines.strip_prefix(HEAD)?;
    match body {
        [direct] => direct_shim(direct, dir),
        _ => interpreter_shim(body, dir),
    }
}

/// `"%dp0%\<target>"   %*`: a program the package ships, started as it is.
fn direct_shim(line: &str, dir: &Path) -> Option<ShimTarget> {
    let target = line.strip_suffix("   %*")?;
    Some(ShimTarget {
        program: ShimProgram::File(under(dir, quoted_target(target)?)?),
        args: Vec::new(),
    })
}

/// The script of a `#!/usr/bin/env <name> <args>` line, run by `<dir>\<name>.exe` when it
/// is there, else by `<name>` on PATH.
fn interpreter_shim(body: &[&str], dir: &Path) -> Option<ShimTarget> {
    let [
        "",
        beside_line,
        beside_set,
        else_line,
        name_set,
        "  SET PATHEXT=%PATHEXT:;.JS;=;%",
        ")",
        "",
        call,
    ] = body
    else {
        return None;
    };
    let name = name_set
        .strip_prefix("  SET \"_prog=")?
        .strip_suffix('"')
        .filter(|name| plain(name) && !name.contains(['\\', '/', ' ']))?;
    let beside = format!("%dp0%\\{name}.exe");
    let expected = [
        format!("IF EXIST \"{beside}\" ("),
        format!("  SET \"_prog={beside}\""),
        ") ELSE (".to_owned(),
    ];
    if [beside_line, beside_set, else_line] != [&expected[0], &expected[1], &expected[2]] {
        return None;
    }
    // `"%_prog%" <args> "%dp0%\<script>" %*`, the args as the `#!` line gave them.
    let rest = call.strip_prefix(INTERPRETER_CALL)?.strip_suffix(" %*")?;
    let at = rest.find(DP0)?;
    let (args, target) = rest.split_at(at);
    let mut leading: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    if leading.iter().any(|arg| !plain(arg)) || args != format!("{} ", leading.join(" ")) {
        return None;
    }
    let script = under(dir, quoted_target(target)?)?;
    leading.push(script.to_str()?.to_owned());
    Some(ShimTarget {
        program: ShimProgram::Interpreter {
            beside: dir.join(format!("{name}.exe")),
            name: name.to_owned(),
        },
        args: leading,
    })
}

/// `<target>` of `"%dp0%\<target>"`, when it holds nothing `cmd.exe` would rewrite.
fn quoted_target(quoted: &str) -> Option<&str> {
    let target = quoted.strip_prefix(DP0)?.strip_suffix('"')?;
    plain(target).then_some(target)
}

/// `dir` joined with a relative `target` written with `\`; `None` for an empty part or one
/// that leaves the dir tree other than by `..` (a drive, a root).
fn under(dir: &Path, target: &str) -> Option<PathBuf> {
    let mut path = dir.to_path_buf();
    for part in target.split('\\') {
        if part.is_empty() || part.contains([':', '/']) {
            return None;
        }
        path.push(part);
    }
    Some(path)
}

/// Text `cmd.exe` passes through as it is: no expansion (`%`, `!`), no escape (`^`), no
/// command separator or redirection (`&`, `|`, `<`, `>`), no quote.
fn plain(text: &str) -> bool {
    !text.is_empty() && !text.contains(['%', '!', '^', '&', '|', '<', '>', '"'])
}
