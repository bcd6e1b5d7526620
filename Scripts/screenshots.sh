#!/usr/bin/env bash
# Refreshes the sign-in page's screenshots in Documentation/screenshots/ (shown by
# Documentation/portal.md) from a run of the real-browser tests: headless Chromium through
# nginx and Caddy over https (Tests/CLITests/BrowserPortalTests.swift). The tests write
# their screenshots to a temporary folder; CREDFILE_SCREENSHOTS names where to copy them,
# so a test run never changes the checkout otherwise. Needs `bash Scripts/setup.sh test`.
set -euo pipefail
cd "$(dirname "$0")/.."
CREDFILE_SCREENSHOTS="$PWD/Documentation/screenshots" swift test --filter "${1:-BrowserPortalTests}"
ls -l Documentation/screenshots
