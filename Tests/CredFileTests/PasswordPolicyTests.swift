import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// SPEC §8 (NIST SP 800-63B-4 §3.1.1.2): length in code points, blocklists, username and
/// context words, refusals that write nothing.
@Suite("Password policy")
struct PasswordPolicyTests {
    /// A policy with only the length rule, so a case tests that rule alone.
    static func lengthOnly(_ minimum: Int = PasswordPolicy.defaultMinimumLength) throws -> PasswordPolicy {
        try PasswordPolicy(minimumLength: minimum, blocklists: [], rejectsContextWords: false)
    }

    struct LengthCase: CustomTestStringConvertible, Sendable {
        let name: String
        let password: String
        let minimum: Int
        let accepted: Bool
        var testDescription: String { name }
    }

    static let lengthCases: [LengthCase] = [
        .init(name: "7 ASCII code points refused", password: "qz7#Lm9", minimum: 8, accepted: false),
        .init(name: "8 ASCII code points accepted", password: "qz7#Lm9!", minimum: 8, accepted: true),
        .init(name: "7 code points that are 14 bytes refused", password: "ñçøåéüß", minimum: 8, accepted: false),
        .init(name: "8 code points that are 16 bytes accepted", password: "ñçøåéüßð", minimum: 8, accepted: true),
        .init(
            name: "8 decomposed é are 16 scalars but 8 after NFC: refused at 9",
            password: String(repeating: "e\u{301}", count: 8), minimum: 9, accepted: false),
        .init(
            name: "8 decomposed é are 8 code points after NFC: accepted at 8",
            password: String(repeating: "e\u{301}", count: 8), minimum: 8, accepted: true),
        .init(name: "4 emoji (16 bytes) refused at 5", password: "🐙🦑🦀🐡", minimum: 5, accepted: false),
        .init(name: "spaces count", password: "a b c d ", minimum: 8, accepted: true),
        .init(name: "--min-length 15: 14 refused", password: "abcdefghijklmn", minimum: 15, accepted: false),
        .init(name: "--min-length 15: 15 accepted", password: "abcdefghijklmno", minimum: 15, accepted: true),
        .init(name: "--min-length 1: 1 accepted", password: "Z", minimum: 1, accepted: true),
        .init(
            name: "--min-length 64: 63 refused", password: String(repeating: "k", count: 63), minimum: 64,
            accepted: false),
        .init(
            name: "--min-length 64: 64 accepted", password: String(repeating: "k", count: 64), minimum: 64,
            accepted: true),
        .init(name: "4,096 bytes accepted", password: String(repeating: "ab", count: 2048), minimum: 8, accepted: true),
        .init(
            name: "4,097 bytes refused", password: String(repeating: "ab", count: 2048) + "c", minimum: 8,
            accepted: false),
        .init(
            name: "no composition rules: all lowercase letters", password: "zebrasinthegarden", minimum: 8,
            accepted: true),
    ]

    @Test("length in code points after NFC", arguments: lengthCases)
    func length(_ c: LengthCase) throws {
        let violation = try Self.lengthOnly(c.minimum).violation(of: Password(c.password), username: "u", path: nil)
        #expect((violation == nil) == c.accepted, "\(String(describing: violation))")
        if !c.accepted {
            #expect(violation == .tooShort(minimum: c.minimum) || violation == .tooLong(maximum: 4096))
        }
    }

    /// Bytes that are not UTF-8 (a password is kept as typed then): each maximal
    /// ill-formed subpart counts as one character, as Unicode's decoders read it (U+FFFD),
    /// so stray bytes never make a password shorter than it looks (FuzzRegistration found
    /// one byte 0x85 counted as zero characters, refused at a minimum of 1).
    @Test(
        "bytes that are not UTF-8 count one character per ill-formed subpart",
        arguments: [
            ([0x85], 1), ([0x85, 0x85, 0x85], 3), ([0xE2, 0x82], 1), ([0xE2, 0x82, 0x61], 2), ([0xC3, 0xA9, 0xFF], 2),
            ([0xF0, 0x9F, 0x90], 1), ([0xED, 0xA0, 0x80], 3),
        ] as [([UInt8], Int)])
    func notUTF8(_ bytes: [UInt8], characters: Int) throws {
        let password = Password(utf8: bytes)
        #expect(try Self.lengthOnly(characters).violation(of: password, username: "u", path: nil) == nil)
        #expect(
            try Self.lengthOnly(characters + 1).violation(of: password, username: "u", path: nil)
                == .tooShort(minimum: characters + 1))
    }

    @Test("--min-length outside 1…64 is refused", arguments: [0, 65, -1])
    func minimumOutOfRange(_ n: Int) {
        #expect(throws: CredFileError.usage("")) { try PasswordPolicy(minimumLength: n) }
    }

    @Test("the standard policy is SPEC §8's")
    func standard() {
        #expect(PasswordPolicy.standard.minimumLength == 15)
        #expect(PasswordPolicy.standard.blocklists == [.builtIn])
        #expect(PasswordPolicy.standard.rejectsContextWords)
        #expect(CredentialStore(path: "x").passwordPolicy == .standard)
    }

    // MARK: The built-in list

    /// The built-in list's entries, read from the generated source file (not through the code under test).
    static let builtInEntries: [String] = {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CredFileBlocklist/BuiltInBlocklistData.swift")
        let text = (try? String(contentsOf: source, encoding: .utf8)) ?? ""
        guard let start = text.range(of: "#\"\"\"\n"), let end = text.range(of: "\n\"\"\"#") else { return [] }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }()

    @Test("the built-in list holds at least 10,000 passwords")
    func builtInSize() {
        #expect(Self.builtInEntries.count >= 10_000)
        #expect(Blocklist.builtInCount == Set(Self.builtInEntries).count)
    }

    @Test("the literal's search (the first lookups of a process) and the set agree: entries, their neighbours, pieces")
    func builtInSearchMatchesSet() throws {
        let entries = Self.builtInEntries
        try #require(!entries.isEmpty)
        var sample = stride(from: 0, to: entries.count, by: 13).map { entries[$0] }
        sample += [entries.first!, entries.last!]  // non-empty: required above
        // Not entries (mostly): an entry with a letter more or less, or two entries joined.
        var others: [String] = ["", "\n"]
        for entry in sample {
            let joined: String = entry + "\n" + entry
            others += [entry + "x", String(entry.dropFirst()), String(entry.dropLast()), joined]
        }
        for word in sample + others {
            #expect(
                BuiltInList.searchLiteral(word) == BuiltInList.words.contains(Substring(word)),
                "\(word.debugDescription)")
        }
    }

    @Test("a sample of the built-in list is refused (every 97th entry, and the first and last)")
    func builtInSample() throws {
        let policy = try PasswordPolicy(minimumLength: 1, rejectsContextWords: false)
        let entries = Self.builtInEntries
        try #require(!entries.isEmpty)
        var sample = stride(from: 0, to: entries.count, by: 97).map { entries[$0] }
        sample += [entries.first!, entries.last!]  // non-empty: required above
        for entry in sample {
            #expect(
                try policy.violation(of: Password(entry), username: "u", path: nil) == .blocklisted(.builtIn),
                "entry \(entry)")
        }
    }

    struct ListCase: CustomTestStringConvertible, Sendable {
        let name: String
        let password: String
        let listed: Bool
        var testDescription: String { name }
    }

    static let builtInCases: [ListCase] = [
        .init(name: "password", password: "password", listed: true),
        .init(name: "uppercased PASSWORD (case-folded)", password: "PASSWORD", listed: true),
        .init(name: "mixed case Qwertyuiop", password: "Qwertyuiop", listed: true),
        .init(name: "Cyrillic uppercased ЙЦУКЕН (Unicode case folding)", password: "ЙЦУКЕН", listed: true),
        .init(name: "12345678", password: "12345678", listed: true),
        .init(
            name: "the whole string only: password + suffix", password: "password-for-the-garden-shed", listed: false),
        .init(name: "a passphrase", password: "correct horse battery staple 42", listed: false),
    ]

    @Test("the built-in list compares the whole password, case-insensitively", arguments: builtInCases)
    func builtInCase(_ c: ListCase) throws {
        #expect(try Blocklist.builtIn.contains(Password(c.password)) == c.listed)
        let policy = try PasswordPolicy(minimumLength: 1, rejectsContextWords: false)
        let violation = try policy.violation(of: Password(c.password), username: "u", path: nil)
        #expect((violation == .blocklisted(.builtIn)) == c.listed)
    }

    // MARK: Username and context words

    struct ContextCase: CustomTestStringConvertible, Sendable {
        let name: String
        let password: String
        let username: String
        let path: String?
        let expected: PasswordViolation?
        var testDescription: String { name }
    }

    static let contextCases: [ContextCase] = [
        .init(
            name: "contains the username", password: "my-alice-garden", username: "alice", path: nil,
            expected: .containsUsername),
        .init(
            name: "contains the username, other case", password: "MY-ALICE-garden", username: "alice", path: nil,
            expected: .containsUsername),
        .init(
            name: "is the username plus digits", password: "valencia-2026-07", username: "Valencia", path: nil,
            expected: .containsUsername),
        .init(
            name: "3-character username is looked for", password: "bob-is-gardening", username: "bob", path: nil,
            expected: .containsUsername),
        .init(
            name: "2-character username is ignored", password: "al-is-gardening", username: "al", path: nil,
            expected: nil),
        .init(
            name: "contains credfile", password: "MyCredFile-garden", username: "u", path: nil,
            expected: .containsContextWord),
        .init(
            name: "contains the file's base name", password: "USUARIOS-garden", username: "u",
            path: "/srv/usuarios.txt", expected: .containsContextWord),
        .init(
            name: "the extension is not a word", password: "garden-txt-trees", username: "u", path: "/srv/usuarios.txt",
            expected: nil),
        .init(
            name: "a dot file's name without its dot", password: "myhtpasswd-garden", username: "u",
            path: "/etc/.htpasswd", expected: .containsContextWord),
        .init(
            name: "a base name under 4 characters is ignored", password: "garden-app-trees", username: "u",
            path: "app.cred", expected: nil),
        .init(
            name: "4 characters is looked for", password: "garden-shop-trees", username: "u", path: "shop.cred",
            expected: .containsContextWord),
        .init(
            name: "the username in NFD matches its NFC form", password: "zz-émile-zz-garden", username: "e\u{301}mile",
            path: nil, expected: .containsUsername),
    ]

    @Test("username and context words", arguments: contextCases)
    func context(_ c: ContextCase) throws {
        #expect(
            try PasswordPolicy.standard.violation(of: Password(c.password), username: c.username, path: c.path)
                == c.expected)
    }

    @Test("the policy's own context words")
    func extraContextWords() throws {
        var policy = PasswordPolicy.standard
        policy.contextWords = ["Naranjo"]
        #expect(
            try policy.violation(of: Password("el-naranjo-en-flor"), username: "u", path: nil) == .containsContextWord)
        #expect(
            try PasswordPolicy.standard.violation(of: Password("el-naranjo-en-flor"), username: "u", path: nil) == nil)
    }

    // MARK: Blocklist files

    @Test("a one-password-a-line file: whole line, case-insensitive, CRLF and no final LF")
    func passwordsFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("list.txt")
            try writeText(path, "Tr0ub4dor&3\r\nhunter2hunter2\n\nÑandú-ñandú\nlast-line-no-lf")
            let list = try Blocklist(path: path)
            #expect(list.form == .passwords)
            for listed in ["tr0ub4dor&3", "TR0UB4DOR&3", "hunter2hunter2", "ñandú-Ñandú", "LAST-LINE-NO-LF"] {
                #expect(try list.contains(Password(listed)), "\(listed)")
            }
            for free in ["tr0ub4dor&", "hunter2hunter2x", "", "last-line-no-l", "Tr0ub4dor&3\r"] {
                #expect(try !list.contains(Password(free)), "\(free)")
            }
            var policy = try PasswordPolicy(minimumLength: 8)  // the list's words are short
            policy.blocklists.append(list)
            #expect(
                try policy.violation(of: Password("Hunter2Hunter2"), username: "u", path: nil)
                    == .blocklisted(.passwords))
        }
    }

    @Test(
        "form detection: the first line decides",
        arguments: [
            ("7C4A8D09CA3762AF61E59520943DC26494F8941B:24230577\n", Blocklist.Form.sha1),
            ("7c4a8d09ca3762af61e59520943dc26494f8941b\r\n", .sha1),
            ("7C4A8D09CA3762AF61E59520943DC26494F8941B\n", .sha1),
            ("7C4A8D09CA3762AF61E59520943DC26494F8941:1\n", .passwords),  // 39 digits
            ("7C4A8D09CA3762AF61E59520943DC26494F8941B:\n", .passwords),  // no count after ':'
            ("7C4A8D09CA3762AF61E59520943DC26494F8941BX\n", .passwords),
            ("password\n", .passwords),
            ("", .passwords),
        ])
    func formDetection(_ content: String, _ form: Blocklist.Form) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("list")
            try writeText(path, content)
            #expect(try Blocklist(path: path).form == form)
        }
    }

    @Test("a missing blocklist file is an I/O error")
    func missingFile() {
        #expect(throws: CredFileError(.io, "")) { try Blocklist(path: "/nonexistent/list.txt") }
    }

    /// The current resident set size of this process, from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    @Test("a sorted SHA1HEX:count file of 1,000,000 lines: binary search with bounded memory and reads")
    func sha1Million() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("pwned.txt")
            // The listed passwords' digests, merged in sorted order into 1,000,000 evenly
            // spread, deterministic filler digests (sorted by construction: the first 8
            // hex digits count up), so no sort of a million lines is needed.
            let listed = ["Listed-One", "listed two!", "Ñandú-listado", "ZZZZZZZZ"]
            var inserts = try listed.map {
                String(
                    decoding: try Blocklist.sha1Hex(Array(Password($0).bytes.withUnsafeBytes { Array($0) })),
                    as: UTF8.self)
            }.sorted()
            let hex = Array("0123456789ABCDEF".utf8)
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            try #require(fd >= 0)
            var buffer: [UInt8] = []
            var lineCount = 0
            func flush() {
                _ = buffer.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                buffer.removeAll(keepingCapacity: true)
            }
            var rng = SeededRandom(seed: 0x5A1_0001)
            for i in 0..<1_000_000 {
                var line = [UInt8]()
                line.reserveCapacity(60)
                let prefix = UInt32(truncatingIfNeeded: (UInt64(i) * 4294) &+ 1)  // 0 … 4,294,000,001
                for shift in stride(from: 28, through: 0, by: -4) {
                    line.append(hex[Int((prefix >> UInt32(shift)) & 15)])
                }
                for _ in 0..<2 {  // 32 filler digits, 16 from each 64 random bits
                    let bits = rng.next()
                    for shift in stride(from: 60, through: 0, by: -4) {
                        line.append(hex[Int((bits >> UInt64(shift)) & 15)])
                    }
                }
                while let next = inserts.first, Array(next.utf8).lexicographicallyPrecedes(line) {
                    buffer += Array(next.utf8) + Array(":7\r\n".utf8)
                    inserts.removeFirst()
                    lineCount += 1
                }
                buffer += line + Array(":\(i % 1000 + 1)\r\n".utf8)
                lineCount += 1
                if buffer.count > 1 << 20 { flush() }
            }
            for rest in inserts { buffer += Array(rest.utf8) + Array(":7\r\n".utf8); lineCount += 1 }
            flush()
            close(fd)
            #expect(lineCount == 1_000_000 + listed.count)

            let list = try Blocklist(path: path)
            #expect(list.form == .sha1)
            let before = Self.residentBytes()
            var maximumReads = 0
            for password in listed {
                let lookup = try list.lookUp(Password(password))
                #expect(lookup.isListed, "\(password)")
                maximumReads = max(maximumReads, lookup.reads)
            }
            // Case-insensitive: a password typed in another case is looked up lowercased too.
            // the list holds the uppercase form only
            #expect(try list.contains(Password("ZZZZZZZZ".lowercased())) == false)
            // lowercased it is "listed-one", not "Listed-One"
            #expect(try list.contains(Password("LISTED-ONE")) == false)
            #expect(try list.contains(Password("LISTED TWO!")))  // lowercased it is "listed two!", which is listed
            for n in 0..<200 {
                let lookup = try list.lookUp(Password("not-listed-\(n)"))
                #expect(!lookup.isListed)
                maximumReads = max(maximumReads, lookup.reads)
            }
            let grown = Self.residentBytes() - before
            let size = Int(try statInfo(path).st_size)
            // About log2(size / 8 KiB) probes of one pread each, then one scan read; two
            // lookups (as typed and lowercased) at most.
            #expect(maximumReads <= 2 * (Int(log2(Double(size) / 8192)) + 4), "\(maximumReads) reads")
            // The file is never loaded: memory grows by far less than its size.
            #expect(grown < size / 4, "RSS grew \(grown) bytes for a \(size)-byte file")
        }
    }

    @Test("a SHA-1 file whose lines stop being digests is reported, never guessed at")
    func brokenSHA1File() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("pwned.txt")
            var text = String(repeating: "0", count: 40) + ":1\n"
            for i in 0..<4000 { text += "not a digest line \(i)\n" }
            try writeText(path, text)
            let list = try Blocklist(path: path)
            #expect(list.form == .sha1)
            #expect(throws: CredFileError.usage("")) { try list.contains(Password("probe-garden")) }
        }
    }

    // MARK: The store

    @Test("every path that sets a password refuses, and the file stays byte-identical")
    func refusalsWriteNothing() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("usuarios.txt")
            let store = CredentialStore(path: path, policy: try policy(rounds: 1))
            try store.register(username: "valencia", password: "naranjo-en-flor-2026")
            let before = try readBytes(path)
            let bad: [(String, PasswordViolation)] = [
                ("fourteen-chars", .tooShort(minimum: 15)), ("1q2w3e4r5t6y7u8i9o0p", .blocklisted(.builtIn)),
                ("{u}-in-the-garden", .containsUsername), ("usuarios-garden", .containsContextWord),
            ]
            for (template, violation) in bad {
                func password(for user: String) -> String { template.replacingOccurrences(of: "{u}", with: user) }
                #expect(throws: CredFileError.usage(violation.description)) {
                    try store.register(username: "newuser", password: password(for: "newuser"))
                }
                #expect(throws: CredFileError.usage("")) {
                    try store.changePassword(username: "valencia", to: password(for: "valencia"))
                }
                #expect(throws: CredFileError.usage("")) {
                    try store.importUsers(
                        [("otro", Password("good-garden-trees")), ("valencia", Password(password(for: "valencia")))],
                        jobs: 1)
                }
                #expect(
                    try PasswordPolicy.standard.violation(
                        of: Password(password(for: "valencia")), username: "valencia", path: path) == violation)
                #expect(try readBytes(path) == before, "\(violation)")
            }
            // The message names the rule, never the password.
            do {
                try store.register(username: "newuser", password: "1q2w3e4r5t6y7u8i9o0p")
            } catch let error as CredFileError {
                #expect(!error.message.contains("1q2w3e4r5t6y7u8i9o0p"))
                #expect(error.message.contains("commonly used"))
            }
            // A new file is not created by a refused registration.
            let other = CredentialStore(path: dir.file("new.txt"), policy: try policy(rounds: 1))
            #expect(throws: CredFileError.usage("")) { try other.register(username: "a", password: "12345678") }
            #expect(!fileExists(dir.file("new.txt")))
        }
    }

    @Test("passwords already in the file are not judged at login; check --passwords reports them by line")
    func legacyPasswords() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("legacy.txt")
            try writeText(
                path,
                "# comment\nann,password\nbea,a-long-and-unusual-phrase\ncid,QWERTY123\ndan,$pbkdf2-sha256$1$AAAA$AAAA\n"
            )
            let store = CredentialStore(path: path, policy: try policy(rounds: 1))
            #expect(try store.authenticate(username: "ann", password: "password"))
            let findings = try store.blocklistFindings()
            #expect(findings.map(\.line) == [2, 4])
            #expect(findings.allSatisfy { $0.kind == .blocklisted && $0.severity == .warning })
            #expect(
                findings.allSatisfy { !$0.message.lowercased().contains("password,") && !$0.message.contains("QWERTY") }
            )
        }
    }

    @Test("the permissive policy keeps only the file's own rules")
    func permissive() throws {
        #expect(try PasswordPolicy.permissive.violation(of: Password("pw"), username: "pw", path: "pw.txt") == nil)
        #expect(
            try PasswordPolicy.permissive.violation(of: Password("a\nb"), username: "u", path: nil)
                == .forbiddenCharacter)
    }
}
