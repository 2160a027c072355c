#!/usr/bin/env bash
# Regenerates tests/fixtures/captures/<cli>/*.jsonl from the pinned real CLIs run against the
# mock model server. Run it after changing a pin in tests/real/package.json, then run the
# tests: the dialect parsers' unit tests read these captures.
# CAM_CAPTURE_AGENTS=codex,claude limits it to some CLIs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-clis.sh
cargo test --test real -- --ignored --nocapture regenerate_golden_captures
