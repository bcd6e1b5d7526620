#!/usr/bin/env bash
# Prints, one a line, the compiler flags that import the built CredFile module from outside
# SwiftPM: what swift-symbolgraph-extract (Scripts/docs.sh), swift-api-digester
# (Scripts/api-check.sh) and `swiftc -typecheck` of a client snippet (the noasync test)
# need.
#
#   bash Scripts/module-flags.sh BIN_DIR    # BIN_DIR: `swift build --show-bin-path`
#
# A debug module built without library evolution names the C modules it imports, even
# `internal import`s, so a client needs their module maps too: each system library's
# Sources/C*/module.modulemap, and the one SwiftPM writes for each C target (CCredFile).
# Found by looking, so a branch that adds a C module needs no change here.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: bash Scripts/module-flags.sh BIN_DIR}
[ -f "$bin/Modules/CredFile.swiftmodule" ] || {
    echo "module-flags: no $bin/Modules/CredFile.swiftmodule (run swift build --target CredFile)" >&2
    exit 1
}
echo "-I"
echo "$bin/Modules"
for map in Sources/*/module.modulemap; do
    echo "-I"
    echo "$PWD/$(dirname "$map")"
done
for target in Sources/*/include; do
    map="$bin/$(basename "$(dirname "$target")").build/module.modulemap"
    if [ -f "$map" ]; then
        echo "-Xcc"
        echo "-fmodule-map-file=$map"
    fi
done
