#!/usr/bin/env python3
"""Makes pbkdf2-peer-hashes.tsv: the PBKDF2 hashes written by the REAL peers credfile verifies (SPEC §3.2).

Each line: <tool>\t<password as UTF-8 hex>\t<hash>. Lines starting with '#' name the
tool versions. Passwords include an NFD "contraseña" (the peers hash the bytes as given).
Run (after `bash Scripts/setup.sh test`, which makes the peers' venv):
.build/peers-venv/bin/python3 Tests/CredFileTests/Vectors/make-pbkdf2-peer-hashes.py > Tests/CredFileTests/Vectors/pbkdf2-peer-hashes.tsv
With --tool NAME --password-hex HEX it prints one fresh hash from that tool (the
cross-check test regenerates a few this way).
"""
import os, subprocess, sys, tempfile, unicodedata

PASSWORDS = ["secret", "contraseña", unicodedata.normalize("NFD", "contraseña"), "p@ss w,rd$ {x}"]


def django_setup():
    import django
    from django.conf import settings
    if not settings.configured:
        settings.configure(PASSWORD_HASHERS=[
            "django.contrib.auth.hashers.PBKDF2PasswordHasher",
            "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher"])
        django.setup()
    return django


def make(tool, password):
    if tool.startswith("passlib "):
        from passlib import hash as h
        name = tool.split(" ", 1)[1]
        return getattr(h, name).using(rounds=1000).hash(password)
    if tool.startswith("django "):
        django_setup()
        from django.contrib.auth.hashers import make_password, PBKDF2PasswordHasher, PBKDF2SHA1PasswordHasher
        name = tool.split(" ", 1)[1]
        if name == "pbkdf2_sha256-default":
            return make_password(password)
        hasher = PBKDF2PasswordHasher() if name == "pbkdf2_sha256" else PBKDF2SHA1PasswordHasher()
        return hasher.encode(password, hasher.salt(), iterations=1000)
    if tool.startswith("werkzeug "):
        from werkzeug.security import generate_password_hash
        return generate_password_hash(password, method=tool.split(" ", 1)[1])
    if tool.startswith("mosquitto_passwd"):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "pw")
            argv = ["mosquitto_passwd", "-c", "-b", path, "user", password]
            if tool.endswith("sha512"):
                argv[1:1] = ["-H", "sha512"]
            subprocess.run(argv, check=True, capture_output=True)
            return open(path).read().strip().split(":", 1)[1]
    if tool == "doveadm pw -s PBKDF2":
        out = subprocess.run(["doveadm", "-c", "/dev/null", "pw", "-s", "PBKDF2", "-p", password],
                             check=True, capture_output=True).stdout
        return out.decode().strip()
    if tool.startswith("slappasswd "):
        scheme = tool.split(" ", 1)[1]
        out = subprocess.run(["slappasswd", "-o", "module-load=pw-pbkdf2.so", "-h", scheme, "-s", password],
                             check=True, capture_output=True).stdout
        return out.decode().strip()
    raise SystemExit(f"unknown tool {tool}")


TOOLS = [
    "passlib pbkdf2_sha1", "passlib pbkdf2_sha256", "passlib pbkdf2_sha512",
    "passlib ldap_pbkdf2_sha1", "passlib ldap_pbkdf2_sha256", "passlib ldap_pbkdf2_sha512",
    "passlib django_pbkdf2_sha256", "passlib django_pbkdf2_sha1",
    "django pbkdf2_sha256", "django pbkdf2_sha1",
    "werkzeug pbkdf2:sha256:1000", "werkzeug pbkdf2:sha512:1000", "werkzeug pbkdf2:sha256",
    "mosquitto_passwd", "mosquitto_passwd -H sha512",
    "doveadm pw -s PBKDF2",
    "slappasswd {PBKDF2}", "slappasswd {PBKDF2-SHA1}", "slappasswd {PBKDF2-SHA256}", "slappasswd {PBKDF2-SHA512}",
]


def versions():
    import passlib, django, werkzeug
    from importlib.metadata import version
    def first_line(argv):
        try:
            r = subprocess.run(argv, capture_output=True)
            return (r.stdout + r.stderr).decode(errors="replace").strip().splitlines()[0]
        except Exception as e:
            return f"unavailable ({e})"
    def deb(pkg):
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True).stdout.decode()
    return [f"passlib {passlib.__version__}", f"Django {django.get_version()}", f"Werkzeug {version('werkzeug')}",
            f"mosquitto {deb('mosquitto')} (mosquitto_passwd)", f"dovecot-core {deb('dovecot-core')} (doveadm pw)",
            f"slapd-contrib {deb('slapd-contrib')} (slappasswd, pw-pbkdf2.so)"]


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--tool":
        print(make(sys.argv[2], bytes.fromhex(sys.argv[4]).decode()))
        return
    print("# Peer hashes made by the real tools (Tests/CredFileTests/Vectors/make-pbkdf2-peer-hashes.py):")
    for v in versions():
        print(f"# {v}")
    print("# tool<TAB>password (UTF-8, hex)<TAB>hash")
    for tool in TOOLS:
        for password in PASSWORDS:
            if tool == "django pbkdf2_sha256-default" and password != "secret":
                continue
            print(f"{tool}\t{password.encode().hex()}\t{make(tool, password)}")
    print(f"django pbkdf2_sha256 (make_password, Django's default iterations)\t{'secret'.encode().hex()}\t{make('django pbkdf2_sha256-default', 'secret')}")


if __name__ == "__main__":
    main()
