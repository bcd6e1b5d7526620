#!/usr/bin/env python3
"""Writes the seed corpus under Fuzz/Corpus/<target>/ (run from anywhere; idempotent).

The seeds are hand-picked hostile inputs (SPEC §2-§3): the seed app's usuarios.txt,
BOM, CRLF, no final newline, `bob,`, `,pw`, `xvalencia,...`, control bytes, invalid
UTF-8, over-long lines, good and bad passlib hashes, `$2y$`, `{SSHA}`. FuzzStore seeds
are op programs in the format described in StoreHarness.swift.
"""
import base64, hashlib, os

HERE = os.path.dirname(os.path.abspath(__file__))


def ab64(b):
    return base64.b64encode(b).decode().rstrip("=").replace("+", ".")


def pbkdf2(alg, pw, salt, rounds):
    dk = hashlib.pbkdf2_hmac(alg, pw.encode(), salt, rounds)
    return f"$pbkdf2-{alg}${rounds}${ab64(salt)}${ab64(dk)}"


SALT = bytes(range(16))
GOOD256 = pbkdf2("sha256", "adminpass", SALT, 1)
GOOD512 = pbkdf2("sha512", "adminpass", SALT, 2)
GOOD_BIG = pbkdf2("sha256", "x", b"", 1).replace("$1$", "$50000000$", 1)  # never verified
BAD_HASHES = [
    GOOD256.replace("$1$", "$0$", 1),                  # rounds 0
    GOOD256.replace("$1$", "$01$", 1),                 # leading zero
    GOOD256.replace("$1$", "$50000001$", 1),           # above the limit
    GOOD256.replace("$1$", "$99999999999999999999$", 1),
    GOOD256[:-1] + "B",                                # unused low bits set
    GOOD256 + "A",                                     # checksum too long
    GOOD256.replace("sha256", "sha1"),
    "$pbkdf2$1$" + ab64(SALT) + "$" + ab64(bytes(20)),  # passlib's pbkdf2 (sha1)
    "$pbkdf2-sha256$1$$",
    "$pbkdf2-sha256$1$" + ab64(SALT) + "=$" + ab64(bytes(32)),
    "$pbkdf2-sha512$1$" + ab64(bytes(1025)) + "$" + ab64(bytes(64)),  # salt too long
]
OTHER = ["$2y$10$abcdefghijklmnopqrstuu", "{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "$6$salt$hash",
         "$7$x", "$$", "$abc", "$", "{}plain", "{SSHA", "{S.S_H-A}x", "$2y", "$\u0301x$"]

USUARIOS = b"valencia,contrasena123\nusuario2,password456\nadmin,adminpass\n"
BOM = b"\xef\xbb\xbf"


def write(target, name, data):
    d = os.path.join(HERE, "Corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# FuzzParser: whole files.
write("FuzzParser", "usuarios.txt", USUARIOS)
write("FuzzParser", "bom.txt", BOM + USUARIOS)
write("FuzzParser", "crlf.txt", USUARIOS.replace(b"\n", b"\r\n"))
write("FuzzParser", "no-final-newline.txt", USUARIOS.rstrip(b"\n"))
write("FuzzParser", "cr-at-end.txt", b"valencia,contrasena123\nbob,pw\r")
write("FuzzParser", "hostile.txt",
      b"bob,\n,pw\nxvalencia,contrasena123\nvalencia,contrasena123\nvalencia,other\n# comment,with comma\n"
      b"   \t\n\n\t\nbo\x01b,pw\nbob,p\x7fw\nbad\xff,pw\nbob,caf\xc3\xa9\nnocomma\n,\n,,\nbob,a,b,c\n \xef\xbb\xbfx,y\n")
write("FuzzParser", "bom-in-line-2.txt", b"first,1\n" + BOM + b"bob,2\n")
write("FuzzParser", "bom-only.txt", BOM)
write("FuzzParser", "normalization.txt", "\u00c9mile,a\nE\u0301mile,b\n\ufeffbob,c\n#x,d\n \u00c9mile,e\n".encode())
write("FuzzParser", "hashes.txt", "".join(f"u{i},{h}\n" for i, h in enumerate([GOOD256, GOOD512, GOOD_BIG] + BAD_HASHES + OTHER)))
write("FuzzParser", "duplicates.txt", b"admin,$2y$10$x\nadmin,adminpass\nadmin,\nvalencia,plain\nvalencia," + GOOD256.encode() + b"\n")
write("FuzzParser", "long-65536.txt", b"u," + b"p" * 65534 + b"\n")
write("FuzzParser", "long-65537.txt", b"u," + b"p" * 65535 + b"\nv,ok\n")
write("FuzzParser", "long-comment.txt", b"#" + b"c" * 65600 + b"\n")
write("FuzzParser", "long-blank.txt", b" \t" * 32800 + b"\nu,p\n")
write("FuzzParser", "leaky-names.txt", b"plaintext password,plaintext password\nbobbybob,bobbybob\n")

# FuzzHash: single hash strings.
for i, h in enumerate([GOOD256, GOOD512, GOOD_BIG, pbkdf2("sha256", "", b"", 1), pbkdf2("sha512", "p", bytes(1024), 1)]):
    write("FuzzHash", f"good-{i}.txt", h)
for i, h in enumerate(BAD_HASHES + OTHER):
    write("FuzzHash", f"bad-{i}.txt", h)

# FuzzStore: op programs (see StoreOperation.decode). Pools: names[0] valencia, 1 xvalencia,
# 2 ncia, 3 usuario2, 4 admin, 5 bob, 6 NFC Emile, 7 NFD Emile, 12 BOM+bob; passwords[0]
# contrasena123, 1 contrasena12, 3 adminpass, 4 "", 5 pw.
def raw(line, newline=True):
    b = line if isinstance(line, bytes) else line.encode()
    assert len(b) < 128
    return bytes([5 | (0 if newline else 8), len(b)]) + b


REGISTER, AUTH, CHANGE, REMOVE, UPGRADE, AUTH_UP, DRY = 0, 1, 2, 3, 4, 9, 12
write("FuzzStore", "usuarios-login.bin",
      b"".join(raw(l) for l in USUARIOS.decode().splitlines())
      + bytes([AUTH, 0, 0, AUTH, 2, 1, REGISTER, 1, 1, DRY, UPGRADE, AUTH, 0, 0, REMOVE, 0, AUTH, 0, 0]))
write("FuzzStore", "register-change-remove.bin",
      bytes([REGISTER, 0, 0, REGISTER, 0, 5, AUTH, 0, 0, CHANGE, 0, 5, AUTH, 0, 5, AUTH, 0, 0, REMOVE, 0, REGISTER, 0, 1, AUTH, 0, 1]))
write("FuzzStore", "empty-secret.bin", raw("bob,") + bytes([AUTH, 5, 4, CHANGE, 5, 5, REMOVE, 5, REGISTER, 5, 5, AUTH, 5, 5]))
write("FuzzStore", "cr-then-register.bin", raw(b"bob,pw\r", newline=False) + bytes([REGISTER, 0, 0, AUTH, 5, 5]))
write("FuzzStore", "normalization.bin", bytes([REGISTER, 6, 8, AUTH, 7, 9, REGISTER, 7, 0, CHANGE, 7, 0, AUTH, 6, 0]))
write("FuzzStore", "bom-name.bin", bytes([REGISTER, 12, 5, AUTH, 12, 5, AUTH, 5, 5]))
write("FuzzStore", "garbage-hash.bin", raw("admin," + GOOD256) + raw("admin,adminpass") + raw("valencia," + pbkdf2("sha512", "adminpass", b"", 2))
      + bytes([AUTH, 4, 3, AUTH_UP, 0, 5, AUTH_UP, 0, 3, UPGRADE, AUTH, 4, 3, AUTH, 0, 3]))
write("FuzzStore", "unsupported.bin", raw("admin,$2y$10$abc") + raw("bob,{SSHA}abc") + raw("# comment") + raw("")
      + bytes([AUTH, 4, 6, CHANGE, 4, 3, AUTH, 4, 3, AUTH_UP, 5, 7, REMOVE, 5, UPGRADE]))
write("FuzzStore", "upgrade-on-login.bin", raw("valencia,contrasena123") + raw("valencia,other")
      + bytes([AUTH_UP, 0, 0, AUTH_UP, 0, 0, UPGRADE, REMOVE, 0, AUTH, 0, 0]))
write("FuzzStore", "bom-garbage.bin", raw(BOM, newline=False) + raw(b"bob,pw") + raw(b"\xef\xbb\xbfx,y")
      + bytes([REMOVE, 5, AUTH, 5, 5]))

# FuzzConfiguration: configuration files (SPEC §5). Real ones as an admin writes them
# (calibrate's advice pasted, a section per credential file, Debian-style comments), and
# each limit from both sides: a line of exactly 8,192 bytes and one more, a file of
# exactly 1 MiB and one more, every range's edges, CRLF, BOM, tabs, a combining mark after
# `=`, `#`, `[` or a space, duplicates, repeatable keys, bad sections.
CONF_REAL = b"""# /etc/credfile.conf: read by every credfile command (SPEC 5).
# Written by `credfile calibrate --target-ms 250` on this machine:
iterations = 3005000
lock-timeout = 5
min-length = 15
blocklist = /usr/share/credfile/pwned-passwords-sha1-ordered-by-hash.txt

[/etc/nginx/web.cred]
# the web logins: checked by nginx through pam_exec, upgraded on login
upgrade = yes
jobs = 2
blocklist = /etc/credfile/web-words.txt
blocklist = /etc/credfile/company-names.txt

[/srv/app/usuarios.txt]
algorithm = sha512
iterations = 1200000
backup = true
"""
write("FuzzConfiguration", "real-etc-credfile.conf", CONF_REAL)
write("FuzzConfiguration", "real-crlf-bom.conf", BOM + CONF_REAL.replace(b"\n", b"\r\n"))
write("FuzzConfiguration", "calibrate-advice.conf", b"iterations = 3005000\nalgorithm = sha512\n")
write("FuzzConfiguration", "empty.conf", b"")
write("FuzzConfiguration", "comments-only.conf", b"# nothing set\n\n   \t\n#iterations = 1\n")
write("FuzzConfiguration", "no-final-newline.conf", b"min-length = 8")
write("FuzzConfiguration", "tabs-and-spaces.conf", b"\titerations\t=\t600000\t\n  [ /etc/app.cred ]  \n upgrade=no \n")
write("FuzzConfiguration", "flags.conf", b"upgrade = yes\nbackup = no\nplaintext = true\npasswords = false\n")
write("FuzzConfiguration", "flag-bad.conf", b"upgrade = on\n")
write("FuzzConfiguration", "flag-uppercase.conf", b"upgrade = Yes\n")
write("FuzzConfiguration", "unknown-key.conf", b"iterations = 1000\niteration = 1000\n")
write("FuzzConfiguration", "cli-only-key.conf", b"json = yes\n")
write("FuzzConfiguration", "config-key.conf", b"config = /etc/other.conf\n")
write("FuzzConfiguration", "uppercase-key.conf", b"Iterations = 1000\n")
write("FuzzConfiguration", "key-with-space.conf", b"lock timeout = 5\n")
write("FuzzConfiguration", "no-equals.conf", b"iterations 1000\n")
write("FuzzConfiguration", "stray-password.conf", b"iterations = 1000\nhunter2-correct-horse\n")
write("FuzzConfiguration", "empty-value.conf", b"blocklist =\n")
write("FuzzConfiguration", "empty-key.conf", b"= 5\n")
write("FuzzConfiguration", "comment-after-value.conf", b"iterations = 3005000  # calibrated\n")
write("FuzzConfiguration", "hash-in-path.conf", b"blocklist = /etc/credfile/#list.txt\n")
write("FuzzConfiguration", "quoted-value.conf", b'base-dn = "ou=people,dc=example,dc=org"\n')
write("FuzzConfiguration", "value-with-equals.conf", b"base-dn = ou=people,dc=example,dc=org\n")
write("FuzzConfiguration", "duplicate-top.conf", b"iterations = 1000\nlock-timeout = 1\niterations = 2000\n")
write("FuzzConfiguration", "duplicate-section.conf", b"[/a]\niterations = 1\n[/b]\niterations = 2\n[/a]\niterations = 3\n")
write("FuzzConfiguration", "same-key-top-and-section.conf", b"iterations = 1\n[/a]\niterations = 2\n[/b]\niterations = 3\n")
write("FuzzConfiguration", "repeatable.conf", b"blocklist = /a\nblocklist = /b\n[/x]\nblocklist = /c\nblocklist = /c\n")
write("FuzzConfiguration", "section-relative.conf", b"[etc/app.cred]\n")
write("FuzzConfiguration", "section-empty.conf", b"[]\n")
write("FuzzConfiguration", "section-root.conf", b"[/]\nupgrade = yes\n")
write("FuzzConfiguration", "section-unclosed.conf", b"[/etc/app.cred\n")
write("FuzzConfiguration", "section-bracket-inside.conf", b"[/etc/a]b]\nupgrade = yes\n")
write("FuzzConfiguration", "section-trailing-text.conf", b"[/etc/a] x\n")
write("FuzzConfiguration", "section-only-bracket.conf", b"[\n")
write("FuzzConfiguration", "section-unicode.conf", "[/srv/contraseñas/usuarios.txt]\nupgrade = yes\n".encode())
write("FuzzConfiguration", "combining-after-equals.conf", "iterations =\u0301 1000\n".encode())
write("FuzzConfiguration", "combining-after-hash.conf", "#\u0301 iterations = x\n".encode())
write("FuzzConfiguration", "combining-after-bracket.conf", "[\u0301/a]\n".encode())
write("FuzzConfiguration", "combining-after-space.conf", "iterations = 1000 \u0301\n".encode())
write("FuzzConfiguration", "nbsp-around-value.conf", "iterations =\u00a01000\n".encode())
write("FuzzConfiguration", "nul.conf", b"iterations = 10\x0000\n")
write("FuzzConfiguration", "lone-cr.conf", b"iterations = 1000\rlock-timeout = 1\n")
write("FuzzConfiguration", "cr-cr-lf.conf", b"iterations = 1000\r\r\n")
write("FuzzConfiguration", "del.conf", b"iterations = 1000\x7f\n")
write("FuzzConfiguration", "invalid-utf8.conf", b"blocklist = /tmp/\xff\n")
write("FuzzConfiguration", "invalid-utf8-comment.conf", b"# caf\xe9\nupgrade = yes\n")
write("FuzzConfiguration", "bom-twice.conf", BOM + BOM + b"upgrade = yes\n")
write("FuzzConfiguration", "bom-not-first.conf", b"\n" + BOM + b"upgrade = yes\n")
for name, value in [("iterations", b"1"), ("iterations", b"50000000"), ("iterations", b"0"), ("iterations", b"50000001"),
                    ("iterations", b"01000"), ("iterations", b"+1000"), ("iterations", b"-1"), ("iterations", b"1e6"),
                    ("iterations", b"1_000"), ("iterations", b"99999999999999999999999"), ("iterations", "١٢٣".encode()),
                    ("lock-timeout", b"0"), ("lock-timeout", b"86400"), ("lock-timeout", b"86400.0"), ("lock-timeout", b"86400.0001"),
                    ("lock-timeout", b"0.5"), ("lock-timeout", b".5"), ("lock-timeout", b"5."), ("lock-timeout", b"1.2.3"),
                    ("lock-timeout", b"inf"), ("lock-timeout", b"nan"), ("lock-timeout", b"-0"), ("lock-timeout", b"0x10"),
                    ("min-length", b"1"), ("min-length", b"64"), ("min-length", b"65"), ("min-length", b"0"), ("min-length", b"7"),
                    ("jobs", b"1024"), ("jobs", b"1025"), ("target-ms", b"600000"), ("target-ms", b"600001"),
                    ("algorithm", b"sha256"), ("algorithm", b"sha512"), ("algorithm", b"SHA256"), ("algorithm", b"md5"),
                    ("skip-unexportable", b"yes"), ("base-dn", b"dc=example,dc=org"), ("base-dn", b"x")]:
    safe = value.decode("utf-8", "replace").encode("ascii", "replace").decode().replace("?", "u").replace("/", "_")
    write("FuzzConfiguration", f"range-{name}-{safe}.conf", name.encode() + b" = " + value + b"\n")
# Line length: content (before LF or CRLF) of exactly 8,192 bytes is accepted; 8,193 is not.
LIMIT = 8192
def line_of(n, prefix=b"blocklist = /"):
    return prefix + b"a" * (n - len(prefix))
write("FuzzConfiguration", "line-8192.conf", line_of(LIMIT) + b"\n")
write("FuzzConfiguration", "line-8192-crlf.conf", line_of(LIMIT) + b"\r\n")
write("FuzzConfiguration", "line-8192-no-newline.conf", line_of(LIMIT))
write("FuzzConfiguration", "line-8193.conf", b"upgrade = yes\n" + line_of(LIMIT + 1) + b"\n")
write("FuzzConfiguration", "line-8193-comment.conf", b"#" + b"x" * LIMIT + b"\n")
write("FuzzConfiguration", "line-8192-blank.conf", b" " * LIMIT + b"\nupgrade = yes\n")
write("FuzzConfiguration", "line-8193-blank.conf", b" " * (LIMIT + 1) + b"\n")
write("FuzzConfiguration", "section-8192.conf", b"[/" + b"d" * (LIMIT - 3) + b"]\nupgrade = yes\n")
write("FuzzConfiguration", "section-8193.conf", b"[/" + b"d" * (LIMIT - 2) + b"]\n")
# File size: exactly 1 MiB is accepted (comment lines), one byte more is refused (line 0).
MIB = 1 << 20
body = (b"#" + b"c" * 1022 + b"\n") * (MIB // 1024)
assert len(body) == MIB
write("FuzzConfiguration", "file-1mib.conf", body)
write("FuzzConfiguration", "file-1mib-plus-1.conf", body + b"\n")
write("FuzzConfiguration", "file-1mib-bom.conf", BOM + body[3:])

# Hostile seeds at every limit an oracle states (issue #25 item 16), both sides of each.
# They are longer than the fuzzers' -max_len; the regression test replays them whole.
SQUID_MAX = 32768  # SquidHelperProtocol.maximumLineLength
SQUID = b"1"  # an odd first byte: Squid helper lines
def squid(name, *lines):
    write("FuzzLoginRequests", name, SQUID + b"\n".join(lines))
squid("squid-line-32768.txt", b"u " + b"p" * (SQUID_MAX - 2))
squid("squid-line-32768-cr.txt", b"u " + b"p" * (SQUID_MAX - 2) + b"\r")
squid("squid-line-32769.txt", b"u " + b"p" * (SQUID_MAX - 1))
squid("squid-channel-line-32768.txt", b"7 u " + b"p" * (SQUID_MAX - 4))
# Escaped byte for byte (%XX), these no longer fit in a line: the oracle must say so.
squid("squid-escaped-over-limit.txt", b"u " + b"p" * 10922, b"3 " + b"u" * 5000 + b" " + b"p" * 6000)
squid("squid-escaped-at-limit.txt", b"u " + b"p" * 10921)  # escaped: 3 + 1 + 3 * 10,921 = 32,767 bytes, it fits
squid("squid-password-4096.txt", b"alice " + b"%41" * 4096, b"0 alice " + b"x" * 4096)
squid("squid-channel-20-digits.txt", b"12345678901234567890 alice pw")
squid("squid-channel-21-digits.txt", b"123456789012345678901 alice pw")
squid("squid-escapes-at-end.txt", b"alice pw%", b"alice pw%4", b"alice pw%4G", b"al%ice pw", b"alice %%41")
squid("squid-empty-fields.txt", b" pw", b"alice ", b" ", b"", b"\r", b"0  ", b"0 alice")
CP = b"0"  # an even first byte: a checkpassword request on fd 3
write("FuzzLoginRequests", "checkpassword-512.bin", CP + b"alice\0" + b"p" * (512 - 8) + b"\0\0")
write("FuzzLoginRequests", "checkpassword-513.bin", CP + b"alice\0" + b"p" * (512 - 7) + b"\0\0")
write("FuzzLoginRequests", "checkpassword-empty-password.bin", CP + b"alice\0\0\0")

# FuzzHash: every field at its limit.
write("FuzzHash", "limit-rounds-50000000.txt", pbkdf2("sha256", "x", SALT, 1).replace("$1$", "$50000000$", 1))
write("FuzzHash", "limit-rounds-50000001.txt", pbkdf2("sha256", "x", SALT, 1).replace("$1$", "$50000001$", 1))
write("FuzzHash", "limit-salt-1024.txt", "$pbkdf2-sha256$1$" + ab64(bytes(1024)) + "$" + ab64(bytes(32)))
write("FuzzHash", "limit-salt-1025.txt", "$pbkdf2-sha256$1$" + ab64(bytes(1025)) + "$" + ab64(bytes(32)))
write("FuzzHash", "limit-checksum-31.txt", "$pbkdf2-sha256$1$" + ab64(SALT) + "$" + ab64(bytes(31)))
write("FuzzHash", "limit-checksum-33.txt", "$pbkdf2-sha256$1$" + ab64(SALT) + "$" + ab64(bytes(33)))
write("FuzzHash", "limit-checksum-65.txt", "$pbkdf2-sha512$1$" + ab64(SALT) + "$" + ab64(bytes(65)))

# FuzzParser: the 65,536-byte line with each ending, and names at 255/256 bytes.
write("FuzzParser", "long-65536-crlf.txt", b"u," + b"p" * 65534 + b"\r\n" + b"v,ok\n")
write("FuzzParser", "long-65536-cr-no-lf.txt", b"v,ok\nu," + b"p" * 65534 + b"\r")
write("FuzzParser", "long-65537-no-lf.txt", b"v,ok\nu," + b"p" * 65535)
write("FuzzParser", "name-255-256.txt", b"n" * 255 + b",pw\n" + b"m" * 256 + b",pw\n" + b"n" * 255 + b",dup\n")

# FuzzImport: a line of 65,536 bytes and one more (first byte: the format, 0 = hashed).
HASHED, HTPASSWD = b"\x00", b"\x01"
for fmt, sep, tag in [(HASHED, b",", "hashed"), (HTPASSWD, b":", "htpasswd")]:
    head = b"bob" + sep + b"{SSHA}"
    write("FuzzImport", f"{tag}-line-65536.bin", fmt + head + b"A" * (65536 - len(head)) + b"\n")
    write("FuzzImport", f"{tag}-line-65537.bin", fmt + head + b"A" * (65537 - len(head)) + b"\n")
    write("FuzzImport", f"{tag}-name-255-256.bin",
          fmt + b"n" * 255 + sep + b"{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n" + b"m" * 256 + sep + b"{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n")

# FuzzSecret: a secret that makes a line of exactly 65,536 bytes and one more.
write("FuzzSecret", "limit-line-65536.txt", b"{SSHA}" + b"A" * (65534 - 6))
write("FuzzSecret", "limit-line-65537.txt", b"{SSHA}" + b"A" * (65535 - 6))
write("FuzzSecret", "limit-pbkdf2-salt-1024.txt", "$pbkdf2-sha512$1$" + ab64(bytes(1024)) + "$" + ab64(bytes(64)))

# FuzzStore: more operations than a program runs (16), and a raw line at its 127 bytes.
write("FuzzStore", "ops-over-16.bin", bytes([REGISTER, 0, 0] + [AUTH, 0, 0] * 20))
write("FuzzStore", "raw-127.bin", raw(b"bob," + b"p" * 123) + bytes([AUTH, 5, 5, REMOVE, 5]))

# FuzzPortalRequests (SPEC §11): first byte % 4 = 0 Cookie, 1 form body, 2 rd, 3 forwarded
# URL headers (X-Original-URL LF X-Forwarded-Proto LF -Host LF -Uri); bit 2 = limit checks.
TOKEN = base64.urlsafe_b64encode(hashlib.sha256(b"seed").digest()).decode().rstrip("=")
for name, sel, data in [
    ("cookie-browser", 0, f"_ga=GA1.2.1234.5678; __Host-credfile={TOKEN}; theme=dark"),
    ("cookie-domain-and-device", 0, f"__Secure-credfile={TOKEN}; __Host-credfile-device={TOKEN}.bob"),
    ("cookie-twice-quoted", 4, f"__Host-credfile=\"{TOKEN}\";__Host-credfile={TOKEN}"),
    ("cookie-blanks", 0, f" \t__Host-credfile \t=\t{TOKEN} ;;; a"),
    ("cookie-long-pair", 4, "__Host-credfile=" + "v" * 4081),
    ("form-login", 1, "csrf=" + TOKEN + "&rd=https%3A%2F%2Fapp.example.com%2Fgrafana%3Fx%3D1"
                       "&username=valencia&password=contrasena123"),
    ("form-utf8-plus", 5, "username=jos%C3%A9&password=p%40ss+w%26rd%3D%25"),
    ("form-bad-percent", 1, "username=bob&password=%4"),
    ("form-duplicate", 1, "password=a&password=b"),
    ("form-17-fields", 1, "&".join(f"f{i}=x" for i in range(17))),
    ("rd-own-host", 6, "https://app.example.com/dashboard?tab=2#top"),
    ("rd-path", 2, "/grafana/d/abc?orgId=1"),
    ("rd-subdomain", 2, "https://grafana.example.org/"),
    ("rd-protocol-relative", 2, "//evil.example/"),
    ("rd-backslash", 2, "/\\evil.example"),
    ("rd-javascript", 2, "javascript:alert(document.cookie)"),
    ("rd-userinfo", 2, "https://app.example.com@evil.example/"),
    ("rd-crlf", 2, "/x\r\nSet-Cookie: a=b"),
    ("rd-suffix-domain", 2, "https://evilexample.org/"),
    ("forwarded-nginx", 3, "https://app.example.com/private/report?id=7\n\n\n"),
    ("forwarded-caddy", 3, "\nhttps\napp.example.com\n/private/report?id=7"),
    ("forwarded-traefik-port", 3, "\nhttps\napp.example.com:8443\n/"),
    ("forwarded-uri-double-slash", 3, "\nhttps\napp.example.com\n//evil.example/"),
    ("forwarded-crlf", 3, "\nhttps\napp.example.com\n/a\r\nX-Injected: 1"),
]:
    write("FuzzPortalRequests", name + ".bin", bytes([sel]) + data.encode())

# FuzzRegistration (SPEC §12): first byte even = an invitation code as typed; odd = the
# register page's form body (bit 1: invite mode, a code of GOOD stands for a fresh code).
for name, sel, data in [
    ("code-printed", 0, "7K3M-Q9XD-2ZTB-WV4N-8RHA-0C1E"),
    ("code-typed-lower-spaces", 0, "7k3m q9xd 2ztb wv4n 8rha 0c1e"),
    ("code-confusables", 0, "7K3M-Q9XD-2ZTB-WV4N-8RHA-OCLI"),
    ("code-short", 0, "7K3M-Q9XD-2ZTB-WV4N-8RHA-0C1"),
    ("code-long", 0, "7K3M-Q9XD-2ZTB-WV4N-8RHA-0C1EE"),
    ("code-u-not-in-alphabet", 0, "7K3M-Q9XD-2ZTB-WV4N-8RHA-0C1U"),
    ("code-padded-over-200", 0, "-" * 180 + "7K3MQ9XD2ZTBWV4N8RHA0C1E"),
    ("form-yes-seed", 1, "csrf=" + TOKEN + "&rd=%2Fapp&username=valencia&password=naranjo-en-flor-2026"),
    ("form-yes-taken", 1, "username=alice&password=naranjo-en-flor-2026"),
    ("form-yes-nfd-alice", 1, "username=alic%65&password=x"),
    ("form-yes-comma", 1, "username=a%2Cb&password=naranjo-en-flor-2026"),
    ("form-yes-hash-name", 1, "username=%23root&password=naranjo-en-flor-2026"),
    ("form-yes-space-edge", 1, "username=+bob&password=naranjo-en-flor-2026"),
    ("form-yes-crlf-password", 1, "username=bob&password=a%0D%0Ab"),
    ("form-yes-nfd-name", 1, "username=jose%CC%81&password=contrase%C3%B1a-larga-2026"),
    ("form-invite-good", 3, "username=bruno&password=naranjo-en-flor-2026&code=GOOD"),
    ("form-invite-good-taken", 3, "username=alice&password=naranjo-en-flor-2026&code=GOOD"),
    ("form-invite-wrong", 3, "username=alice&password=naranjo-en-flor-2026&code=7K3M-Q9XD-2ZTB-WV4N-8RHA-0C1E"),
    ("form-invite-wrong-bad-name", 3, "username=a%2Cb&password=x&code=7K3M-Q9XD-2ZTB-WV4N-8RHA-0C1E"),
]:
    write("FuzzRegistration", name + ".bin", bytes([sel]) + data.encode())

# FuzzSecondFactor (SPEC §14): first byte even = a users file (liboath's users.oath), odd =
# a password with an otp-append code.
RFC_HEX = "3132333435363738393031323334353637383930"
for name, sel, data in [
    ("users-pam-oath", 0, f"# pam_oath\nHOTP/T30 alice - {RFC_HEX}\nHOTP/T30/6\tbob\t-\t{RFC_HEX} 0 755224 2026-12-05T00:00:00L\n"),
    ("users-crlf-upper-hex", 0, f"hotp/t30 carol - {RFC_HEX.upper()}\r\n\r\n"),
    ("users-hotp-counter", 0, f"HOTP alice - {RFC_HEX}\n"),
    ("users-t60", 0, f"HOTP/T60/8 alice - {RFC_HEX}\n"),
    ("users-pin", 0, f"HOTP/T30 alice 1234 {RFC_HEX}\n"),
    ("users-odd-hex", 0, "HOTP/T30 alice - 313\n"),
    ("users-twice", 0, f"HOTP/T30 a - {RFC_HEX}\nHOTP/T30 a - {RFC_HEX}\n"),
    ("users-latin1-name", 0, "HOTP/T30 jos\xe9 - 3132\n"),
    ("users-long-secret", 0, "HOTP/T30 a - " + "ab" * 129 + "\n"),
    ("code-appended", 1, "Tangerine-River-Stone-7287082"),
    ("code-only", 1, "287082"),
    ("code-short", 1, "pw12345"),
    ("code-not-digits", 1, "password28708x"),
]:
    write("FuzzSecondFactor", name + ".bin", bytes([sel]) + data.encode("latin-1" if "latin1" in name else "utf-8"))
# FuzzGroupFile: group files (SPEC §13) in Apache's mod_authz_groupfile shapes.
HTGROUP = b"# Apache group file\nadmins: alice bob\nstaff:\talice  carol\r\n\n   # indented\nadmins: dave\n"
write("FuzzGroupFile", "apache-shapes.htgroup", HTGROUP)
write("FuzzGroupFile", "no-final-newline.htgroup", b"g: u v")
write("FuzzGroupFile", "empty-group.htgroup", b"empty:\nfull: a\n")
write("FuzzGroupFile", "long-line.htgroup", b"big: " + b" ".join(b"user%d" % i for i in range(600)) + b"\n")
write("FuzzGroupFile", "bad-no-colon.htgroup", b"ok: a\nno colon here\n")
write("FuzzGroupFile", "bad-name.htgroup", b"two words: a\n")
write("FuzzGroupFile", "bad-utf8.htgroup", b"g: \xff\n")
write("FuzzGroupFile", "empty.htgroup", b"")

# FuzzAccessRules: first byte even, a rules file; odd, a forwarded path.
RULES = (b"# SPEC 13\nbypass     host=status.example.com\ndeny       path=/admin network=!10.0.0.0/8\n"
         b"allow      host=*.example.com path=/admin/ group=admins\ntwo-factor host=vault.example.com\n"
         b"allow      host=*.example.com\n")
write("FuzzAccessRules", "spec-example.rules", b"\x00" + RULES)
write("FuzzAccessRules", "authelia-regex.rules", b"\x00two-factor host=dev.example.com path=~^/groups/dev/.*$ group=dev method=GET method=POST network=192.168.1.0/24\n")
write("FuzzAccessRules", "ipv6.rules", b"\x00deny network=!2001:db8::/32 network=!::1/128\r\nallow user=alice\n")
write("FuzzAccessRules", "bad-cidr.rules", b"\x00allow\ndeny network=10.0.0.0/33\n")
write("FuzzAccessRules", "bad-regex.rules", b"\x00allow path=~a(\n")
write("FuzzAccessRules", "bad-action.rules", b"\x00allw host=a\n")
for name, path in [("dotdot", b"/a/../admin"), ("double-slash", b"//admin"), ("encoded-slash", b"/%2Fadmin"),
                   ("encoded-backslash", b"/a%5cb"), ("nul", b"/a%00"), ("encoded-dots", b"/%2e%2e/x"),
                   ("clean-query", b"/api/v1?x=/../y"), ("broken-escape", b"/a%4"), ("letter-escape", b"/%61dmin")]:
    write("FuzzAccessRules", "path-" + name + ".bin", b"\x01" + path)

# FuzzPasskeys (SPEC §14): first byte modulo 3 = clientDataJSON (0), an attestation object
# (1), a COSE key (2). The key is P-256's generator, a point on the curve; the CBOR is built
# here for the seeds only (credfile reads it with libcbor).
def cbor_head(major, n):
    if n < 24: return bytes([major << 5 | n])
    if n < 256: return bytes([major << 5 | 24, n])
    return bytes([major << 5 | 25, n >> 8, n & 255])
def cbor(v):
    if isinstance(v, bool): raise ValueError(v)
    if isinstance(v, int): return cbor_head(0, v) if v >= 0 else cbor_head(1, -1 - v)
    if isinstance(v, bytes): return cbor_head(2, len(v)) + v
    if isinstance(v, str): return cbor_head(3, len(v.encode())) + v.encode()
    if isinstance(v, list): return cbor_head(5, len(v)) + b"".join(cbor(k) + cbor(x) for k, x in v)
    raise ValueError(v)
P256_X = bytes.fromhex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296")
P256_Y = bytes.fromhex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
COSE_ES256 = cbor([(1, 2), (3, -7), (-1, 1), (-2, P256_X), (-3, P256_Y)])
CRED_ID = bytes(range(32))
def auth_data(rp="example.com", flags=0x45, key=COSE_ES256, cred=CRED_ID):
    return (hashlib.sha256(rp.encode()).digest() + bytes([flags]) + (7).to_bytes(4, "big") + bytes(16)
            + len(cred).to_bytes(2, "big") + cred + key)
def attestation(fmt="none", stmt=None, data=None):
    return cbor([("fmt", fmt), ("attStmt", stmt or []), ("authData", data if data is not None else auth_data())])
CHALLENGE = base64.urlsafe_b64encode(bytes(32)).rstrip(b"=").decode()
for name, sel, data in [
    ("client-create", 0, '{"type":"webauthn.create","challenge":"%s","origin":"https://example.com","crossOrigin":false}' % CHALLENGE),
    ("client-get-chrome", 0, '{"type":"webauthn.get","challenge":"%s","origin":"https://example.com","crossOrigin":false,"other_keys_can_be_added_here":"do not compare clientDataJSON against a template. See https://goo.gl/yabPex"}' % CHALLENGE),
    ("client-escapes", 0, '{"type":"webauthn.get","challenge":"AA","origin":"https:\\/\\/e\\u00e9\\ud83d\\ude00","tokenBinding":{"status":"present","id":"x"},"n":[1,-2.5e3,null,true]}'),
    ("client-duplicate", 0, '{"type":"webauthn.get","type":"webauthn.create","challenge":"AA","origin":"https://e"}'),
    ("client-lone-surrogate", 0, '{"type":"webauthn.get","challenge":"AA","origin":"\\ud83d"}'),
    ("client-deep", 0, '{"type":"t","challenge":"AA","origin":"o","x":' + "[" * 20 + "]" * 20 + "}"),
]:
    write("FuzzPasskeys", name + ".bin", bytes([sel]) + data.encode())
for name, data in [
    ("attestation-none", attestation()),
    ("attestation-extensions", attestation(data=auth_data(flags=0xC5) + cbor([("credProtect", 2)]))),
    ("attestation-packed", attestation(fmt="packed", stmt=[("alg", -7), ("sig", bytes(70))])),
    ("attestation-other-rp", attestation(data=auth_data(rp="evil.example"))),
    ("attestation-no-up", attestation(data=auth_data(flags=0x44))),
    ("attestation-eddsa", attestation(data=auth_data(key=cbor([(1, 1), (3, -8), (-1, 6), (-2, bytes(32))])))),
    ("attestation-trailing", attestation() + b"\x00"),
    ("attestation-long-id", attestation(data=auth_data(cred=bytes(1024)))),
]:
    write("FuzzPasskeys", name + ".bin", b"\x01" + data)
for name, data in [
    ("cose-es256", COSE_ES256),
    ("cose-duplicate-label", cbor([(1, 2), (3, -7), (-1, 1), (-2, P256_X), (-3, P256_Y), (1, 2)])),
    ("cose-rs256", cbor([(1, 3), (3, -257), (-1, bytes(256)), (-2, b"\x01\x00\x01")])),
    ("cose-short-x", cbor([(1, 2), (3, -7), (-1, 1), (-2, P256_X[:31]), (-3, P256_Y)])),
    ("cose-indefinite-map", b"\xbf\x01\x02\xff"),
]:
    write("FuzzPasskeys", name + ".bin", b"\x02" + data)
