#!/usr/bin/env bash
# Prints the work of each peer hash scheme in rounds of credfile's PBKDF2-HMAC-SHA256
# loop: the PeerWork constants (Sources/CredFile/Hashing/Schemes/PeerWork.swift).
# Ratios measured side by side in one run; nothing is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O2 -o "$out/peer-work" Benchmarks/peer-work.c Sources/CCredFile/*.c \
    -I Sources/COpenSSL -I Sources/CCredFile/include \
    $(pkg-config --cflags --libs libcrypto libxcrypt libargon2)
"$out/peer-work"
