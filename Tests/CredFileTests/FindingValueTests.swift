import Foundation
import Testing

@testable import CredFile

// Findings, refusals and names as values (issue #10 item 2, #11 items 4, 7, 16, 18).

private func b(_ s: String) -> [UInt8] { Array(s.utf8) }

@Suite("Findings and errors are values")
struct FindingValueTests {
    struct KindCase: Sendable, CustomTestStringConvertible {
        let name: String
        let file: String
        let kinds: [Finding.Kind]
        var testDescription: String { name }
    }

    static let kindRows: [KindCase] = [
        .init(name: "malformed entry", file: "bob,\n", kinds: [.malformedEntry]),
        .init(name: "duplicate", file: "bob,\(LintTests.strong)\nbob,\(LintTests.strong)\n", kinds: [.duplicate]),
        .init(name: "unsupported hash", file: "bob,$H$10$abc\n", kinds: [.unsupportedHash]),
        .init(name: "weak hash", file: "bob,\(LintTests.weak)\n", kinds: [.weakHash]),
        .init(name: "plaintext", file: "bob,pw\nann,pw\n", kinds: [.plaintext]),
        .init(name: "username", file: " bob,\(LintTests.strong)\n", kinds: [.username]),
        .init(name: "clean", file: "bob,\(LintTests.strong)\n", kinds: []),
    ]

    @Test("each finding has its kind", arguments: kindRows)
    func kinds(_ row: KindCase) {
        #expect(CredentialFile(row.file).findings().map(\.kind) == row.kinds)
    }

    struct ReasonCase: Sendable, CustomTestStringConvertible {
        let name: String
        let line: [UInt8]
        let reason: MalformedReason
        var testDescription: String { name }
    }

    static let reasonRows: [ReasonCase] = [
        .init(name: "empty username", line: b(",pw"), reason: .emptyUsername),
        .init(name: "empty secret", line: b("bob,"), reason: .emptySecret),
        .init(name: "no comma", line: b("bob"), reason: .noComma),
        .init(name: "control byte, column", line: b("bob,p\u{01}w"), reason: .controlByte(0x01, column: 6)),
        .init(name: "invalid UTF-8", line: b("bob,p") + [0xC0, 0xAF], reason: .invalidUTF8),
        .init(
            name: "65,537 bytes", line: b("bob,") + [UInt8](repeating: 0x61, count: 65_533),
            reason: .lineTooLong(limit: 65_536)),
        .init(
            name: "$ without an id", line: b("bob,$abc"),
            reason: .malformedHash("secret starts with '$' but is not a $id$ hash")),
    ]

    @Test("malformed entries carry their reason as a value", arguments: reasonRows)
    func reasons(_ row: ReasonCase) throws {
        let findings = CredentialFile(bytes: row.line).findings()
        guard case .malformedEntry(_, let reason)? = findings.first?.detail else {
            Issue.record("no malformed entry: \(findings)")
            return
        }
        #expect(reason == row.reason)
        #expect(CredentialFile(bytes: row.line).line(1).entry?.malformation == row.reason)
    }

    @Test("the values of each message: user, first line, rounds, count")
    func detailValues() {
        let file = CredentialFile("a,pw\nbob,\(LintTests.weak)\nbob,x\nc,pw\n")
        #expect(
            file.findings().map(\.detail) == [
                .plaintext(count: 2),
                .weakHash(user: b("bob"), scheme: "pbkdf2-sha256", rounds: 1000, minimumRounds: 600_000),
                .duplicate(user: b("bob"), firstLine: 2),
            ])
    }

    @Test("a library finding never tells an app to run credfile")
    func noCLIAdvice() {
        let findings = CredentialFile("a,pw\nb,pw\nc,\n").findings()
        #expect(!findings.isEmpty)
        for finding in findings { #expect(!finding.message.contains("credfile"), "\(finding)") }
    }

    @Test("import errors carry the item index and the rule as values")
    func importErrorsAreValues() throws {
        try ParserFixture.withFile(b("alice,pw\n")) { path in
            let store = try ParserFixture.store(path)
            let same = #expect(throws: CredFileError.self) {
                try store.importUsers(
                    [("bob", Password("Bob-Pass-1")), ("carol", Password("C-2")), ("bob", Password("B-3"))],
                    storage: .plaintext)
            }
            #expect(same?.item == 2)
            #expect(same?.refusal == .sameUser(asItem: 0))
            #expect(
                same?.message.hasPrefix("item") == false, "the message does not name the failing item; description does"
            )
            #expect(same?.description.hasPrefix("item 3: ") == true)
            let badName = #expect(throws: CredFileError.self) {
                try store.importUsers([("ok", Password("Ok-Pass-1")), ("a,b", Password("A-2"))], storage: .plaintext)
            }
            #expect(badName?.item == 1 && badName?.refusal == .username(.comma))
            let badPassword = #expect(throws: CredFileError.self) {
                try store.importUsers([("ok", Password(""))], storage: .plaintext)
            }
            #expect(badPassword?.item == 0 && badPassword?.refusal == .password(.empty))
            #expect(try ParserFixture.contents(path) == b("alice,pw\n"))
        }
    }

    @Test("import indexes the file once and updates the first entry of each name")
    func importUsesTheFirstEntry() throws {
        try ParserFixture.withFile(b("# c\nbob,old\nalice,a\nbob,shadow\ncafe\u{301},x\n")) { path in
            let store = try ParserFixture.store(path)
            let counts = try store.importUsers(
                [("bob", Password("new-1")), ("caf\u{E9}", Password("new-2")), ("dan", Password("new-3"))],
                storage: .plaintext)
            #expect(counts.added == 1 && counts.updated == 2)
            #expect(
                try ParserFixture.contents(path)
                    == b("# c\nbob,new-1\nalice,a\nbob,shadow\ncafe\u{301},new-2\ndan,new-3\n"))
        }
    }
}

@Suite("Escaped: one way to print names and paths")
struct EscapedTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let shown: String
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        .init(name: "plain ASCII", bytes: b("admin"), shown: "admin"),
        .init(name: "accents and emoji stay", bytes: b("caf\u{E9} \u{1F600}"), shown: "caf\u{E9} \u{1F600}"),
        .init(name: "zero-width space", bytes: b("admin\u{200B}"), shown: "admin\\u{200b}"),
        .init(name: "right-to-left override", bytes: b("\u{202E}nimda"), shown: "\\u{202e}nimda"),
        .init(
            name: "bidi isolates and marks", bytes: b("a\u{2066}\u{2069}\u{200E}\u{200F}\u{061C}"),
            shown: "a\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}"),
        .init(
            name: "joiners, word joiner, BOM, soft hyphen", bytes: b("a\u{200C}\u{200D}\u{2060}\u{FEFF}\u{AD}"),
            shown: "a\\u{200c}\\u{200d}\\u{2060}\\u{feff}\\u{ad}"),
        .init(
            name: "C0, ESC, DEL, C1", bytes: b("a\u{0}\u{1B}[2J\u{7F}\u{85}"), shown: "a\\u{0}\\u{1b}[2J\\u{7f}\\u{85}"),
        .init(name: "line breaks", bytes: b("a\nb\rc\u{2028}"), shown: "a\\u{a}b\\u{d}c\\u{2028}"),
        .init(name: "no-break space", bytes: b("admin\u{A0}"), shown: "admin\\u{a0}"),
        .init(name: "Hangul filler", bytes: b("a\u{3164}"), shown: "a\\u{3164}"),
        .init(name: "backslash, so escapes read one way", bytes: b("a\\u{200b}"), shown: "a\\u{5c}u{200b}"),
        .init(name: "invalid UTF-8", bytes: [0x61, 0xFF, 0xC0, 0x62], shown: "a\\xFF\\xC0b"),
        .init(name: "truncated sequence", bytes: [0x61, 0xE2, 0x82], shown: "a\\xE2\\x82"),
    ]

    @Test("what is escaped", arguments: rows)
    func escaped(_ row: Row) {
        #expect(Escaped.name(row.bytes) == row.shown)
    }

    @Test("admin and admin with a zero-width space never print alike")
    func distinctAdmins() {
        let names = ["admin", "admin\u{200B}", "\u{202E}nimda", "adm\u{200D}in", "admin\u{FEFF}"].map {
            Escaped.name(b($0))
        }
        #expect(Set(names).count == names.count)
        #expect(names.dropFirst().allSatisfy { $0.contains("\\u{") })
    }

    @Test("quoted names escape the quote; paths escape like names")
    func quotedAndPaths() {
        #expect(Escaped.quotedName(b("o'brien")) == "'o\\u{27}brien'")
        #expect(Escaped.path("/tmp/x\n/tmp/y:1: error: forged") == "/tmp/x\\u{a}/tmp/y:1: error: forged")
    }
}

@Suite("The public library cannot inject lines or break its ranges")
struct LibraryBoundaryTests {
    struct Injection: Sendable, CustomTestStringConvertible {
        let name: String
        let username: String
        let secret: String
        var testDescription: String { name }
    }

    static let appends: [Injection] = [
        .init(name: "LF in the name", username: "bob\nroot", secret: "pw"),
        .init(name: "CR in the name", username: "bob\rroot", secret: "pw"),
        .init(name: "comma in the name", username: "bob,root", secret: "pw"),
        .init(name: "NUL in the name", username: "bob\u{0}", secret: "pw"),
        .init(name: "empty name", username: "", secret: "pw"),
        .init(name: "comment name", username: "#bob", secret: "pw"),
        .init(name: "LF in the secret", username: "bob", secret: "pw\nroot,pw"),
        .init(name: "CRLF in the secret", username: "bob", secret: "pw\r\nroot,pw"),
        .init(name: "NUL in the secret", username: "bob", secret: "p\u{0}w"),
        .init(name: "empty secret", username: "bob", secret: ""),
        .init(name: "malformed hash secret", username: "bob", secret: "$pbkdf2-sha256$0$x$y"),
        .init(name: "line too long", username: "bob", secret: String(repeating: "x", count: 65_533)),
    ]

    @Test("append refuses what would write another line or a malformed one", arguments: appends)
    func appendRefuses(_ row: Injection) {
        var changes = CredentialFile.Changes()
        let error = #expect(throws: CredFileError.self) {
            try changes.append(username: row.username, secret: row.secret)
        }
        #expect(error?.code == .usage)
        #expect(changes.isEmpty)
    }

    @Test(
        "replaceSecret refuses a secret that would write another line",
        arguments: appends.filter { $0.username == "bob" })
    func replaceRefuses(_ row: Injection) throws {
        let file = CredentialFile("bob,old\n")
        var changes = CredentialFile.Changes()
        let error = #expect(throws: CredFileError.self) {
            try changes.replaceSecret(of: try #require(file.firstEntry(named: "bob")), with: row.secret)
        }
        #expect(error?.code == .usage)
        #expect(try file.render(applying: changes) == b("bob,old\n"))
    }

    @Test("the longest allowed line is accepted (both sides of the boundary)")
    func longestLine() throws {
        var changes = CredentialFile.Changes()
        try changes.append(username: "bob", secret: String(repeating: "x", count: 65_532))
        #expect(
            CredentialFile(bytes: try CredentialFile(bytes: []).render(applying: changes)).line(1).entry?.isMalformed
                == false)
    }

    @Test("a policy cannot leave its ranges, by any path")
    func policyRanges() throws {
        for rounds in [0, -1, 50_000_001, Int.max] {
            #expect(throws: CredFileError.self) { try HashPolicy(rounds: rounds) }
            #expect(throws: CredFileError.self) { try HashPolicy(rounds: 1000, minimumRounds: rounds) }
            var policy = HashPolicy.standard
            #expect(throws: CredFileError.self) { try policy.setRounds(rounds) }
            #expect(throws: CredFileError.self) { try policy.setMinimumRounds(rounds) }
            #expect(policy == .standard)
        }
        var policy = HashPolicy.standard
        try policy.setRounds(50_000_000)
        try policy.setMinimumRounds(1)
        #expect(policy.rounds == 50_000_000 && policy.minimumRounds == 1)
        try policy.setRounds(1)
        #expect(policy.rounds == 1)
    }
}

@Suite("check: permissions of the file and its directory")
struct PermissionFindingTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let fileMode: mode_t
        let directoryMode: mode_t
        let expected: [Finding.Detail]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        .init(name: "0600 in a 0700 directory", fileMode: 0o600, directoryMode: 0o700, expected: []),
        .init(name: "0400", fileMode: 0o400, directoryMode: 0o755, expected: []),
        .init(
            name: "group-readable", fileMode: 0o640, directoryMode: 0o700,
            expected: [.permissions(.fileAccessibleToOthers(mode: 0o640))]),
        .init(
            name: "world-readable", fileMode: 0o604, directoryMode: 0o700,
            expected: [.permissions(.fileAccessibleToOthers(mode: 0o604))]),
        .init(
            name: "group-writable", fileMode: 0o620, directoryMode: 0o700,
            expected: [.permissions(.fileAccessibleToOthers(mode: 0o620))]),
        .init(name: "executable by others is not reading", fileMode: 0o601, directoryMode: 0o700, expected: []),
        .init(
            name: "world-writable directory", fileMode: 0o600, directoryMode: 0o777,
            expected: [.permissions(.directoryWritableByOthers(mode: 0o777))]),
        .init(name: "sticky world-writable directory", fileMode: 0o600, directoryMode: 0o1777, expected: []),
        .init(name: "group-writable directory", fileMode: 0o600, directoryMode: 0o770, expected: []),
    ]

    @Test("warnings at line 0", arguments: rows)
    func permissions(_ row: Row) throws {
        try ParserFixture.withFile(b("bob,\(LintTests.strong)\n")) { path in
            let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            chmod(path, row.fileMode)
            chmod(directory, row.directoryMode)
            defer { chmod(directory, 0o700) }
            // The standard policy: the entry is at its strength, so only permissions can warn.
            let findings = try CredentialStore(path: path).findings()
            #expect(findings.map(\.detail) == row.expected)
            #expect(findings.allSatisfy { $0.line == 0 && $0.severity == .warning && $0.kind == .permissions })
        }
    }
}
