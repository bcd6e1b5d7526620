#!/usr/bin/env bash
# Installs what credfile needs on Debian 12 with the Swift toolchain on PATH, in two parts,
# each doing nothing that is already there:
#
#   bash Scripts/setup.sh build   # what building needs: the toolchain's own packages,
#                                 # libraries' headers and pkg-config.
#                                 # Safe on a real host: no server, no service, no Python.
#                                 # Scripts/demo.sh runs this part.
#   bash Scripts/setup.sh test    # the build part, then the real programs the tests drive
#                                 # (nginx, Dovecot, slapd, Squid, Caddy, fail2ban, …) and
#                                 # the PyPI peers in .build/peers-venv. For a build or CI
#                                 # machine. Scripts/test.sh (and so CI) runs this part; it
#                                 # is also what `bash Scripts/setup.sh` alone does.
#
# The test part keeps the packages' services from starting while it installs them (the
# tests start their own copies on loopback or in private directories and stop them by
# PID), and leaves /usr/sbin/policy-rc.d as it found it. The PyPI peers go into a virtual
# environment because Debian 12's system pip refuses to install into the system Python
# (externally-managed-environment); the tests run them through ExternalTool.peerPython.
# Packages are installed as root (through sudo when run by another user).
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-test}
case "$part" in
    build | test) ;;
    *) echo "usage: bash Scripts/setup.sh [build|test]" >&2; exit 2 ;;
esac

# The toolchain's own needs: what swift.org's Debian 12 instructions (and its debian12 image)
# install beside the toolchain, which a machine that only unpacked it lacks (the driver links
# libncurses and libsqlite3, swift-build libcurl and libxml2; linking needs gold, libc and
# libstdc++'s files).
toolchain_packages=(
    binutils gcc libstdc++-12-dev libc6-dev      # binutils has ld.gold (Debian 12 binutils-gold is only its virtual name)
    libcurl4-openssl-dev libedit-dev libsqlite3-0 libncurses-dev libpython3-dev libxml2-dev
    uuid-dev tzdata git
)
# Build part: what `swift build` links (each a .systemLibrary of Package.swift, found by
# pkg-config), and the headers of the three it opens at first use (ICU, libmicrohttpd,
# libsystemd: Documentation/Decisions.md §7 "Start-up").
build_packages=(
    pkg-config
    libssl-dev                                  # OpenSSL's libcrypto
    libcrypt-dev libargon2-dev                  # libxcrypt (crypt(3) families), libargon2
    libicu-dev                                  # ICU: RFC 4518's LDAP string preparation (export)
    libsqlite3-dev                              # the guard database (SPEC §9)
    libmicrohttpd-dev libsystemd-dev            # serve's HTTP, socket activation (SPEC §10)
    liboath-dev libqrencode-dev                 # TOTP second factor and its QR code (SPEC §14)
    libfido2-dev libcbor-dev                    # passkeys: WebAuthn verification, CBOR/COSE (SPEC §14)
    libpq-dev                                   # libpq: the state in PostgreSQL (SPEC §15)
)
# Test part: the real programs the integration tests and peer-hash cross-checks run.
test_packages=(
    util-linux curl time                        # script(1) for pty tests, an HTTP client, GNU time (peak RSS)
    strace                                      # kills a process at a chosen system call (guard crash tests)
    argon2                                      # the argon2 CLI (peer hashes)
    pamtester libpam0g-dev libpam-modules gcc   # Linux-PAM with pam_exec; gcc builds the PAM harness
    hyperfine libpam-pwdfile                    # Benchmarks/startup.sh: start times, pam_pwdfile beside `pam`
    nginx libnginx-mod-http-auth-pam            # nginx + PAM module
    caddy wrk                                   # Caddy's forward_auth in front of serve; wrk for its benchmark
    dovecot-core                                # Dovecot 2.3 (checkpassword, doveadm pw)
    slapd slapd-contrib ldap-utils              # OpenLDAP with pw-pbkdf2, ldapwhoami
    squid                                       # Squid and its helper protocol
    apache2-utils mosquitto whois               # htpasswd, mosquitto_passwd, mkpasswd
    rsyslog fail2ban                            # a real syslog daemon, fail2ban-regex
    nftables logrotate openssl                  # fail2ban's ban action, the log's rotation, the recipes' test CA
    systemd procps                              # systemd-analyze verify of Examples/systemd (its units call /bin/kill)
    lintian dpkg-dev man-db bash-completion     # packaging checks
    python3 python3-venv                        # /usr/bin/python3 and the peers' venv
    oathtool qrencode                           # reference TOTP codes and QR codes (SPEC §14)
    chromium chromium-driver libnss3-tools      # a real browser for the sign-in page (SPEC §11), certutil for its test CA
    fonts-dejavu-core fonts-noto-color-emoji    # the browser's text (and "✅") in the screenshots
    postgresql-15                               # the shared state database of several hosts (SPEC §15)
    prometheus                                  # promtool check metrics on serve's /metrics (SPEC §16)
)
# PyPI: the peers that made the test vectors, used as reference verifiers.
# python-fido2: an independent WebAuthn client for the passkey tests (SPEC §14).
# selenium drives chromium (through Debian's chromedriver) and selenium-axe-python runs
# axe-core 4.9 in the page (Tests/CLITests/Browser/): axe-selenium-python, its origin, bundles
# axe-core 3.1 (2018), and its 3.0 needs Python 3.12 (Debian 12 has 3.11).
pip_packages=(passlib==1.7.4 'Django==5.2.*' 'Werkzeug==3.1.*' bcrypt==4.0.1 argon2-cffi 'selenium==4.*' selenium-axe-python==2.2.0 pyotp==2.9.0 fido2==1.1.3)
peers_venv=.build/peers-venv

command -v swift >/dev/null || {
    echo "setup: the Swift toolchain is not on PATH (install Swift 6.3 for Debian 12 from swift.org first)" >&2
    exit 1
}

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "setup: run as root to install: ${missing[*]}" >&2
        exit 1
    fi
}

# install_missing [--hold-services] PACKAGE…: apt-get installs those not installed yet (waiting up
# to 15 minutes for the lock of another install: several checkouts may set up at once).
install_missing() {
    local hold=false
    if [ "$1" = --hold-services ]; then hold=true; shift; fi
    missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    echo "setup: installing ${missing[*]}" >&2
    if $hold; then hold_services; fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    if $hold; then release_services; fi
}

# invoke-rc.d and deb-systemd-invoke ask /usr/sbin/policy-rc.d whether a package may start
# its service; exit 101 says no. One that is there already (a container image's, an
# admin's) decides as it is and is left alone; otherwise one is written for this install
# only and removed after it, also when the install fails or is interrupted.
policy=/usr/sbin/policy-rc.d
wrote_policy=false
hold_services() {
    [ -e "$policy" ] || [ -L "$policy" ] && return 0
    trap release_services EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    wrote_policy=true
    printf '#!/bin/sh\n# Written by credfile'"'"'s Scripts/setup.sh while it installs packages; removed after.\nexit 101\n' \
        | as_root tee "$policy" >/dev/null
    as_root chmod 0755 "$policy"
}
release_services() {
    if $wrote_policy; then as_root rm -f "$policy"; wrote_policy=false; fi
    trap - EXIT INT TERM HUP
}

install_missing "${toolchain_packages[@]}" "${build_packages[@]}"
[ "$part" = build ] && exit 0

install_missing --hold-services "${test_packages[@]}"

# The peers' venv, made again when it is missing, broken or pinned differently.
stamp="$peers_venv/credfile-peers.txt"
if [ "$(cat "$stamp" 2>/dev/null)" != "${pip_packages[*]}" ] ||
    ! "$peers_venv/bin/python3" -c 'import passlib, django, werkzeug, bcrypt, argon2, selenium, selenium_axe_python, pyotp, fido2' >/dev/null 2>&1; then
    echo "setup: installing ${pip_packages[*]} into $peers_venv" >&2
    rm -rf "$peers_venv"
    /usr/bin/python3 -m venv "$peers_venv"
    "$peers_venv/bin/python3" -m pip install -q "${pip_packages[@]}"
    printf '%s\n' "${pip_packages[*]}" > "$stamp"
fi
