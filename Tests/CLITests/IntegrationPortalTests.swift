import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// `credfile serve --portal` (SPEC §11) as a browser and a web server meet it: the built
/// binary on a loopback port in a private directory, stopped by PID, asked over plain
/// HTTP/1.1 by a small client of this file (every header and the body exactly as sent;
/// the web server in front terminates TLS, so `Secure` cookies travel here in headers).
@Suite(.serialized) struct IntegrationPortalTests {
    static let alice = ("alice", "Naranjo-en-flor-2026")
    static let host = "app.example.test"

    /// One HTTP answer.
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: String

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        func all(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }

        /// The value a `Set-Cookie` gives `name`, if any.
        func cookie(_ name: String) -> String? {
            for line in all("Set-Cookie") where line.hasPrefix(name + "=") {
                return String(line.dropFirst(name.count + 1).prefix { $0 != ";" })
            }
            return nil
        }
    }

    /// Sends one request on a new connection (`Connection: close`) and reads the answer.
    static func send(
        _ port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil
    ) throws -> Answer {
        guard let fd = Integration.connectToLoopback(port) else {
            throw HarnessError.system("connect", "127.0.0.1:\(port)")
        }
        defer { close(fd) }
        var text = "\(method) \(target) HTTP/1.1\r\nConnection: close\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { text += "Host: \(host)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body {
            text += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n"
        }
        text += "\r\n" + (body ?? "")
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { throw HarnessError.system("write") }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        let answer = String(decoding: received, as: UTF8.self)
        guard let split = answer.range(of: "\r\n\r\n") else { throw HarnessError("no HTTP answer: \(answer)") }
        let lines = answer[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        let fields = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Answer(status: status, headers: fields, body: String(answer[split.upperBound...]))
    }

    /// A form body, percent-encoded.
    static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
    }

    /// A browser's state: its pre-session cookie and the form's token, from the sign-in page.
    struct Browser {
        let port: Int
        var preSession = ""
        var csrf = ""
        var session: String?
        var device: String?

        var cookie: String {
            "__Host-credfile-form=\(preSession)" + (session.map { "; __Host-credfile=\($0)" } ?? "")
                + (device.map { "; __Host-credfile-device=\($0)" } ?? "")
        }

        /// `GET {prefix}/login`: the pre-session cookie and the form's token.
        mutating func open(_ query: String = "") throws -> Answer {
            let page = try IntegrationPortalTests.send(port, "GET", "/.credfile/login" + query)
            preSession = try #require(page.cookie("__Host-credfile-form"))
            let marker = try #require(page.body.range(of: "name=\"csrf\" value=\""))
            csrf = String(page.body[marker.upperBound...].prefix { $0 != "\"" })
            return page
        }

        /// `POST {prefix}/login` from the own origin.
        mutating func signIn(
            _ user: String, _ password: String, rd: String? = nil, from client: String? = nil
        ) throws -> Answer {
            var fields = [("csrf", csrf), ("username", user), ("password", password)]
            if let rd { fields.append(("rd", rd)) }
            let answer = try IntegrationPortalTests.send(
                port, "POST", "/.credfile/login",
                headers: [("Origin", "https://\(IntegrationPortalTests.host)"), ("Cookie", cookie)]
                    + (client.map { [("X-Forwarded-For", $0)] } ?? []),
                body: IntegrationPortalTests.form(fields))
            if let token = answer.cookie("__Host-credfile") { session = token }
            if let token = answer.cookie("__Host-credfile-device") { device = token }
            return answer
        }

        /// `GET {prefix}/auth` with the session cookie.
        func auth() throws -> Answer {
            try IntegrationPortalTests.send(port, "GET", "/.credfile/auth", headers: [("Cookie", cookie)])
        }
    }

    static func service(
        _ session: CLISession, _ file: String, port: Int, _ extra: [String] = []
    ) throws -> IntegrationServeTests.Service {
        try IntegrationServeTests.Service(
            session, file: file, listen: "127.0.0.1:\(port)", ["--portal", "--log", "stderr"] + extra)
    }

    @Test(
        "sign in: 303 to rd with the session cookie's attributes exactly; /auth with it: 200 and the headers upstream")
    func signInAndAuth() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port)
            var browser = Browser(port: port)
            let page = try browser.open("?rd=%2Fapp%3Fx%3D1")
            #expect(page.status == 200)
            #expect(page.body.contains("Iniciar sesión") && page.body.contains("autocomplete=\"current-password\""))
            #expect(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.header("Referrer-Policy") == "same-origin")
            #expect(page.header("Cache-Control") == "no-store")
            #expect(try browser.auth().status == 401)

            let good = try browser.signIn("alice", session.password(Self.alice.1), rd: "/app?x=1")
            #expect(good.status == 303, "\(service.log)")
            #expect(good.header("Location") == "/app?x=1")
            let set = try #require(good.all("Set-Cookie").first { $0.hasPrefix("__Host-credfile=") })
            let token = try #require(browser.session)
            #expect(set == "__Host-credfile=\(token); Path=/; Secure; HttpOnly; SameSite=Lax")
            #expect(token.count == 43)

            let auth = try browser.auth()
            #expect(auth.status == 200)
            #expect(auth.header("Remote-User") == "alice")
            #expect(auth.header("X-Credfile-User") == "alice")
            let home = try Self.send(port, "GET", "/.credfile/", headers: [("Cookie", browser.cookie)])
            #expect(home.status == 200 && home.body.contains("✅ Acceso permitido") && home.body.contains("alice"))
            let english = try Self.send(
                port, "GET", "/.credfile/", headers: [("Cookie", browser.cookie), ("Accept-Language", "en-GB")])
            #expect(english.body.contains("✅ Access granted"))
            let css = try Self.send(port, "GET", "/.credfile/style.css")
            #expect(css.status == 200 && css.header("Content-Type")?.hasPrefix("text/css") == true)

            // A new token at every sign-in.
            let first = token
            #expect(try browser.signIn("alice", Self.alice.1).status == 303)
            #expect(browser.session != first)
            // Basic beside sessions.
            let basic = Data("alice:\(Self.alice.1)".utf8).base64EncodedString()
            let viaBasic = try Self.send(port, "GET", "/.credfile/auth", headers: [("Authorization", "Basic \(basic)")])
            #expect(viaBasic.status == 200 && viaBasic.header("Remote-User") == "alice")
            // Not signed in: the signed-in page sends to the sign-in page.
            #expect(try Self.send(port, "GET", "/.credfile/").header("Location") == "/.credfile/login")
        }
    }

    @Test("every denial: the same status and body; a forged POST (no token, foreign Origin) is 403 and starts nothing")
    func denialsAndForgery() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port)
            var browser = Browser(port: port)
            _ = try browser.open()
            let wrong = try browser.signIn("alice", session.password("not-the-password-1"))
            let unknown = try browser.signIn("alice", session.password("another-wrong-one-2"))
            #expect(wrong.status == 200 && wrong.body.contains("Usuario o contraseña incorrectos."), "\(service.log)")
            #expect(wrong.cookie("__Host-credfile") == nil)
            #expect(wrong.status == unknown.status && wrong.body == unknown.body)
            var stranger = browser
            let nobody = try stranger.signIn("nobody", "not-the-password-1")
            #expect(nobody.status == wrong.status)
            #expect(
                nobody.body.replacingOccurrences(of: "value=\"nobody\"", with: "value=\"alice\"") == wrong.body)

            // Forged: a foreign Origin, or no token, or another browser's token.
            let body = Self.form([("csrf", browser.csrf), ("username", "alice"), ("password", Self.alice.1)])
            let foreign = try Self.send(
                port, "POST", "/.credfile/login",
                headers: [("Origin", "https://evil.example.net"), ("Cookie", browser.cookie)], body: body)
            #expect(foreign.status == 403 && foreign.cookie("__Host-credfile") == nil)
            let noToken = try Self.send(
                port, "POST", "/.credfile/login",
                headers: [("Origin", "https://\(Self.host)"), ("Cookie", browser.cookie)],
                body: Self.form([("username", "alice"), ("password", Self.alice.1)]))
            #expect(noToken.status == 403 && noToken.cookie("__Host-credfile") == nil)
            var other = Browser(port: port)
            _ = try other.open()
            let swapped = try Self.send(
                port, "POST", "/.credfile/login",
                headers: [("Origin", "https://\(Self.host)"), ("Cookie", other.cookie)], body: body)
            #expect(swapped.status == 403)
            let noOrigin = try Self.send(
                port, "POST", "/.credfile/login", headers: [("Cookie", browser.cookie)], body: body)
            #expect(noOrigin.status == 403)
            let storage = SQLiteSessionStorage(path: file + ".guard.db")
            #expect(try storage.sessions(user: nil).isEmpty)
            // A forged sign-out ends nothing.
            #expect(try browser.signIn("alice", Self.alice.1).status == 303)
            #expect(try storage.sessions(user: "alice").count == 1)  // the database the service writes
            let forgedOut = try Self.send(
                port, "POST", "/.credfile/logout",
                headers: [("Origin", "https://evil.example.net"), ("Cookie", browser.cookie)],
                body: Self.form([("csrf", browser.csrf)]))
            #expect(forgedOut.status == 403)
            #expect(try browser.auth().status == 200)
        }
    }

    @Test("rd: only the own host or a path over https; every open-redirect shape ends at {prefix}/")
    func openRedirects() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port)
            var browser = Browser(port: port)
            _ = try browser.open()
            for rd in [
                "https://evil.example.net/", "//evil.example.net/", "/\\evil.example.net", "javascript:alert(1)",
                "http://\(Self.host)/", "https://\(Self.host)@evil.example.net/",
                "https://evil.example.net\\@\(Self.host)/",
                "/app\u{0}x", "https://\(Self.host).evil.net/",
            ] {
                let answer = try browser.signIn("alice", Self.alice.1, rd: rd)
                #expect(answer.status == 303 && answer.header("Location") == "/.credfile/", "\(rd)")
            }
            let own = try browser.signIn("alice", Self.alice.1, rd: "https://\(Self.host)/docs?p=1")
            #expect(own.header("Location") == "https://\(Self.host)/docs?p=1")
            withExtendedLifetime(service) {}
        }
    }

    @Test("/forward-auth: 302 to the sign-in page with the original URL for a browser, 401 otherwise")
    func forwardAuth() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port, ["--trusted-proxy", "127.0.0.1"])
            let forwarded = [
                ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", Self.host), ("X-Forwarded-Uri", "/app/page?q=1"),
            ]
            let browser = try Self.send(
                port, "GET", "/.credfile/forward-auth",
                headers: [("Accept", "text/html,application/xhtml+xml")] + forwarded)
            #expect(browser.status == 302)
            #expect(
                browser.header("Location")
                    == "/.credfile/login?rd=https%3A%2F%2Fapp.example.test%2Fapp%2Fpage%3Fq%3D1")
            let script = try Self.send(port, "GET", "/.credfile/forward-auth", headers: [("Accept", "*/*")] + forwarded)
            #expect(script.status == 401)
            #expect(try Self.send(port, "GET", "/.credfile/auth", headers: [("Accept", "text/html")]).status == 401)
            // The sign-in page follows that rd back to the own host.
            var signIn = Browser(port: port)
            _ = try signIn.open("?rd=https%3A%2F%2Fapp.example.test%2Fapp%2Fpage%3Fq%3D1")
            let done = try signIn.signIn("alice", Self.alice.1, rd: "https://app.example.test/app/page?q=1")
            #expect(done.header("Location") == "https://app.example.test/app/page?q=1")
            withExtendedLifetime(service) {}
        }
    }

    @Test("sign-out ends the session on the server; passwd ends it; session-idle; a restart keeps sessions")
    func sessionEnds() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            var service: IntegrationServeTests.Service? = try Self.service(session, file, port: port)
            var browser = Browser(port: port)
            _ = try browser.open()
            #expect(try browser.signIn("alice", Self.alice.1).status == 303)
            let old = browser
            // Sign-out: 303 to the sign-in page, the cookie expired, the old cookie refused.
            let out = try Self.send(
                port, "POST", "/.credfile/logout",
                headers: [("Origin", "https://\(Self.host)"), ("Cookie", browser.cookie)],
                body: Self.form([("csrf", browser.csrf)]))
            #expect(out.status == 303 && out.header("Location") == "/.credfile/login")
            #expect(
                out.all("Set-Cookie").contains("__Host-credfile=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"))
            #expect(try old.auth().status == 401)

            // Sign out everywhere.
            var second = Browser(port: port)
            _ = try second.open()
            #expect(try browser.signIn("alice", Self.alice.1).status == 303)
            #expect(try second.signIn("alice", Self.alice.1).status == 303)
            let everywhere = try Self.send(
                port, "POST", "/.credfile/logout?everywhere",
                headers: [("Origin", "https://\(Self.host)"), ("Cookie", second.cookie)],
                body: Self.form([("csrf", second.csrf)]))
            #expect(everywhere.status == 303)
            #expect(try browser.auth().status == 401 && second.auth().status == 401)

            // A restart keeps the session.
            #expect(try browser.signIn("alice", Self.alice.1).status == 303)
            service = nil
            service = try Self.service(session, file, port: port)
            #expect(try browser.auth().status == 200, "\(service?.log ?? "")")

            // `credfile passwd` changes alice's line: her session ends at its next request.
            let passwd = session.run(
                ["passwd", file, "alice", "--iterations", "1000"], stdin: [session.password("Olive-Compass-Lantern-9")])
            #expect(passwd.status == 0)
            #expect(try browser.auth().status == 401)
            _ = service
        }
    }

    @Test("session-idle: a session unused for session-idle seconds ends")
    func idleExpiry() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port, ["--session-idle", "1"])
            var browser = Browser(port: port)
            _ = try browser.open()
            #expect(try browser.signIn("alice", Self.alice.1).status == 303)
            sleep(2)
            #expect(try browser.auth().status == 401)
            withExtendedLifetime(service) {}
        }
    }

    @Test(
        "keys in the configuration file: cookie-domain's __Secure-credfile cookie and rd under it, basic = no, session-max"
    )
    func configurationKeys() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let config = session.path("credfile.conf")
            try writeBytes(
                config,
                Array(
                    "portal = yes\ncookie-domain = example.test\nbasic = no\nsession-max = 2\nportal-path = /auth-portal/\nportal-title = Intranet\nlang = en\n"
                        .utf8), mode: 0o644)
            let service = try IntegrationServeTests.Service(
                session, file: file, listen: "127.0.0.1:\(port)", ["--config", config, "--log", "stderr"])
            let page = try Self.send(port, "GET", "/auth-portal/login")
            #expect(page.status == 200, "\(service.log)")
            #expect(
                page.body.contains("Intranet") && page.body.contains("Sign in")
                    && page.body.contains("/auth-portal/login"))
            let preSession = try #require(page.cookie("__Host-credfile-form"))
            let marker = try #require(page.body.range(of: "name=\"csrf\" value=\""))
            let csrf = String(page.body[marker.upperBound...].prefix { $0 != "\"" })
            let answer = try Self.send(
                port, "POST", "/auth-portal/login",
                headers: [("Origin", "https://\(Self.host)"), ("Cookie", "__Host-credfile-form=\(preSession)")],
                body: Self.form([
                    ("csrf", csrf), ("username", "alice"), ("password", Self.alice.1),
                    ("rd", "https://wiki.example.test/start"),
                ]))
            #expect(answer.status == 303, "\(service.log)")
            #expect(answer.header("Location") == "https://wiki.example.test/start")
            let token = try #require(answer.cookie("__Secure-credfile"))
            #expect(
                answer.all("Set-Cookie").contains(
                    "__Secure-credfile=\(token); Domain=example.test; Path=/; Secure; HttpOnly; SameSite=Lax"))
            #expect(answer.cookie("__Host-credfile") == nil)
            let auth = try Self.send(
                port, "GET", "/auth-portal/auth", headers: [("Cookie", "__Secure-credfile=\(token)")])
            #expect(auth.status == 200 && auth.header("Remote-User") == "alice")
            // basic = no: a good Basic login is not read, and the 401 has no challenge.
            let basic = Data("alice:\(Self.alice.1)".utf8).base64EncodedString()
            let viaBasic = try Self.send(
                port, "GET", "/auth-portal/auth", headers: [("Authorization", "Basic \(basic)")])
            #expect(viaBasic.status == 401 && viaBasic.header("WWW-Authenticate") == nil)
            // credfile sessions lists it (no token), then session-max ends it whatever its use.
            let listed = session.run(["sessions", file, "alice"])
            #expect(listed.status == 0 && listed.stdout.contains("alice") && !listed.stdout.contains(token))
            sleep(3)
            #expect(
                try Self.send(port, "GET", "/auth-portal/auth", headers: [("Cookie", "__Secure-credfile=\(token)")])
                    .status == 401)
        }
    }

    @Test("credfile sessions FILE USER --end ends a served session at its next request")
    func sessionsEnd() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port)
            var browser = Browser(port: port)
            _ = try browser.open()
            #expect(try browser.signIn("alice", Self.alice.1).status == 303)
            #expect(try browser.auth().status == 200)
            #expect(session.run(["sessions", file, "alice", "--end"]).status == 0)
            #expect(try browser.auth().status == 401, "\(service.log)")
        }
    }

    @Test("address-free-failures: failures under made-up names slow their address, not the owner's elsewhere")
    func addressThrottle() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(
                session, file, port: port, ["--address-free-failures", "3", "--trusted-proxy", "127.0.0.1"])
            // The attacker's address then waits 1 s: a right password sent within it is denied
            // unchecked. A loaded machine may take longer than that between two requests, which
            // proves nothing either way, so such a round is repeated from a fresh address.
            var decided = false
            for address in ["203.0.113.9", "203.0.113.10", "203.0.113.11"] where !decided {
                var attacker = Browser(port: port)
                _ = try attacker.open()
                for index in 0..<3 {
                    let denied = try attacker.signIn("made-up-\(index)", "guess-\(index)", from: address)
                    #expect(denied.status == 200 && denied.body.contains("Usuario o contraseña incorrectos."))
                }
                let sent = ContinuousClock.now
                let blocked = try attacker.signIn("alice", Self.alice.1, from: address)
                guard ContinuousClock.now - sent < .milliseconds(800) else { continue }
                decided = true
                #expect(blocked.status == 200 && blocked.cookie("__Host-credfile") == nil, "\(service.log)")
                #expect(service.log.contains("denied unchecked"))
            }
            #expect(decided, "no round answered within 0.8 s: the throttle was not observed")
            // The owner, from her own address, signs in at once: neither her name nor her address was touched.
            var owner = Browser(port: port)
            _ = try owner.open()
            #expect(try owner.signIn("alice", Self.alice.1, from: "198.51.100.7").status == 303)
        }
    }

    @Test(
        "known devices: the owner signs in while her name is locked out; a wrong device cookie is ignored; failures under one lock that device only"
    )
    func knownDevices() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(
                session, file, port: port,
                [
                    "--free-failures", "100", "--max-failures", "100", "--max-delay", "0", "--cache-seconds", "0",
                    "--address-free-failures", "1000", "--trusted-proxy", "127.0.0.1",
                ])
            var owner = Browser(port: port)
            _ = try owner.open()
            let first = try owner.signIn("alice", Self.alice.1, from: "198.51.100.7")
            #expect(first.status == 303, "\(service.log)")
            let set = try #require(first.all("Set-Cookie").first { $0.hasPrefix("__Host-credfile-device=") })
            let device = try #require(owner.device)
            #expect(
                set == "__Host-credfile-device=\(device); Path=/; Max-Age=31536000; Secure; HttpOnly; SameSite=Strict")
            #expect(device != owner.session)
            // A session cookie's value is no device cookie, and a device cookie opens no session.
            let deviceAsSession = try Self.send(
                port, "GET", "/.credfile/auth", headers: [("Cookie", "__Host-credfile=\(device)")])
            #expect(deviceAsSession.status == 401)

            // 100 failures from another address lock the name out.
            var attacker = Browser(port: port)
            _ = try attacker.open()
            for _ in 0..<100 { _ = try attacker.signIn("alice", "guess", from: "203.0.113.9") }
            var stranger = Browser(port: port)
            _ = try stranger.open()
            #expect(try stranger.signIn("alice", Self.alice.1, from: "198.51.100.8").status == 200)
            #expect(service.log.contains("reason=locked-out"))
            // The owner's browser, with its device cookie, is not shut out.
            #expect(try owner.signIn("alice", Self.alice.1, from: "198.51.100.7").status == 303, "\(service.log)")
            // A stolen-but-wrong cookie is ignored: one with a bad MAC, and one cut short.
            for wrong in [String(device.dropLast()) + (device.last == "A" ? "B" : "A"), String(device.dropLast(4))] {
                var thief = Browser(port: port)
                _ = try thief.open()
                thief.device = wrong
                #expect(try thief.signIn("alice", Self.alice.1, from: "198.51.100.9").status == 200)
            }
            // Failures under a device cookie lock that device; nothing else is unlocked.
            var stolen = Browser(port: port)
            _ = try stolen.open()
            stolen.device = device
            for _ in 0..<100 { _ = try stolen.signIn("alice", "guess", from: "203.0.113.10") }
            #expect(try stolen.signIn("alice", Self.alice.1, from: "203.0.113.10").status == 200)
            #expect(try stranger.signIn("alice", Self.alice.1, from: "198.51.100.8").status == 200)
            // `credfile unlock` clears the name and its devices.
            #expect(session.run(["unlock", file, "alice"]).status == 0)
            #expect(try stranger.signIn("alice", Self.alice.1, from: "198.51.100.8").status == 303, "\(service.log)")
        }
    }

}
