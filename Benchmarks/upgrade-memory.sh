#!/usr/bin/env bash
# Peak memory of `credfile upgrade` over a generated plaintext file (issue #33 item 6): GNU
# `/usr/bin/time -v`'s maximum resident set against the file before and after. One round
# (`--iterations 1`): the memory is about buffers, not rounds, and a run takes seconds.
# Prints one row; nothing is asserted (the goal: peak − the larger file ≤ 64 MB).
#
#   bash Benchmarks/upgrade-memory.sh [CREDFILE] [LINES]   (default .build/release/credfile, 1,000,000)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/release/credfile}
lines=${2:-1000000}
[[ -x $bin ]] || { echo "upgrade-memory: no $bin (swift build -c release --product credfile)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "upgrade-memory: needs GNU time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v n="$lines" 'BEGIN { for (i = 0; i < n; i++) printf "user%06d,password%06d\n", i, i }' >"$work/plain.txt"
chmod 600 "$work/plain.txt"
before=$(stat -c %s "$work/plain.txt")
/usr/bin/time -v "$bin" upgrade --iterations 1 "$work/plain.txt" >/dev/null 2>"$work/time"
after=$(stat -c %s "$work/plain.txt")
peak=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
awk -v p="$peak" -v b="$before" -v a="$after" -v n="$lines" 'BEGIN {
    larger = (a > b ? a : b) / 1048576
    printf "upgrade --iterations 1 of %d plaintext lines: peak RSS %.0f MB, file %.0f → %.0f MB, peak − larger file %.0f MB (goal ≤ 64)\n",
        n, p / 1024, b / 1048576, a / 1048576, p / 1024 - larger }'
