import Testing

@testable import CredFile

// `findings()`: for each problem, the 1-based line, the severity and what kind of
// message; and never a secret in any of them.

private func b(_ s: String) -> [UInt8] { Array(s.utf8) }

extension LintTests {
    /// One expected finding: its line, its severity and words its message must hold.
    struct ExpectedFinding: Sendable, CustomStringConvertible {
        let line: Int
        let severity: Finding.Severity
        let words: [String]
        var description: String { "\(line): \(severity.rawValue): \(words)" }

        static func error(_ line: Int, _ words: String...) -> Self { .init(line: line, severity: .error, words: words) }
        static func warning(_ line: Int, _ words: String...) -> Self {
            .init(line: line, severity: .warning, words: words)
        }
    }

    struct LintCase: Sendable, CustomTestStringConvertible {
        let name: String
        let file: [UInt8]
        let findings: [ExpectedFinding]
        var testDescription: String { name }

        init(_ name: String, _ file: [UInt8], _ findings: [ExpectedFinding]) {
            self.name = name
            self.file = file
            self.findings = findings
        }

        init(_ name: String, _ file: String, _ findings: [ExpectedFinding]) { self.init(name, b(file), findings) }
    }
}

@Suite("Lint: findings()")
struct LintTests {
    /// Hashes strong enough for the standard policy, so they raise nothing.
    static let strong = ParserFixture.hash(.sha256, rounds: 1_200_000)
    static let strong512 = ParserFixture.hash(.sha512, rounds: 600_000)
    static let weak = ParserFixture.hash(rounds: 1000)

    static let rows: [LintCase] = [
        // (A SHA-512 hash strong enough for the minimum costs more than the SHA-256
        // policy, so it raises a "costly hash" warning, SPEC §3.1: not clean.)
        LintCase("a clean file has no findings", "# users\n\n\t\nalice,\(strong)\r\nbob,\(strong)", []),
        LintCase("an empty file has no findings", "", []),
        // Errors.
        LintCase(
            "duplicate, naming the first line", "alice,\(strong)\nbob,\(strong)\nalice,\(strong)\n",
            [.error(3, "duplicate entry", "'alice'", "first at line 1", "never authenticates")]),
        LintCase(
            "every later duplicate names the first line", "# c\nbob,\(strong)\nbob,\(strong)\nbob,x",
            [.error(3, "duplicate entry", "first at line 2"), .error(4, "duplicate entry", "first at line 2")]),
        LintCase(
            "duplicate under NFC", "cafe\u{301},\(strong)\ncaf\u{E9},\(strong)\n",
            [.error(2, "duplicate entry", "first at line 1")]),
        LintCase(
            "duplicate of a malformed first entry", "bob,\nbob,\(strong)\n",
            [.error(1, "malformed entry", "'bob'", "empty secret"), .error(2, "duplicate entry", "first at line 1")]),
        LintCase("Admin and admin are not duplicates", "Admin,\(strong)\nadmin,\(strong)\n", []),
        LintCase("xvalencia and valencia are not duplicates", "xvalencia,\(strong)\nvalencia,\(strong)\n", []),
        LintCase("empty secret", "# c\nbob,\n", [.error(2, "malformed entry", "'bob'", "empty secret")]),
        LintCase("empty username", ",\(strong)\n", [.error(1, "malformed entry", "empty username")]),
        LintCase("no comma", "bob\n", [.error(1, "malformed entry", "no comma")]),
        LintCase(
            "control byte", "alice,\(strong)\nbob,p\u{01}w\n",
            [.error(2, "malformed entry", "'bob'", "control byte 0x01 at column 6")]),
        LintCase("DEL", "bob,pw\u{7F}\n", [.error(1, "malformed entry", "control byte 0x7F at column 7")]),
        LintCase(
            "lone CR at the end", "alice,\(strong)\nbob,pw\r", [.error(2, "malformed entry", "control byte 0x0D")]),
        LintCase(
            "bad UTF-8", b("alice,\(strong)\nbob,p") + [0xC0, 0xAF] + b("\n"),
            [.error(2, "malformed entry", "'bob'", "not valid UTF-8")]),
        LintCase(
            "bad UTF-8 in the name", [0x62, 0xFF] + b(",pw\n"),
            [.error(1, "malformed entry", "'b\\xFF'", "not valid UTF-8")]),
        LintCase(
            "over-long line", b("alice,\(strong)\nbob,") + [UInt8](repeating: 0x61, count: 65_533) + b("\n"),
            [.error(2, "malformed entry", "'bob'", "longer than 65536 bytes")]),
        LintCase(
            "malformed hash", "bob,$pbkdf2-sha256$01000$AAAA$AAAA\n",
            [.error(1, "malformed entry", "'bob'", "malformed pbkdf2 hash", "leading zeros")]),
        LintCase(
            "$pbkdf2-sha1$", "bob,$pbkdf2-sha1$1000$AAAA$AAAA\n",
            [.error(1, "malformed pbkdf2 hash", "unsupported pbkdf2 variant")]),
        LintCase("$ without an id", "bob,$abc\n", [.error(1, "malformed entry", "not a $id$ hash")]),
        LintCase(
            "unsupported hash", "bob,$H$10$abc\nann,{MD5}x\n",
            [
                .error(1, "unsupported hash scheme", "$H$", "'bob'", "never authenticates"),
                .error(2, "unsupported hash scheme", "{MD5}", "'ann'"),
            ]),
        // Warnings.
        LintCase("plaintext", "bob,hunter2\n", [.warning(1, "plaintext password")]),
        LintCase(
            "plaintext is one warning for the file, at the first, with the count",
            "# users\nbob,pw1\nann,$H$a$b\ncid,pw2\n",
            [.warning(2, "2 entries hold a plaintext password"), .error(3, "unsupported hash scheme")]),
        LintCase("{} is plaintext", "bob,{}\n", [.warning(1, "plaintext password")]),
        LintCase("weak hash", "bob,\(weak)\n", [.warning(1, "weak hash", "'bob'", "1000 rounds", "600000")]),
        LintCase(
            "599,999 rounds is weak", "bob,\(ParserFixture.hash(rounds: 599_999))\n",
            [.warning(1, "weak hash", "599999 rounds")]),
        LintCase("600,000 rounds is not weak", "bob,\(ParserFixture.hash(rounds: 600_000))\n", []),
        LintCase(
            "leading space in a name", " bob,\(strong)\n", [.warning(1, "username has leading or trailing whitespace")]),
        LintCase(
            "trailing space in a name", "bob ,\(strong)\n", [.warning(1, "username has leading or trailing whitespace")]
        ),
        LintCase("leading tab in a name", "\tbob,\(strong)\n", [.warning(1, "username contains a control character")]),
        LintCase(
            "trailing no-break space in a name", "bob\u{A0},\(strong)\n",
            [.warning(1, "username has leading or trailing whitespace")]),
        LintCase(
            "C1 control in a name", "bo\u{85}b,\(strong)\n", [.warning(1, "username contains a control character")]),
        LintCase(
            "plaintext and an odd name on one line", " bob,pw\n",
            [.warning(1, "plaintext password"), .warning(1, "username has leading or trailing whitespace")]),
        LintCase(
            "unsupported hash and an odd name on one line", "bob ,$H$s$h\n",
            [.error(1, "unsupported hash scheme"), .warning(1, "username has leading or trailing whitespace")]),
        // Line numbers.
        LintCase(
            "BOM, comments, blanks and CRLF all count as lines, the BOM does not",
            CredentialFile.bom + b("# users\r\n\r\nbob,\r\n  \r\nann,pw\r\n"),
            [.error(3, "empty secret"), .warning(5, "plaintext password")]),
        LintCase(
            "everything at once, in line order",
            "ok,\(strong)\nbob,pw\n,x\nok,\(strong)\nw,\(weak)\nu,$H$a$b\n x,\(strong)\nbad,\n",
            [
                .warning(2, "plaintext password"), .error(3, "empty username"),
                .error(4, "duplicate entry", "first at line 1"),
                .warning(5, "weak hash"), .error(6, "unsupported hash scheme $H$"), .warning(7, "whitespace"),
                .error(8, "empty secret"),
            ]),
    ]

    @Test("line, severity and message of each finding", arguments: rows)
    func findings(_ row: LintCase) {
        let findings = CredentialFile(bytes: row.file).findings()
        #expect(findings.count == row.findings.count, "\(findings.map(\.description))")
        for (got, want) in zip(findings, row.findings) {
            #expect(got.line == want.line, "\(got) vs \(want)")
            #expect(got.severity == want.severity, "\(got) vs \(want)")
            for word in want.words {
                #expect(got.message.contains(word), "\(got) should say \(word)")
            }
            #expect(got.description == "\(got.line): \(got.severity.rawValue): \(got.message)")
        }
    }

    @Test("the policy sets the weak-hash bar")
    func policyMinimum() throws {
        let policy = try HashPolicy(rounds: 1000, minimumRounds: 1000)
        let file = CredentialFile(
            bytes: b("a,\(ParserFixture.hash(rounds: 999))\nb,\(ParserFixture.hash(rounds: 1000))\n"))
        let findings = file.findings(policy: policy)
        #expect(findings.map(\.line) == [1])
        #expect(findings.first?.severity == .warning)
        #expect(findings.first?.message.contains("999 rounds, below the minimum of 1000") == true)
        #expect(file.findings().map(\.line) == [1, 2])  // both weak under the standard policy
    }

    /// Secrets that each hold a distinctive token, in every shape the parser tells apart.
    static let secrets: [[UInt8]] = [
        b("S3CRET-plain"),
        b("S3CRET-with,commas,S3CRET-after-comma"),
        b("$S3CRET-dollar$rest"),  // reads as an unsupported crypt hash
        b("{S3CRET-brace}rest"),  // reads as an unsupported LDAP hash
        b("$S3CRET-malformed-dollar"),
        b("{S3CRET-open-brace"),
        b("$pbkdf2-S3CRET-variant$1$AAAA$AAAA"),
        b("$pbkdf2-sha256$S3CRET-rounds$AAAA$AAAA"),
        b("$pbkdf2-sha256$1000$S3CRET-salt$AAAA"),
        b("S3CRET-control\u{01}"),
        b("S3CRET-invalid") + [0xFF],
        b("S3CRET-cr\r"),
        b("S3CRET-long") + [UInt8](repeating: 0x78, count: 65_600),
        b("S3CRET-\u{85}-c1"),
    ]

    @Test("no finding ever quotes a secret")
    func noSecretInFindings() {
        var bytes: [UInt8] = []
        for (index, secret) in Self.secrets.enumerated() {
            bytes += b("user\(index),") + secret + b("\n")
            bytes += b("user\(index),") + secret + b("\n")  // and again, as a duplicate
            bytes += b(" spaced\(index) ,") + secret + b("\n")  // with an odd name
        }
        bytes += b("S3CRET-no-comma\n,S3CRET-no-name\nlast,S3CRET-no-newline")
        let file = CredentialFile(bytes: bytes)
        let findings = file.findings()
        // Per secret: the duplicate (error) and the odd name (warning), at least; plus the
        // comma-less and nameless lines; plaintext is one finding for the whole file.
        #expect(findings.count >= 2 * Self.secrets.count + 2)
        for finding in findings {
            #expect(!finding.description.contains("S3CRET"), "\(finding)")
        }
        // Nor does the storage description `list` prints.
        for line in file.effectiveEntries() {
            let description = line.entry?.secret.storageDescription ?? ""
            #expect(!description.contains("S3CRET"), "line \(line.number): \(description)")
        }
    }
}
