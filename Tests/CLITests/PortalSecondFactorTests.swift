import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §14 on the sign-in page, asked with the real curl: after a right password a user
// with a second factor gets a pending sign-in (its own cookie, 5 minutes) and the code page;
// one code attempt each; a wrong code is answered exactly as a wrong password; a right one
// (made by pyotp, the PyPI library authenticator back ends use) starts a session marked as
// having had a second factor. A signed-in user enrols from `{prefix}/`: an inline SVG QR
// code, the key shown once, saved only with a good code.
@Suite(
    "The sign-in page's second step and enrolment (SPEC §14)", .serialized,
    .enabled(
        if: ExternalTool.runnable("curl", ExternalTool.peerPython) || ExternalTool.isCI,
        Comment(rawValue: ExternalTool.skipNote("curl") + " or the peers' venv (bash Scripts/setup.sh test)")))
struct PortalSecondFactorTests {
    static let alice = ("alice", "Naranjo-en-flor-2026")
    static let host = "app.example.test"
    /// RFC 6238's SHA-1 key, as the users file keeps it (hex) and as pyotp takes it (base32).
    static let hexSecret = "3132333435363738393031323334353637383930"
    static let base32Secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    /// One answer as curl printed it (`-i`).
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: String

        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        func cookies() -> [String] { headers.filter { $0.0.lowercased() == "set-cookie" }.map(\.1) }
        /// The value a `Set-Cookie` gives `name`, if any.
        func cookie(_ name: String) -> String? {
            cookies().first { $0.hasPrefix(name + "=") }.map {
                String($0.dropFirst(name.count + 1).prefix { $0 != ";" })
            }
        }
        /// The value of the page's hidden or text input `name`.
        func field(_ name: String) -> String? {
            guard let marker = body.range(of: "name=\"\(name)\" value=\"") else { return nil }
            return String(body[marker.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// A browser driven by curl: its cookies (sent in a curl config file, never on argv).
    final class Browser {
        let session: CLISession
        let port: Int
        var cookies: [String: String] = [:]
        var csrf = ""

        init(_ session: CLISession, port: Int) {
            self.session = session
            self.port = port
        }

        /// Sends one request; the answer's cookies are kept (an expired one forgotten).
        @discardableResult func send(
            _ method: String, _ path: String, form: [(String, String)]? = nil, headers: [String] = []
        ) throws -> Answer {
            let curl = try ExternalTool.path("curl")
            var config = "header = \"Host: \(PortalSecondFactorTests.host)\"\n"
            if !cookies.isEmpty {
                let line = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
                config += "header = \"Cookie: \(line)\"\n"
            }
            for header in headers { config += "header = \"\(header)\"\n" }
            let tag = UInt32.random(in: 0...UInt32.max)
            var arguments = ["-s", "-i", "--max-time", "30", "-X", method]
            if let form {
                config += "header = \"Origin: https://\(PortalSecondFactorTests.host)\"\n"
                let body = try session.write("body-\(tag)", PortalSecondFactorTests.encode(form))
                arguments += ["--data-binary", "@" + body]
            }
            let configPath = try session.write("curl-\(tag).cfg", config)
            defer { unlink(configPath) }
            let result = try Integration.run(
                curl, arguments + ["-K", configPath, "http://127.0.0.1:\(port)\(path)"], in: session)
            guard let split = result.stdout.range(of: "\r\n\r\n") else { throw HarnessError("curl: \(result)") }
            let lines = result.stdout[..<split.lowerBound].components(separatedBy: "\r\n")
            let headers = lines.dropFirst().compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let answer = Answer(
                status: Int(lines[0].split(separator: " ")[1]) ?? 0, headers: headers,
                body: String(result.stdout[split.upperBound...]))
            for set in answer.cookies() {
                let pair = set.prefix { $0 != ";" }
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let name = String(pair[..<equals])
                let value = String(pair[pair.index(after: equals)...])
                cookies[name] = set.contains("Max-Age=0") ? nil : value
            }
            if let token = answer.field("csrf") { csrf = token }
            return answer
        }

        /// The sign-in page, then the password.
        func signIn(_ user: String, _ password: String) throws -> Answer {
            try send("GET", "/.credfile/login")
            return try send(
                "POST", "/.credfile/login", form: [("csrf", csrf), ("username", user), ("password", password)])
        }

        /// `POST {prefix}/code`.
        func code(_ code: String) throws -> Answer {
            try send("POST", "/.credfile/code", form: [("csrf", csrf), ("code", code)])
        }
    }

    static func encode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
    }

    /// The current code of a base32 secret, made by pyotp in the peers' venv.
    static func pyotpCode(_ base32: String, offset: Int = 0) throws -> String {
        let script = "import pyotp, sys, time; print(pyotp.TOTP(sys.argv[1]).at(int(time.time()) + int(sys.argv[2])))"
        let result = try ChildProcess.run(
            try ExternalTool.path(ExternalTool.peerPython), ["-c", script, base32, "\(offset)"])
        #expect(result.shellStatus == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// FILE with alice; with `enrolled`, FILE.oath holds her RFC 6238 secret.
    static func files(_ session: CLISession, enrolled: Bool) throws -> String {
        let file = try Integration.makeUserFile(in: session, users: [alice])
        if enrolled {
            let users = "HOTP/T30 alice - \(hexSecret)\n"
            #expect(FileManager.default.createFile(atPath: file + ".oath", contents: Data(users.utf8)))
            chmod(file + ".oath", 0o600)
        }
        return file
    }

    @Test("two steps: the password, then the code page; a wrong code is a wrong password's answer; one attempt each")
    func twoSteps() throws {
        try withSession { session in
            let file = try Self.files(session, enrolled: true)
            let port = try Integration.freePort()
            let service = try IntegrationPortalTests.service(session, file, port: port)
            let password = session.password(Self.alice.1)

            // The answer of a wrong password, to compare with a wrong code's.
            let wrongPassword = Browser(session, port: port)
            let refused = try wrongPassword.signIn("alice", session.password("not-the-password-1"))
            #expect(refused.status == 200 && refused.body.contains("Usuario o contraseña incorrectos."))

            let browser = Browser(session, port: port)
            browser.cookies["__Host-credfile-form"] = wrongPassword.cookies["__Host-credfile-form"]
            let first = try browser.signIn("alice", password)
            #expect(first.status == 303 && first.header("Location") == "/.credfile/code", "\(service.log)")
            #expect(first.cookie("__Host-credfile") == nil, "no session before the code")
            let pending = try #require(first.cookies().first { $0.hasPrefix("__Host-credfile-code=") })
            #expect(pending.hasSuffix("; Path=/; Max-Age=300; Secure; HttpOnly; SameSite=Lax"), "\(pending)")
            let failures = service.log.components(separatedBy: "authentication failure").count - 1
            #expect(failures == 1, "a right password is no failure: \(service.log)")
            #expect(try browser.send("GET", "/.credfile/auth").status == 401)

            let page = try browser.send("GET", "/.credfile/code")
            #expect(page.status == 200 && page.body.contains("autocomplete=\"one-time-code\""))
            #expect(page.body.contains("inputmode=\"numeric\"") && page.body.contains("Código"))
            #expect(page.header("Content-Security-Policy")?.contains("form-action 'self'") == true)

            // A wrong code: the sign-in page exactly as after a wrong password.
            let code = try Self.pyotpCode(Self.base32Secret)
            let wrong = String(code.map { $0 == "9" ? "0" : Character(String(($0.wholeNumberValue ?? 0) + 1)) })
            let wrongCode = try browser.code(wrong)
            #expect(wrongCode.status == refused.status && wrongCode.body == refused.body, "\(wrongCode.body)")
            #expect(wrongCode.cookie("__Host-credfile") == nil)
            service.waitForLog("reason=wrong-code")
            #expect(service.log.contains("user=alice") && service.log.contains("reason=wrong-code"), "\(service.log)")
            // One attempt: the right code on the same pending sign-in is refused too.
            let again = try browser.code(code)
            #expect(again.status == refused.status && again.body.contains("Usuario o contraseña incorrectos."))
            #expect(again.cookie("__Host-credfile") == nil)
            #expect(try browser.send("GET", "/.credfile/code").header("Location") == "/.credfile/login")

            // Password again, then pyotp's code: a session, marked as a second factor's.
            #expect(try browser.signIn("alice", password).status == 303)
            let good = try browser.code(code)
            #expect(good.status == 303 && good.header("Location") == "/.credfile/", "\(service.log)")
            let token = try #require(good.cookie("__Host-credfile"))
            #expect(good.cookies().contains("__Host-credfile-code=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"))
            let auth = try browser.send("GET", "/.credfile/auth")
            #expect(auth.status == 200 && auth.header("Remote-User") == "alice")
            let storage = SQLiteSessionStorage(path: file + ".guard.db")
            let parsed = try #require(SessionToken(cookieValue: Array(token.utf8)))
            let record = try #require(try storage.session(tokenDigest: parsed.digest))
            #expect(record.secondFactor && record.user == "alice")
            let home = try browser.send("GET", "/.credfile/")
            #expect(home.body.contains("id=\"otp-status\">Activado.<"), "\(home.body)")

            // The same code again (a replay), even after a right password: refused.
            let other = Browser(session, port: port)
            #expect(try other.signIn("alice", password).status == 303)
            let replay = try other.code(code)
            #expect(replay.status == 200 && replay.cookie("__Host-credfile") == nil)
            // A POST to the code page without the form's token changes nothing: 403.
            #expect(try other.send("POST", "/.credfile/code", form: [("code", code)]).status == 403)
        }
    }

    @Test(
        "§13's two-factor rule: 200 for a session whose sign-in took a code or a passkey, 403 for a password-only one")
    func twoFactorRule() throws {
        try withSession { session in
            let bob = ("bob", "Mandarina-del-sur-2026")
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, bob])
            let secrets = "HOTP/T30 alice - \(Self.hexSecret)\n"
            #expect(FileManager.default.createFile(atPath: file + ".oath", contents: Data(secrets.utf8)))
            chmod(file + ".oath", 0o600)
            let rules = try session.write("rules", "two-factor host=\(Self.host)\n")
            let port = try Integration.freePort()
            let service = try IntegrationPortalTests.service(
                session, file, port: port, ["--rules", rules, "--trusted-proxy", "127.0.0.1"])
            let original = "X-Original-URL: https://\(Self.host)/vault"

            let withCode = Browser(session, port: port)
            #expect(try withCode.signIn("alice", session.password(Self.alice.1)).status == 303)
            #expect(try withCode.code(try Self.pyotpCode(Self.base32Secret)).status == 303, "\(service.log)")
            let allowed = try withCode.send("GET", "/.credfile/auth", headers: [original])
            #expect(allowed.status == 200 && allowed.header("Remote-User") == "alice", "\(service.log)")

            let passwordOnly = Browser(session, port: port)
            let signedIn = try passwordOnly.signIn("bob", session.password(bob.1))
            #expect(signedIn.status == 303 && signedIn.cookie("__Host-credfile") != nil, "\(service.log)")
            let refused = try passwordOnly.send("GET", "/.credfile/auth", headers: [original])
            #expect(refused.status == 403 && refused.header("Remote-User") == nil)

            // A passkey's session (its sign-in verified the user on the device) passes too.
            let sessions = try PortalSessions(
                storage: SQLiteSessionStorage(path: file + ".guard.db"), limits: SessionLimits())
            let store = CredentialStore(path: file)
            let line = try #require(try store.entryLine(named: "bob"))
            let token = try sessions.start(user: "bob", line: line, now: Int64(time(nil)), passkey: true)
            let withPasskey = Browser(session, port: port)
            withPasskey.cookies["__Host-credfile"] = token.cookieValue
            let passkeyAllowed = try withPasskey.send("GET", "/.credfile/auth", headers: [original])
            #expect(passkeyAllowed.status == 200 && passkeyAllowed.header("Remote-User") == "bob", "\(service.log)")
        }
    }

    @Test("a user without a second factor signs in with the password alone; a Basic login of one who has is denied")
    func oneStepAndBasic() throws {
        try withSession { session in
            let file = try Self.files(session, enrolled: true)
            let bob = ("bob", "Mandarina-del-sur-2026")
            var store = CredentialStore(path: file, policy: try HashPolicy(rounds: Integration.rounds))
            store.passwordPolicy = .permissive
            try store.register(username: bob.0, password: Password(session.password(bob.1)), storage: .hashed)
            let port = try Integration.freePort()
            let service = try IntegrationPortalTests.service(session, file, port: port)
            let browser = Browser(session, port: port)
            let signed = try browser.signIn("bob", session.password(bob.1))
            #expect(signed.status == 303 && signed.cookie("__Host-credfile") != nil, "\(service.log)")
            let basic = "Basic " + Data("alice:\(session.password(Self.alice.1))".utf8).base64EncodedString()
            let denied = try Browser(session, port: port).send(
                "GET", "/.credfile/auth", headers: ["Authorization: \(basic)"])
            #expect(denied.status == 401)
            service.waitForLog("reason=second-factor-required")
            #expect(service.log.contains("reason=second-factor-required"), "\(service.log)")
        }
    }

    @Test("Basic with otp-append: the password and pyotp's code in one, accepted once (nginx auth_request's path)")
    func basicWithAppendedCode() throws {
        try withSession { session in
            let file = try Self.files(session, enrolled: true)
            let port = try Integration.freePort()
            let service = try IntegrationServeTests.Service(
                session, file: file, listen: "127.0.0.1:\(port)", ["--otp-append", "--log", "stderr"])
            let url = "http://127.0.0.1:\(port)/auth"
            let password = session.password(Self.alice.1)
            let code = try Self.pyotpCode(Self.base32Secret)
            #expect(try IntegrationServeTests.ask(session, url, user: ("alice", password)).status == "401")
            let good = try IntegrationServeTests.ask(session, url, user: ("alice", password + code))
            #expect(good.status == "200" && good.header("X-Credfile-User") == "alice", "\(service.log)")
            // A browser resends the same header with every request: serve's cache of good
            // logins lets it in again (Decisions §14), a fresh check never does.
            let repeated = try IntegrationServeTests.ask(session, url, user: ("alice", password + code))
            #expect(repeated.status == "200", "\(service.log)")
            let uncachedPort = try Integration.freePort()
            let uncached = try IntegrationServeTests.Service(
                session, file: file, listen: "127.0.0.1:\(uncachedPort)",
                ["--otp-append", "--cache-seconds", "0", "--log", "stderr"])
            let replay = try IntegrationServeTests.ask(
                session, "http://127.0.0.1:\(uncachedPort)/auth", user: ("alice", password + code))
            #expect(replay.status == "401", "\(uncached.log)")
            #expect(uncached.log.contains("reason=wrong-code"), "\(uncached.log)")
        }
    }

    @Test("enrolment on {prefix}/: an inline SVG QR code and the key once; saved (0600) only with pyotp's good code")
    func enrolment() throws {
        try withSession { session in
            let file = try Self.files(session, enrolled: false)
            let port = try Integration.freePort()
            let service = try IntegrationPortalTests.service(session, file, port: port)
            let password = session.password(Self.alice.1)
            let browser = Browser(session, port: port)
            #expect(try browser.signIn("alice", password).status == 303, "\(service.log)")
            let home = try browser.send("GET", "/.credfile/")
            #expect(home.body.contains("id=\"otp-enroll\"") && home.body.contains("No activado."), "\(home.body)")
            // Without the form's token: 403, nothing offered.
            #expect(try browser.send("POST", "/.credfile/otp", form: [("csrf", "x")]).status == 403)

            let offer = try browser.send("POST", "/.credfile/otp", form: [("csrf", browser.csrf)])
            #expect(offer.status == 200 && offer.body.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
            #expect(offer.body.contains("<path fill=\"#000\" d=\"M"))
            #expect(offer.header("Cache-Control") == "no-store")
            let keyStart = try #require(offer.body.range(of: "<code id=\"otp-key\">"))
            let key = String(offer.body[keyStart.upperBound...].prefix { $0 != "<" })
            #expect(key.count == 32, "20 bytes in base32: \(key)")
            let sealed = try #require(offer.field("offer"))

            let code = try Self.pyotpCode(key)
            let wrong = String(code.reversed()) == code ? "000000" : String(code.reversed())
            let refused = try browser.send(
                "POST", "/.credfile/otp", form: [("csrf", browser.csrf), ("offer", sealed), ("code", wrong)])
            #expect(refused.status == 200 && refused.body.contains("Código incorrecto."))
            #expect(access(file + ".oath", F_OK) != 0, "nothing saved after a wrong code")
            // A sealed offer altered (another secret) is not saved either.
            var parts = sealed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            parts[1] = (parts[1].first == "0" ? "1" : "0") + parts[1].dropFirst()
            let other = try browser.send(
                "POST", "/.credfile/otp",
                form: [("csrf", browser.csrf), ("offer", parts.joined(separator: ".")), ("code", code)])
            #expect(other.status == 303 && access(file + ".oath", F_OK) != 0)

            let saved = try browser.send(
                "POST", "/.credfile/otp", form: [("csrf", browser.csrf), ("offer", sealed), ("code", code)])
            #expect(saved.status == 303 && saved.header("Location") == "/.credfile/", "\(service.log)")
            var status = stat()
            #expect(stat(file + ".oath", &status) == 0 && status.st_mode & 0o777 == 0o600)
            let users = try String(contentsOfFile: file + ".oath", encoding: .utf8)
            #expect(users.hasPrefix("HOTP/T30 alice - ") && !users.contains(key))
            #expect(try browser.send("GET", "/.credfile/").body.contains("Activado."))
            #expect(!service.log.contains(key), "the secret is never logged")

            // The next sign-in asks for the code; the one typed at enrolment is used.
            let next = Browser(session, port: port)
            #expect(try next.signIn("alice", password).header("Location") == "/.credfile/code")
            #expect(try next.code(code).status == 200)
        }
    }
}
