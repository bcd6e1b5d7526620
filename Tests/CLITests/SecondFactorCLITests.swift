import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

// SPEC §14's codes through the command line: codes the real `oathtool --totp` makes from
// a users.oath it reads too, accepted once by `verify` and `pam` with `otp-append`;
// without it an enrolled user is denied (`reason=second-factor-required`) with the answer
// of a wrong password; 8 processes racing one code let exactly one in.

@Suite("Second factor on the command line (SPEC §14)")
struct SecondFactorCLITests {
    /// RFC 6238's SHA-1 key as hex: what `oathtool` reads from the users file.
    static let hexSecret = "3132333435363738393031323334353637383930"
    static let password = "Tangerine-River-Stone-7"
    static let carolSecret = "00112233445566778899aabbccddeeff00112233"

    /// FILE with bob (a second factor in FILE.oath) and alice (none).
    static func files(_ session: CLISession) throws -> String {
        var store = CredentialStore(path: session.path("app.cred"), policy: try HashPolicy(rounds: 1000))
        store.passwordPolicy = .permissive
        for user in ["bob", "alice", "carol"] {
            try store.register(username: user, password: Password(session.password(password)), storage: .hashed)
        }
        let users = "# as pam_oath keeps it\nHOTP/T30 bob - \(hexSecret)\nHOTP/T30 carol - \(carolSecret)\n"
        #expect(FileManager.default.createFile(atPath: store.path + ".oath", contents: Data(users.utf8)))
        chmod(store.path + ".oath", 0o600)
        return store.path
    }

    /// The current code by the real oathtool, reading the users file's own secret.
    static func oathtoolCode(_ session: CLISession, secret: String = hexSecret) throws -> String {
        let result = try Integration.run(try ExternalTool.path("oathtool"), ["--totp", secret], in: session)
        #expect(result.status == 0, "\(result)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "verify: an oathtool code after the password with otp-append, once; without it denied as a wrong password",
        .enabled(if: ExternalTool.runnable("oathtool"), Comment(rawValue: ExternalTool.skipNote("oathtool"))))
    func verifyWithCodes() throws {
        try withSession { session in
            let file = try Self.files(session)
            func verify(_ user: String, _ typed: String, _ options: [String]) throws -> CLIResult {
                try BuiltBinary.run(
                    ["verify", file, user, "--log", "stderr", "--iterations", "1000"] + options,
                    stdin: Array((typed + "\n").utf8), in: session)
            }
            let wrong = try verify("bob", "not-the-password", [])
            let required = try verify("bob", Self.password, [])
            #expect(required.status == 1 && required.stderr.contains("reason=second-factor-required"), "\(required)")
            // The caller's answer is a wrong password's; only the log says why.
            let answer = { (r: CLIResult) in r.stderr.split(separator: "\n").filter { !$0.contains("reason=") } }
            #expect(answer(required) == answer(wrong))
            let code = try Self.oathtoolCode(session)
            let good = try verify("bob", Self.password + code, ["--otp-append"])
            #expect(good.status == 0 && good.stderr.contains("authentication success"), "\(good)")
            let replay = try verify("bob", Self.password + code, ["--otp-append"])
            #expect(replay.status == 1 && replay.stderr.contains("reason=wrong-code"), "\(replay)")
            #expect(answer(replay) == answer(wrong))
            let noCode = try verify("bob", Self.password, ["--otp-append"])
            #expect(noCode.status == 1 && noCode.stderr.contains("reason=wrong-code"), "\(noCode)")
            // verify also reads the code as a second line of standard input, once.
            let next = try verify("bob", Self.password + "\n" + code, [])
            #expect(next.status == 1 && next.stderr.contains("reason=wrong-code"), "\(next)")
            let carolCode = try Self.oathtoolCode(session, secret: Self.carolSecret)
            let second = try verify("carol", Self.password + "\n" + carolCode, [])
            #expect(second.status == 0, "\(second)")
            let notCode = try verify("carol", Self.password + "\n12345", [])
            #expect(notCode.status == 1 && notCode.stderr.contains("reason=second-factor-required"), "\(notCode)")
            // A user without a second factor logs in with the password alone, either way.
            #expect(try verify("alice", Self.password, []).status == 0)
            #expect(try verify("alice", Self.password, ["--otp-append"]).status == 0)
        }
    }

    @Test(
        "pam with otp-append as pam_exec runs it: password and code in one authtok",
        .enabled(if: ExternalTool.runnable("oathtool"), Comment(rawValue: ExternalTool.skipNote("oathtool"))))
    func pamWithCode() throws {
        try withSession { session in
            let file = try Self.files(session)
            var environment = BuiltBinary.environment()
            environment["PAM_USER"] = "bob"
            environment["PAM_TYPE"] = "auth"
            environment["PAM_SERVICE"] = "credfile-test"
            let code = try Self.oathtoolCode(session)
            let arguments = ["pam", file, "--otp-append", "--log", "none", "--iterations", "1000"]
            let bare = try BuiltBinary.run(
                arguments, stdin: Array(Self.password.utf8) + [0], in: session, environment: environment)
            #expect(bare.status != 0, "\(bare)")
            let good = try BuiltBinary.run(
                arguments, stdin: Array((Self.password + code).utf8) + [0], in: session, environment: environment)
            #expect(good.status == 0, "\(good)")
            let replay = try BuiltBinary.run(
                arguments, stdin: Array((Self.password + code).utf8) + [0], in: session, environment: environment)
            #expect(replay.status != 0, "\(replay)")
        }
    }

    @Test(
        "8 processes racing one code: exactly one is let in",
        .enabled(if: ExternalTool.runnable("oathtool"), Comment(rawValue: ExternalTool.skipNote("oathtool"))))
    func racingReplay() throws {
        try withSession { session in
            let file = try Self.files(session)
            let code = try Self.oathtoolCode(session)
            // --no-guard: the guard would throttle the racers' counted failures, and the
            // race is the code step's, not the guard's.
            let racers = try (0..<8).map { _ in
                try CLI.start(
                    ["verify", file, "bob", "--otp-append", "--no-guard", "--log", "none", "--iterations", "1000"],
                    stdin: Self.password + code + "\n", environment: CLI.environment())
            }
            let statuses = try racers.map { try $0.checkedWait().status }
            #expect(statuses.filter { $0 == 0 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == 1 }.count == 7, "\(statuses)")
        }
    }

    @Test("otp --enroll with a wrong code saves nothing; --remove of a user without one is exit 3")
    func enrolWrongCode() throws {
        try withSession { session in
            let file = try Self.files(session)
            let enrol = session.run(["otp", file, "alice", "--enroll"], stdin: ["000000x"])
            #expect(enrol.status == 1 && enrol.stdout.hasPrefix("otpauth://totp/credfile:alice?secret="), "\(enrol)")
            #expect(!(try String(contentsOfFile: file + ".oath", encoding: .utf8)).contains("alice"))
            #expect(session.run(["otp", file, "alice", "--remove"]).status == 3)
            #expect(session.run(["otp", file, "nobody", "--enroll"], stdin: ["123456"]).status == 3)
            #expect(session.run(["otp", file, "bob"]).status == 2)
            let removed = session.run(["otp", file, "bob", "--remove"])
            #expect(removed.status == 0, "\(removed)")
            #expect(!(try String(contentsOfFile: file + ".oath", encoding: .utf8)).contains("bob"))
        }
    }

    @Test("list shows totp beside an enrolled user; passwd's minimum is 8 for them, 15 for the others")
    func listAndMinimum() throws {
        try withSession { session in
            let file = try Self.files(session)
            let list = session.run(["list", file])
            #expect(list.stdout.contains("bob\tpbkdf2-sha256 1000\ttotp\n"), "\(list)")
            #expect(list.stdout.contains("alice\tpbkdf2-sha256 1000\n"), "\(list)")
            #expect(session.run(["list", file, "--json"]).stdout.contains(#""user":"bob","line":1,"#))
            #expect(session.run(["list", file, "--json"]).stdout.contains(#""weak":true,"totp":true}"#))
            let short = session.password("Quokka!9z")
            #expect(session.run(["passwd", file, "bob", "--iterations", "1000"], stdin: [short]).status == 0)
            #expect(session.run(["passwd", file, "alice", "--iterations", "1000"], stdin: [short]).status == 2)
        }
    }

    @Test("otp --enroll on a terminal draws the URI as a QR code (libqrencode) under it")
    func enrolQRCode() throws {
        try withSession { session in
            let file = try Self.files(session)
            let enrol = session.run(["otp", file, "alice", "--enroll"], stdin: ["000000x"], tty: [])
            let lines = enrol.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("otpauth://totp/credfile:alice?secret=") == true, "\(enrol)")
            let qr = lines.dropFirst().prefix { !$0.hasPrefix("Code from the app") }
            // A square of modules (21 + 4k) with a 4-module quiet zone, two rows a line.
            let size = qr.first?.unicodeScalars.count ?? 0
            #expect(size >= 29 && (size - 8 - 21) % 4 == 0, "\(size)")
            #expect(qr.count == (size + 1) / 2, "\(qr.last ?? "")")
            #expect(qr.allSatisfy { $0.unicodeScalars.count == size })
            // The quiet zone is light; the top-left finder's first row is 7 dark modules.
            #expect(qr.first == String(repeating: "\u{2588}", count: size) && qr.last == qr.first)
            let finderRow = Array(qr[qr.startIndex + 2].unicodeScalars)
            // Symbol rows 0 and 1: the finder's dark edge, then dark, five light, dark.
            #expect(finderRow[4] == " " && finderRow[10] == " ", "\(String(String.UnicodeScalarView(finderRow)))")
            #expect(finderRow[5..<10].allSatisfy { $0 == "\u{2584}" })
            #expect(enrol.status == 1)
            // The same modules as the real qrencode draws for the URI.
            if ExternalTool.runnable("qrencode") || ExternalTool.isCI {
                let uri = try #require(lines.first)
                let real = try Integration.run(
                    try ExternalTool.path("qrencode"), ["-t", "UTF8", "-l", "M", "-8", "-m", "4", uri], in: session)
                #expect(real.stdout.split(separator: "\n").map(String.init) == Array(qr), "\(real.stdout)")
            }
        }
    }
}

extension IntegrationPAMTests {
    @Test(
        "pamtester with otp-append: the password and oathtool's code in one answer, accepted once (SPEC §14)",
        .enabled(
            if: ExternalTool.runnable("pamtester") && ExternalTool.runnable("oathtool")
                && (canWriteSystemPAM || ExternalTool.isCI),
            Comment(rawValue: ExternalTool.skipNote("pamtester") + " or oathtool (and root, to write /etc/pam.d)")))
    func pamtesterWithCode() throws {
        try withSession { session in
            let pamtester = try ExternalTool.path("pamtester")
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let users = "HOTP/T30 alice - \(SecondFactorCLITests.hexSecret)\n"
            #expect(FileManager.default.createFile(atPath: file + ".oath", contents: Data(users.utf8)))
            chmod(file + ".oath", 0o600)
            let service = try SystemPAMService(
                text: try Self.service(session, file: file, preamble: "otp-append = yes\n"))
            defer { service.remove() }
            let code = try SecondFactorCLITests.oathtoolCode(session)
            func authenticate(_ typed: String) throws -> CLIResult {
                try Integration.run(
                    pamtester, [service.name, Self.alice.0, "authenticate"], stdin: Array((typed + "\n").utf8),
                    in: session)
            }
            let bare = try authenticate(Self.alice.1)
            #expect(bare.status != 0, "\(bare)")
            let good = try authenticate(Self.alice.1 + code)
            #expect(good.status == 0 && good.stdout.contains("successfully authenticated"), "\(good)")
            let replay = try authenticate(Self.alice.1 + code)
            #expect(replay.status != 0, "\(replay)")
        }
    }
}
