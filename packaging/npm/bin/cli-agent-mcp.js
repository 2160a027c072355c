#!/usr/bin/env node
// The `cli-agent-mcp` command of the npm package: runs the prebuilt binary of this platform,
// which npm installed as one of the optional dependencies (cli-agent-mcp-<os>-<cpu>), with
// this command's arguments, environment and standard streams. Plain Node.js 18+, no
// dependencies; no install script fetched anything.
//
// Where Node.js has process.execve (22.15+ and 23.11+, POSIX), the launcher replaces itself
// with the binary: the host's process is the server, and its signals, exit and SIGKILL are the
// server's own. Elsewhere it runs the binary as a child: SIGINT, SIGTERM and SIGHUP are passed
// on (SIGINT only when no terminal already sent it to the whole group), and the launcher ends
// as the child did (its exit code, or the same signal). A host may SIGKILL the launcher, which
// can pass nothing on: so the child gets one end of a pipe as fd 3, whose other end only the
// launcher holds, and CAM_PARENT_PIPE=3 says so; the server shuts down (its runs torn down)
// when that pipe reaches EOF, as when its stdin closes.
//
// On Windows there is no execve: the binary (cli-agent-mcp.exe) always runs as the child, with
// the same pipe. libuv hands the child's end of it over as the C runtime's fd 3 (an inherited
// handle listed in STARTUPINFO's lpReserved2, the table MSVC's runtime reads at start-up), and
// CAM_PARENT_PIPE=3 says so; the server takes the handle from that table. No signal is passed
// on there: Ctrl-C and Ctrl-Break reach every process of the console, the server too, and
// Windows has no SIGTERM or SIGHUP to send; the launcher only waits for the server to end.
//
// CLI_AGENT_MCP_BINARY=/path/to/cli-agent-mcp runs that binary instead of the package's.
'use strict';

const childProcess = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const tty = require('node:tty');

const manifest = require('../package.json');

const BINARY = 'cli-agent-mcp';
const OVERRIDE = 'CLI_AGENT_MCP_BINARY';
const PARENT_PIPE = 'CAM_PARENT_PIPE';
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const WINDOWS = process.platform === 'win32';
// What the console sends on Windows: heard, so that the launcher outlives the server.
const CONSOLE_EVENTS = ['SIGINT', 'SIGBREAK'];

function fail(message) {
  process.stderr.write(`cli-agent-mcp: ${message}\n`);
  process.exit(1);
}

function sourceInstall() {
  const repository = String(manifest.homepage || '').replace(/#.*$/, '');
  return (
    `build it from source instead (needs Rust): cargo install --git ${repository} ${BINARY}, ` +
    `and run that binary (or set ${OVERRIDE} to its path)`
  );
}

function isMusl() {
  if (process.platform !== 'linux') return false;
  try {
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

/** The binary to run: the override, or the one in this platform's package. */
function findBinary() {
  const override = process.env[OVERRIDE];
  if (override) return override;
  const platforms = Object.keys(manifest.optionalDependencies || {});
  const wanted = `${manifest.name}-${process.platform}-${process.arch}`;
  const supported = platforms.map((name) => name.slice(manifest.name.length + 1)).join(', ');
  const unsupported = (what) =>
    `no prebuilt binary for ${what} (prebuilt: ${supported}; Linux with glibc 2.17 or newer); ` +
    sourceInstall();
  if (!platforms.includes(wanted)) fail(unsupported(`${process.platform}-${process.arch}`));
  try {
    const file = WINDOWS ? `${BINARY}.exe` : BINARY;
    return path.join(path.dirname(require.resolve(`${wanted}/package.json`)), 'bin', file);
  } catch {
    // npm leaves a glibc package out on musl; asked only here, as the report takes ~50 ms.
    if (isMusl()) fail(unsupported(`${process.platform}-${process.arch} with musl`));
    fail(
      `the package ${wanted}@${manifest.version}, which holds the binary for this platform, ` +
        `is not installed: npm leaves optional dependencies out with --omit=optional ` +
        `(or --no-optional), or when a lockfile made on another platform lacks it. ` +
        `Install it (npm install ${wanted}@${manifest.version}), or ${sourceInstall()}`
    );
  }
}

/** Become the binary, where Node.js can: nothing of the launcher stays. */
function execInPlace(binary, args) {
  if (typeof process.execve !== 'function' || WINDOWS) return;
  // A failed execve aborts Node.js with a native stack trace: say what is wrong first.
  try {
    fs.accessSync(binary, fs.constants.X_OK);
  } catch (error) {
    fail(`cannot run ${binary}: ${error.message}`);
  }
  process.execve(binary, [binary, ...args], process.env);
}

/** Pass the host's signals on to the child (POSIX); on Windows, outlive the console's events. */
function passSignalsOn(child) {
  if (WINDOWS) {
    for (const event of CONSOLE_EVENTS) process.on(event, () => {});
    return;
  }
  const terminal = tty.isatty(0);
  for (const signal of FORWARDED) {
    process.on(signal, () => {
      // A terminal's Ctrl-C reaches the child too (same process group): pass it on only when
      // it did not come from there, or the server would see two.
      if (signal === 'SIGINT' && terminal) return;
      child.kill(signal);
    });
  }
}

/** Run the binary as a child, until it ends; end the same way. */
function runAsChild(binary, args) {
  const child = childProcess.spawn(binary, args, {
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
    env: { ...process.env, [PARENT_PIPE]: '3' },
  });
  // Our end of the child's fd 3: closed by the kernel when this process dies, however.
  const parentPipe = child.stdio[3];
  passSignalsOn(child);
  child.on('error', (error) => fail(`cannot run ${binary}: ${error.message}`));
  child.on('exit', (code, signal) => {
    parentPipe.destroy();
    if (signal === null) process.exit(code === null ? 1 : code);
    for (const forwarded of FORWARDED) process.removeAllListeners(forwarded);
    process.kill(process.pid, signal);
    // A signal Node.js ignores (SIGPIPE) or that did not end us: the shell's convention.
    process.exit(128 + (os.constants.signals[signal] || 0));
  });
}

const binary = findBinary();
const args = process.argv.slice(2);
execInPlace(binary, args);
runAsChild(binary, args);
