import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import credfile

/// `CredFileCLI.run` called in-process with a fake terminal: every command, every exit
/// status, the option grammar, and what is (never) printed.
@Suite struct InProcessTests {
    // MARK: Fixtures

    /// A passlib hash of `password` with 1 round (cheap; `check` calls it weak).
    static func hash(_ password: String, _ algorithm: HashAlgorithm = .sha256) throws -> String {
        try PasswordHash(hashing: Password(password), policy: HashPolicy(algorithm: .pbkdf2(algorithm), rounds: 1))
            .string
    }

    /// alice (hashed), bob (plaintext), a comment and a blank line.
    static func twoUsers(_ session: CLISession) throws -> String {
        let alice = try hash(session.password("Al1ce-Pass-1~~~"))
        return try session.write(
            "users.txt", "# usuarios\nalice,\(alice)\n\nbob,\(session.password("B0b-Plain-2~~~~"))\n")
    }

    // MARK: Every command, with and without the common options

    /// One command's happy path.
    struct HappyPath: CustomTestStringConvertible, Sendable {
        var name: String
        /// The arguments; "FILE" stands for the two-user file.
        var arguments: [String]
        var stdin: [String] = []
        var stdout: [String] = []
        /// What the file must then say about a user (nil: unchanged).
        var afterwards: (user: String, password: String, granted: Bool)?
        var testDescription: String { name }
    }

    static let happyPaths: [HappyPath] = [
        HappyPath(
            name: "add", arguments: ["add", "FILE", "carol"], stdin: ["C4rol-Pass-3~~~"],
            afterwards: ("carol", "C4rol-Pass-3~~~", true)),
        HappyPath(
            name: "add --plaintext", arguments: ["add", "FILE", "carol", "--plaintext"], stdin: ["C4rol-Pass-3~~~"],
            afterwards: ("carol", "C4rol-Pass-3~~~", true)),
        HappyPath(name: "verify (hashed)", arguments: ["verify", "FILE", "alice"], stdin: ["Al1ce-Pass-1~~~"]),
        HappyPath(name: "verify (plaintext)", arguments: ["verify", "FILE", "bob"], stdin: ["B0b-Plain-2~~~~"]),
        HappyPath(
            name: "verify --upgrade", arguments: ["verify", "FILE", "bob", "--upgrade"], stdin: ["B0b-Plain-2~~~~"],
            afterwards: ("bob", "B0b-Plain-2~~~~", true)),
        HappyPath(
            name: "passwd", arguments: ["passwd", "FILE", "alice"], stdin: ["New-Al1ce-4~~~~"],
            stdout: ["password changed"],
            afterwards: ("alice", "New-Al1ce-4~~~~", true)),
        HappyPath(
            name: "delete", arguments: ["delete", "FILE", "bob"], stdout: ["user removed (1 line)"],
            afterwards: ("bob", "B0b-Plain-2~~~~", false)),
        HappyPath(
            name: "import", arguments: ["import", "FILE"], stdin: ["carol,C4rol-Pass-3~~~", "alice,New-Al1ce-4~~~~"],
            stdout: ["1 added, 1 updated"], afterwards: ("alice", "New-Al1ce-4~~~~", true)),
        HappyPath(name: "list", arguments: ["list", "FILE"], stdout: ["alice", "bob", "plaintext"]),
        HappyPath(name: "check", arguments: ["check", "FILE"], stdout: ["warning"]),
        HappyPath(
            name: "upgrade", arguments: ["upgrade", "FILE"], stdout: ["1"],
            afterwards: ("bob", "B0b-Plain-2~~~~", true)),
        HappyPath(name: "upgrade --dry-run", arguments: ["upgrade", "FILE", "--dry-run"], stdout: ["1"]),
        HappyPath(name: "hash", arguments: ["hash"], stdin: ["Hash-Pass-5~~~~"], stdout: ["$pbkdf2-sha"]),
        HappyPath(
            name: "login", arguments: ["login", "FILE"], stdin: ["alice", "Al1ce-Pass-1~~~"],
            stdout: ["Login", "Access granted"]),
        HappyPath(
            name: "register", arguments: ["register", "FILE"], stdin: ["carol", "C4rol-Pass-3~~~"],
            stdout: ["Register", "User registered"], afterwards: ("carol", "C4rol-Pass-3~~~", true)),
    ]

    /// Where the common options go, and which.
    struct Options: CustomTestStringConvertible, Sendable {
        var name: String
        var before: [String]
        var after: [String]
        var testDescription: String { name }
    }

    static let optionPlacements: [Options] = [
        Options(name: "--iterations 1 after", before: [], after: ["--iterations", "1"]),
        Options(
            name: "all common options before", before: ["--iterations=1", "--algorithm", "sha256", "--json"], after: []),
        Options(
            name: "all common options after, sha512", before: [],
            after: ["--json", "--algorithm=sha512", "--iterations", "1"]),
    ]

    @Test(arguments: happyPaths, optionPlacements)
    func everyCommandWorksWithTheCommonOptions(_ path: HappyPath, _ options: Options) throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            for secret in ["C4rol-Pass-3~~~", "New-Al1ce-4~~~~", "Hash-Pass-5~~~~"] { _ = session.password(secret) }
            let before = session.bytes("users.txt")
            let arguments = options.before + path.arguments.map { $0 == "FILE" ? file : $0 } + options.after
            let result = session.run(arguments, stdin: path.stdin)
            #expect(result.status == 0, "\(result)")
            #expect(session.lastUnreadInput == 0, "stdin was not read to the end")
            let json = arguments.contains("--json")
            for expected in path.stdout where !(json && ["list", "check", "upgrade"].contains(path.arguments[0])) {
                #expect(result.stdout.contains(expected), "\(result)")
            }
            if json, ["list", "check", "upgrade"].contains(path.arguments[0]) {
                #expect(throws: Never.self, "\(result)") {
                    try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
                }
            }
            // Only warnings (weak iterations) may appear on stderr, in the credfile: form.
            for line in result.stderrLines {
                #expect(line.hasPrefix("credfile: warning: ") || line.hasPrefix("credfile: aviso: "), "\(result)")
            }
            if let (user, password, granted) = path.afterwards {
                #expect(try libraryGrants(file, user, password) == granted)
                if path.arguments.contains("--upgrade")
                    || path.arguments[0] == "upgrade" && !path.arguments.contains("--dry-run")
                {
                    #expect(!session.text("users.txt").contains("B0b-Plain-2~~~~"), "still in plaintext")
                }
            } else {
                #expect(session.bytes("users.txt") == before, "the file changed")
            }
            if path.arguments[0] == "hash" {
                let printed = try #require(PasswordHash(result.stdout.trimmingCharacters(in: .newlines)))
                #expect(try printed.verify(Password("Hash-Pass-5~~~~")))
                #expect(printed.algorithm == (arguments.contains("--algorithm=sha512") ? .sha512 : .sha256))
                #expect(printed.rounds == 1)
            }
        }
    }

    // MARK: Exit statuses

    @Test func exit0And1VerifyGrantsAndDenies() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let granted = session.run(["verify", file, "alice", "--iterations", "1"], stdin: ["Al1ce-Pass-1~~~"])
            #expect(granted == CLIResult(status: 0, stdout: "", stderr: ""))
            let denied = session.run(
                ["verify", file, "alice", "--iterations", "1"], stdin: [session.password("Al1ce-Pass-X~~~")])
            #expect(denied == CLIResult(status: 1, stdout: "", stderr: "credfile: Wrong username or password.\n"))
        }
    }

    @Test func exit3UserExistsOrMissing() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let before = session.bytes("users.txt")
            let pw = session.password("Some-Pass-6~~~~")
            for arguments in [
                ["add", file, "alice"], ["add", file, "bob", "--plaintext"], ["passwd", file, "nobody"],
                ["delete", file, "nobody"],
            ] {
                let result = session.run(arguments + ["--iterations", "1"], stdin: [pw])
                #expect(result.status == 3, "\(arguments): \(result)")
                expectErrorFormat(result)
                #expect(result.stderr.contains("exist"), "\(result)")
            }
            // passwd says so before it asks for a password.
            #expect(session.run(["passwd", file, "nobody"], stdin: [pw]).status == 3)
            #expect(session.lastUnreadInput == 1)
            #expect(session.bytes("users.txt") == before)
        }
    }

    @Test func exit4PasswdOfAMalformedFirstEntry() throws {
        try withSession { session in
            let file = try session.write(
                "users.txt",
                "bob,$pbkdf2-sha256$x\nbob,\(session.password("Shadowed-Pass-7"))\ncarol,$2y$10$abcdefghijklmnopqrstuu\n"
            )
            let before = session.bytes("users.txt")
            let pw = session.password("Fresh-Pass-8~~~")
            for arguments in [["passwd", file, "bob"], ["passwd", file, "bob", "--plaintext"]] {
                let result = session.run(arguments + ["--iterations", "1"], stdin: [pw])
                #expect(result.status == 4, "\(result)")
                expectErrorFormat(result)
                #expect(result.stderr.contains("line 1"), "\(result)")
            }
            let imported = session.run(["import", file, "--iterations", "1"], stdin: ["bob,\(pw)"])
            #expect(imported.status == 4, "\(imported)")
            expectErrorFormat(imported)
            #expect(session.bytes("users.txt") == before)
            // The hash text itself is never shown.
            #expect(!imported.stderr.contains("$x") && !imported.stderr.contains("abcdefghijklmnopqrstuu"))
            // delete still removes every entry of the name.
            let deleted = session.run(["delete", file, "bob"])
            #expect(deleted.status == 0 && deleted.stdout == "user removed (2 lines)\n", "\(deleted)")
            #expect(session.text("users.txt") == "carol,$2y$10$abcdefghijklmnopqrstuu\n")
        }
    }

    /// Each command on a file it cannot read: missing, a directory, a dangling symlink.
    @Test(arguments: ["missing", "directory", "dangling symlink"])
    func exit5UnreadableFile(_ kind: String) throws {
        try withSession { session in
            let file = session.path("target")
            switch kind {
            case "directory": try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
            case "dangling symlink":
                try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: session.path("nowhere"))
            default: break
            }
            let pw = session.password("Any-Pass-9~~~~~")
            var commands: [([String], [String])] = [
                (["verify", file, "alice"], [pw]), (["passwd", file, "alice"], [pw]), (["delete", file, "alice"], []),
                (["list", file], []), (["check", file], []), (["upgrade", file], []),
                (["login", file], ["alice", pw]),
            ]
            if kind != "missing" {  // add, import and register create a missing file
                commands += [
                    (["add", file, "alice"], [pw]), (["import", file], ["alice,\(pw)"]),
                    (["register", file], ["alice", pw]),
                ]
            }
            for (arguments, stdin) in commands {
                let result = session.run(arguments + ["--iterations", "1"], stdin: stdin)
                #expect(result.status == 5, "\(arguments): \(result)")
                expectErrorFormat(result)
            }
            #expect(!FileManager.default.fileExists(atPath: session.path("nowhere")))
            #expect(kind == "directory" || !FileManager.default.fileExists(atPath: file))
        }
    }

    @Test func addCreatesAMissingFileWithMode0600() throws {
        try withSession { session in
            let file = session.path("new.txt")
            let result = session.run(
                ["add", file, "alice", "--iterations", "1"], stdin: [session.password("First-Pass-0~~~")])
            #expect(result.status == 0, "\(result)")
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try libraryGrants(file, "alice", "First-Pass-0~~~"))
        }
    }

    // MARK: Usage errors

    /// A usage error; "FILE" stands for an existing file.
    struct UsageCase: CustomTestStringConvertible, Sendable {
        var name: String
        var arguments: [String]
        var testDescription: String { name }
        init(_ name: String, _ arguments: [String]) {
            self.name = name
            self.arguments = arguments
        }
    }

    static let usageCases: [UsageCase] = [
        UsageCase("unknown option before the command", [Canary.option, "list", "FILE"]),
        UsageCase("unknown option after the positionals", ["list", "FILE", Canary.option]),
        UsageCase("unknown option with a value", ["list", "FILE", "\(Canary.option)=\(Canary.word)"]),
        UsageCase("unknown short option", ["list", "-\(Canary.word)", "FILE"]),
        UsageCase("user that looks like an option, without --", ["add", "FILE", "-\(Canary.word)"]),
        UsageCase("unknown command", [Canary.word, "FILE"]),
        UsageCase("unknown command after options", ["--iterations", "1", Canary.word]),
        UsageCase("extra argument", ["list", "FILE", Canary.word]),
        UsageCase("password typed as an argument", ["verify", "FILE", "alice", Canary.word]),
        UsageCase("extra argument to hash", ["hash", Canary.word]),
        UsageCase("missing USER", ["add", "FILE"]),
        UsageCase("missing FILE", ["list"]),
        UsageCase("no command", []),
        UsageCase("only options", ["--iterations", "1", "--json"]),
        UsageCase("--iterations 0", ["list", "FILE", "--iterations", "0"]),
        UsageCase("--iterations -1", ["list", "FILE", "--iterations", "-1"]),
        UsageCase("--iterations 50000001", ["list", "FILE", "--iterations", "50000001"]),
        UsageCase("--iterations abc", ["list", "FILE", "--iterations", Canary.word]),
        UsageCase("--iterations=abc", ["list", "FILE", "--iterations=\(Canary.word)"]),
        UsageCase("--iterations without a value", ["list", "FILE", "--iterations"]),
        UsageCase("--algorithm md5", ["list", "FILE", "--algorithm", "md5"]),
        UsageCase("--algorithm abc", ["list", "FILE", "--algorithm", Canary.word]),
        UsageCase("--algorithm=abc", ["hash", "--algorithm=\(Canary.word)"]),
        UsageCase("flag given a value", ["list", "FILE", "--json=\(Canary.word)"]),
        UsageCase("--plaintext given a value", ["add", "FILE", "carol", "--plaintext=\(Canary.word)"]),
        UsageCase("list --plaintext", ["list", "--plaintext", "FILE"]),
        UsageCase("verify --plaintext", ["verify", "FILE", "alice", "--plaintext"]),
        UsageCase("add --upgrade", ["add", "FILE", "carol", "--upgrade"]),
        UsageCase("check --dry-run", ["check", "FILE", "--dry-run"]),
        UsageCase("hash --backup", ["hash", "--backup"]),
        UsageCase("list --jobs", ["list", "FILE", "--jobs", "2"]),
        UsageCase("--jobs abc", ["import", "FILE", "--jobs", Canary.word]),
        UsageCase("--target-ms abc", ["calibrate", "--target-ms", Canary.word]),
    ]

    @Test(arguments: usageCases)
    func usageErrorsExit2AndNeverEchoTheArgument(_ usage: UsageCase) throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let before = session.bytes("users.txt")
            let pw = session.password("Unread-Pass-10~")
            let result = session.run(usage.arguments.map { $0 == "FILE" ? file : $0 }, stdin: [pw])
            expectUsageError(result)
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(session.lastUnreadInput == 1, "a usage error is found before any password is read")
            #expect(session.bytes("users.txt") == before)
            // (The leak check of withSession looks for the canaries in all output.)
        }
    }

    @Test func usageErrorsPointAtTheArgumentByNumber() throws {
        try withSession { session in
            let cases: [([String], String)] = [
                ([Canary.option, "list", "f"], "argument 1"),
                (["list", "f", Canary.option], "argument 3"),
                ([Canary.word, "f"], "argument 1"),
                // The unknown command is the third argument, though "sha512" is also the second.
                (["--algorithm", "sha512", "sha512"], "argument 3"),
                (["--iterations", "5", "--", "--iterations"], "argument 4"),
            ]
            for (arguments, expected) in cases {
                let result = session.run(arguments)
                expectUsageError(result)
                #expect(result.stderr.contains(expected), "\(arguments): \(result)")
            }
        }
    }

    @Test func invalidUsernamesAreRefusedBeforeAnyPasswordIsRead() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let before = session.bytes("users.txt")
            for user in [
                "a,b", " lead", "trail ", "#hash", "", "tab\tin", String(repeating: "x", count: 256), "nul\u{0}",
            ] {
                let result = session.run(
                    ["add", file, user, "--iterations", "1"], stdin: [session.password("Never-Read-11~~")])
                expectUsageError(result)
                #expect(result.stderr.hasPrefix("credfile: username "), "\(result)")
                #expect(session.lastUnreadInput == 1)
            }
            #expect(session.bytes("users.txt") == before)
        }
    }

    @Test func invalidPasswordsAreRefused() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let before = session.bytes("users.txt")
            let cases: [(String, [String])] = [
                ("", []), (String(repeating: "p", count: 4097), []), ("$1$looks-like-a-hash-12", ["--plaintext"]),
                ("{SSHA}looks-like-ldap-13", ["--plaintext"]),
            ]
            for (password, options) in cases {
                if !password.isEmpty { _ = session.password(password) }
                let result = session.run(["add", file, "carol", "--iterations", "1"] + options, stdin: [password])
                expectUsageError(result)
                #expect(result.stderr.contains("password"), "\(result)")
            }
            #expect(session.bytes("users.txt") == before)
        }
    }

    @Test func endOfInputInsteadOfAPasswordIsAUsageError() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let before = session.bytes("users.txt")
            for arguments in [
                ["add", file, "carol"], ["verify", file, "alice"], ["passwd", file, "alice"], ["hash"],
            ] {
                let result = session.run(arguments + ["--iterations", "1"], stdin: [])
                expectUsageError(result)
                #expect(result.stderr.contains("no password on standard input"), "\(result)")
            }
            #expect(session.bytes("users.txt") == before)
        }
    }

    // MARK: Option grammar

    @Test func optionsMayStandAnywhereAndDoubleDashEndsThem() throws {
        try withSession { session throws in
            let file = session.path("users.txt")
            let pw = session.password("Dash-Pass-12~~~")
            let runs: [[String]] = [
                ["--iterations", "1", "add", file, "before"],
                ["add", "--iterations", "1", file, "between"],
                ["add", file, "--iterations=1", "inside"],
                ["add", file, "after", "--iterations", "1"],
                ["add", "--iterations", "1", file, "--", "-dash"],
                ["--iterations", "1", "--", "add", file, "--json"],
                ["add", file, "--iterations", "1", "--", "-"],
            ]
            for arguments in runs {
                let result = session.run(arguments, stdin: [pw])
                #expect(result.status == 0, "\(arguments): \(result)")
            }
            let listed = session.run(["list", file])
            #expect(
                listed.stdoutLines.map { $0.split(separator: "\t")[0] } == [
                    "before", "between", "inside", "after", "-dash", "--json", "-",
                ])
            for user in ["-dash", "--json", "-"] {
                #expect(session.run(["verify", "--iterations", "1", file, "--", user], stdin: [pw]).status == 0)
                #expect(try libraryGrants(file, user, pw))
            }
            // After --, even --help is a positional argument (here: one too many).
            expectUsageError(session.run(["list", file, "--", "--help"]))
        }
    }

    @Test func helpForTheToolAndForEveryCommand() throws {
        try withSession { session in
            for arguments in [["--help"], ["-h"], ["--iterations", "1", "--help"]] {
                let result = session.run(arguments)
                #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
                #expect(result.stdout.contains("Usage: credfile <command>"))
                for command in Command.allCases { #expect(result.stdout.contains("  \(command.name) ")) }
            }
            for command in Command.allCases {
                let usage = "Usage: credfile " + ([command.name] + command.argumentNames).joined(separator: " ")
                for arguments in [
                    [command.name, "--help"], ["--help", command.name], [command.name, "-h", "--json"],
                ] {
                    let result = session.run(arguments)
                    #expect(result.status == 0 && result.stderr.isEmpty, "\(arguments): \(result)")
                    #expect(result.stdout.hasPrefix(usage), "\(arguments): \(result)")
                }
            }
        }
    }

    @Test func version() throws {
        try withSession { session in
            for arguments in [["--version"], ["list", "--version"], ["--version", "--iterations", "1"]] {
                let result = session.run(arguments)
                #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
                #expect(result.stdout == "credfile \(CredFileCLI.version) (\(CredFileInfo.openSSLVersion))\n")
                #expect(result.stdout.contains("OpenSSL"))
            }
        }
    }

    // MARK: check

    /// A file with every kind of finding, a BOM and CRLF endings, and its expected findings.
    static func troubledFile(_ session: CLISession) throws -> (path: String, findings: [(Int, String)]) {
        let weak = try hash(session.password("D4ve-Pass-13~~~"))
        let content =
            "\u{FEFF}# usuarios.txt\r\n"  // 1 comment (after a BOM)
            + "alice,\(session.password("Plain-Al1ce-14~"))\r\n"  // 2 warning: 2 plaintext entries (one finding)
            + "\n"  // 3 blank
            + "bob,\n"  // 4 error: empty secret
            + "carol,$2y$10$\(session.password("abcdefghijklmnopqrstuv"))\n"  // 5 error: unsupported hash
            + "alice,\(session.password("Plain-Al1ce-15~"))\n"  // 6 error: duplicate
            + "dave,\(weak)\n"  // 7 warning: weak hash
            + "   \t\n"  // 8 blank
            + "eve,$pbkdf2-sha256$x\n"  // 9 error: malformed pbkdf2
            + "frank\(session.password("NoComma-16~~~~~"))\n"  // 10 error: no comma
            + "gina,ok\u{7}\(session.password("Bell-17~~~~~~~~"))\n"  // 11 error: control byte
            + "hugo,\(session.password("NoNewline-18~~~"))"  // 12 plaintext, no final LF (counted at line 2)
        let findings = [
            (2, "warning"), (4, "error"), (5, "error"), (6, "error"), (7, "warning"), (9, "error"), (10, "error"),
            (11, "error"),
        ]
        return (try session.write("usuarios.txt", content), findings)
    }

    @Test func checkPrintsCompilerStyleFindingsWithLineNumbers() throws {
        try withSession { session in
            let (file, expected) = try Self.troubledFile(session)
            let result = session.run(["check", file])
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.isEmpty)
            let lines = result.stdoutLines
            #expect(lines.count == expected.count, "\(result)")
            for (line, (number, severity)) in zip(lines, expected) {
                #expect(line.hasPrefix("\(file):\(number): \(severity): "), "\(line)")
                #expect(line.count > "\(file):\(number): \(severity): ".count)
            }
            #expect(
                lines.contains { $0.hasPrefix("\(file):6: error: ") && $0.contains("line 2") },
                "the duplicate names its first line")
            // Warnings only: exit 0.
            let clean = try session.write(
                "clean.txt",
                "alice,\(Self.hash(session.password("Weak-Pass-19~~~")))\nbob,\(session.password("Plain-B0b-20~~~"))")
            let warned = session.run(["check", clean])
            #expect(warned.status == 0, "\(warned)")
            #expect(warned.stdoutLines.count == 2, "\(warned)")
            #expect(warned.stdoutLines.first?.hasPrefix("\(clean):1: warning: weak hash") == true, "\(warned)")
            #expect(warned.stdoutLines.last?.hasPrefix("\(clean):2: warning: plaintext") == true, "\(warned)")
            // A file without a problem prints nothing.
            let fine = try session.write("fine.txt", "# nobody yet\n")
            #expect(session.run(["check", fine]) == CLIResult(status: 0, stdout: "", stderr: ""))
        }
    }

    @Test func checkJSONHasTheSameFindings() throws {
        try withSession { session in
            let (file, _) = try Self.troubledFile(session)
            let text = session.run(["check", file])
            let result = session.run(["check", "--json", file])
            #expect(result.status == 1, "\(result)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(object["file"] as? String == file)
            #expect(object["errors"] as? Int == 6)
            #expect(object["warnings"] as? Int == 2)
            let findings = try #require(object["findings"] as? [[String: Any]])
            let fromJSON = findings.map {
                "\(file):\($0["line"] as? Int ?? -1): \($0["severity"] as? String ?? "?"): \($0["message"] as? String ?? "?")"
            }
            #expect(fromJSON == text.stdoutLines.map(String.init))
        }
    }

    // MARK: list

    @Test func listShowsUsersAndStorageNeverSecrets() throws {
        try withSession { session in
            let file = try session.write(
                "users.txt",
                "alice,\(try Self.hash(session.password("Al1ce-Pass-21~~")))\n"
                    + "bob,\(session.password("B0b-Plain-22~~~"))\n"
                    + "carol,\(try Self.hash(session.password("C4rol-Pass-23~~"), .sha512))\n"
                    + "dan,$H$\(session.password("saltsalt~~~~~~~"))$\(session.password("unsupportedchecksum24"))\n"
                    + "eve,$pbkdf2-sha256$\(session.password("garbage25~~~~~~"))\n"
                    + "bob,\(session.password("Shadowed-26~~~~"))\n"
                    + "we\"ird\\name,\(session.password("Quote-Pass-27~~"))\n")
            let result = session.run(["list", file])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
            #expect(
                result.stdoutLines == [
                    "alice\tpbkdf2-sha256 1", "bob\tplaintext", "carol\tpbkdf2-sha512 1", "dan\tunsupported $H$",
                    "eve\tmalformed",
                    "we\"ird\\u{5c}name\tplaintext",
                ])
            let json = session.run(["list", file, "--json"])
            #expect(json.status == 0, "\(json)")
            let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(items.map { $0["user"] as? String } == ["alice", "bob", "carol", "dan", "eve", "we\"ird\\name"])
            #expect(items.map { $0["line"] as? Int } == [1, 2, 3, 4, 5, 7])
            #expect(
                items.map { $0["storage"] as? String } == [
                    "pbkdf2-sha256", "plaintext", "pbkdf2-sha512", "unsupported", "malformed", "plaintext",
                ])
            #expect(items[0]["rounds"] as? Int == 1 && items[0]["weak"] as? Bool == true)
            #expect(items[1]["rounds"] == nil)
            // No hash material either: no salt or checksum of any line.
            for line in session.text("users.txt").split(separator: "\n") {
                let secret = line.split(separator: ",", maxSplits: 1).last.map(String.init) ?? ""
                for piece in secret.split(separator: "$").dropFirst(2) where piece.count > 8 {  // salts and checksums
                    #expect(!result.stdout.contains(piece) && !json.stdout.contains(piece))
                }
            }
        }
    }

    // MARK: verify

    @Test func unknownUserAndWrongPasswordLookTheSame() throws {
        try withSession { session in
            let file = try session.write(
                "users.txt",
                "alice,\(try Self.hash(session.password("Al1ce-Pass-28~~")))\nbob,\(session.password("B0b-Plain-29~~~"))\n"
                    + "eve,$pbkdf2-sha256$x\ndan,$6$salt$abc\n")
            for environment in [["LANG": "C"], ["LANG": "es_ES.UTF-8"]] {
                var results: [CLIResult] = []
                for (user, password) in [
                    ("alice", "wrong-30"), ("bob", "wrong-30"), ("nobody", "wrong-30"), ("nobody", "Al1ce-Pass-28~~"),
                    ("eve", "x-Guess-52"), ("dan", "abc-Guess-53"), ("ALICE", "Al1ce-Pass-28~~"),
                    ("alic", "Al1ce-Pass-28~~"),
                ] {
                    results.append(
                        session.run(
                            ["verify", file, user, "--iterations", "1"], stdin: [session.password(password)],
                            environment: environment))
                }
                #expect(Set(results.map(\.description)).count == 1, "\(results)")
                #expect(results[0].status == 1 && results[0].stdout.isEmpty)
                expectErrorFormat(results[0])
            }
        }
    }

    // MARK: import

    struct BadImport: CustomTestStringConvertible, Sendable {
        var name: String
        var lines: [String]
        var badLine: Int
        /// The password of the bad line, which must not be quoted.
        var secret: String
        var options: [String] = []
        var testDescription: String { name }
    }

    static let badImports: [BadImport] = [
        BadImport(
            name: "no comma", lines: ["carol,C4rol-Pass-31~~", "NoComma-Secret-32", "dave,D4ve-Pass-33~~~"], badLine: 2,
            secret: "NoComma-Secret-32"),
        BadImport(
            name: "empty username", lines: ["carol,C4rol-Pass-31~~", "", ",Empty-User-34"], badLine: 3,
            secret: "Empty-User-34"),
        BadImport(
            name: "username with trailing space", lines: ["carol,C4rol-Pass-31~~", "dave ,Trail-Pass-35~~"], badLine: 2,
            secret: "Trail-Pass-35~~"),
        BadImport(
            name: "empty password", lines: ["carol,C4rol-Pass-31~~", "dave,"], badLine: 2, secret: "C4rol-Pass-31~~"),
        BadImport(
            name: "plaintext with hash syntax", lines: ["carol,C4rol-Pass-31~~", "dave,$1$Hashlike-36"], badLine: 2,
            secret: "Hashlike-36", options: ["--plaintext"]),
        BadImport(
            name: "same user twice",
            lines: ["carol,C4rol-Pass-31~~", "", "dave,D4ve-Pass-33~~~", "carol,Again-Pass-37~~"], badLine: 4,
            secret: "Again-Pass-37~~"),
        BadImport(
            name: "last line bad", lines: ["carol,C4rol-Pass-31~~", "dave,D4ve-Pass-33~~~", "#comment-Pass-38"],
            badLine: 3, secret: "comment-Pass-38"),
    ]

    @Test(arguments: badImports)
    func importIsAllOrNothing(_ bad: BadImport) throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let before = session.bytes("users.txt")
            for line in bad.lines {
                if let comma = line.firstIndex(of: ",") {
                    _ = session.password(String(line[line.index(after: comma)...]))
                }
            }
            _ = session.password(bad.secret)
            let result = session.run(["import", file, "--iterations", "1"] + bad.options, stdin: bad.lines)
            expectUsageError(result)
            #expect(result.stderr.contains("standard input line \(bad.badLine):"), "\(result)")
            #expect(session.bytes("users.txt") == before, "the file changed")
        }
    }

    @Test func importNamesTheEarlierLineOfADuplicate() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let result = session.run(
                ["import", file, "--iterations", "1"],
                stdin: [
                    "", "carol,\(session.password("C4rol-Pass-39~~"))", "",
                    "dave,\(session.password("D-40-long-enough"))", "carol,\(session.password("C-41-long-enough"))",
                ])
            expectUsageError(result)
            #expect(result.stderr.contains("standard input line 5"), "\(result)")
            #expect(result.stderr.contains("line 2"), "\(result)")
            #expect(!result.stderr.contains("item"), "\(result)")
        }
    }

    @Test func importAddsAndUpdatesInOneRewrite() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let result = session.run(
                ["import", file, "--iterations", "1"],
                stdin: [
                    "carol,\(session.password("C4rol-Pass-42~~"))", "", "bob,\(session.password("B0b-New-43~~~~~"))",
                    "dave,\(session.password("x,y,z-44~~~~~~~"))",
                ])
            #expect(
                result
                    == CLIResult(
                        status: 0, stdout: "2 added, 1 updated\n",
                        stderr: "credfile: warning: 1 iterations is below the minimum of 600000 (OWASP)\n"))
            #expect(try libraryGrants(file, "carol", "C4rol-Pass-42~~"))
            #expect(try libraryGrants(file, "bob", "B0b-New-43~~~~~"))
            #expect(try libraryGrants(file, "dave", "x,y,z-44~~~~~~~"))
            #expect(try !libraryGrants(file, "bob", "B0b-Plain-2~~~~"))
            #expect(session.text("users.txt").hasPrefix("# usuarios\nalice,$pbkdf2-sha256$1$"))
        }
    }

    // MARK: upgrade

    @Test func upgradeHashesPlaintextAndReports() throws {
        try withSession { session in
            let file = try session.write(
                "users.txt",
                "a,\(session.password("Plain-A-45~~~~~"))\nb,\(session.password("Plain-B-46~~~~~"))\nc,$pbkdf2-sha256$x\n"
            )
            let before = session.bytes("users.txt")
            let dry = session.run(["upgrade", file, "--dry-run", "--json", "--iterations", "1"])
            #expect(dry.status == 0, "\(dry)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
            #expect(summary["upgraded"] as? Int == 2 && summary["dryRun"] as? Bool == true)
            #expect(summary["malformedLines"] as? [Int] == [3])
            #expect(session.bytes("users.txt") == before)

            let done = session.run(["upgrade", file, "--iterations", "1"])
            #expect(done.status == 0, "\(done)")
            #expect(done.stdout.hasPrefix("upgraded 2 entries"), "\(done)")
            #expect(done.stdout.contains("line 3"), "\(done)")
            #expect(try libraryGrants(file, "a", "Plain-A-45~~~~~") && libraryGrants(file, "b", "Plain-B-46~~~~~"))
            #expect(session.text("users.txt").hasSuffix("\nc,$pbkdf2-sha256$x\n"))

            let again = session.run(["upgrade", file, "--iterations", "1"])
            #expect(again.status == 0 && again.stdout.hasPrefix("nothing to upgrade"), "\(again)")
        }
    }

    // MARK: The screens, in-process

    @Test func screensReadFromStandardInputWhenItIsNotATerminal() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let pw = session.password("Screen-Pass-47~")
            let registered = session.run(["register", file, "--iterations", "1"], stdin: ["carol", pw])
            #expect(
                registered
                    == CLIResult(
                        status: 0, stdout: "Register\nUsername: ✅ User registered\n",
                        stderr: "credfile: warning: 1 iterations is below the minimum of 600000 (OWASP)\n"))
            #expect(
                session.run(["login", file, "--iterations", "1"], stdin: ["carol", pw]).stdout
                    == "Login\nUsername: ✅ Access granted\n")
            let denied = session.run(
                ["login", file, "--iterations", "1"], stdin: ["carol", session.password("Wrong-48~~~~~~~")])
            #expect(
                denied == CLIResult(status: 1, stdout: "Login\nUsername: Wrong username or password.\n", stderr: ""))
            let exists = session.run(["register", file, "--iterations", "1"], stdin: ["alice", pw])
            #expect(exists.status == 3 && exists.stdout.hasSuffix("The user already exists.\n"), "\(exists)")
            let empty = session.run(["register", file, "--iterations", "1"], stdin: ["", pw])
            #expect(empty.status == 2 && empty.stdout.hasSuffix("Username and password cannot be empty.\n"), "\(empty)")
            let noPassword = session.run(["register", file, "--iterations", "1"], stdin: ["dave", ""])
            #expect(
                noPassword.status == 2 && noPassword.stdout.hasSuffix("Username and password cannot be empty.\n"),
                "\(noPassword)")
        }
    }

    @Test func screensOnAFakeTerminalAskTwiceForANewPassword() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let before = session.bytes("users.txt")
            let es = ["LANG": "es_ES.UTF-8"]
            let pw = session.password("Twice-Pass-49~~")
            let mismatch = session.run(
                ["register", file, "--iterations", "1"], stdin: ["carol"],
                tty: [pw, session.password("Twice-Pass-50~~")], environment: es)
            #expect(mismatch.status == 2, "\(mismatch)")
            #expect(session.lastPrompts == ["Contraseña: ", "Repita la contraseña: "])
            #expect(mismatch.stderr.hasPrefix("credfile: Las contraseñas no coinciden.\n"), "\(mismatch)")
            #expect(session.bytes("users.txt") == before)

            let ok = session.run(
                ["register", file, "--iterations", "1"], stdin: ["carol"], tty: [pw, pw], environment: es)
            #expect(ok.status == 0 && ok.stdout == "Registro\nUsuario: ✅ Usuario registrado con éxito\n", "\(ok)")
            let login = session.run(["login", file, "--iterations", "1"], stdin: ["carol"], tty: [pw], environment: es)
            #expect(login.stdout == "Iniciar sesión\nUsuario: ✅ Acceso permitido\n", "\(login)")
            #expect(session.lastPrompts == ["Contraseña: "])

            // add and passwd ask twice, verify once.
            #expect(session.run(["add", file, "dave", "--iterations", "1"], tty: [pw, pw]).status == 0)
            #expect(session.lastPrompts == ["New password: ", "Repeat password: "])
            #expect(session.run(["passwd", file, "dave", "--iterations", "1"], tty: [pw, pw]).status == 0)
            #expect(session.lastPrompts == ["New password: ", "Repeat password: "])
            #expect(session.run(["verify", file, "dave", "--iterations", "1"], tty: [pw]).status == 0)
            #expect(session.lastPrompts == ["Password: "])
            #expect(session.run(["hash", "--iterations", "1"], tty: [pw, pw]).status == 0)
            #expect(session.lastPrompts == ["New password: ", "Repeat password: "])
        }
    }

    // MARK: Locale

    @Test func theLocaleVariablesChooseTheLanguage() throws {
        try withSession { session in
            let file = try Self.twoUsers(session)
            let spanish = "credfile: Usuario o contraseña incorrectos.\n"
            let english = "credfile: Wrong username or password.\n"
            let cases: [([String: String], String)] = [
                ([:], english), (["LANG": "C"], english), (["LANG": "es_ES.UTF-8"], spanish), (["LANG": "es"], spanish),
                (["LC_ALL": "C", "LANG": "es_ES.UTF-8"], english),
                (["LC_MESSAGES": "es_MX.UTF-8", "LANG": "C"], spanish),
                (["LC_ALL": "", "LC_MESSAGES": "es_AR", "LANG": "en_US.UTF-8"], spanish),
                (["LC_ALL": "es_ES.UTF-8", "LC_MESSAGES": "C"], spanish),
            ]
            for (environment, expected) in cases {
                let result = session.run(
                    ["verify", file, "alice", "--iterations", "1"], stdin: [session.password("Nope-51~~~~~~~~")],
                    environment: environment)
                #expect(result.stderr == expected, "\(environment): \(result)")
            }
        }
    }
}
