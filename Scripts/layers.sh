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
# answers with the front door's Verification. State/ (the state database of SPEC §9–§15: its backends, schema and tables) sits below them: it stores rows and knows no rule, and the guard (and later the portal) decide over it. Every other folder is a feature folder at
# the top (Apps, Import, Export, Integrations, and any folder added later, such as a
# serve feature, until it is placed in this list): features may use and extend everything below, and each other, but nothing
# below may name them. CredFileError.swift, the one error type, and Escaped.swift, the one
# escaping of names and paths in messages, are outside the order both ways: every layer
# throws the error and prints its paths escaped, and the error's Refusal names every
# layer's rule answers.
#
# A file fails when it names a type declared (at the top level of a file) in a layer
# above its own, unless `allowed` below lists the pair with its reason; comments and
# string literals are not read. And no file outside
# Internals/ may import a C module (a target of Sources/ with a module map or an
# include/ folder: COpenSSL, CLibcrypt, CArgon2, CCredFile). Glibc, Dispatch and
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
    echo "layers.sh self-test: the tree passes; 4 planted violations fail"
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
# StoredSecret: a parsed secret carries its hash (credfile'"'"'s own, or a peer'"'"'s KnownHash);
# #27's HashFamily change is to make those one protocol, which can then sit in Model/.
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
mapfile -t files < <(find "$src" -name '*.swift' | sort)
declare -A names  # rank → the type names declared in files of that rank
for f in "${files[@]}"; do names[$(rank "$f")]+="$(declared "$f")"$'\n'; done
failed=0
cmodules=$(for d in "$root"/Sources/*/; do if [[ -e $d/module.modulemap || -d $d/include ]]; then basename "$d"; fi; done | paste -sd'|')
for f in "${files[@]}"; do
    r=$(rank "$f") above=""
    [[ $r == -1 ]] && continue
    for ((k = r + 1; k <= 8; k++)); do above+=${names[$k]:-}; done
    exempt=$(grep "^${f#"$src"/} " <<<"$allowed" | cut -d' ' -f2- | tr ' ' '\n' || true)
    above=$(grep -v '^$' <<<"$above" | grep -vxF -f <(echo "${exempt:-^}") || true)
    if [[ -n $above ]] && hits=$(code "$f" | grep -nwF -f <(echo "$above")); then
        while IFS= read -r hit; do
            echo "${f#"$root"/}:${hit%%:*}: names $(grep -owF -f <(echo "$above") <<<"${hit#*:}" | sort -u | paste -sd,), declared in a layer above"
        done <<<"$hits"
        failed=1
    fi
    if [[ $r != 0 ]] && hit=$(grep -nE "^[^/]*import +($cmodules)\b" "$f"); then
        echo "${f#"$root"/}:${hit%%:*}: imports a C module outside Internals/"
        failed=1
    fi
done
exit $failed
