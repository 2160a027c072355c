#!/usr/bin/env bash
# Installs the pinned MCP conformance suite and a Node 22 to run it (tests/conformance/package-lock.json)
# into .tools/conformance/, a git-ignored folder of this checkout; never globally.
# tests/conformance.rs looks there. Skips the install when it was last installed from exactly
# this lockfile. The npm `node` package puts a Node binary of its own version in node_modules/.bin.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=tests/conformance
dest=.tools/conformance
stamp="$dest/installed-from.json"
if cmp -s "$pins/package-lock.json" "$stamp"; then
    echo "conformance suite already installed in $dest"
    exit 0
fi
command -v npm >/dev/null || { echo "install-conformance: npm is needed (Node.js 18 or newer)" >&2; exit 1; }
mkdir -p "$dest"
cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error
cp "$pins/package-lock.json" "$stamp"
echo "conformance $("$dest/node_modules/.bin/node" "$dest/node_modules/.bin/conformance" --version) on node $("$dest/node_modules/.bin/node" --version)"
