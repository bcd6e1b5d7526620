#!/usr/bin/env bash
# The whole test suite: installs what is missing (Scripts/setup.sh's test part: the real
# programs the tests drive, the PyPI peers in .build/peers-venv), then runs `swift test`
# (Swift Testing; the last line reads "Test run with N tests … passed").
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh test          # first: on a fresh machine even `swift format` needs its packages
bash Scripts/layers.sh              # Sources/CredFile's layers point one way (#27)
bash Scripts/layers.sh --self-test  # and the check fails on a planted upward use
bash Scripts/format.sh              # the layout .swift-format asks (swift format lint --strict)
bash Scripts/format.sh --self-test  # and the lint fails on a planted mis-indented line
swift build --product credfile   # the CLI tests run the built binary
swift test
