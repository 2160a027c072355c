#!/usr/bin/env bash
# Installs playwright-core, pinned (tests/browser/package-lock.json), into .tools/browser/ for
# the dashboard's browser test. It drives the system's Chromium (Debian's `chromium` package:
# `apt-get install -y chromium`), never a browser build of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/npm-pinned.sh
dest=.tools/browser
npm_pinned tests/browser "$dest" playwright-core ci || exit 0
echo "playwright-core $(node -p "require('./$dest/node_modules/playwright-core/package.json').version") in $dest"
command -v chromium >/dev/null || echo "install-browser: no chromium on PATH: apt-get install -y chromium" >&2
