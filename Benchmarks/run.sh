#!/usr/bin/env bash
# Builds credfile in release mode and prints the benchmark table (ratios measured side
# by side in one run; nothing is asserted). BENCH_QUICK=1 for a short run; name
# sections to run only those: pbkdf2 files scale upgrade timing apps.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product credfile 2>&1 | tail -1
swift build -c release --product credfile-server-example 2>&1 | tail -1
exec python3 Benchmarks/bench.py .build/release/credfile "$@"
