#!/usr/bin/env bash
# Installs the pinned real CLIs (tests/real/package-lock.json) into .cli-agents/, where the
# real-CLI tests look.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/npm-pinned.sh
dest=.cli-agents
# Install scripts stay on: claude's and opencode's link their platform binary into place.
# `npm install` rather than `npm ci`: npm 11 reads platform-only optional dependencies
# as missing from the lockfile and refuses `ci`. The lockfile still pins every version.
npm_pinned tests/real "$dest" "the real CLIs" install || exit 0
for cli in codex claude gemini opencode qwen copilot; do
    printf '%-9s %s\n' "$cli" "$("$dest/node_modules/.bin/$cli" --version 2>/dev/null | head -n1)"
done
