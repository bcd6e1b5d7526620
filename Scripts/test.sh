#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs `swift test`
# (Swift Testing; the last line reads "Test run with N tests … passed").
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/layers.sh              # Sources/CredFile's layers point one way (#27)
bash Scripts/layers.sh --self-test  # and the check fails on a planted upward use
bash Scripts/setup.sh
swift build --product credfile   # the CLI tests run the built binary
swift test
