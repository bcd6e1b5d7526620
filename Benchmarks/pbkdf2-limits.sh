#!/usr/bin/env bash
# Prints PBKDF2's rounds against the compression-function limit on this CPU (issue #29):
# Benchmarks/pbkdf2-limits.c linked against the CCredFile objects SwiftPM built for
# release (the code credfile ships), run once as the CPU is and once with OpenSSL's SHA
# extensions masked (OpenSSL's code without SHA-NI, credfile's TRANSFORM loop on it).
# Ratios measured side by side in one run; nothing is asserted. BENCH_QUICK=1: fewer
# repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
static=(-c release --static-swift-stdlib --scratch-path .build/release-static)
objects="$(swift build "${static[@]}" --show-bin-path)/CCredFile.build"
[ -f "$objects/pbkdf2.c.o" ] || swift build "${static[@]}" --product credfile 2>&1 | tail -1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/pbkdf2-limits" Benchmarks/pbkdf2-limits.c "$objects/pbkdf2.c.o" "$objects/openssl.c.o" \
    -I Sources/CCredFile/include $(pkg-config --cflags --libs libcrypto)
"$out/pbkdf2-limits"
"$out/pbkdf2-limits" --no-sha
