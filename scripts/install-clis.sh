#!/usr/bin/env bash
# Installs the real CLIs that the real-CLI tests drive into a git-ignored folder of this
# checkout, never globally:
#
#   scripts/install-clis.sh          the pinned ones (tests/real/package-lock.json) into
#                                    .cli-agents/, once per lockfile
#   scripts/install-clis.sh latest   the newest release of each into .cli-agents-latest/, afresh
#                                    each time, for the canary (CAM_CLIS=latest scripts/test real),
#                                    and how each differs from its pin
#   scripts/install-clis.sh versions that table again, for the newest ones installed last
#
# Either way every CLI runs as <folder>/node_modules/.bin/<cli>, with the Node 22 that claude-code
# wants beside it (node_modules/.bin/node, npm's `node` package, pinned in tests/real/package.json).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/npm-pinned.sh
clis=(codex claude gemini opencode qwen copilot pi cline)
pins=tests/real

# claude-code's postinstall (install.cjs) puts its platform package's native binary in place of
# the bin/claude.exe placeholder; without it `claude` fails (ERR_UNKNOWN_FILE_EXTENSION ".exe").
# Whether npm runs install scripts depends on its version and policy (npm 11 warns about, and
# with a strict policy skips, those that `allowScripts` does not approve: tests/real/package.json
# approves claude-code's, opencode's and node's), and in no set order. So it runs again here, with
# the tree's Node 22, which claude-code wants; it links the binary anew each time.
link_claude() {
    local dir=$1/node_modules/@anthropic-ai/claude-code node=$PWD/$1/node_modules/.bin/node
    "$node" --version >/dev/null \
        || { echo "$1 has no working Node (npm's node package, whose preinstall fetches it)" >&2; return 1; }
    (cd "$dir" && "$node" install.cjs)
}

# Every CLI answers --version from node_modules/.bin, as the tests run it: print each (stdout
# only: codex warns on stderr of a home under the temp dir). Some write state in their home even
# for --version, so they get a scratch one.
check_clis() {
    local dest=$1 errors cli said status=0
    errors=$(mktemp "${TMPDIR:-/tmp}/cli-versions.XXXXXX")
    for cli in "${clis[@]}"; do
        if said=$(with_scratch_home "$dest/node_modules/.bin/$cli" --version 2>"$errors"); then
            # pi prints it on stderr when its stdin is not a terminal.
            [ -n "$said" ] || said=$(cat "$errors")
            printf '%-9s %s\n' "$cli" "${said%%$'\n'*}"
        else
            echo "$dest/node_modules/.bin/$cli --version failed: $(cat "$errors")" >&2
            status=1
            break
        fi
    done
    rm -f "$errors"
    return "$status"
}

finish() {
    link_claude "$1" && check_clis "$1"
}

# A markdown table of each CLI installed in $1: its package, its pin, the version installed,
# and whether they differ. The package is the one whose folder holds the CLI's bin.
versions() {
    node -e '
        const fs = require("fs"), path = require("path");
        const [pins, dest, ...clis] = process.argv.slice(1);
        const wanted = require(path.resolve(pins, "package.json")).dependencies;
        const manifest = dir => { try { return require(path.join(dir, "package.json")); } catch { return {}; } };
        console.log("| CLI | package | pinned | tested | |\n|---|---|---|---|---|");
        for (const cli of clis) {
            let dir = path.dirname(fs.realpathSync(path.join(dest, "node_modules/.bin", cli)));
            while (!(manifest(dir).name in wanted) && dir !== path.dirname(dir)) dir = path.dirname(dir);
            const { name, version } = manifest(dir), pin = wanted[name];
            console.log(`| ${cli} | ${name} | ${pin} | ${version} | ${version === pin ? "same" : "**changed**"} |`);
        }' "$pins" "$1" "${clis[@]}"
}

# The pins' package.json with every CLI at `latest` (Node stays pinned: it is not under test).
latest_package_json() {
    node -e '
        const pkg = require(require("path").resolve(process.argv[1], "package.json"));
        for (const name of Object.keys(pkg.dependencies)) {
            if (name !== "node") pkg.dependencies[name] = "latest";
        }
        console.log(JSON.stringify(pkg, null, 2));' "$pins"
}

install_latest() {
    local dest=.cli-agents-latest
    command -v npm >/dev/null || { echo "installing the newest CLIs: npm is needed" >&2; exit 1; }
    rm -rf "$dest"
    mkdir -p "$dest"
    latest_package_json > "$dest/package.json"
    with_scratch_home npm install --prefix "$dest" --no-audit --no-fund --loglevel=error \
        || { echo "installing the newest CLIs into $dest failed" >&2; exit 1; }
    finish "$dest" || { echo "finishing the newest CLIs in $dest failed" >&2; exit 1; }
    echo "the newest release of each CLI, against its pin:"
    versions "$dest"
}

case ${1:-pinned} in
    pinned)
        # `npm install` rather than `npm ci`: npm 11 reads platform-only optional dependencies
        # as missing from the lockfile and refuses `ci`. The lockfile still pins every version.
        npm_pinned "$pins" .cli-agents "the real CLIs" install finish .cli-agents || exit 0 ;;
    latest) install_latest ;;
    # What the canary tested: the table of the newest CLIs installed last, against the pins.
    versions) versions .cli-agents-latest ;;
    *) echo "usage: scripts/install-clis.sh [pinned|latest|versions]" >&2; exit 2 ;;
esac
