#!/usr/bin/env bash
# Builds the library's API documentation (DocC) with the toolchain's own docc, from the
# catalog Sources/CredFile/CredFile.docc and the public symbols of the built module, and
# fails on any warning (a broken ``link``, an undocumented parameter, a bad topic group).
# No SwiftPM plugin: none can be fetched here.
#
#   bash Scripts/docs.sh              # → .build/docs/CredFile.doccarchive
#   bash Scripts/docs.sh --self-test  # also checks that a planted broken link fails it
#
# Read it: python3 -m http.server -d .build/docs/CredFile.doccarchive 8000, then open
# http://127.0.0.1:8000/documentation/credfile (a static site; for a sub-path, add
# --hosting-base-path to the docc call below).
set -euo pipefail
cd "$(dirname "$0")/.."
self_test=false
case "${1:-}" in
    "") ;;
    --self-test) self_test=true ;;
    *) echo "usage: bash Scripts/docs.sh [--self-test]" >&2; exit 2 ;;
esac
docc=$(dirname "$(readlink -f "$(command -v swift)")")/docc
[ -x "$docc" ] || docc=$(command -v docc)
catalog=Sources/CredFile/CredFile.docc
out=.build/docs

nice swift build --target CredFile
bin=$(swift build --show-bin-path)
mapfile -t flags < <(bash Scripts/module-flags.sh "$bin")
rm -rf "$out/symbol-graphs"
mkdir -p "$out/symbol-graphs"
swift-symbolgraph-extract -module-name CredFile -target "$(uname -m)-unknown-linux-gnu" "${flags[@]}" \
    -minimum-access-level public -output-dir "$out/symbol-graphs"

# convert CATALOG ARCHIVE LOG: docc convert; fails on any warning. --warnings-as-errors
# sets the status; the grep also catches a warning some docc version reports without it.
convert() {
    rm -rf "$2"
    local status=0
    "$docc" convert "$1" --additional-symbol-graph-dir "$out/symbol-graphs" \
        --fallback-display-name CredFile --fallback-bundle-identifier org.credfile.CredFile \
        --output-path "$2" --warnings-as-errors >"$3" 2>&1 || status=$?
    if [ "$status" -ne 0 ] || grep -qE '^(warning|error):' "$3"; then
        return 1
    fi
}

# The articles' ```swift blocks are compiled against the built module (swiftc -typecheck,
# Swift 6 mode, warnings as errors), so an example that stops compiling fails the build too.
# Each block becomes the body of a function of its own (async when it awaits at its top
# level); #sourceLocation points errors at the article's line. A block right after a line
# `<!-- docs.sh: not compiled (why) -->` is skipped (SwiftUI, which Linux lacks).
snippets="$out/snippets.swift"
awk -v q='"' '
    FNR == 1 { skip = 0; inside = 0 }
    /^<!-- docs.sh: not compiled/ { skip = 1; next }
    !inside && /^```swift[ \t]*$/ {
        inside = 1; n++; start = FNR + 1; file = FILENAME; body = ""; async = 0
        if (skip) { inside = 2 }
        skip = 0; next
    }
    inside && /^```[ \t]*$/ {
        if (inside == 1) {
            printf "func snippet%d() %sthrows {\n#sourceLocation(file: %s%s%s, line: %d)\n%s#sourceLocation()\n}\n", n, async ? "async " : "", q, file, q, start, body
        }
        inside = 0; next
    }
    inside == 2 { next }
    inside {
        if ($0 ~ /^import /) { imports[$0] = 1; body = body "\n"; next }
        if ($0 ~ /^[^ \t].*await/) { async = 1 }
        body = body $0 "\n"; next
    }
    { skip = 0 }
    END { for (i in imports) print i > "/dev/stderr" }
' "$catalog"/*.md >"$snippets.body" 2>"$snippets.imports"
{ echo "import CredFile"; sort -u "$snippets.imports" | grep -vx "import CredFile" || true; cat "$snippets.body"; } >"$snippets"
if ! swiftc -swift-version 6 -typecheck -warnings-as-errors -target "$(uname -m)-unknown-linux-gnu" "${flags[@]}" \
    -parse-as-library "$snippets"; then
    echo "docs: an article's example does not compile (above; the generated file is $snippets)" >&2
    exit 1
fi

if ! convert "$catalog" "$out/CredFile.doccarchive" "$out/docc.log"; then
    cat "$out/docc.log" >&2
    echo "docs: docc reported $(grep -cE '^(warning|error):' "$out/docc.log") problem(s) (above); fix them" >&2
    exit 1
fi
echo "docs: 0 warnings; $out/CredFile.doccarchive (see the top of Scripts/docs.sh to read it)"

if $self_test; then
    planted=$(mktemp -d)
    trap 'rm -rf "$planted"' EXIT
    cp -R "$catalog" "$planted/CredFile.docc"
    printf '\nSee ``CredentialStore/noSuchMethodPlantedByTheSelfTest()``.\n' >>"$planted/CredFile.docc/CredFile.md"
    if convert "$planted/CredFile.docc" "$planted/out" "$planted/docc.log"; then
        echo "docs --self-test: a planted broken link went through; the check is broken" >&2
        exit 1
    fi
    grep -q noSuchMethodPlantedByTheSelfTest "$planted/docc.log" || {
        cat "$planted/docc.log" >&2
        echo "docs --self-test: docc failed, but not on the planted link" >&2
        exit 1
    }
    echo "docs --self-test: a planted broken link fails the build, as it should"
fi
