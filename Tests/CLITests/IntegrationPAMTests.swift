import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// `credfile pam FILE` behind the real Linux-PAM `pam_exec.so expose_authtok` (SPEC §7):
/// through a tiny C program calling `pam_start_confdir` + `pam_authenticate` with a
/// service file in a private directory, and through `pamtester` with a service in
/// `/etc/pam.d`. The service is the shipped `Examples/pam/credfile-app` and the
/// configuration's section `Examples/pam/credfile.conf`, their paths replaced.
/// pam_exec turns every non-zero exit into PAM_SYSTEM_ERR (4).
@Suite(.serialized) struct IntegrationPAMTests {
    static let alice = ("alice", "Alice-Pass-2026!")
    /// Spaces, a colon and non-ASCII: the bytes pam_exec writes are the password exactly.
    static let jose = ("josé", "p@ss:w rd ñandú 2026")

    /// Compiles `Fixtures/pam_harness.c` into `session` with gcc and `-lpam`.
    static func harness(in session: CLISession) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/pam_harness.c").path
        let output = session.path("pam_harness")
        let gcc = try ExternalTool.path("gcc")
        let built = try Integration.run(gcc, ["-Wall", "-o", output, source, "-lpam"], in: session)
        try #require(built.status == 0, "gcc failed: \(built)")
        return output
    }

    /// Runs the harness: the PAM result code it printed (0 success, 4 system error).
    static func authenticate(
        _ harness: String, service: String, confdir: String, user: String, password: String, in session: CLISession
    ) throws -> Int {
        let result = try Integration.run(
            harness, [service, user, confdir], stdin: Array((password + "\n").utf8), in: session)
        try #require(result.status == 0, "harness: \(result)")
        return try #require(Int(result.stdout.split(separator: " ").first ?? ""), "harness: \(result)")
    }

    /// `Examples/pam/credfile-app` for `file`, calling credfile on a host whose
    /// configuration is `Examples/pam/credfile.conf` (after `preamble`) with the guard
    /// database in a directory of `user`'s own.
    static func service(
        _ session: CLISession, file: String, guardUser user: String = "root", preamble: String = ""
    ) throws -> String {
        let state = try Integration.guardState(in: session, for: user)
        let configuration = try Integration.configuration(
            in: session, preamble: "iterations = \(Integration.rounds)\n" + preamble, recipe: "pam/credfile.conf",
            replacing: ["/etc/credfile/app.cred": file, "/var/lib/credfile/www-data/app.guard.db": state])
        return try Integration.example(
            "pam/credfile-app",
            replacing: [
                "/usr/bin/credfile": try Integration.credfile(in: session, configuration: configuration),
                "/etc/credfile/app.cred": file,
            ])
    }

    @Test(
        "pam_exec with a private service directory: granted, wrong password, unknown user, plaintext entry",
        .enabled(if: ExternalTool.runnable("gcc"), Comment(rawValue: ExternalTool.skipNote("gcc"))))
    func pamExecPrivateService() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(
                in: session, users: [Self.alice, Self.jose], plaintext: [("legacy", "Legacy-Pass-9")])
            let harness = try Self.harness(in: session)
            let confdir = session.path("pam.d")
            mkdir(confdir, 0o755)
            try session.write("pam.d/credfile-test", try Self.service(session, file: file))
            let before = session.bytes("users.txt")
            func check(_ user: String, _ password: String) throws -> Int {
                try Self.authenticate(
                    harness, service: "credfile-test", confdir: confdir, user: user, password: password, in: session)
            }
            #expect(try check(Self.alice.0, Self.alice.1) == 0)
            #expect(try check(Self.jose.0, Self.jose.1) == 0)
            #expect(try check("legacy", "Legacy-Pass-9") == 0)
            #expect(try check(Self.alice.0, "Alice-Pass-2026") == 4)  // PAM_SYSTEM_ERR
            #expect(try check(Self.alice.0, Self.jose.1) == 4)
            #expect(try check("nobody", Self.alice.1) == 4)
            #expect(try check("ali", Self.alice.1) == 4)  // the seed's substring flaw
            #expect(session.bytes("users.txt") == before, "a login without --upgrade wrote the file")
        }
    }

    @Test(
        "pam_exec with --upgrade rehashes a plaintext entry on a good login",
        .enabled(if: ExternalTool.runnable("gcc"), Comment(rawValue: ExternalTool.skipNote("gcc"))))
    func pamExecUpgrade() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [], plaintext: [("legacy", "Legacy-Pass-9")])
            let harness = try Self.harness(in: session)
            let confdir = session.path("pam.d")
            mkdir(confdir, 0o755)
            try session.write("pam.d/credfile-test", try Self.service(session, file: file, preamble: "upgrade = yes\n"))
            #expect(
                try Self.authenticate(
                    harness, service: "credfile-test", confdir: confdir, user: "legacy", password: "wrong-one",
                    in: session) == 4)
            #expect(session.text("users.txt") == "legacy,Legacy-Pass-9\n", "a failed login changed the file")
            #expect(
                try Self.authenticate(
                    harness, service: "credfile-test", confdir: confdir, user: "legacy", password: "Legacy-Pass-9",
                    in: session) == 0)
            #expect(session.text("users.txt").hasPrefix("legacy,$pbkdf2-sha256$\(Integration.rounds)$"))
            #expect(try libraryGrants(file, "legacy", "Legacy-Pass-9"))
        }
    }

    @Test(
        "pamtester with a service in /etc/pam.d",
        .enabled(
            if: ExternalTool.runnable("pamtester") && (canWriteSystemPAM || ExternalTool.isCI),
            Comment(rawValue: ExternalTool.skipNote("pamtester") + " (and root, to write /etc/pam.d)")))
    func pamtester() throws {
        try withSession { session in
            let pamtester = try ExternalTool.path("pamtester")
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let service = try SystemPAMService(text: try Self.service(session, file: file))
            defer { service.remove() }
            let good = try Integration.run(
                pamtester, [service.name, Self.alice.0, "authenticate"], stdin: Array((Self.alice.1 + "\n").utf8),
                in: session)
            #expect(good.status == 0 && good.stdout.contains("successfully authenticated"), "\(good)")
            let bad = try Integration.run(
                pamtester, [service.name, Self.alice.0, "authenticate"], stdin: Array("nope-nope\n".utf8), in: session)
            #expect(bad.status != 0 && (bad.stdout + bad.stderr).contains("System error"), "\(bad)")
            let unknown = try Integration.run(
                pamtester, [service.name, "mallory", "authenticate"], stdin: Array((Self.alice.1 + "\n").utf8),
                in: session)
            #expect(unknown.status != 0, "\(unknown)")
        }
    }

    @Test(
        "pamtester with --group (SPEC §13): a member logs in, a non-member with the right password is denied",
        .enabled(
            if: ExternalTool.runnable("pamtester") && (canWriteSystemPAM || ExternalTool.isCI),
            Comment(rawValue: ExternalTool.skipNote("pamtester") + " (and root, to write /etc/pam.d)")))
    func pamtesterGroup() throws {
        try withSession { session in
            let pamtester = try ExternalTool.path("pamtester")
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.jose])
            let groups = try session.write("app.htgroup", "staff: alice\n")
            chmod(groups, 0o644)
            let text = try Self.service(session, file: file, preamble: "groups = \(groups)\n")
            try #require(text.contains(" pam \(file)"))
            let service = try SystemPAMService(
                text: text.replacingOccurrences(of: " pam \(file)", with: " pam --group staff \(file)"))
            defer { service.remove() }
            let member = try Integration.run(
                pamtester, [service.name, Self.alice.0, "authenticate"], stdin: Array((Self.alice.1 + "\n").utf8),
                in: session)
            #expect(member.status == 0 && member.stdout.contains("successfully authenticated"), "\(member)")
            let outsider = try Integration.run(
                pamtester, [service.name, Self.jose.0, "authenticate"], stdin: Array((Self.jose.1 + "\n").utf8),
                in: session)
            #expect(outsider.status != 0 && (outsider.stdout + outsider.stderr).contains("System error"), "\(outsider)")
        }
    }

    @Test("pam --group: exit 1 and reason=not-in-group for a non-member; --group without a group file is misuse")
    func groupOption() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.jose])
            let groups = try session.write("app.htgroup", "staff: alice\n")
            let common = ["pam", file, "--iterations", "\(Integration.rounds)", "--group", "staff", "--log", "stderr"]
            let member = try BuiltBinary.run(
                common + ["--groups", groups], stdin: Array(Self.alice.1.utf8), in: session,
                environment: Self.pamEnvironment(user: Self.alice.0))
            #expect(member.status == 0, "\(member)")
            let outsider = try BuiltBinary.run(
                common + ["--groups", groups], stdin: Array(Self.jose.1.utf8), in: session,
                environment: Self.pamEnvironment(user: Self.jose.0))
            #expect(outsider.status == 1 && outsider.stdout.isEmpty, "\(outsider)")
            #expect(
                outsider.stderr.contains("authentication failure; service=pam user=jos")
                    && outsider.stderr.contains("reason=not-in-group"), "\(outsider)")
            let wrong = try BuiltBinary.run(
                common + ["--groups", groups], stdin: Array("Alice-Pass-2027!".utf8), in: session,
                environment: Self.pamEnvironment(user: Self.alice.0))
            #expect(wrong.status == 1 && wrong.stderr.contains("reason=wrong-password"), "\(wrong)")
            let noFile = try BuiltBinary.run(
                common, stdin: Array(Self.alice.1.utf8), in: session, environment: Self.pamEnvironment(user: "alice"))
            expectUsageError(noFile)
            #expect(noFile.stderr.contains("--groups"), "\(noFile)")
        }
    }

    // MARK: The command alone, as pam_exec runs it

    static func pamEnvironment(user: String?, type: String? = "auth") -> [String: String] {
        var environment = BuiltBinary.environment()
        environment["PAM_USER"] = user
        environment["PAM_TYPE"] = type
        environment["PAM_SERVICE"] = "credfile-test"
        return environment
    }

    struct StdinCase: CustomTestStringConvertible, Sendable {
        let name: String
        let stdin: [UInt8]
        let status: Int32
        var testDescription: String { name }
    }

    static let stdinCases: [StdinCase] = [
        StdinCase(name: "raw bytes, no terminator (Linux-PAM ≥ 1.4)", stdin: Array("Alice-Pass-2026!".utf8), status: 0),
        StdinCase(name: "one trailing NUL (Linux-PAM ≤ 1.3)", stdin: Array("Alice-Pass-2026!".utf8) + [0], status: 0),
        StdinCase(name: "trailing LF", stdin: Array("Alice-Pass-2026!\n".utf8), status: 0),
        StdinCase(name: "trailing CRLF", stdin: Array("Alice-Pass-2026!\r\n".utf8), status: 0),
        StdinCase(name: "LF then NUL", stdin: Array("Alice-Pass-2026!\n".utf8) + [0], status: 0),
        // HMAC pads its key with zeros, so PBKDF2 alone cannot tell "pw" from "pw\0":
        // a password holding a NUL (no stored one can) is denied before any hash.
        StdinCase(
            name: "two NULs: only one is removed, the other denies", stdin: Array("Alice-Pass-2026!".utf8) + [0, 0],
            status: 1),
        StdinCase(name: "a NUL inside", stdin: Array("Alice-Pass-2026!".utf8) + [0] + Array("x".utf8), status: 1),
        StdinCase(name: "two LFs: only one is removed", stdin: Array("Alice-Pass-2026!\n\n".utf8), status: 1),
        StdinCase(name: "a prefix of the password", stdin: Array("Alice-Pass-2026".utf8), status: 1),
        StdinCase(name: "empty", stdin: [], status: 1),
        StdinCase(name: "4,096 bytes: read, denied", stdin: Array(repeating: 0x61, count: 4096), status: 1),
        StdinCase(
            name: "4,096 bytes + CRLF + NUL: read, denied",
            stdin: Array(repeating: 0x61, count: 4096) + [0x0D, 0x0A, 0], status: 1),
        StdinCase(name: "4,097 bytes: refused", stdin: Array(repeating: 0x61, count: 4097), status: 2),
    ]

    @Test("standard input framing", arguments: stdinCases)
    func stdinFraming(_ row: StdinCase) throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let result = try BuiltBinary.run(
                ["pam", file, "--iterations", "\(Integration.rounds)"], stdin: row.stdin, in: session,
                environment: Self.pamEnvironment(user: "alice"))
            #expect(result.status == row.status, "\(result)")
            if row.status != 2 { #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result)") }
        }
    }

    @Test("misuse: PAM_TYPE other than auth, no PAM_USER, a FILE that cannot be read")
    func misuse() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let stdin = Array(Self.alice.1.utf8)
            for type in ["account", "password", "session", "open_session", nil] as [String?] {
                let result = try BuiltBinary.run(
                    ["pam", file], stdin: stdin, in: session,
                    environment: Self.pamEnvironment(user: "alice", type: type))
                expectUsageError(result)
                #expect(result.stderr.contains("PAM_TYPE"), "\(result)")
            }
            for user in ["", nil] as [String?] {
                let result = try BuiltBinary.run(
                    ["pam", file], stdin: stdin, in: session, environment: Self.pamEnvironment(user: user))
                expectUsageError(result)
                #expect(result.stderr.contains("PAM_USER"), "\(result)")
            }
            let missing = try BuiltBinary.run(
                ["pam", session.path("missing.txt")], stdin: stdin, in: session,
                environment: Self.pamEnvironment(user: "alice"))
            #expect(missing.status == 5, "\(missing)")
            expectErrorFormat(missing)
        }
    }
}
