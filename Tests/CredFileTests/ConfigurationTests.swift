import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The configuration file (SPEC §5): its grammar as a table of named cases, the parts
/// a credential file sees (sections through symlinks, precedence, repeatable keys), and
/// the checks before a file is read (owner, mode, missing files).
@Suite struct ConfigurationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        /// `part key value` per accepted setting (part `-` for the top part), or nil when refused.
        var settings: [String]?
        /// The refused line.
        var line: Int = 0
        var testDescription: String { name }
    }

    static func describe(_ value: SettingValue) -> String {
        switch value {
        case .flag(let on): on ? "yes" : "no"
        case .number(let n): String(n)
        case .seconds(let s): String(s)
        case .text(let t): t
        }
    }

    static func settings(_ parsed: ConfigurationSyntax.Parsed) -> [String] {
        parsed.top.map { "- \($0.setting.name) \(describe($0.value))" }
            + parsed.sections.flatMap { s in s.entries.map { "\(s.path) \($0.setting.name) \(describe($0.value))" } }
    }

    @Test(arguments: [
        Case(
            name: "calibrate's advice", text: "iterations = 3005000\nalgorithm = sha512\n",
            settings: ["- iterations 3005000", "- algorithm sha512"]),
        Case(
            name: "comments and blank lines", text: "# a comment\n\n  \t\n  # indented\nmin-length = 15",
            settings: ["- min-length 15"]),
        Case(
            name: "spaces and tabs around everything", text: "\t lock-timeout\t=  2.5 \t\n",
            settings: ["- lock-timeout 2.5"]),
        Case(name: "no spaces at all", text: "jobs=4\n", settings: ["- jobs 4"]),
        Case(
            name: "CRLF and a BOM", text: "\u{FEFF}upgrade = yes\r\nbackup = no\r\n",
            settings: ["- upgrade yes", "- backup no"]),
        Case(
            name: "flags: yes, no, true, false",
            text: "upgrade = true\nbackup = false\nplaintext = no\npasswords = yes\n",
            settings: ["- upgrade yes", "- backup no", "- plaintext no", "- passwords yes"]),
        Case(name: "flag 'on' is not a flag value", text: "upgrade = on\n", settings: nil, line: 1),
        Case(name: "flag 'Yes' is case-sensitive", text: "upgrade = Yes\n", settings: nil, line: 1),
        Case(
            name: "a section and its settings",
            text: "iterations = 1000\n[/etc/app.cred]\niterations = 2000\n[ /srv/b.txt ]\nupgrade = yes\n",
            settings: ["- iterations 1000", "/etc/app.cred iterations 2000", "/srv/b.txt upgrade yes"]),
        Case(
            name: "blocklist lines accumulate", text: "blocklist = /a\nblocklist = /a b\n",
            settings: ["- blocklist /a", "- blocklist /a b"]),
        Case(
            name: "a # inside a value is part of it", text: "blocklist = /etc/#list\n",
            settings: ["- blocklist /etc/#list"]),
        Case(
            name: "a comment after a number is a bad value", text: "iterations = 3005000 # calibrated\n", settings: nil,
            line: 1),
        Case(name: "quotes are not stripped", text: "base-dn = \"dc=x\"\n", settings: ["- base-dn \"dc=x\""]),
        Case(
            name: "= inside a value", text: "base-dn = ou=people,dc=example\n",
            settings: ["- base-dn ou=people,dc=example"]),
        Case(
            name: "unknown key names its line", text: "iterations = 1000\n\niteration = 1000\n", settings: nil, line: 3),
        Case(name: "an option that is not a key (json)", text: "json = yes\n", settings: nil, line: 1),
        Case(name: "config is not a key", text: "config = /etc/other.conf\n", settings: nil, line: 1),
        Case(name: "keys are lowercase", text: "Iterations = 1000\n", settings: nil, line: 1),
        Case(name: "a line with no =", text: "upgrade = yes\nhunter2-correct-horse\n", settings: nil, line: 2),
        Case(name: "an empty value", text: "blocklist =\n", settings: nil, line: 1),
        Case(
            name: "iterations 50000000 is the top", text: "iterations = 50000000", settings: ["- iterations 50000000"]),
        Case(name: "iterations 50000001", text: "iterations = 50000001", settings: nil, line: 1),
        Case(name: "iterations 0", text: "iterations = 0", settings: nil, line: 1),
        Case(name: "iterations +5", text: "iterations = +5", settings: nil, line: 1),
        Case(name: "lock-timeout 86400", text: "lock-timeout = 86400", settings: ["- lock-timeout 86400.0"]),
        Case(name: "lock-timeout 86400.0001", text: "lock-timeout = 86400.0001", settings: nil, line: 1),
        Case(name: "lock-timeout .5", text: "lock-timeout = .5", settings: nil, line: 1),
        Case(name: "algorithm md5", text: "algorithm = md5", settings: nil, line: 1),
        Case(
            name: "the same key twice in the top part", text: "iterations = 1\nupgrade = yes\niterations = 2\n",
            settings: nil, line: 3),
        Case(
            name: "the same key twice in one section's path",
            text: "[/a]\niterations = 1\n[/b]\niterations = 2\n[/a]\niterations = 3\n", settings: nil, line: 6),
        Case(
            name: "the same key in the top part and a section", text: "iterations = 1\n[/a]\niterations = 2\n",
            settings: ["- iterations 1", "/a iterations 2"]),
        Case(name: "a relative section", text: "[etc/app.cred]\n", settings: nil, line: 1),
        Case(name: "an unclosed section", text: "\n[/etc/app.cred\n", settings: nil, line: 2),
        Case(name: "text after a section", text: "[/a] x\n", settings: nil, line: 1),
        Case(name: "a NUL", text: "upgrade = yes\niterations = 10\u{0}00\n", settings: nil, line: 2),
        Case(name: "a lone CR", text: "iterations = 1000\rlock-timeout = 1\n", settings: nil, line: 1),
        Case(name: "a combining mark after = hides nothing", text: "iterations =\u{301}1000\n", settings: nil, line: 1),
        Case(name: "a combining mark after # is still a comment", text: "#\u{301} iterations = x\n", settings: []),
        Case(name: "a non-breaking space is not a blank", text: "iterations =\u{A0}1000\n", settings: nil, line: 1),
    ])
    func grammar(_ c: Case) {
        switch ConfigurationSyntax.parse(Array(c.text.utf8)) {
        case .success(let parsed):
            #expect(c.settings == Self.settings(parsed), "accepted")
        case .failure(let problem):
            #expect(c.settings == nil, "refused: \(problem)")
            #expect(problem.line == c.line, "\(problem)")
        }
    }

    @Test func theLineLimitIsExactlyMaximumLineLengthBytesBeforeTheEnding() {
        let limit = ConfigurationSyntax.maximumLineLength
        let prefix = "blocklist = /"
        let longest = prefix + String(repeating: "a", count: limit - prefix.utf8.count)
        for ending in ["", "\n", "\r\n"] {
            guard case .success = ConfigurationSyntax.parse(Array((longest + ending).utf8)) else {
                Issue.record("a line of \(limit) bytes + \(ending.debugDescription) is refused")
                continue
            }
        }
        guard case .failure(let problem) = ConfigurationSyntax.parse(Array(("upgrade = yes\n" + longest + "a\n").utf8))
        else {
            Issue.record("a line of \(limit + 1) bytes is accepted")
            return
        }
        #expect(problem == ConfigurationProblem(line: 2, reason: .lineTooLong(limit)))
    }

    @Test func anErrorNamesFileAndLineEscapedAndNeverTheValue() {
        let source = "/tmp/odd\u{202E}name\n.conf"
        #expect(throws: CredFileError.self) {
            try CredFileConfiguration(parsing: Array("iterations = 12x4secret\n".utf8), source: source)
        }
        do {
            _ = try CredFileConfiguration(parsing: Array("\niterations = 12x4secret\n".utf8), source: source)
        } catch {
            #expect(error.code == .usage)
            #expect(
                error.message
                    == "/tmp/odd\\u{202e}name\\u{a}.conf:2: iterations takes a whole number from 1 to 50000000",
                "\(error)")
        }
    }

    // MARK: The parts a credential file sees

    @Test func aSectionAppliesThroughSymlinksOnBothSidesAndWinsOverTheTop() throws {
        try withTemporaryDirectory { directory in
            let root = directory.path
            try writeBytes(root + "/real.txt", [])
            #expect(symlink(root + "/real.txt", root + "/link.txt") == 0)
            #expect(symlink(root, root + "/dirlink") == 0)
            let text = """
                iterations = 1000
                blocklist = /top-list
                [\(root)/link.txt]
                iterations = 2000
                [\(root)/other.txt]
                iterations = 3000
                blocklist = /other-a
                blocklist = /other-b
                [\(root)/link.txt]
                lock-timeout = 2
                """
            let configuration = try CredFileConfiguration(parsing: Array(text.utf8), source: "test.conf")
            for path in [
                root + "/real.txt", root + "/link.txt", root + "/dirlink/real.txt", root + "/./dirlink/./real.txt",
                root + "/dirlink/../" + (root as NSString).lastPathComponent + "/real.txt",
            ] {
                #expect(configuration.value(of: .iterations, for: path) == .number(2000), "\(path)")
                #expect(configuration.lockTimeout(for: path) == 2, "\(path)")
                #expect(
                    configuration.values(for: path)[.blocklist] == [.text("/top-list")], "the top part's list stays")
            }
            // Another file: the top part. A section's repeatable key replaces the top's, whole.
            #expect(configuration.value(of: .iterations, for: root + "/missing.txt") == .number(1000))
            #expect(
                configuration.values(for: root + "/other.txt")[.blocklist] == [.text("/other-a"), .text("/other-b")])
            #expect(configuration.values(for: nil)[.iterations] == [.number(1000)])
            #expect(try configuration.hashPolicy(for: root + "/link.txt").rounds == 2000)
            #expect(try configuration.hashPolicy(for: root + "/x.txt").rounds == 1000)
        }
    }

    @Test func aStoreReadsItsPolicyFromTheConfiguration() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path + "/users.txt"
            try writeBytes(directory.path + "/words.txt", Array("naranjo-en-flor-2026\n".utf8))
            let text =
                "iterations = 1\nmin-length = 20\nblocklist = \(directory.path)/words.txt\nlock-timeout = 3\nbackup = yes\n"
            let configuration = try CredFileConfiguration(parsing: Array(text.utf8), source: "test.conf")
            let store = try CredentialStore(path: file, configuration: configuration)
            #expect(store.policy.rounds == 1 && store.lockTimeout == 3 && store.keepsBackup)
            #expect(store.passwordPolicy.minimumLength == 20)
            #expect(throws: CredFileError.self) {
                try store.register(username: "ana", password: "naranjo-en-flor-2026")
            }
            #expect(throws: CredFileError.self) { try store.register(username: "ana", password: "nineteen-characters") }
            try store.register(username: "ana", password: "twenty-one characters")
            #expect(try store.authenticate(username: "ana", password: "twenty-one characters"))
        }
    }

    @Test func theDefaultMinimumIsFifteen() throws {
        #expect(PasswordPolicy.defaultMinimumLength == 15 && PasswordPolicy.standard.minimumLength == 15)
        let policy = PasswordPolicy.standard
        #expect(
            try policy.violation(of: Password("fourteen-chars"), username: "ana", path: nil) == .tooShort(minimum: 15))
        #expect(try policy.violation(of: Password("fifteen-chars!!"), username: "ana", path: nil) == nil)
    }

    // MARK: Reading the file

    @Test func loadChecksOwnerModeAndWhetherTheFileWasNamed() throws {
        try withTemporaryDirectory { directory in
            let path = try writeFile(directory.path + "/c.conf", "upgrade = yes\n", mode: 0o644)
            #expect(try CredFileConfiguration.load(path: path).value(of: .upgrade, for: nil) == .flag(true))
            #expect(try CredFileConfiguration.load(environment: ["CREDFILE_CONFIG": path]).path == path)
            #expect(CredFileConfiguration.location(environment: [:]) == (CredFileConfiguration.defaultPath, false))
            #expect(
                CredFileConfiguration.location(environment: ["CREDFILE_CONFIG": ""]) == (
                    CredFileConfiguration.defaultPath, false
                ))
            #expect(CredFileConfiguration.location(path: "/x", environment: ["CREDFILE_CONFIG": "/y"]) == ("/x", true))
            #expect(try CredFileConfiguration.load(path: "/dev/null").parsed == .init())

            for mode: mode_t in [0o664, 0o646, 0o666, 0o620] {
                chmod(path, mode)
                #expect(throws: CredFileError.self, "mode \(String(mode, radix: 8))") {
                    try CredFileConfiguration.load(path: path)
                }
            }
            chmod(path, 0o600)
            let missing = directory.path + "/missing.conf"
            #expect(throws: CredFileError.self) { try CredFileConfiguration.load(path: missing) }
            #expect(throws: CredFileError.self) {
                try CredFileConfiguration.load(environment: ["CREDFILE_CONFIG": missing])
            }
            #expect(throws: CredFileError.self) { try CredFileConfiguration.load(path: directory.path) }  // a directory
            if getuid() == 0 {
                #expect(chown(path, 65534, 65534) == 0)
                #expect(throws: CredFileError.self) { try CredFileConfiguration.load(path: path) }
                #expect(chown(path, 0, 0) == 0)
                #expect(try CredFileConfiguration.load(path: path).path == path)
            }
        }
    }

    private func writeFile(_ path: String, _ text: String, mode: mode_t) throws -> String {
        try writeBytes(path, Array(text.utf8), mode: mode)
        chmod(path, mode)  // whatever the umask
        return path
    }
}
