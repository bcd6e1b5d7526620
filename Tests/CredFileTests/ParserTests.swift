import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

// Table tests for SPEC §2, one table per bullet, one named row per case. Each row gives
// the file's bytes and, for every line, its content, its ending and what it is.

/// The UTF-8 bytes of `s`, exactly as its scalars are written (Swift keeps `e\u{301}`
/// decomposed).
private func b(_ s: String) -> [UInt8] { Array(s.utf8) }

private let bom = CredentialFile.bom

extension ParserTests {
    /// What a line is expected to be.
    enum ExpectedKind: Sendable {
        case blank
        case comment
        case plaintext(user: [UInt8], secret: [UInt8])
        case pbkdf2(user: [UInt8], hash: String)
        case unsupported(user: [UInt8], scheme: String)
        case malformed(user: [UInt8], reason: String)
    }

    /// One line as expected: its content (without ending), its ending and its kind.
    struct ExpectedLine: Sendable {
        let content: [UInt8]
        let ending: LineEnding
        let kind: ExpectedKind

        init(_ content: [UInt8], _ ending: LineEnding, _ kind: ExpectedKind) {
            self.content = content
            self.ending = ending
            self.kind = kind
        }
    }

    /// A named row: a file's bytes and its expected lines.
    struct FileCase: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let hasBOM: Bool
        let lines: [ExpectedLine]
        var testDescription: String { name }

        init(_ name: String, _ bytes: [UInt8], bom: Bool = false, _ lines: [ExpectedLine]) {
            self.name = name
            self.bytes = bytes
            self.hasBOM = bom
            self.lines = lines
        }

        /// A file of one line ending in LF.
        static func line(_ name: String, _ content: [UInt8], _ kind: ExpectedKind) -> FileCase {
            FileCase(name, content + [0x0A], [ExpectedLine(content, .lf, kind)])
        }

        /// A file of one entry `user,secret` + LF.
        static func entry(_ name: String, _ user: String, _ secret: String, _ kind: ExpectedKind) -> FileCase {
            line(name, b(user) + b(",") + b(secret), kind)
        }
    }
}

/// Fixtures shared by the parser, property and lint tests.
enum ParserFixture {
    /// A well-formed passlib hash string built from its parts; nothing is computed.
    static func hash(
        _ algorithm: HashAlgorithm = .sha256, rounds: Int = 1_200_000, saltCount: Int = 16, seed: UInt8 = 1
    ) -> String {
        let salt = (0..<saltCount).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
        let checksum = (0..<algorithm.digestCount).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
        do {
            return try PasswordHash(algorithm: algorithm, rounds: rounds, salt: salt, checksum: checksum).string
        } catch {
            preconditionFailure("fixture hash parts are in range by construction: \(error)")
        }
    }

    /// `0x0D`: the spelling the classifier's reasons use.
    static func hex(_ byte: UInt8) -> String {
        "0x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
    }

    /// Control bytes that make an entry malformed: 0x00–0x08, 0x0B–0x1F, 0x7F
    /// (TAB is allowed; LF can never be inside a line).
    static let controlBytes: [UInt8] = Array(0x00...0x08) + Array(0x0B...0x1F) + [0x7F]

    /// A credential file holding `bytes` in a fresh directory, removed after `body`.
    static func withFile<R>(_ bytes: [UInt8], _ body: (String) throws -> R) throws -> R {
        try withTemporaryDirectory { directory in
            let path = directory.file("usuarios.txt")
            try writeBytes(path, bytes)  // 0600, as a credential file should be: `check` warns about any other mode
            return try body(path)
        }
    }

    /// The file's bytes now.
    static func contents(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A store with 1 round, so tests are fast; SPEC §8's rules for new passwords are
    /// PasswordPolicyTests' subject, so these parser tests keep their short passwords.
    static func store(_ path: String) throws -> CredentialStore {
        var store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1))
        store.passwordPolicy = .permissive
        return store
    }
}

/// Checks a parsed file against a row, line by line.
private func expectParse(_ row: ParserTests.FileCase, sourceLocation: SourceLocation = #_sourceLocation) {
    let file = CredentialFile(bytes: row.bytes)
    #expect(file.render() == row.bytes, "render() gives back the bytes", sourceLocation: sourceLocation)
    #expect(file.hasBOM == row.hasBOM, "hasBOM", sourceLocation: sourceLocation)
    #expect(file.lineCount == row.lines.count, "line count", sourceLocation: sourceLocation)
    for (index, (line, want)) in zip(file.lines, row.lines).enumerated() {
        #expect(line.number == index + 1, sourceLocation: sourceLocation)
        #expect(Array(line.content) == want.content, "content of line \(index + 1)", sourceLocation: sourceLocation)
        #expect(line.ending == want.ending, "ending of line \(index + 1)", sourceLocation: sourceLocation)
        expectKind(line.kind, want.kind, line: index + 1, sourceLocation: sourceLocation)
    }
}

private func expectKind(_ got: LineKind, _ want: ParserTests.ExpectedKind, line: Int, sourceLocation: SourceLocation) {
    switch (want, got) {
    case (.blank, .blank), (.comment, .comment):
        return
    case (.plaintext(let user, let secret), .entry(let entry)):
        #expect(Array(entry.username) == user, "username of line \(line)", sourceLocation: sourceLocation)
        #expect(Array(entry.secretBytes) == secret, "secret of line \(line)", sourceLocation: sourceLocation)
        #expect(entry.secret == .plaintext, "line \(line) is plaintext", sourceLocation: sourceLocation)
    case (.pbkdf2(let user, let hash), .entry(let entry)):
        #expect(Array(entry.username) == user, "username of line \(line)", sourceLocation: sourceLocation)
        guard case .pbkdf2(let parsed) = entry.secret else {
            Issue.record("line \(line): expected a pbkdf2 hash, got \(entry.secret)", sourceLocation: sourceLocation)
            return
        }
        #expect(parsed.string == hash, sourceLocation: sourceLocation)
        #expect(Array(entry.secretBytes) == b(hash), sourceLocation: sourceLocation)
    case (.unsupported(let user, let scheme), .entry(let entry)):
        #expect(Array(entry.username) == user, "username of line \(line)", sourceLocation: sourceLocation)
        #expect(entry.secret == .unsupportedHash(scheme: scheme), "line \(line)", sourceLocation: sourceLocation)
    case (.malformed(let user, let reason), .entry(let entry)):
        #expect(Array(entry.username) == user, "username of line \(line)", sourceLocation: sourceLocation)
        #expect(entry.isMalformed, "line \(line) is malformed", sourceLocation: sourceLocation)
        guard case .malformed(let got) = entry.secret else {
            Issue.record(
                "line \(line): expected malformed (\(reason)), got \(entry.secret)", sourceLocation: sourceLocation)
            return
        }
        #expect(got.contains(reason), "reason of line \(line): \(got)", sourceLocation: sourceLocation)
    default:
        Issue.record("line \(line): expected \(want), got \(got)", sourceLocation: sourceLocation)
    }
}

private func plain(_ user: String, _ secret: String) -> ParserTests.ExpectedKind {
    .plaintext(user: b(user), secret: b(secret))
}

private func unsupported(_ user: String, _ scheme: String) -> ParserTests.ExpectedKind {
    .unsupported(user: b(user), scheme: scheme)
}

private func bad(_ user: String, _ reason: String) -> ParserTests.ExpectedKind {
    .malformed(user: b(user), reason: reason)
}

@Suite("Parser: SPEC §2, bullet by bullet")
struct ParserTests {
    // MARK: Lines

    static let lineRows: [FileCase] = [
        FileCase(
            "LF", b("a,1\nb,2\n"), [.init(b("a,1"), .lf, plain("a", "1")), .init(b("b,2"), .lf, plain("b", "2"))]),
        FileCase(
            "CRLF: the CR belongs to the ending", b("a,1\r\nb,2\r\n"),
            [.init(b("a,1"), .crlf, plain("a", "1")), .init(b("b,2"), .crlf, plain("b", "2"))]),
        FileCase(
            "mixed endings, each line keeps its own", b("a,1\r\nb,2\nc,3\r\n"),
            [
                .init(b("a,1"), .crlf, plain("a", "1")), .init(b("b,2"), .lf, plain("b", "2")),
                .init(b("c,3"), .crlf, plain("c", "3")),
            ]),
        FileCase(
            "no final newline", b("a,1\nb,2"),
            [.init(b("a,1"), .lf, plain("a", "1")), .init(b("b,2"), .none, plain("b", "2"))]),
        FileCase(
            "CRLF file without final newline", b("a,1\r\nb,2"),
            [.init(b("a,1"), .crlf, plain("a", "1")), .init(b("b,2"), .none, plain("b", "2"))]),
        FileCase(
            "lone CR at end of last line is part of the line", b("a,1\nb,2\r"),
            [
                .init(b("a,1"), .lf, plain("a", "1")),
                .init(b("b,2\r"), .none, bad("b", "control byte 0x0D at column 4")),
            ]),
        FileCase(
            "CR in the middle of a line", b("a,x\ry\n"),
            [.init(b("a,x\ry"), .lf, bad("a", "control byte 0x0D at column 4"))]),
        FileCase(
            "CR CR LF: only the last CR is the ending", b("a,1\r\r\n"),
            [.init(b("a,1\r"), .crlf, bad("a", "control byte 0x0D at column 4"))]),
        FileCase("empty file", [], []),
        FileCase("one LF", b("\n"), [.init([], .lf, .blank)]),
        FileCase("one CRLF", b("\r\n"), [.init([], .crlf, .blank)]),
        FileCase(
            "empty lines between entries", b("a,1\n\n\r\nb,2\n"),
            [
                .init(b("a,1"), .lf, plain("a", "1")), .init([], .lf, .blank), .init([], .crlf, .blank),
                .init(b("b,2"), .lf, plain("b", "2")),
            ]),
        FileCase(
            "0x0A can never be inside a line: it ends it", b("evil\nadmin,x"),
            [.init(b("evil"), .lf, bad("", "no comma")), .init(b("admin,x"), .none, plain("admin", "x"))]),
    ]

    @Test("lines and their endings", arguments: lineRows)
    func lines(_ row: FileCase) { expectParse(row) }

    // MARK: BOM

    static let bomRows: [FileCase] = [
        FileCase(
            "BOM skipped on line 1", bom + b("alice,pw\nbob,x\n"), bom: true,
            [.init(b("alice,pw"), .lf, plain("alice", "pw")), .init(b("bob,x"), .lf, plain("bob", "x"))]),
        FileCase(
            "BOM and CRLF", bom + b("alice,pw\r\n"), bom: true, [.init(b("alice,pw"), .crlf, plain("alice", "pw"))]),
        FileCase("BOM alone: no lines", bom, bom: true, []),
        FileCase("BOM then LF: one blank line", bom + b("\n"), bom: true, [.init([], .lf, .blank)]),
        FileCase("BOM then a comment", bom + b("# users\n"), bom: true, [.init(b("# users"), .lf, .comment)]),
        FileCase(
            "BOM not at the start is not skipped", b("a,1\n") + bom + b("b,2\n"),
            [
                .init(b("a,1"), .lf, plain("a", "1")),
                .init(bom + b("b,2"), .lf, .plaintext(user: bom + b("b"), secret: b("2"))),
            ]),
        FileCase(
            "a second BOM is content", bom + bom + b("c,3"), bom: true,
            [.init(bom + b("c,3"), .none, .plaintext(user: bom + b("c"), secret: b("3")))]),
        FileCase(
            "half a BOM is not a BOM", [0xEF, 0xBB] + b("a,1\n"),
            [.init([0xEF, 0xBB] + b("a,1"), .lf, .malformed(user: [0xEF, 0xBB, 0x61], reason: "not valid UTF-8"))]),
    ]

    @Test("UTF-8 BOM", arguments: bomRows)
    func byteOrderMark(_ row: FileCase) { expectParse(row) }

    @Test("BOM: the scanner skips it, and a rewrite keeps it")
    func bomKeptOnRewrite() throws {
        let file = CredentialFile(bytes: bom + b("alice,pw\r\nbob,x"))
        let alice = try #require(file.firstEntry(named: "alice"))
        #expect(alice.number == 1)
        #expect(Array(alice.content) == b("alice,pw"))
        #expect(alice.ending == .crlf)
        #expect(file.firstEntry(named: "\u{FEFF}alice") == nil)
        var changes = CredentialFile.Changes()
        try changes.replaceSecret(of: alice, with: "new")
        try changes.append(username: "carol", secret: "c")
        #expect(try file.render(applying: changes) == bom + b("alice,new\r\nbob,x\ncarol,c\n"))
        var removal = CredentialFile.Changes()
        removal.remove(alice)
        #expect(try file.render(applying: removal) == bom + b("bob,x"))
        // A BOM in the middle is part of the name: it neither hides nor matches the plain name.
        let middle = CredentialFile(bytes: b("a,1\n") + bom + b("b,2\n"))
        #expect(middle.firstEntry(named: "b") == nil)
        #expect(middle.firstEntry(named: "\u{FEFF}b")?.number == 2)
    }

    // MARK: Blank and comment lines

    static let blankAndCommentRows: [FileCase] = [
        .line("empty", [], .blank),
        .line("spaces", b("   "), .blank),
        .line("tabs", b("\t\t"), .blank),
        .line("spaces and tabs", b(" \t \t"), .blank),
        FileCase("spaces before CRLF", b("  \r\n"), [.init(b("  "), .crlf, .blank)]),
        .line("# alone", b("#"), .comment),
        .line("comment holding a comma", b("# bob,pw"), .comment),
        .line("comment holding a control byte", b("#\u{01}x"), .comment),
        .line("comment holding invalid UTF-8", b("#") + [0xFF], .comment),
        .line("comment longer than 65,536 bytes", b("#") + [UInt8](repeating: 0x61, count: 70_000), .comment),
        .line("a space before # makes an entry", b(" #x,y"), plain(" #x", "y")),
        .line("no-break space is not blank", b("\u{A0}"), bad("", "no comma")),
        .line("vertical tab is not blank", [0x0B], bad("", "control byte 0x0B")),
    ]

    @Test("blank and comment lines", arguments: blankAndCommentRows)
    func blankAndComment(_ row: FileCase) { expectParse(row) }

    @Test("blank and comment lines never hold a user")
    func commentsHoldNoUser() {
        let file = CredentialFile(bytes: b("# bob,pw\n#bob,pw\n\t\n  \nbob2,x\n"))
        #expect(file.firstEntry(named: "# bob") == nil)
        #expect(file.firstEntry(named: "#bob") == nil)
        #expect(file.firstEntry(named: "bob") == nil)
        #expect(file.effectiveEntries().map(\.number) == [5])
    }

    // MARK: First-comma split

    static let commaRows: [FileCase] = [
        .entry("comma in the secret", "bob", "a,b", plain("bob", "a,b")),
        .entry("secret of commas", "bob", ",,", plain("bob", ",,")),
        .entry("trailing comma in the secret", "bob", "pw,", plain("bob", "pw,")),
        .entry("spaces around the comma are kept", "bob ", " pw", plain("bob ", " pw")),
        .entry("hash followed by a comma", "bob", "$H$10$a,b", unsupported("bob", "$H$")),
        .line("nothing after the first comma", b("bob,"), bad("bob", "empty secret")),
        .line("nothing before the first comma", b(",bob,pw"), bad("", "empty username")),
        .line("no comma at all", b("bobpw"), bad("", "no comma")),
    ]

    @Test("username,secret split at the first comma", arguments: commaRows)
    func firstComma(_ row: FileCase) { expectParse(row) }

    // MARK: Plaintext or hash

    static let wellFormed256 = ParserFixture.hash(.sha256, rounds: 1000)
    static let wellFormed512 = ParserFixture.hash(.sha512, rounds: 210_000)
    static let salt22 = String(wellFormed256.split(separator: "$")[2])  // 16 bytes → 22 chars
    static let checksum43 = String(wellFormed256.split(separator: "$")[3])  // 32 bytes → 43 chars

    static let secretRows: [FileCase] = [
        .entry("a word is plaintext", "u", "hunter2", plain("u", "hunter2")),
        .entry("{} is plaintext", "u", "{}", plain("u", "{}")),
        .entry("{a b} is plaintext", "u", "{a b}", plain("u", "{a b}")),
        .entry("{SSHA without its brace is plaintext", "u", "{SSHA", plain("u", "{SSHA")),
        .entry("$ inside is plaintext", "u", "pa$$word", plain("u", "pa$$word")),
        .entry("{SCHEME} inside is plaintext", "u", "x{SSHA}y", plain("u", "x{SSHA}y")),
        // SPEC v2 §3.2: these families are verified, so a string with their prefix that is
        // not exactly their syntax is malformed, never guessed at (real ones: PeerSchemeTests).
        .entry(
            "{SSHA} without a salt is malformed", "u", "{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", bad("u", "{SSHA} salt")),
        .entry("{SSHA} with nothing after is malformed", "u", "{SSHA}", bad("u", "malformed hash")),
        .entry("{CRYPT} around a broken crypt hash is malformed", "u", "{CRYPT}$6$s$h", bad("u", "malformed hash")),
        .entry("$2y$ bcrypt too short is malformed", "u", "$2y$10$abc", bad("u", "bcrypt")),
        .entry("$6$ sha512-crypt too short is malformed", "u", "$6$salt$hash", bad("u", "sha-crypt")),
        // SPEC v2 §3.2: mosquitto's $7$ is verified; a $7$<decimal>$ that is not exactly its syntax is malformed.
        .entry("$7$ mosquitto with a broken checksum is malformed", "u", "$7$101$salt$hash", bad("u", "mosquitto")),
        .entry("$7$ libxcrypt scrypt too short is malformed", "u", "$7$CU..../....salt$hash", bad("u", "scrypt")),
        .entry("$apr1$ htpasswd too short is malformed", "u", "$apr1$salt$hash", bad("u", "apr1")),
        .entry("$argon2id$ without its fields is malformed", "u", "$argon2id$v=19$m=65536", bad("u", "argon2")),
        .entry("{ssha}: LDAP schemes are case-insensitive", "u", "{ssha}x", bad("u", "{SSHA}")),
        // Prefixes that no verified family owns stay unsupported hashes (named when known).
        .entry("phpass $H$ is unsupported", "u", "$H$9abcdefghijklmnopqrstuvwxyz0123", unsupported("u", "$H$")),
        .entry("{MD5} is unsupported", "u", "{MD5}Xr4ilOzQ4PCOq3aQ0qbuaQ==", unsupported("u", "{MD5}")),
        .entry("an unknown $id$ is not named: it may be a password", "u", "$hunter2$x", unsupported("u", "$?$")),
        .entry("an unknown {SCHEME} is not named: it may be a password", "u", "{hunter2}x", unsupported("u", "{?}")),
        .entry("$ alone is malformed", "u", "$", bad("u", "not a $id$ hash")),
        .entry("$abc is malformed", "u", "$abc", bad("u", "not a $id$ hash")),
        .entry("$$ is malformed", "u", "$$x", bad("u", "not a $id$ hash")),
        .entry("$a b$ is malformed", "u", "$a b$x", bad("u", "not a $id$ hash")),
        .entry("$pbkdf2-sha256$ well-formed", "u", wellFormed256, .pbkdf2(user: b("u"), hash: wellFormed256)),
        .entry("$pbkdf2-sha512$ well-formed", "u", wellFormed512, .pbkdf2(user: b("u"), hash: wellFormed512)),
        .entry(
            "1 round is well-formed", "u", ParserFixture.hash(rounds: 1),
            .pbkdf2(user: b("u"), hash: ParserFixture.hash(rounds: 1))),
        .entry(
            "50,000,000 rounds is well-formed", "u", ParserFixture.hash(rounds: 50_000_000),
            .pbkdf2(user: b("u"), hash: ParserFixture.hash(rounds: 50_000_000))),
        .entry(
            "empty salt is well-formed", "u", ParserFixture.hash(saltCount: 0),
            .pbkdf2(user: b("u"), hash: ParserFixture.hash(saltCount: 0))),
        .entry(
            "1,024-byte salt is well-formed", "u", ParserFixture.hash(saltCount: 1024),
            .pbkdf2(user: b("u"), hash: ParserFixture.hash(saltCount: 1024))),
        .entry("$pbkdf2 alone", "u", "$pbkdf2", bad("u", "has the form")),
        .entry("$pbkdf2-sha256$ missing checksum", "u", "$pbkdf2-sha256$1000$\(salt22)", bad("u", "has the form")),
        .entry("$pbkdf2-sha256$ extra field", "u", wellFormed256 + "$", bad("u", "has the form")),
        .entry(
            "$pbkdf2-sha1$ is malformed", "u", "$pbkdf2-sha1$1000$\(salt22)$\(checksum43)",
            bad("u", "unsupported pbkdf2 variant")),
        .entry(
            // SPEC v2 §3.2: passlib's $pbkdf2$ is SHA-1 PBKDF2 with a 20-byte checksum.
            "passlib's $pbkdf2$ (sha1) with a 32-byte checksum is malformed", "u",
            "$pbkdf2$1000$\(salt22)$\(checksum43)",
            bad("u", "checksum is not 20 bytes")),
        .entry(
            "rounds with a leading zero", "u", "$pbkdf2-sha256$01000$\(salt22)$\(checksum43)",
            bad("u", "without leading zeros")),
        .entry("zero rounds", "u", "$pbkdf2-sha256$0$\(salt22)$\(checksum43)", bad("u", "rounds")),
        .entry("no rounds", "u", "$pbkdf2-sha256$$\(salt22)$\(checksum43)", bad("u", "rounds")),
        .entry("negative rounds", "u", "$pbkdf2-sha256$-1$\(salt22)$\(checksum43)", bad("u", "rounds")),
        .entry(
            "2,147,483,648 rounds", "u", "$pbkdf2-sha256$2147483648$\(salt22)$\(checksum43)",
            bad("u", "between 1 and 2147483647")),
        .entry(
            "20-digit rounds", "u", "$pbkdf2-sha256$99999999999999999999$\(salt22)$\(checksum43)",
            bad("u", "between 1 and 2147483647")),
        .entry(
            "salt with + instead of .", "u", "$pbkdf2-sha256$1000$+\(salt22.dropFirst())$\(checksum43)",
            bad("u", "salt is not canonical")),
        .entry(
            "salt with = padding", "u", "$pbkdf2-sha256$1000$\(salt22)==$\(checksum43)",
            bad("u", "salt is not canonical")),
        .entry(
            "salt of 4n+1 characters", "u", "$pbkdf2-sha256$1000$\(salt22)AAA$\(checksum43)",
            bad("u", "salt is not canonical")),
        .entry(
            "salt whose unused low bits are not zero", "u", "$pbkdf2-sha256$1000$\(salt22.dropLast())B$\(checksum43)",
            bad("u", "salt is not canonical")),
        .entry(
            "checksum whose unused low bits are not zero", "u",
            "$pbkdf2-sha256$1000$\(salt22)$\(checksum43.dropLast())B",
            bad("u", "checksum is not canonical")),
        .entry(
            "checksum one byte short", "u",
            "$pbkdf2-sha256$1000$\(salt22)$\(AdaptedBase64.encode([UInt8](repeating: 7, count: 31)))",
            bad("u", "checksum is 31 bytes, expected 32")),
        .entry(
            "sha512 with a 32-byte checksum", "u", "$pbkdf2-sha512$1000$\(salt22)$\(checksum43)",
            bad("u", "checksum is 32 bytes, expected 64")),
        .entry(
            "salt of 1,025 bytes", "u",
            "$pbkdf2-sha256$1000$\(String(repeating: "A", count: 1368))$\(checksum43)",  // 1368 chars = 1026 bytes
            bad("u", "salt is longer than 1024 bytes")),
    ]

    @Test("plaintext or hash syntax", arguments: secretRows)
    func secretSyntax(_ row: FileCase) { expectParse(row) }

    // MARK: Malformed entries

    static let controlRows: [FileCase] = ParserFixture.controlBytes.flatMap { byte -> [FileCase] in
        let hex = ParserFixture.hex(byte)
        return [
            .line(
                "control byte \(hex) in the username", [0x61, byte, 0x62] + b(",pw"),
                .malformed(user: [0x61, byte, 0x62], reason: "control byte \(hex) at column 2")),
            .line(
                "control byte \(hex) in the secret", b("ab,p") + [byte] + b("w"),
                bad("ab", "control byte \(hex) at column 5")),
        ]
    }

    static let limit = FileSyntax.maximumLineLength
    static func longLine(_ count: Int) -> [UInt8] { b("u,") + [UInt8](repeating: 0x61, count: count - 2) }

    static let malformedRows: [FileCase] = [
        .line("empty username", b(",pw"), bad("", "empty username")),
        .line("empty secret", b("bob,"), bad("bob", "empty secret")),
        .line("empty username and secret", b(","), bad("", "empty username")),
        .line("no comma", b("bob"), bad("", "no comma")),
        .line("TAB is allowed in the secret", b("bob,p\tw"), plain("bob", "p\tw")),
        .line("TAB is allowed in the username", b("b\tob,pw"), plain("b\tob", "pw")),
        .line("TAB alone as the secret", b("bob,\t"), plain("bob", "\t")),
        .line("a control byte beats a missing comma", b("bob\u{01}"), bad("", "control byte 0x01")),
        .line("U+0085 (C1, valid UTF-8) is not a control byte", b("bob,p\u{85}w"), plain("bob", "p\u{85}w")),
        .line("4-byte UTF-8 is fine", b("bob,😀"), plain("bob", "😀")),
        .line(
            "U+10FFFF is valid UTF-8", b("bob,") + [0xF4, 0x8F, 0xBF, 0xBF],
            .plaintext(user: b("bob"), secret: [0xF4, 0x8F, 0xBF, 0xBF])),
        .line("lone continuation byte", b("bob,") + [0x80], bad("bob", "not valid UTF-8")),
        .line("0xFF", b("bob,") + [0xFF], bad("bob", "not valid UTF-8")),
        .line("0xF5 lead byte", b("bob,") + [0xF5, 0x80, 0x80, 0x80], bad("bob", "not valid UTF-8")),
        .line("truncated 2-byte sequence", b("bob,") + [0xC3], bad("bob", "not valid UTF-8")),
        .line("truncated 3-byte sequence", b("bob,") + [0xE2, 0x82], bad("bob", "not valid UTF-8")),
        .line("overlong NUL C0 80", b("bob,a") + [0xC0, 0x80], bad("bob", "not valid UTF-8")),
        .line("overlong / C0 AF", b("bob,") + [0xC0, 0xAF], bad("bob", "not valid UTF-8")),
        .line("overlong 3-byte E0 80 AF", b("bob,") + [0xE0, 0x80, 0xAF], bad("bob", "not valid UTF-8")),
        .line("overlong 4-byte F0 80 80 AF", b("bob,") + [0xF0, 0x80, 0x80, 0xAF], bad("bob", "not valid UTF-8")),
        .line("high surrogate ED A0 80", b("bob,") + [0xED, 0xA0, 0x80], bad("bob", "not valid UTF-8")),
        .line("low surrogate ED BF BF", b("bob,") + [0xED, 0xBF, 0xBF], bad("bob", "not valid UTF-8")),
        .line("above U+10FFFF", b("bob,") + [0xF4, 0x90, 0x80, 0x80], bad("bob", "not valid UTF-8")),
        .line(
            "invalid UTF-8 in the username", [0x62, 0xFF] + b(",pw"),
            .malformed(user: [0x62, 0xFF], reason: "not valid UTF-8")),
        .line(
            "a line of 65,536 bytes is fine", longLine(limit),
            .plaintext(user: b("u"), secret: Array(longLine(limit).dropFirst(2)))),
        .line("a line of 65,537 bytes is malformed", longLine(limit + 1), bad("u", "longer than 65536 bytes")),
        FileCase(
            "65,536 bytes then CRLF: the CR is not counted", longLine(limit) + b("\r\n"),
            [.init(longLine(limit), .crlf, .plaintext(user: b("u"), secret: Array(longLine(limit).dropFirst(2))))]),
        FileCase(
            "65,536 bytes without a final newline", longLine(limit),
            [.init(longLine(limit), .none, .plaintext(user: b("u"), secret: Array(longLine(limit).dropFirst(2))))]),
        FileCase(
            "65,537 bytes without a final newline", longLine(limit + 1),
            [.init(longLine(limit + 1), .none, bad("u", "longer than 65536"))]),
    ]

    @Test("every control byte makes an entry malformed", arguments: controlRows)
    func controlBytes(_ row: FileCase) { expectParse(row) }

    @Test("malformed entries", arguments: malformedRows)
    func malformed(_ row: FileCase) { expectParse(row) }

    @Test("the limit is 65,536 bytes")
    func lineLimit() { #expect(Self.limit == 65_536) }

    // MARK: Usernames: NFC, case-sensitive

    struct LookupCase: Sendable, CustomTestStringConvertible {
        let name: String
        let file: [UInt8]
        let lookup: String
        let line: Int?
        var testDescription: String { name }
    }

    static let lookupRows: [LookupCase] = [
        .init(
            name: "stored decomposed, looked up precomposed", file: b("cafe\u{301},x\n"), lookup: "caf\u{E9}", line: 1),
        .init(
            name: "stored precomposed, looked up decomposed", file: b("caf\u{E9},x\n"), lookup: "cafe\u{301}", line: 1),
        .init(
            name: "stored decomposed, looked up decomposed", file: b("cafe\u{301},x\n"), lookup: "cafe\u{301}", line: 1),
        .init(name: "case-sensitive: Admin is not admin", file: b("Admin,x\n"), lookup: "admin", line: nil),
        .init(name: "case-sensitive: admin is not Admin", file: b("admin,x\n"), lookup: "Admin", line: nil),
        .init(name: "case-sensitive: admin found among Admin", file: b("Admin,x\nadmin,y\n"), lookup: "admin", line: 2),
        .init(name: "Kelvin sign in the file is K", file: b("\u{212A}ate,x\n"), lookup: "Kate", line: 1),
        .init(name: "Kelvin sign in the lookup is K", file: b("Kate,x\n"), lookup: "\u{212A}ate", line: 1),
        .init(name: "Angstrom sign is Å", file: b("\u{212B}sa,x\n"), lookup: "A\u{30A}sa", line: 1),
        .init(name: "Hangul jamo compose", file: b("\u{1112}\u{1161}\u{11AB},x\n"), lookup: "\u{D55C}", line: 1),
        .init(name: "ﬁ ligature is not fi (NFC, not NFKC)", file: b("\u{FB01}ona,x\n"), lookup: "fiona", line: nil),
        .init(name: "suffix of a name is not the name", file: b("valencia,x\n"), lookup: "ncia", line: nil),
        .init(name: "xvalencia is not valencia", file: b("xvalencia,x\n"), lookup: "valencia", line: nil),
        .init(name: "valencia after xvalencia", file: b("xvalencia,x\nvalencia,y\n"), lookup: "valencia", line: 2),
        .init(name: "empty name finds nothing", file: b(",x\n"), lookup: "", line: nil),
        .init(name: "name with LF finds nothing", file: b("evil\nadmin,x\n"), lookup: "evil\nadmin", line: nil),
        .init(name: "CRLF line found", file: b("a,1\r\nbob,2\r\n"), lookup: "bob", line: 2),
        .init(name: "malformed line still has its name", file: b("bob,p\u{01}w\n"), lookup: "bob", line: 1),
        .init(name: "name with trailing space is another name", file: b("bob ,x\n"), lookup: "bob", line: nil),
    ]

    @Test("usernames compare after NFC, case-sensitive", arguments: lookupRows)
    func lookup(_ row: LookupCase) {
        let file = CredentialFile(bytes: row.file)
        #expect(file.firstEntry(named: row.lookup)?.number == row.line)
        #expect(file.entries(named: row.lookup).first?.number == row.line)
    }

    // MARK: Duplicates

    struct DuplicateCase: Sendable, CustomTestStringConvertible {
        let name: String
        let file: [UInt8]
        let lookup: String
        let first: Int
        let all: [Int]
        let effective: [Int]
        var testDescription: String { name }
    }

    static let duplicateRows: [DuplicateCase] = [
        .init(
            name: "first of two wins", file: b("bob,1\nbob,2\n"), lookup: "bob", first: 1, all: [1, 2], effective: [1]),
        .init(
            name: "first wins even when malformed",
            file: b("bob,\nbob,pw\n"), lookup: "bob", first: 1, all: [1, 2], effective: [1]),
        .init(
            name: "first wins even when its hash is malformed", file: b("bob,$pbkdf2-sha256$x\nbob,pw\n"),
            lookup: "bob",
            first: 1, all: [1, 2], effective: [1]),
        .init(
            name: "first wins even when unsupported", file: b("bob,$2y$10$abc\nbob,pw\n"), lookup: "bob", first: 1,
            all: [1, 2], effective: [1]),
        .init(
            name: "first wins even when it has a control byte", file: b("bob,p\u{7F}\nbob,pw\n"), lookup: "bob",
            first: 1,
            all: [1, 2], effective: [1]),
        .init(
            name: "decomposed and precomposed are one name", file: b("ana,1\ncafe\u{301},2\ncaf\u{E9},3\n"),
            lookup: "caf\u{E9}",
            first: 2, all: [2, 3], effective: [1, 2]),
        .init(
            name: "Kelvin sign and K are one name", file: b("Kate,1\n\u{212A}ate,2\n"), lookup: "\u{212A}ate", first: 1,
            all: [1, 2], effective: [1]),
        .init(
            name: "a line without a comma names no one", file: b("bob\nbob,pw\n"), lookup: "bob", first: 2, all: [2],
            effective: [2]),
        .init(
            name: "nameless entries shadow nothing", file: b(",x\n,y\nbob,pw\n"), lookup: "bob", first: 3, all: [3],
            effective: [3]),
        .init(
            name: "comments between duplicates", file: b("# bob,0\nbob,1\r\n#\nbob,2"), lookup: "bob", first: 2,
            all: [2, 4],
            effective: [2]),
        .init(
            name: "Admin and admin are not duplicates", file: b("Admin,1\nadmin,2\n"), lookup: "admin", first: 2,
            all: [2],
            effective: [1, 2]),
    ]

    @Test("duplicates: the first entry of a name wins", arguments: duplicateRows)
    func duplicates(_ row: DuplicateCase) throws {
        let file = CredentialFile(bytes: row.file)
        #expect(file.firstEntry(named: row.lookup)?.number == row.first)
        #expect(file.entries(named: row.lookup).map(\.number) == row.all)
        #expect(file.effectiveEntries().map(\.number) == row.effective)
        // What firstEntry returns is the full line, as `line(_:)` gives it.
        let hit = try #require(file.firstEntry(named: row.lookup))
        #expect(hit.content == file.line(row.first).content)
        #expect(hit.ending == file.line(row.first).ending)
    }

    // MARK: Changes

    struct ChangeCase: Sendable, CustomTestStringConvertible {
        let name: String
        let file: [UInt8]
        let appended: [(String, String)]
        let expected: [UInt8]
        var testDescription: String { name }
    }

    static let appendRows: [ChangeCase] = [
        .init(name: "after LF", file: b("a,1\n"), appended: [("b", "2")], expected: b("a,1\nb,2\n")),
        .init(name: "after CRLF", file: b("a,1\r\n"), appended: [("b", "2")], expected: b("a,1\r\nb,2\n")),
        .init(
            name: "after a last line without ending", file: b("a,1"), appended: [("b", "2")], expected: b("a,1\nb,2\n")),
        .init(
            name: "two after a last line without ending",
            file: b("a,1"), appended: [("b", "2"), ("c", "3")], expected: b("a,1\nb,2\nc,3\n")),
        .init(name: "into an empty file", file: [], appended: [("b", "2")], expected: b("b,2\n")),
        .init(name: "after a BOM alone", file: bom, appended: [("b", "2")], expected: bom + b("b,2\n")),
        .init(
            name: "after BOM and a line without ending",
            file: bom + b("a,1"), appended: [("b", "2")], expected: bom + b("a,1\nb,2\n")),
        .init(
            name: "after a blank last line without ending",
            file: b("a,1\n  "), appended: [("b", "2")], expected: b("a,1\n  \nb,2\n")),
        .init(name: "nothing appended: nothing added", file: b("a,1"), appended: [], expected: b("a,1")),
    ]

    @Test("append adds one LF to a last line without ending, and nothing else", arguments: appendRows)
    func append(_ row: ChangeCase) throws {
        let file = CredentialFile(bytes: row.file)
        var changes = CredentialFile.Changes()
        for (user, secret) in row.appended { try changes.append(username: user, secret: secret) }
        #expect(try file.render(applying: changes) == row.expected)
    }

    @Test("replace and remove keep every other line byte for byte")
    func replaceAndRemove() throws {
        let file = CredentialFile(bytes: b("# users\r\nbob,old\r\nana,1\n\t\ncaf\u{E9},2"))
        var changes = CredentialFile.Changes()
        try changes.replaceSecret(of: try #require(file.firstEntry(named: "bob")), with: "new,with,commas")
        changes.remove(try #require(file.firstEntry(named: "ana")))
        try changes.replaceSecret(of: try #require(file.firstEntry(named: "cafe\u{301}")), with: "3")
        #expect(try file.render(applying: changes) == b("# users\r\nbob,new,with,commas\r\n\t\ncaf\u{E9},3"))
        // A replaced line keeps its username bytes as stored, not as looked up.
        let decomposed = CredentialFile(bytes: b("cafe\u{301},1\n"))
        var rename = CredentialFile.Changes()
        try rename.replaceSecret(of: try #require(decomposed.firstEntry(named: "caf\u{E9}")), with: "2")
        #expect(try decomposed.render(applying: rename) == b("cafe\u{301},2\n"))
    }

    @Test("a BOM inside the file never becomes the file's BOM")
    func bomNeverMovesToTheStart() throws {
        // `\u{FEFF}admin` on line 2 is not `admin`: only a BOM at the very start is skipped.
        let file = CredentialFile(bytes: b("a,1\n") + bom + b("admin,pw\n"))
        #expect(file.firstEntry(named: "admin") == nil)
        var changes = CredentialFile.Changes()
        changes.remove(try #require(file.firstEntry(named: "a")))
        let after = CredentialFile(bytes: try file.render(applying: changes))
        #expect(after.firstEntry(named: "admin") == nil)
        #expect(after.firstEntry(named: "\u{FEFF}admin").map { Array($0.content) } == bom + b("admin,pw"))
        // The same through an append to an empty file.
        var add = CredentialFile.Changes()
        try add.append(username: "\u{FEFF}admin", secret: "pw")
        let added = CredentialFile(bytes: try CredentialFile(bytes: []).render(applying: add))
        #expect(added.firstEntry(named: "admin") == nil)
        #expect(added.firstEntry(named: "\u{FEFF}admin") != nil)
    }

    @Test("append after a last line ending in a lone CR adds CRLF, so that line stays malformed")
    func appendAfterLoneCR() throws {
        // A lone CR at the end of the last line is part of the line, so `bob,pw\r` is
        // malformed and never authenticates. A plain LF would turn that CR into a CRLF
        // ending and bring `bob,pw` to life; CRLF keeps the CR in the line.
        let file = CredentialFile(bytes: b("bob,pw\r"))
        #expect(file.line(1).entry?.isMalformed == true)
        var changes = CredentialFile.Changes()
        try changes.append(username: "carol", secret: "c")
        let after = CredentialFile(bytes: try file.render(applying: changes))
        #expect(after.bytes == b("bob,pw\r\r\ncarol,c\n"))
        #expect(Array(after.line(1).content) == b("bob,pw\r") && after.line(1).ending == .crlf)
        #expect(after.line(1).entry?.isMalformed == true)
        try ParserFixture.withFile(b("bob,pw\r")) { path in
            let store = try ParserFixture.store(path)
            try store.register(username: "carol", password: "c")
            #expect(try !store.authenticate(username: "bob", password: "pw"))
            #expect(try store.authenticate(username: "carol", password: "c"))
        }
    }
}

// MARK: - The seed's forgeries, through the real store

@Suite("Forgeries the seed allowed, through CredentialStore")
struct ForgeryTests {
    struct LoginCase: Sendable, CustomTestStringConvertible {
        let name: String
        let file: [UInt8]
        let username: String
        let password: String
        let granted: Bool
        var testDescription: String { (granted ? "granted: " : "denied: ") + name }

        static func denied(_ name: String, _ file: [UInt8], _ username: String, _ password: String) -> Self {
            Self(name: name, file: file, username: username, password: password, granted: false)
        }

        static func granted(_ name: String, _ file: [UInt8], _ username: String, _ password: String) -> Self {
            Self(name: name, file: file, username: username, password: password, granted: true)
        }
    }

    static let seedFile = b("valencia,contrasena123\nbob,\nxvalencia,otra456\nadmin,s3cr3t\n,huerfano\n")

    static let rows: [LoginCase] = [
        .denied("suffix of a name (ncia)", seedFile, "ncia", "contrasena123"),
        .denied("prefix of a password", seedFile, "valencia", "contrasena12"),
        .denied("suffix of a name and prefix of a password", seedFile, "ncia", "contrasena12"),
        .denied("longer password", seedFile, "valencia", "contrasena1234"),
        .denied("password spanning two lines", seedFile, "valencia", "contrasena123\nbob,"),
        .denied("empty password against bob, (empty secret)", seedFile, "bob", ""),
        .denied("any password against bob, (empty secret)", seedFile, "bob", "x"),
        .denied("empty username", seedFile, "", "contrasena123"),
        .denied("empty username against a nameless line", seedFile, "", "huerfano"),
        .denied("empty username and password", seedFile, "", ""),
        .denied("admin with an empty password", seedFile, "admin", ""),
        .denied("xvalencia's password for valencia", seedFile, "valencia", "otra456"),
        .denied("valencia's password for xvalencia", seedFile, "xvalencia", "contrasena123"),
        .denied("another case", seedFile, "Valencia", "contrasena123"),
        .denied("space before the name", seedFile, " valencia", "contrasena123"),
        .denied("name with the comma and password in it", seedFile, "valencia,contrasena123", ""),
        .denied("username spanning two lines", b("evil\nadmin,x\n"), "evil\nadmin", "x"),
        .denied(
            "CR of a CRLF ending is not in the password",
            b("valencia,contrasena123\r\n"), "valencia", "contrasena123\r"),
        .denied(
            "lone CR at end of file makes the entry malformed",
            b("valencia,contrasena123\r"), "valencia", "contrasena123"),
        .denied("a shadowed duplicate never authenticates", b("bob,first\nbob,second\n"), "bob", "second"),
        .denied("a malformed first entry shadows a good one", b("bob,\nbob,second\n"), "bob", "second"),
        .denied("$2y$ secret is never compared as plain text", b("bob,$2y$10$abc\n"), "bob", "$2y$10$abc"),
        .denied("{SSHA} secret is never compared as plain text", b("bob,{SSHA}abc\n"), "bob", "{SSHA}abc"),
        .denied("$abc secret is never compared as plain text", b("bob,$abc\n"), "bob", "$abc"),
        .denied("$ secret is never compared as plain text", b("bob,$\n"), "bob", "$"),
        .denied(
            "broken pbkdf2 secret is never compared as plain text",
            b("bob,$pbkdf2-sha256$1000$x$y\n"), "bob", "$pbkdf2-sha256$1000$x$y"),
        .denied("a secret with a control byte is never compared", b("bob,p\u{01}w\n"), "bob", "p\u{01}w"),
        // The right password still grants.
        .granted("valencia", seedFile, "valencia", "contrasena123"),
        .granted("xvalencia", seedFile, "xvalencia", "otra456"),
        .granted("admin", seedFile, "admin", "s3cr3t"),
        .granted("admin after a line without a comma", b("evil\nadmin,x\n"), "admin", "x"),
        .granted("CRLF line", b("valencia,contrasena123\r\n"), "valencia", "contrasena123"),
        .granted("comma in the password", b("bob,a,b\n"), "bob", "a,b"),
        .granted("password NFC-normalized on both sides", b("ana,cafe\u{301}\n"), "ana", "caf\u{E9}"),
        .granted("name NFC-normalized on both sides", b("cafe\u{301},pw\n"), "caf\u{E9}", "pw"),
        .granted("first of two duplicates", b("bob,first\nbob,second\n"), "bob", "first"),
    ]

    @Test("logins", arguments: rows)
    func login(_ row: LoginCase) throws {
        try ParserFixture.withFile(row.file) { path in
            let store = try ParserFixture.store(path)
            #expect(try store.authenticate(username: row.username, password: row.password) == row.granted)
            // A login never writes.
            #expect(try ParserFixture.contents(path) == row.file)
        }
    }

    @Test("the same forgeries against hashed entries")
    func hashedForgeries() throws {
        try ParserFixture.withFile([]) { path in
            let store = try ParserFixture.store(path)
            try store.register(username: "valencia", password: "contrasena123")
            try store.register(username: "xvalencia", password: "otra456")
            #expect(try store.authenticate(username: "valencia", password: "contrasena123"))
            #expect(try store.authenticate(username: "xvalencia", password: "otra456"))
            for (user, password) in [
                ("ncia", "contrasena123"), ("valencia", "contrasena12"), ("ncia", "contrasena12"), ("valencia", ""),
                ("", ""), ("valencia", "otra456"), ("xvalencia", "contrasena123"), ("Valencia", "contrasena123"),
            ] {
                #expect(try !store.authenticate(username: user, password: password), "\(user) / \(password)")
            }
        }
    }

    @Test("a name starting with U+FEFF never turns into the name without it")
    func bomName() throws {
        try ParserFixture.withFile([]) { path in
            let store = try ParserFixture.store(path)
            try store.register(username: "\u{FEFF}admin", password: Password("pw"), storage: .plaintext)
            #expect(try !store.authenticate(username: "admin", password: "pw"))
            #expect(try store.authenticate(username: "\u{FEFF}admin", password: "pw"))
        }
        try ParserFixture.withFile(b("a,1\n\u{FEFF}admin,pw\n")) { path in
            let store = try ParserFixture.store(path)
            #expect(try store.remove(username: "a") == 1)
            #expect(try !store.authenticate(username: "admin", password: "pw"))
            #expect(try store.authenticate(username: "\u{FEFF}admin", password: "pw"))
        }
    }

    @Test("no pass-the-hash: the stored hash string is not the password")
    func passTheHash() throws {
        try ParserFixture.withFile([]) { path in
            let store = try ParserFixture.store(path)
            try store.register(username: "carol", password: "pw")
            let file = CredentialFile(bytes: try ParserFixture.contents(path))
            let entry = try #require(file.firstEntry(named: "carol")?.entry)
            guard case .pbkdf2(let hash) = entry.secret else {
                Issue.record("register must store a hash, got \(entry.secret.storageDescription)")
                return
            }
            #expect(try store.authenticate(username: "carol", password: "pw"))
            #expect(try !store.authenticate(username: "carol", password: hash.string))
            // Nor a hash string stored as a plaintext password for another user.
            let other = ParserFixture.hash(rounds: 1)
            #expect(throws: CredFileError(.usage, "")) {
                try store.register(username: "dave", password: Password(other), storage: .plaintext)
            }
        }
    }

    @Test("registering a name with LF is refused and the file is untouched")
    func multiLineUsername() throws {
        let original = b("evil\nadmin,x\n")
        try ParserFixture.withFile(original) { path in
            let store = try ParserFixture.store(path)
            for name in ["a\nadmin", "evil\nadmin", "a\r\nadmin", "a,admin", ""] {
                let error = #expect(throws: CredFileError.self) {
                    try store.register(username: name, password: "x")
                }
                #expect(error?.code == .usage)
                #expect(try ParserFixture.contents(path) == original)
            }
            #expect(try !store.authenticate(username: "a\nadmin", password: "x"))
            #expect(try !store.authenticate(username: "evil\nadmin", password: "x"))
        }
    }

    @Test("xvalencia and valencia are not duplicates")
    func xvalenciaIsNotValencia() throws {
        try ParserFixture.withFile(b("xvalencia,otra456\n")) { path in
            let store = try ParserFixture.store(path)
            // The seed refused this: "valencia," is inside "xvalencia,…".
            try store.register(username: "valencia", password: Password("contrasena123"), storage: .plaintext)
            #expect(try ParserFixture.contents(path) == b("xvalencia,otra456\nvalencia,contrasena123\n"))
            #expect(try store.authenticate(username: "valencia", password: "contrasena123"))
            #expect(try store.authenticate(username: "xvalencia", password: "otra456"))
            #expect(try !store.authenticate(username: "valencia", password: "otra456"))
            #expect(try !store.authenticate(username: "xvalencia", password: "contrasena123"))
            let findings = try store.findings()
            #expect(!findings.contains { $0.message.contains("duplicate") })
            #expect(findings.map(\.line) == [1])  // the one plaintext warning (2 entries), nothing else
            #expect(findings.first?.message.hasPrefix("2 entries hold a plaintext password") == true)
            // And the real duplicate is refused.
            let error = #expect(throws: CredFileError.self) {
                try store.register(username: "valencia", password: "other")
            }
            #expect(error?.code == .userExists)
        }
    }
}
