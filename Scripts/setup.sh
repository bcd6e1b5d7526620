#!/usr/bin/env bash
# Installs what building and testing credfile needs on Debian 12 with the Swift
# toolchain on PATH. Does nothing that is already there. Services that the packages
# bring (nginx, dovecot, slapd, squid, mosquitto) are kept from starting: the tests
# start their own copies on loopback or in private directories and stop them by PID.
set -euo pipefail

# Debian packages: the libraries credfile links, and the real programs its
# integration tests and peer-hash cross-checks run.
apt_packages=(
    libssl-dev pkg-config util-linux            # OpenSSL's libcrypto; script(1) for pty tests
    libcrypt-dev libargon2-dev argon2           # libxcrypt (crypt(3) family), libargon2
    pamtester libpam0g-dev libpam-modules       # Linux-PAM with pam_exec
    nginx libnginx-mod-http-auth-pam curl       # nginx + PAM module, a real HTTP client
    dovecot-core                                # Dovecot 2.3 (checkpassword, doveadm pw)
    slapd slapd-contrib ldap-utils              # OpenLDAP with pw-pbkdf2, ldapwhoami
    squid                                       # Squid and its helper protocol
    apache2-utils mosquitto whois               # htpasswd, mosquitto_passwd, mkpasswd
    lintian dpkg-dev man-db bash-completion     # packaging checks
    gcc                                         # the PAM test's pam_start_confdir harness
)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    export DEBIAN_FRONTEND=noninteractive
    # Keep the packages' services from starting (invoke-rc.d asks policy-rc.d).
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# PyPI: the peers that made the test vectors, used as reference verifiers.
pip_packages=(passlib==1.7.4 Django==5.2.* Werkzeug==3.1.* bcrypt==4.0.1 argon2-cffi)
if ! python3 -c 'import passlib, django, werkzeug, bcrypt, argon2' >/dev/null 2>&1; then
    python3 -m pip install -q "${pip_packages[@]}"
fi
command -v swift >/dev/null || { echo "setup: the Swift toolchain is not on PATH" >&2; exit 1; }
