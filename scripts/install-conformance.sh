#!/usr/bin/env bash
# Installs the pinned MCP conformance suite and a Node 22 to run it
# (tests/conformance/package-lock.json) into .tools/conformance/, where
# tests/conformance/conformance.rs looks. The npm `node` package puts a Node binary of its own version in node_modules/.bin.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/npm-pinned.sh
dest=.tools/conformance
npm_pinned tests/conformance "$dest" "the conformance suite" ci || exit 0
echo "conformance $("$dest/node_modules/.bin/node" "$dest/node_modules/.bin/conformance" --version) on node $("$dest/node_modules/.bin/node" --version)"
