import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §14 on a real terminal and in `check`: enrolment and the `login` screen over a
// pseudo-terminal (the code read without echo), pyotp's codes accepted by `verify`, and
// `check`'s findings about the secrets file.
@Suite("Second factor on a terminal and in check (SPEC §14)")
struct SecondFactorTerminalTests {
    static let password = SecondFactorCLITests.password

    /// The current code of a hex secret, made by pyotp in the peers' venv.
    static func pyotpCode(hex: String) throws -> String {
        let script = """
            import base64, pyotp, sys
            print(pyotp.TOTP(base64.b32encode(bytes.fromhex(sys.argv[1])).decode()).now())
            """
        let result = try ChildProcess.run(try ExternalTool.path(ExternalTool.peerPython), ["-c", script, hex])
        #expect(result.shellStatus == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "verify accepts pyotp's codes (second stdin line and otp-append), each once",
        .enabled(
            if: ExternalTool.runnable(ExternalTool.peerPython) || ExternalTool.isCI,
            Comment(rawValue: ExternalTool.skipNote(ExternalTool.peerPython))))
    func pyotpCodes() throws {
        try withSession { session in
            let file = try SecondFactorCLITests.files(session)
            func verify(_ user: String, _ typed: String, _ options: [String] = []) throws -> CLIResult {
                try BuiltBinary.run(
                    ["verify", file, user, "--log", "stderr", "--iterations", "1000"] + options,
                    stdin: Array((typed + "\n").utf8), in: session)
            }
            let code = try Self.pyotpCode(hex: SecondFactorCLITests.hexSecret)
            let good = try verify("bob", Self.password + "\n" + code)
            #expect(good.status == 0 && good.stderr.contains("authentication success"), "\(good)")
            #expect(try verify("bob", Self.password + "\n" + code).status == 1)
            let carol = try Self.pyotpCode(hex: SecondFactorCLITests.carolSecret)
            #expect(try verify("carol", Self.password + carol, ["--otp-append"]).status == 0)
            #expect(try verify("carol", Self.password + carol, ["--otp-append"]).status == 1)
        }
    }

    @Test(
        "login on a pty asks Código after the password, without echo; a wrong code reads as a wrong password",
        .enabled(
            if: ExternalTool.runnable("oathtool") || ExternalTool.isCI,
            Comment(rawValue: ExternalTool.skipNote("oathtool"))))
    func loginScreen() throws {
        try withSession { session in
            let file = try SecondFactorCLITests.files(session)
            var environment = BuiltBinary.environment()
            environment["LANG"] = "es_ES.UTF-8"
            func screen(_ code: String) throws -> (status: Int32, text: String) {
                let tty = try PseudoTerminal(
                    try BuiltProduct.path("credfile"), ["login", file, "--iterations", "1000", "--log", "none"],
                    environment: environment)
                try tty.expect("Usuario: ")
                try tty.send("bob\n")
                try tty.expect("Contraseña: ")
                try tty.send(session.password(Self.password) + "\n")
                try tty.expect("Código: ")
                #expect(!tty.echoIsOn, "the code is not echoed")
                try tty.send(code + "\n")
                let status = tty.finish()
                session.record(tty.text)
                #expect(!tty.showed(code), "the code was echoed: \(tty.text)")
                return (status, tty.text)
            }
            let code = try SecondFactorCLITests.oathtoolCode(session)
            let good = try screen(code)
            #expect(good.status == 0 && good.text.contains("Acceso permitido"), "\(good.text)")
            let replay = try screen(code)
            #expect(replay.status == 1 && replay.text.contains("Usuario o contraseña incorrectos."), "\(replay.text)")
        }
    }

    @Test("otp --enroll over a pty: the QR code drawn, the code typed without echo saves the secret")
    func enrolOverPTY() throws {
        try withSession { session in
            let file = try SecondFactorCLITests.files(session)
            let tty = try PseudoTerminal(
                try BuiltProduct.path("credfile"), ["otp", file, "alice", "--enroll", "--log", "none"],
                environment: BuiltBinary.environment())
            try tty.expect("Code from the app: ")
            let lines = tty.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            let uri = try #require(lines.first { $0.hasPrefix("otpauth://totp/credfile:alice?secret=") })
            // Light quiet-zone rows of full blocks, and half blocks inside: the QR code.
            #expect(lines.contains { !$0.isEmpty && $0.unicodeScalars.allSatisfy { $0 == "\u{2588}" } }, "\(tty.text)")
            #expect(lines.contains { $0.contains("\u{2580}") || $0.contains("\u{2584}") })
            let secret = try #require(
                URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value)
            let script = "import pyotp, sys; print(pyotp.TOTP(sys.argv[1]).now())"
            let code = try ChildProcess.run(try ExternalTool.path(ExternalTool.peerPython), ["-c", script, secret])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try tty.send(code + "\n")
            #expect(tty.finish() == 0, "\(tty.text)")
            session.record(tty.text)
            let users = try String(contentsOfFile: file + ".oath", encoding: .utf8)
            #expect(users.contains("HOTP/T30 alice - "), "\(users)")
        }
    }

    @Test("check: a secrets file others can read, a line for a user FILE lacks, a bad line by number")
    func checkFindings() throws {
        try withSession { session in
            let file = try SecondFactorCLITests.files(session)
            let clean = session.run(["check", file, "--no-guard"])
            #expect(clean.status == 0 && !clean.stdout.contains(".oath"), "\(clean)")

            let oath = file + ".oath"
            let extra = "HOTP/T30 zed - \(SecondFactorCLITests.carolSecret)\n"
            let handle = try #require(FileHandle(forWritingAtPath: oath))
            handle.seekToEndOfFile()
            handle.write(Data(extra.utf8))
            handle.closeFile()
            let unknown = session.run(["check", file, "--no-guard"])
            #expect(unknown.status == 0, "a warning: \(unknown)")
            #expect(unknown.stdout.contains("\(oath):4: warning: a secret for user 'zed', whom"), "\(unknown)")

            chmod(oath, 0o644)
            let open = session.run(["check", file, "--no-guard"])
            #expect(open.status == 1 && open.stdout.contains("\(oath): error: the secrets file can be read"), "\(open)")
            let json = session.run(["check", file, "--no-guard", "--json"])
            #expect(json.stdout.contains(#""otp_findings":["#) && json.status == 1, "\(json)")
            #expect(!json.stdout.contains(SecondFactorCLITests.carolSecret) && !open.stdout.contains("0011"))
            chmod(oath, 0o600)

            #expect(FileManager.default.createFile(atPath: oath, contents: Data("# users\nHOTP/T60 bob - 00\n".utf8)))
            chmod(oath, 0o600)
            let bad = session.run(["check", file, "--no-guard"])
            #expect(bad.status == 1 && bad.stdout.contains("\(oath):2: error: type"), "\(bad)")
        }
    }
}
