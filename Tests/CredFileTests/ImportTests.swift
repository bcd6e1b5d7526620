import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// SPEC §5 `import --hashed` / `import --from FORMAT`: strict readers of peer files made
/// by the peers themselves (Vectors/peers/README.md), stored byte for byte, all or nothing.
@Suite("Import of hashes")
struct ImportTests {
    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Vectors/peers")

    static func peerFile(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: peers.appendingPathComponent(name)))
    }

    /// The `user:secret` pairs of a peer file, split by hand (the oracle).
    static func pairs(_ bytes: [UInt8]) -> [(String, String)] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { (line: Substring) -> (String, String) in
            let cut = line.firstIndex(of: ":")!  // every line of the committed files has one
            return (String(line[..<cut]), String(line[line.index(after: cut)...]))
        }
    }

    @Test("htpasswd: every secret byte for byte, DES as {CRYPT}")
    func htpasswd() throws {
        let input = try Self.peerFile("htpasswd.txt")
        let batch = try ImportReader.read(input, format: .htpasswd)
        let expected = Self.pairs(input).map { user, secret in
            (user, secret.hasPrefix("$") || secret.hasPrefix("{") ? secret : "{CRYPT}" + secret)
        }
        #expect(batch.users.map(\.username) == expected.map(\.0))
        #expect(batch.users.map(\.secret) == expected.map(\.1))
        #expect(batch.users.map(\.line) == Array(1...expected.count))
        #expect(batch.users.contains { $0.secret.hasPrefix("{CRYPT}") && $0.username == "dave" })
        #expect(batch.skipped.isEmpty)
    }

    @Test("mosquitto: $7$ and $6$ byte for byte")
    func mosquitto() throws {
        let input = try Self.peerFile("mosquitto.txt")
        let batch = try ImportReader.read(input, format: .mosquitto)
        #expect(batch.users.map(\.username) == Self.pairs(input).map(\.0))
        #expect(batch.users.map(\.secret) == Self.pairs(input).map(\.1))
        #expect(Set(batch.users.map { String($0.secret.prefix(3)) }) == ["$7$", "$6$"])
    }

    @Test("dovecot: {SCHEME} kept, extra fields dropped, {PLAIN} becomes plaintext")
    func dovecot() throws {
        let input = try Self.peerFile("dovecot.txt")
        let batch = try ImportReader.read(input, format: .dovecot)
        let expected = Self.pairs(input).map { user, rest in
            let password = String(rest.prefix { $0 != ":" })
            return (user, password.hasPrefix("{PLAIN}") ? String(password.dropFirst(7)) : password)
        }
        #expect(batch.users.map(\.username) == expected.map(\.0))
        #expect(batch.users.map(\.secret) == expected.map(\.1))
        #expect(batch.users.first { $0.username == "dave" }?.secret == "dave pw 44")
    }

    @Test("shadow: hashes kept, DES as {CRYPT}, locked and empty skipped and reported")
    func shadow() throws {
        let input = try Self.peerFile("shadow.txt")
        let batch = try ImportReader.read(input, format: .shadow)
        let all = Self.pairs(input).map { user, rest in (user, String(rest.prefix { $0 != ":" })) }
        let kept = all.filter { !$0.1.isEmpty && !$0.1.hasPrefix("!") && !$0.1.hasPrefix("*") }
        #expect(batch.users.map(\.username) == kept.map(\.0))
        #expect(batch.users.map(\.secret) == kept.map { $0.1.hasPrefix("$") ? $0.1 : "{CRYPT}" + $0.1 })
        #expect(batch.skipped.map(\.username) == ["root", "locked", "nopw", "daemon"])
        #expect(batch.skipped.map(\.reason) == [.locked, .locked, .noPassword, .locked])
        #expect(batch.skipped.map(\.line) == [3, 4, 5, 6])
    }

    struct BadCase: CustomTestStringConvertible, Sendable {
        let name: String
        let format: ImportFormat
        let input: String
        /// The line the error must name, and words it must hold.
        let message: String
        var testDescription: String { name }
    }

    static let pbkdf2 = "$pbkdf2-sha256$1$c2FsdA$2Z2fXxkNn9jlHZTwEeZv6DDh1eTQaUDRa1/6uc4y0Ns"

    // libxcrypt 4.4 (Python's ctypes over libcrypt.so.1), password "migrated-Passw0rd": the
    // methods SPEC §3.2 verifies inside {CRYPT} only.
    static let migrated = "migrated-Passw0rd"
    static let crypt2x = "$2x$05$abcdefghijklmnopqrstuus8YJsxuLcpjqVi0pNJIej8sjQvGeWBa"
    static let nt = "$3$$dc27cd31305aec6f18c9a63095eedff1"
    static let legacyCrypt = [
        "$gy$j9T$saltsaltsaltsalt$jOlz3z3lHer0efEJSZeeHNpwZHcQGj08o1T.NaXIkg3", crypt2x, nt,
        "$sha1$5000$saltsalt$3cVSJ5WjQwFlACsG7PDHS4cuulRl", "$md5,rounds=1000$saltsalt$$FbD36Appq8QZDBChbG1xv.",
        "_J9..salt.ga18x.dZwY",
    ]

    static let badCases: [BadCase] = [
        .init(
            name: "hashed: plaintext secret", format: .hashed, input: "ann,\(pbkdf2)\nbob,hunter2-garden\n",
            message: "line 2: the secret is not a hash"),
        .init(
            name: "hashed: malformed pbkdf2", format: .hashed, input: "ann,$pbkdf2-sha256$0$AA$AA\n", message: "line 1:"
        ),
        .init(name: "hashed: $ without $id$", format: .hashed, input: "ann,$notahash\n", message: "line 1:"),
        .init(name: "hashed: unknown crypt id", format: .hashed, input: "ann,$zz9$abc$def\n", message: "line 1:"),
        .init(name: "hashed: no comma", format: .hashed, input: "# c\nann\n", message: "line 2: expected user,secret"),
        .init(
            name: "hashed: empty username", format: .hashed, input: ",\(pbkdf2)\n", message: "line 1: username is empty"
        ),
        .init(
            name: "hashed: duplicate names both lines", format: .hashed, input: "ann,\(pbkdf2)\n\nann,\(pbkdf2)\n",
            message: "line 3: the same user as line 1"),
        .init(
            name: "hashed: duplicate after NFC", format: .hashed,
            input: "\u{C9}mile,\(pbkdf2)\nE\u{301}mile,\(pbkdf2)\n", message: "line 2: the same user as line 1"),
        .init(
            name: "htpasswd: plaintext (htpasswd -p) refused", format: .htpasswd, input: "ann:hunter2-garden\n",
            message: "line 1: the secret is not a hash htpasswd writes"),
        .init(
            name: "htpasswd: 12-character DES refused", format: .htpasswd, input: "ann:zkwV5jyzYo5h\n",
            message: "line 1:"),
        .init(
            name: "htpasswd: username with a comma", format: .htpasswd,
            input: "a,b:$apr1$SOCH89go$U6qDV0JWPS7RyZbW/8aUL.\n", message: "line 1: username contains a comma"),
        .init(
            name: "htpasswd: no separator", format: .htpasswd, input: "ann\n", message: "line 1: expected user:secret"),
        .init(
            name: "mosquitto: bcrypt is not mosquitto", format: .mosquitto,
            input: "ann:$2y$05$5s6UTPiI.KE.p3cMtnNfS.7m8ghVqxLw.JhkcnC9LWIIdEckm/kdC\n",
            message: "line 1: a mosquitto secret starts with $7$ or $6$"),
        .init(
            name: "dovecot: {PLAIN.B64} refused", format: .dovecot, input: "ann:{PLAIN.B64}aGVsbG8=\n",
            message: "line 1: the secret is a hash"),
        // Secrets credfile never verifies are refused, never stored as an account that can
        // never log in (issue #25 item 6), naming the scheme.
        .init(
            name: "hashed: {MD5}", format: .hashed, input: "ann,{MD5}Xr4ilOzQ4PCOq3aQ0qbuaQ==\n",
            message: "line 1: {MD5} is a hash scheme credfile does not verify"),
        .init(
            name: "hashed: {SMD5}", format: .hashed, input: "ann,{SMD5}UjFY34os/pnZQ3oQOzjqGu4yeXE=\n",
            message: "line 1: {SMD5} is a hash scheme"),
        .init(
            name: "hashed: {NTLM}", format: .hashed, input: "ann,{NTLM}8846f7eaee8fb117ad06bdd830b7586c\n",
            message: "line 1: {NTLM} is a hash scheme"),
        .init(
            name: "hashed: phpass $P$", format: .hashed, input: "ann,$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0\n",
            message: "line 1: $P$ is a hash scheme"),
        .init(
            name: "hashed: Django crypt$", format: .hashed, input: "ann,crypt$$ab1Hv2Lg7ltQo\n",
            message: "line 1: django crypt is a hash scheme"),
        .init(
            name: "hashed: Django unsalted_md5$", format: .hashed,
            input: "ann,unsalted_md5$eb270b7784844768bcfc9966497fc966\n",
            message: "line 1: django unsalted_md5 is a hash scheme"),
        .init(
            name: "hashed: bare $2x$ (verified inside {CRYPT} only)", format: .hashed, input: "ann,\(crypt2x)\n",
            message: "line 1: $2x$ is a hash scheme credfile does not verify (credfile verifies it inside {CRYPT}"),
        .init(
            name: "hashed: bare NT $3$", format: .hashed, input: "ann,\(nt)\n",
            message: "line 1: $3$ is a hash scheme credfile does not verify (credfile verifies it inside {CRYPT}"),
        .init(
            name: "hashed: a yescrypt salt libxcrypt cannot decode", format: .hashed,
            input: "ann,$y$j9T$z$XQDNaFQpn3YFD.KptOy3mg8JRkO6ILUsDQHKxzxKL90\n",
            message: "line 1: the secret is a malformed hash: yescrypt salt does not decode"),
        .init(
            name: "dovecot: {MD5} is not a scheme credfile verifies", format: .dovecot,
            input: "ann:{MD5}$1$wmyrgRuV$kImF6.9MAFQNHe23kq5vI/\n", message: "line 1: {MD5} is a hash scheme"),
        .init(
            name: "shadow: phpass is not crypt(3)", format: .shadow,
            input: "ann:$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0:1::::::\n", message: "line 1: $P$ is a hash scheme"),
        .init(
            name: "dovecot: {PLAIN} that looks like a hash", format: .dovecot, input: "ann:{PLAIN}$6$abc$def\n",
            message: "line 1: {PLAIN}"),
        .init(
            name: "dovecot: unprefixed plaintext", format: .dovecot, input: "ann:hunter2-garden:::\n",
            message: "line 1:"),
        .init(
            name: "shadow: 3 fields", format: .shadow, input: "ann:$6$abc$def:19700\n",
            message: "line 1: a shadow line has 9 fields"),
        .init(
            name: "shadow: 10 fields", format: .shadow, input: "ann:$6$abc$def:1:2:3:4:5:6:7:8\n",
            message: "line 1: a shadow line has 9 fields"),
        .init(
            name: "a combining mark after ':' does not hide the separator", format: .htpasswd,
            input: "ann:\u{301}zkwV5jyzYo5h\n", message: "line 1: the secret is not a hash htpasswd writes"),
        .init(
            name: "control character", format: .htpasswd, input: "ann:$apr1$a\u{7}b$c\n",
            message: "line 1: contains a control character"),
        .init(
            name: "shadow duplicate, even of a skipped user", format: .shadow,
            input: "root:*:1::::::\nroot:$6$abc$def:1::::::\n", message: "line 2: the same user as line 1"),
    ]

    @Test("strict parsing: each error names its line", arguments: badCases)
    func bad(_ c: BadCase) throws {
        do {
            _ = try ImportReader.read(Array(c.input.utf8), format: c.format)
            Issue.record("accepted")
        } catch let error as CredFileError {
            #expect(error.code == .usage)
            #expect(error.message.hasPrefix(c.message), "\(error.message)")
            #expect(!error.message.contains("hunter2"))
        }
    }

    @Test("a combining mark after {PLAIN}'s brace is part of the plaintext (FuzzImport's first finding)")
    func combiningMarkAfterBrace() throws {
        let batch = try ImportReader.read(Array("ann:{PLAIN}\u{301}pass-word\n".utf8), format: .dovecot)
        #expect(batch.users.map(\.secret) == ["\u{301}pass-word"])
    }

    @Test("invalid UTF-8 is refused with its line")
    func invalidUTF8() {
        var input = Array("ok:$apr1$SOCH89go$U6qDV0JWPS7RyZbW/8aUL.\n".utf8)
        input += [0x62, 0xFF, 0x3A, 0x78, 0x0A]
        #expect(throws: CredFileError.usage("")) { try ImportReader.read(input, format: .htpasswd) }
        do { _ = try ImportReader.read(input, format: .htpasswd) } catch let error as CredFileError {
            #expect(error.message == "line 2: not valid UTF-8")
        } catch {}
    }

    @Test("blank lines, comments, CRLF and a missing final LF are accepted")
    func tolerantLayout() throws {
        let input = "# made by hand\r\n\r\n  \nann,\(Self.pbkdf2)\r\nbob,{SHA}k/wNAGQUdECf1ROLsOyy/s7xrIs="
        let batch = try ImportReader.read(Array(input.utf8), format: .hashed)
        #expect(
            batch.users == [
                ImportedUser(username: "ann", secret: Self.pbkdf2, line: 4),
                ImportedUser(username: "bob", secret: "{SHA}k/wNAGQUdECf1ROLsOyy/s7xrIs=", line: 5),
            ])
    }

    @Test("import stores every secret byte for byte under one lock, and each hash still verifies")
    func storesByteForByte() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            let store = CredentialStore(path: path, policy: try policy(rounds: 1))
            try writeText(path, "# kept\nann,old-plaintext\n")
            let hash = try PasswordHash(hashing: Password("ann's new pass"), policy: policy(rounds: 1)).string
            let input = try Self.peerFile("dovecot.txt") + Array("ann:\(hash)\n".utf8)
            let batch = try ImportReader.read(input, format: .dovecot)
            let counts = try store.importHashes(batch.users)
            #expect(counts.added == batch.users.count - 1 && counts.updated == 1)
            let text = String(decoding: try readBytes(path), as: UTF8.self)
            var expected = "# kept\nann,\(hash)\n"
            for user in batch.users where user.username != "ann" { expected += "\(user.username),\(user.secret)\n" }
            #expect(text == expected)
            #expect(try store.authenticate(username: "ann", password: "ann's new pass"))
            #expect(try store.authenticate(username: "dave", password: "dave pw 44"))  // {PLAIN} became plaintext
            #expect(try !store.authenticate(username: "ann", password: "old-plaintext"))
        }
    }

    @Test("hashes are not judged by the password policy (they are not passwords chosen now)")
    func notJudged() throws {
        try withTemporaryDirectory { dir in
            let store = CredentialStore(path: dir.file("c.txt"), policy: try policy(rounds: 1))
            let weak = try PasswordHash(hashing: Password("password"), policy: policy(rounds: 1)).string
            _ = try store.importHashes([ImportedUser(username: "ann", secret: weak, line: 1)])
            #expect(try store.authenticate(username: "ann", password: "password"))
        }
    }

    @Test("all or nothing: a malformed entry of one user leaves the file byte-identical")
    func allOrNothing() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try writeText(path, "ann,plain-old-1\nbob,$pbkdf2-sha256$broken\n")
            let before = try readBytes(path)
            let store = CredentialStore(path: path, policy: try policy(rounds: 1))
            let batch = try ImportReader.read(Array("ann,\(Self.pbkdf2)\nbob,\(Self.pbkdf2)\n".utf8), format: .hashed)
            #expect(throws: CredFileError(.malformedFile, "")) { try store.importHashes(batch.users) }
            #expect(try readBytes(path) == before)
            // A plaintext secret handed to the library directly is checked too.
            #expect(throws: CredFileError.usage("")) {
                try store.importHashes([ImportedUser(username: "cid", secret: "$nope", line: 7)])
            }
            #expect(try readBytes(path) == before)
        }
    }

    @Test("shadow, htpasswd and Dovecot's crypt: a method verified only inside {CRYPT} is stored so, and logs in")
    func legacyCryptMethodsAreWrapped() throws {
        let shadow = Self.legacyCrypt.enumerated().map { "u\($0.offset):\($0.element):19700:0:99999:7:::\n" }.joined()
        let batch = try ImportReader.read(Array(shadow.utf8), format: .shadow)
        #expect(batch.users.map(\.secret) == Self.legacyCrypt.map { "{CRYPT}" + $0 })
        try withTemporaryDirectory { dir in
            let store = CredentialStore(path: dir.file("c.txt"), policy: try policy(rounds: 1))
            _ = try store.importHashes(batch.users)
            for user in batch.users {
                #expect(
                    try store.authenticate(username: user.username, password: Self.migrated),
                    "\(user.secret.prefix(12))")
                #expect(try !store.authenticate(username: user.username, password: "x" + Self.migrated))
            }
        }
    }

    @Test("Django's unsalted md5$$ imports and logs in")
    func unsaltedDjango() throws {
        let batch = try ImportReader.read(Array("ann,md5$$eb270b7784844768bcfc9966497fc966\n".utf8), format: .hashed)
        try withTemporaryDirectory { dir in
            let store = CredentialStore(path: dir.file("c.txt"), policy: try policy(rounds: 1))
            _ = try store.importHashes(batch.users)
            #expect(try store.authenticate(username: "ann", password: Self.migrated))
        }
    }

    @Test("a hash over the store's cost limits is refused with its line and the figure")
    func tooCostlyIsRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("c.txt")
            let store = CredentialStore(path: path, policy: try policy(rounds: 1))
            let bcrypt31 = "$2b$31$Mey1/eqXqYWDCiO1EFF0P.DwEQKnF0pm425362qNAL3BfRsaDp/PW"
            do {
                _ = try store.importHashes([ImportedUser(username: "ann", secret: bcrypt31, line: 3)])
                Issue.record("a bcrypt of cost 31 was imported")
            } catch let error as CredFileError {
                #expect(error.code == .usage)
                #expect(error.message.hasPrefix("line 3: too costly: bcrypt 31 would take about"))
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
}
