#!/usr/bin/env bash
# The demo: builds credfile and runs it over Examples/usuarios.txt (the seed app's
# three users), on a copy in a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh build   # headers only: no server, no service, no Python
swift build --product credfile 2>&1 | tail -1
credfile="$PWD/.build/debug/credfile"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp Examples/usuarios.txt "$work/usuarios.txt"
chmod 600 "$work/usuarios.txt"   # a credential file is for its owner only (check warns otherwise)
cd "$work"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
try() {  # try USER PASSWORD: a login with the password on stdin, never on argv
    printf '%s\n' "$2" | "$credfile" verify usuarios.txt "$1" && echo "→ granted" || echo "→ denied (exit $?)"
}

step "cat usuarios.txt"; cat usuarios.txt
step "credfile check usuarios.txt"; "$credfile" check usuarios.txt || true
step "credfile list usuarios.txt"; "$credfile" list usuarios.txt
step "valencia / contrasena123 (the right password)"; try valencia contrasena123
echo; echo "The seed app's substring check granted each of these; credfile denies them:"
step "ncia / contrasena123 (suffix of a name)"; try ncia contrasena123
step "valencia / contrasena12 (prefix of a password)"; try valencia contrasena12
step "admin / (empty password)"; try admin ""
step "(empty username) / adminpass"; try "" adminpass
step "register 'x<LF>admin' (a name that would inject a second line)"
printf 'pw\n' | "$credfile" add usuarios.txt "$(printf 'x\nadmin')" || echo "→ refused (exit $?)"
step "credfile upgrade usuarios.txt   # salted PBKDF2-SHA256, 1,200,000 rounds"
"$credfile" upgrade usuarios.txt
step "credfile list usuarios.txt"; "$credfile" list usuarios.txt
step "valencia / contrasena123 after the upgrade"; try valencia contrasena123
step "credfile upgrade usuarios.txt   # again: nothing to do"; "$credfile" upgrade usuarios.txt
step "credfile check usuarios.txt"; "$credfile" check usuarios.txt && echo "→ clean"
