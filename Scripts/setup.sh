#!/usr/bin/env bash
# Installs what building and testing credfile needs on Debian 12 with the Swift
# toolchain on PATH: OpenSSL's libcrypto headers (libssl-dev), pkg-config, and
# passlib (PyPI) for the cross-checks against passlib. Does nothing that is already there.
set -euo pipefail

need_apt=()
dpkg -s libssl-dev >/dev/null 2>&1 || need_apt+=(libssl-dev)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v script >/dev/null 2>&1 || need_apt+=(util-linux)
if ((${#need_apt[@]})); then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! python3 -c 'import passlib' >/dev/null 2>&1; then
    python3 -m pip install -q passlib==1.7.4
fi
command -v swift >/dev/null || { echo "setup: the Swift toolchain is not on PATH" >&2; exit 1; }
