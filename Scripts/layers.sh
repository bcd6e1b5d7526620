#!/usr/bin/env bash
# The layers of Sources/CredFile point one way (issue #27). CredFile is one module, so the
# compiler refuses no back arrow; this script does. From the bottom:
#
#   Internals → Storage → Model → Hashing → Parsing → Policy → State → front door → features
#
# (Hashing sits below Parsing: the line classifier and `check` ask the hash registry,
# and no hash parser reads a line.) The front door is every file at the top of
# Sources/CredFile (CredentialStore*.swift, FileCache.swift, CredFileInfo.swift).
# Guard/ (SPEC §9) belongs to the front door: a store carries its guard, and the guard
# answers with the front door's Verification. State/ (the state database of SPEC §9–§15: its
# backends, schema and tables) sits below them: it stores rows and knows no rule, and the
# guard (and later the portal) decide over it. Every other folder is a feature folder at
# the top (Apps, Configuration, Import, Export, Integrations, and any folder added later
# until it is placed in this list): features may use and extend everything below, and each other, but nothing
# below may name them. CredFileError.swift, the one error type, and Escaped.swift, the one
# escaping of names and paths in messages, are outside the order both ways: every layer
# throws the error and prints its paths escaped, and the error's Refusal names every
# layer's rule answers.
#
# A file fails when it names a type declared (at the top level of a file) in a layer
# above its own, or calls a function that a layer above declares in an `extension` (any
# function of an extension of a standard library type such as `Unicode`; a static one of
# an extension of a type from below: calls that type names alone cannot show) and that no
# file of its own layer or below declares too, unless `allowed` below lists the pair with
# its reason; comments and string literals are not read. And no file outside
# Internals/ may import a C module (a target of Sources/ with a module map or an
# include/ folder: COpenSSL, CLibcrypt, CArgon2, COath, CFido2, CCbor, CCredFile). Glibc, Dispatch and
# Synchronization are the platform's, not this package's, and may be imported anywhere.
#
#   bash Scripts/layers.sh [ROOT]     check ROOT (default: this repository)
#   bash Scripts/layers.sh --self-test  plant upward uses in a copy and expect failures
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ ${1:-} == --self-test ]]; then
    copy=$(mktemp -d)
    trap 'rm -rf "$copy"' EXIT
    expect() {  # expect PASS|FAIL WHAT: run the check on the copy
        local got=PASS
        bash "$here/layers.sh" "$copy" >"$copy/out" 2>&1 || got=FAIL
        [[ $got == "$1" ]] || { cat "$copy/out"; echo "layers.sh self-test: $2 gave $got, not $1" >&2; exit 1; }
    }
    plant() { printf '%s\n' "$2" >"$copy/Sources/CredFile/$1"; expect FAIL "$1"; rm "$copy/Sources/CredFile/$1"; }
    cp -R "$here/../Sources" "$copy/Sources"
    expect PASS "the tree as it is"
    plant Storage/Planted.swift 'func planted(_ store: CredentialStore) {}'
    plant Model/Planted.swift 'extension Verifier {}'
    plant Planted.swift 'let planted = HashingThreads.self'
    plant Parsing/Planted.swift 'internal import CCredFile'
    printf '%s\n' 'extension Unicode {' '    static func plantedFold(_ s: String) -> String { s }' '}' >"$copy/Sources/CredFile/Policy/PlantedFold.swift"
    plant Model/Planted.swift 'let planted = Unicode.plantedFold("x")'
    rm "$copy/Sources/CredFile/Policy/PlantedFold.swift"
    echo "layers.sh self-test: the tree passes; 5 planted violations fail"
    exit 0
fi
root=$(cd "${1:-$here/..}" && pwd)
src=$root/Sources/CredFile
# FILE NAME…: upward names a file may use, and why.
allowed='
Internals/PeerLibraries.swift SecretBytes
Model/StoredSecret.swift PasswordHash KnownHash
'
# PeerLibraries: the C libraries write keys straight into zeroed-on-release SecretBytes.
# StoredSecret: a parsed secret carries its hash (credfile'"'"'s own, or a peer'"'"'s KnownHash).
# #27's HashFamily change made the families one protocol (HashFamily, 3f12d4a), but the
# protocol and every family parse and verify, so they stay in Hashing/; the enum that
# holds a parsed one stays in Model/, where the parsers of lines (above Hashing) see it.
rank() {  # rank FILE: its layer, 0 (Internals) to 8 (a feature folder); -1 for the error type
    local rel=${1#"$src"/}
    if [[ $rel == CredFileError.swift || $rel == Escaped.swift ]]; then echo -1; return; fi
    if [[ $rel != */* ]]; then echo 7; return; fi
    case ${rel%%/*} in
    Internals) echo 0 ;; Storage) echo 1 ;; Model) echo 2 ;; Hashing) echo 3 ;; Parsing) echo 4 ;; Policy) echo 5 ;;
    State) echo 6 ;;
    Guard) echo 7 ;;
    *) echo 8 ;;
    esac
}
# Code only: comments and string literals removed (a doc comment may name anything).
code() { sed -E -e 's/"([^"\\]|\\.)*"/""/g' -e 's://.*$::' "$1"; }
declared() {
    { grep -hoE '^(@[A-Za-z]+ +)*((public|package|internal|fileprivate|private|open|final|indirect) +)*(struct|enum|class|protocol|actor|typealias) +[A-Za-z_][A-Za-z0-9_]*' "$1" || true; } | awk '{print $NF}'
}
# The functions a file declares in extensions, as "TYPE static|instance NAME", and every function it declares.
extended() {
    awk '/^(@[A-Za-z]+ +)*((public|package|internal|fileprivate|private) +)*extension / {
            ext = 1; t = $0; sub(/^.*extension +/, "", t); sub(/[^A-Za-z0-9_.].*$/, "", t); next }
        /^}/ { ext = 0; next }
        ext && match($0, /^    (@[A-Za-z]+ +)*((public|package|internal|fileprivate|private|static|final|mutating|nonisolated|override|class) +)*func +[A-Za-z_][A-Za-z0-9_]*/) {
            m = substr($0, RSTART, RLENGTH); n = split(m, w, / +/); print t, (m ~ / static /) ? "static" : "instance", w[n] }' "$1"
}
functions() { { grep -hoE '\bfunc +[A-Za-z_][A-Za-z0-9_]*' "$1" || true; } | awk '{print $NF}'; }
mapfile -t files < <(find "$src" -name '*.swift' | sort)
declare -A names typerank extensions own  # rank → type names; type → rank; rank → extension functions, all functions
for f in "${files[@]}"; do
    r=$(rank "$f") d=$(declared "$f")
    names[$r]+="$d"$'\n'
    for t in $d; do typerank[$t]=$r; done
done
# An extension's function is what type names cannot show when its type is the standard
# library's (`Unicode.nfcBytes`), or, for a static one, when its type is declared in a layer
# below the extension's (a lower file may name the type). An instance method added to a
# lower type from above (`entry.judged(by:)`) is not collected: its name alone would also
# match the standard library's methods of that name (`remove`, `split`, `lock`…).
for f in "${files[@]}"; do
    r=$(rank "$f")
    own[$r]+="$(functions "$f")"$'\n'
    while read -r t kind name; do
        [[ -z ${name:-} ]] && continue
        if [[ -z ${typerank[${t%%.*}]:-} ]] || { [[ $kind == static ]] && ((typerank[${t%%.*}] < r)); }; then
            extensions[$r]+=$name$'\n'
        fi
    done < <(extended "$f")
done
failed=0
cmodules=$(for d in "$root"/Sources/*/; do if [[ -e $d/module.modulemap || -d $d/include ]]; then basename "$d"; fi; done | paste -sd'|')
for f in "${files[@]}"; do
    r=$(rank "$f") above=""
    [[ $r == -1 ]] && continue
    calls="" below=""
    for ((k = r + 1; k <= 8; k++)); do above+=${names[$k]:-} calls+=${extensions[$k]:-}; done
    for ((k = -1; k <= r; k++)); do below+=${own[$k]:-}; done
    exempt=$(grep "^${f#"$src"/} " <<<"$allowed" | cut -d' ' -f2- | tr ' ' '\n' || true)
    above=$(grep -v '^$' <<<"$above" | grep -vxF -f <(echo "${exempt:-^}") || true)
    if [[ -n $above ]] && hits=$(code "$f" | grep -nwF -f <(echo "$above")); then
        while IFS= read -r hit; do
            echo "${f#"$root"/}:${hit%%:*}: names $(grep -owF -f <(echo "$above") <<<"${hit#*:}" | sort -u | paste -sd,), declared in a layer above"
        done <<<"$hits"
        failed=1
    fi
    # A call of an extension function from above (`.name(` or `name(`) that nothing at this rank or below declares.
    calls=$(grep -v '^$' <<<"$calls" | sort -u | grep -vxF -f <(echo "${exempt:-^}") | grep -vxF -f <(grep -v '^$' <<<"$below$'\n'^") || true)
    if [[ -n $calls ]] && hits=$(code "$f" | grep -nE "(\.|\b)($(paste -sd'|' <<<"$calls"))\(|\.($(paste -sd'|' <<<"$calls"))\b"); then
        while IFS= read -r hit; do
            echo "${f#"$root"/}:${hit%%:*}: calls $(grep -oE "\b($(paste -sd'|' <<<"$calls"))\b" <<<"${hit#*:}" | sort -u | paste -sd,), declared in an extension in a layer above"
        done <<<"$hits"
        failed=1
    fi
    if [[ $r != 0 ]] && hit=$(grep -nE "^[^/]*import +($cmodules)\b" "$f"); then
        echo "${f#"$root"/}:${hit%%:*}: imports a C module outside Internals/"
        failed=1
    fi
done
exit $failed
