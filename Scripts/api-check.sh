#!/usr/bin/env bash
# The public API of the CredFile module against its committed baseline: fails on any
# change that was not announced — a public declaration added, removed, or changed
# (signature, accessors, defaults, attributes, conformances) — and prints it as a diff.
#
#   bash Scripts/api-check.sh              # check (CI runs this)
#   bash Scripts/api-check.sh --update     # announce a change: rewrite the baseline
#   bash Scripts/api-check.sh --self-test  # check, then check that a planted change fails
#
# The baseline is the toolchain's swift-api-digester dump of the built module
# (Documentation/API/CredFile.json, imports left out) and its readable listing, one
# declaration a line (Documentation/API/CredFile.api.txt, made from the dump by
# Scripts/api-listing.py). To change the public API on purpose, run --update and commit
# both files with the change, saying why in the commit and in CHANGELOG.md; a reviewer
# reads the change in CredFile.api.txt's diff. When the check fails it also prints the
# digester's own verdict on what breaks existing callers (an addition breaks none).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=check
case "${1:-}" in
    "") ;;
    --update) mode=update ;;
    --self-test) mode=self-test ;;
    *) echo "usage: bash Scripts/api-check.sh [--update | --self-test]" >&2; exit 2 ;;
esac
baseline=Documentation/API/CredFile.json
listing=Documentation/API/CredFile.api.txt
out=.build/api
target="$(uname -m)-unknown-linux-gnu"
mkdir -p "$out"

nice swift build --target CredFile
bin=$(swift build --show-bin-path)
mapfile -t flags < <(bash Scripts/module-flags.sh "$bin")

# dump MODULE_DIR OUT.json: the digester's dump of the CredFile module found in MODULE_DIR
# (searched before the build's own modules), without its imports.
dump() {
    swift-api-digester -dump-sdk -module CredFile -target "$target" -I "$1" "${flags[@]}" \
        -avoid-location -avoid-tool-args -o "$2.raw"
    python3 Scripts/api-listing.py strip "$2.raw" "$2"
    rm -f "$2.raw"
}

# compare BASELINE.json CURRENT.json: 0 when their listings are the same; otherwise prints
# the listing's diff (- baseline, + now) and the digester's verdict, and returns 1.
compare() {
    python3 Scripts/api-listing.py list "$1" >"$out/baseline.txt"
    python3 Scripts/api-listing.py list "$2" >"$out/current.txt"
    if cmp -s "$out/baseline.txt" "$out/current.txt"; then return 0; fi
    echo "The public API of CredFile changed (- baseline, + this tree):"
    diff -U0 "$out/baseline.txt" "$out/current.txt" | grep -E '^[-+][^-+]' || true
    echo
    echo "swift-api-digester on what breaks existing callers:"
    swift-api-digester -diagnose-sdk -target "$target" -input-paths "$1" -input-paths "$2" 2>&1 |
        grep -vE '^\s*$|^/\*' | sed 's/^/  /' || echo "  nothing"
    return 1
}

dump "$bin/Modules" "$out/CredFile.json"

if [ "$mode" = update ]; then
    mkdir -p "$(dirname "$baseline")"
    if [ -f "$baseline" ]; then compare "$baseline" "$out/CredFile.json" || true; fi
    cp "$out/CredFile.json" "$baseline"
    python3 Scripts/api-listing.py list "$baseline" >"$listing"
    echo "api-check: baseline updated ($baseline, $listing); commit both with the change and say why"
    exit 0
fi

[ -f "$baseline" ] || { echo "api-check: no $baseline; make it with --update" >&2; exit 1; }
python3 Scripts/api-listing.py list "$baseline" | cmp -s - "$listing" || {
    echo "api-check: $listing is not the listing of $baseline (edited by hand?); run --update" >&2
    exit 1
}
if ! compare "$baseline" "$out/CredFile.json"; then
    echo
    echo "api-check: unannounced public API change. If it is meant, announce it:" \
        "bash Scripts/api-check.sh --update, and commit $baseline and $listing with the change." >&2
    exit 1
fi
echo "api-check: the public API matches $listing ($(wc -l <"$listing") declarations)"

if [ "$mode" = self-test ]; then
    # Plant a change in a copy of the sources, build only its module interface, and expect
    # the check to fail naming the planted declaration, in both directions (added, removed).
    # The package name is SwiftPM's identity of this package (the checkout's folder name,
    # lowercased), which `package` declarations of the other targets are visible under.
    planted=$(mktemp -d)
    trap 'rm -rf "$planted"' EXIT
    cp -R Sources/CredFile "$planted/CredFile"
    rm -rf "$planted/CredFile/CredFile.docc"
    printf '%s\n' 'extension CredentialStore {' \
        '    /// Planted by Scripts/api-check.sh --self-test.' \
        '    public func plantedByTheAPISelfTest() {}' '}' >"$planted/CredFile/Planted.swift"
    mkdir -p "$planted/module"
    # SwiftPM's -package-name: the root folder's name, lowercased, with every byte that
    # cannot be in a C identifier made `_` (a clone in `tmp.AbC` is package `tmp_abc`).
    package_name=$(basename "$PWD" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9_]/_/g; s/^[0-9]/_&/')
    find "$planted/CredFile" -name '*.swift' -print0 | sort -z | xargs -0 \
        swiftc -emit-module -parse-as-library -emit-module-path "$planted/module/CredFile.swiftmodule" \
        -module-name CredFile -package-name "$package_name" -swift-version 6 -target "$target" \
        -D SWIFT_PACKAGE -D DEBUG -enable-testing "${flags[@]}" >"$planted/build.log" 2>&1 || {
        cat "$planted/build.log" >&2
        echo "api-check --self-test: the planted module did not build" >&2
        exit 1
    }
    dump "$planted/module" "$planted/CredFile.json"
    for direction in added removed; do
        if [ $direction = added ]; then pair=("$baseline" "$planted/CredFile.json"); else pair=("$planted/CredFile.json" "$baseline"); fi
        if compare "${pair[@]}" >"$planted/$direction.log"; then
            echo "api-check --self-test: a planted public function ($direction) went through; the check is broken" >&2
            exit 1
        fi
        grep -q "plantedByTheAPISelfTest" "$planted/$direction.log" || {
            cat "$planted/$direction.log" >&2
            echo "api-check --self-test: the check failed, but did not name the planted function" >&2
            exit 1
        }
    done
    echo "api-check --self-test: a planted public function, added or removed, fails the check, as it should:"
    sed -n '2p' "$planted/added.log"
fi
