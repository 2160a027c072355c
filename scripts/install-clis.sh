#!/usr/bin/env bash
# Installs the pinned real CLIs (tests/real/package-lock.json) into .cli-agents/,
# a git-ignored folder of this checkout; never globally. The real-CLI tests look there.
# Skips the install when .cli-agents was last installed from exactly this lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=tests/real
dest=.cli-agents
stamp="$dest/installed-from.json"
if cmp -s "$pins/package-lock.json" "$stamp"; then
    echo "real CLIs already installed in $dest"
    exit 0
fi
command -v npm >/dev/null || { echo "install-clis: npm is needed (Node.js 18 or newer)" >&2; exit 1; }
mkdir -p "$dest"
cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
# Install scripts stay on: claude's and opencode's link their platform binary into place.
# `npm install` rather than `npm ci`: npm 11 reads platform-only optional dependencies
# as missing from the lockfile and refuses `ci`. The lockfile still pins every version.
npm install --prefix "$dest" --no-audit --no-fund --loglevel=error
cp "$pins/package-lock.json" "$stamp"
for cli in codex claude gemini opencode qwen copilot; do
    printf '%-9s %s\n' "$cli" "$("$dest/node_modules/.bin/$cli" --version 2>/dev/null | head -n1)"
done
