#!/usr/bin/env bash
# The code's layout, as .swift-format says (#27): what `swift format` (Swift 6.3's
# toolchain) would change fails the check. The generated blocklist is left out by its first
# line, `// swift-format-ignore-file`.
#
#   bash Scripts/format.sh            lint --strict: any finding fails (what test.sh runs)
#   bash Scripts/format.sh --fix      rewrite the files in place, then lint
#   bash Scripts/format.sh --self-test  plant a mis-indented line in a copy and expect failure
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Tests Benchmarks Fuzz/Package.swift Fuzz/Sources)
lint() { swift format lint --strict --parallel --recursive "$@"; }
case ${1:-} in
--fix)
    swift format format --in-place --parallel --recursive "${paths[@]}"
    lint "${paths[@]}"
    ;;
--self-test)
    copy=$(mktemp -d)
    trap 'rm -rf "$copy"' EXIT
    cp .swift-format "$copy/"
    printf 'let planted = 1\n      let misindented = 2\n' >"$copy/Planted.swift"
    if (cd "$copy" && lint Planted.swift) >/dev/null 2>&1; then
        echo "format.sh self-test: a mis-indented line passed the lint" >&2
        exit 1
    fi
    echo "format.sh self-test: a planted mis-indented line fails the lint"
    ;;
'')
    lint "${paths[@]}" || { echo "format: run bash Scripts/format.sh --fix (and commit the result)" >&2; exit 1; }
    ;;
*) sed -n '5,8p' "$0" >&2; exit 2 ;;
esac
