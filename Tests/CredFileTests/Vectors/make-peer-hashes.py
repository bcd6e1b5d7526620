#!/usr/bin/env python3
"""Writes peers-debian.txt and peers-pypi.txt: hashes made by the real peers credfile
verifies (SPEC §3.2), for PeerSchemeTests.

    bash Scripts/setup.sh test   # apache2-utils, whois, dovecot-core, slapd, argon2; passlib
                                 # 1.7.4, Django 5.2, Werkzeug 3.1, bcrypt, argon2-cffi (venv)
    .build/peers-venv/bin/python3 Tests/CredFileTests/Vectors/make-peer-hashes.py

Each block is

    tool = <the program or library call that wrote the hash, and its version>
    password = <hex of the password's bytes, exactly as given to the tool>
    scheme = <credfile's name of the scheme>
    weak = yes | no
    hash = <the string the tool wrote>

Salts are random (the tools choose them), so a rerun writes other hashes. Passwords are
given to the tools as bytes: the NFD spelling is hashed as NFD, as a user of the peer
typed it. Costs are lowered where the tool allows it (bcrypt 5, small argon2 and scrypt)
so the tests stay fast, with one default-cost hash per tool to show the defaults verify.
Django 5.2 no longer has SHA1PasswordHasher (removed in 5.1): `sha1$` hashes come from
passlib's django_salted_sha1, which writes the same format.
htpasswd -d writes a bare 13-character DES hash; it is stored as {CRYPT}<hash>, as
`credfile import --from htpasswd` does (SPEC §5), since a bare one is plaintext syntax.
"""

import os
import subprocess
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))

PASSWORDS = [
    "password",
    unicodedata.normalize("NFC", "contraseña123"),
    unicodedata.normalize("NFD", "contraseña123"),
    "valencia,contrase\u00f1a 123 \U0001F511",
]


def run(argv, stdin=None):
    out = subprocess.run(argv, input=stdin, capture_output=True, check=True)
    return out.stdout.decode("utf-8").strip()


def deb_version(package):
    return run(["dpkg-query", "-W", "-f=${Version}", package])


def block(tool, password, scheme, weak, hashed):
    return (f"tool = {tool}\npassword = {password.encode().hex()}\nscheme = {scheme}\n"
            f"weak = {'yes' if weak else 'no'}\nhash = {hashed}\n")


def debian():
    apache = "apache2-utils " + deb_version("apache2-utils")
    whois = "whois " + deb_version("whois")
    dovecot = "dovecot-core " + deb_version("dovecot-core")
    slapd = "slapd " + deb_version("slapd")
    argon2 = "argon2 " + deb_version("argon2")
    htpasswd = [
        (["-nbB", "-C", "5"], "bcrypt", False),
        (["-nbm"], "apr1", True),
        (["-nbs"], "{SHA}", True),
        (["-nbd"], "des-crypt", True),
    ]
    mkpasswd = [
        (["-m", "yescrypt"], "yescrypt", False),
        (["-m", "sha512crypt"], "sha512-crypt", False),
        (["-m", "sha512crypt", "-R", "1000"], "sha512-crypt", False),
        (["-m", "sha256crypt"], "sha256-crypt", False),
        (["-m", "bcrypt", "-R", "5"], "bcrypt", False),
        (["-m", "bcrypt-a", "-R", "4"], "bcrypt", False),
        (["-m", "md5crypt"], "md5-crypt", True),
        (["-m", "descrypt"], "des-crypt", True),
        (["-m", "scrypt", "-R", "6"], "scrypt-crypt", False),
        # Verified inside {CRYPT} only (SPEC §3.2: any hash libxcrypt computes).
        (["-m", "gost-yescrypt"], "gost-yescrypt", False),
        (["-m", "sunmd5"], "sun-md5-crypt", True),
        (["-m", "bsdicrypt"], "bsdi-crypt", True),
        (["-m", "nt"], "nt-hash", True),
    ]
    crypt_only = {"des-crypt", "gost-yescrypt", "sun-md5-crypt", "bsdi-crypt", "nt-hash"}
    doveadm = [
        (["-s", "SHA512-CRYPT"], "sha512-crypt", False),
        (["-s", "SHA256-CRYPT"], "sha256-crypt", False),
        (["-s", "MD5-CRYPT"], "md5-crypt", True),
        (["-s", "BLF-CRYPT", "-r", "5"], "bcrypt", False),
        (["-s", "ARGON2ID"], "argon2id", False),
        (["-s", "SSHA256"], "{SSHA256}", True),
        (["-s", "SSHA512"], "{SSHA512}", True),
        (["-s", "SSHA"], "{SSHA}", True),
    ]
    slappasswd = [
        (["-h", "{SSHA}"], "{SSHA}", True),
        (["-h", "{SHA}"], "{SHA}", True),
        (["-h", "{CRYPT}", "-c", "$6$%.16s"], "sha512-crypt", False),
        (["-o", "module-path=/usr/lib/ldap", "-o", "module-load=argon2", "-h", "{ARGON2}"], "ldap argon2i", False),
    ]
    out = []
    for i, password in enumerate(PASSWORDS):
        for args, scheme, weak in htpasswd:
            line = run(["htpasswd"] + args + ["u", password])
            hashed = line.split(":", 1)[1]
            if scheme == "des-crypt":
                hashed = "{CRYPT}" + hashed
            out.append(block(f"htpasswd {' '.join(args)} ({apache})", password, scheme, weak, hashed))
        for args, scheme, weak in mkpasswd:
            hashed = run(["mkpasswd", "--stdin"] + args, stdin=password.encode())
            if scheme in crypt_only:
                hashed = "{CRYPT}" + hashed
            out.append(block(f"mkpasswd {' '.join(args)} ({whois})", password, scheme, weak, hashed))
        for args, scheme, weak in doveadm:
            hashed = run(["doveadm", "pw"] + args + ["-p", password])
            out.append(block(f"doveadm pw {' '.join(args)} ({dovecot})", password, scheme, weak, hashed))
        for args, scheme, weak in slappasswd:
            hashed = run(["slappasswd"] + args + ["-s", password])
            out.append(block(f"slappasswd {' '.join(args)} ({slapd})", password, scheme, weak, hashed))
        for variant in ["id", "i", "d"]:
            salt = os.urandom(12).hex()
            args = [salt, "-" + variant, "-e", "-m", "10", "-t", "2", "-p", "2"]
            if i == 0 and variant == "id":
                args = [salt, "-id", "-e"]  # the CLI's defaults (m=4096 KiB, t=3, p=1)
            hashed = run(["argon2"] + args, stdin=password.encode())
            out.append(block(f"argon2 {' '.join(a for a in args[1:])} ({argon2})", password,
                             "argon2" + variant, False, hashed))
    return out


def pypi():
    import django
    import passlib
    import werkzeug
    from importlib.metadata import version
    from django.conf import settings
    settings.configure(PASSWORD_HASHERS=[
        "django.contrib.auth.hashers.Argon2PasswordHasher",
        "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
        "django.contrib.auth.hashers.BCryptPasswordHasher",
        "django.contrib.auth.hashers.ScryptPasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ])
    django.setup()
    from django.contrib.auth import hashers as dj
    from passlib import hash as ph
    from werkzeug.security import generate_password_hash

    lib = f"passlib {passlib.__version__}"
    dj_v = f"Django {django.get_version()}"
    wz_v = f"Werkzeug {version('werkzeug')}"

    class FastArgon2(dj.Argon2PasswordHasher):
        time_cost, memory_cost, parallelism = 2, 1024, 2

    class FastBcryptSHA256(dj.BCryptSHA256PasswordHasher):
        rounds = 5

    class FastBcrypt(dj.BCryptPasswordHasher):
        rounds = 5

    class FastScrypt(dj.ScryptPasswordHasher):
        work_factor, parallelism = 2 ** 10, 2

    passlib_handlers = [
        (ph.bcrypt.using(rounds=5), "bcrypt(rounds=5)", "bcrypt", False),
        (ph.sha512_crypt.using(rounds=5000), "sha512_crypt(rounds=5000)", "sha512-crypt", False),
        (ph.sha256_crypt.using(rounds=5000), "sha256_crypt(rounds=5000)", "sha256-crypt", False),
        (ph.md5_crypt, "md5_crypt", "md5-crypt", True),
        (ph.apr_md5_crypt, "apr_md5_crypt", "apr1", True),
        (ph.ldap_salted_sha1, "ldap_salted_sha1", "{SSHA}", True),
        (ph.ldap_salted_sha256, "ldap_salted_sha256", "{SSHA256}", True),
        (ph.ldap_salted_sha512, "ldap_salted_sha512", "{SSHA512}", True),
        (ph.ldap_sha1, "ldap_sha1", "{SHA}", True),
        (ph.ldap_des_crypt, "ldap_des_crypt", "des-crypt", True),
        (ph.ldap_bcrypt.using(rounds=5), "ldap_bcrypt(rounds=5)", "bcrypt", False),
        (ph.ldap_sha512_crypt.using(rounds=5000), "ldap_sha512_crypt(rounds=5000)", "sha512-crypt", False),
        (ph.argon2.using(memory_cost=1024, rounds=2), "argon2(memory_cost=1024, rounds=2)", "argon2id", False),
        (ph.django_bcrypt_sha256.using(rounds=5), "django_bcrypt_sha256(rounds=5)",
         "django bcrypt_sha256", False),
        (ph.django_salted_md5, "django_salted_md5", "django md5", True),
        (ph.django_salted_sha1, "django_salted_sha1", "django sha1", True),
    ]
    # Verified inside {CRYPT} only (SPEC §3.2): passlib writes them bare, as libxcrypt does.
    passlib_crypt_only = [
        (ph.sha1_crypt.using(rounds=5000), "sha1_crypt(rounds=5000)", "sha1-crypt", True),
        (ph.sun_md5_crypt.using(rounds=1000), "sun_md5_crypt(rounds=1000)", "sun-md5-crypt", True),
        (ph.bsdi_crypt, "bsdi_crypt", "bsdi-crypt", True),
        (ph.bigcrypt, "bigcrypt", "bigcrypt", True),
        # Not bsd_nthash: passlib hashes the UTF-16LE of the text, crypt(3)'s $3$ (FreeBSD's,
        # libxcrypt's) each byte as one UTF-16 unit; they differ beyond ASCII, and $3$ is
        # crypt(3)'s (mkpasswd -m nt above).
    ]
    django_hashers = [
        (FastArgon2(), "Argon2PasswordHasher(time_cost=2, memory_cost=1024, parallelism=2)", "django argon2id"),
        (FastBcryptSHA256(), "BCryptSHA256PasswordHasher(rounds=5)", "django bcrypt_sha256"),
        (FastBcrypt(), "BCryptPasswordHasher(rounds=5)", "django bcrypt"),
        (FastScrypt(), "ScryptPasswordHasher(work_factor=2**10, parallelism=2)", "django scrypt"),
        (dj.MD5PasswordHasher(), "MD5PasswordHasher", "django md5"),
    ]
    out = []
    for i, password in enumerate(PASSWORDS):
        for handler, name, scheme, weak in passlib_handlers:
            out.append(block(f"{lib} {name}", password, scheme, weak, handler.hash(password)))
        for handler, name, scheme, weak in passlib_crypt_only:
            hashed = handler.hash(password)
            if scheme == "bigcrypt" and len(hashed) == 13:
                scheme = "des-crypt"  # up to 8 bytes, bigcrypt is DES crypt itself
            out.append(block(f"{lib} {name}, in {{CRYPT}}", password, scheme, weak, "{CRYPT}" + hashed))
        # Django's UnsaltedMD5PasswordHasher and UnsaltedSHA1PasswordHasher (removed in
        # Django 5.1, so 5.2 cannot write them) stored md5$$<hex> and sha1$$<hex>: the
        # digests from passlib's hex_md5 and hex_sha1, in that spelling.
        out.append(block(f"{lib} hex_md5, as Django's UnsaltedMD5PasswordHasher (<= 5.0) stored it", password,
                         "django unsalted_md5", True, "md5$$" + ph.hex_md5.hash(password)))
        out.append(block(f"{lib} hex_sha1, as Django's UnsaltedSHA1PasswordHasher (<= 5.0) stored it", password,
                         "django unsalted_sha1", True, "sha1$$" + ph.hex_sha1.hash(password)))
        for hasher, name, scheme in django_hashers:
            hashed = hasher.encode(password, hasher.salt())
            out.append(block(f"{dj_v} {name}", password, scheme, scheme in ("django md5", "django sha1"), hashed))
        if i == 0:  # Django's default costs, once
            for hasher, name, scheme in [
                (dj.Argon2PasswordHasher(), "Argon2PasswordHasher (defaults)", "django argon2id"),
                (dj.ScryptPasswordHasher(), "ScryptPasswordHasher (defaults)", "django scrypt"),
            ]:
                out.append(block(f"{dj_v} {name}", password, scheme, False, hasher.encode(password, hasher.salt())))
            out.append(block(f"{wz_v} generate_password_hash(method='scrypt') (defaults)", password,
                             "werkzeug scrypt", False, generate_password_hash(password, method="scrypt")))
        method = "scrypt:1024:8:2"
        out.append(block(f"{wz_v} generate_password_hash(method='{method}')", password, "werkzeug scrypt",
                         False, generate_password_hash(password, method=method)))
    return out


def write(name, header, blocks):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(header)
        f.write("\n".join(blocks))


if __name__ == "__main__":
    note = ("# Generated by make-peer-hashes.py in this folder; do not edit by hand.\n"
            "# password is hex of the bytes given to the tool (NFD stays NFD); see the docstring.\n\n")
    write("peers-debian.txt", "# Hashes written by Debian 12's own tools (versions per block).\n" + note, debian())
    write("peers-pypi.txt", "# Hashes written by passlib, Django and Werkzeug from PyPI (versions per block).\n"
          + note, pypi())
