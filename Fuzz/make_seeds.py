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
