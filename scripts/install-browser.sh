#!/usr/bin/env bash
# Installs playwright-core, pinned (tests/browser/package-lock.json), into .tools/browser/, a
# git-ignored folder of this checkout, for the dashboard's browser test. It drives the system's
# Chromium (Debian's `chromium` package: `apt-get install -y chromium`), never a browser build of
# its own. Skips the install when .tools/browser was last installed from exactly this lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=tests/browser
dest=.tools/browser
stamp="$dest/installed-from.json"
if cmp -s "$pins/package-lock.json" "$stamp"; then
    echo "playwright-core already installed in $dest"
    exit 0
fi
command -v npm >/dev/null || { echo "install-browser: npm is needed (Node.js 20 or newer)" >&2; exit 1; }
mkdir -p "$dest"
cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error
cp "$pins/package-lock.json" "$stamp"
echo "playwright-core $(node -p "require('./$dest/node_modules/playwright-core/package.json').version") in $dest"
command -v chromium >/dev/null || echo "install-browser: no chromium on PATH: apt-get install -y chromium" >&2
