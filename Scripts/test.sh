#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs `swift test`
# (Swift Testing; the last line reads "Test run with N tests … passed").
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
swift build --product credfile   # the CLI tests run the built binary
swift test
