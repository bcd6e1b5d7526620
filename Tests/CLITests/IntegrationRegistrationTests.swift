import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// SPEC §12 through a real `credfile serve --portal --register …` on a loopback port, asked
/// as a browser asks (the raw HTTP client of ``IntegrationPortalTests``): the seed's Register
/// screen, invitations, the hourly limits, the password change, and 50 sign-ups at once.
@Suite(.serialized) struct IntegrationRegistrationTests {
    typealias Portal = IntegrationPortalTests
    static let alice = ("alice", "Naranjo-en-flor-2026")
    static let origin = ("Origin", "https://\(IntegrationPortalTests.host)")

    /// `POST {prefix}/register` from the own origin; the session cookie, when one is set, is kept.
    static func register(
        _ browser: inout Portal.Browser, _ user: String, _ password: String, code: String? = nil, rd: String? = nil,
        from client: String? = nil
    ) throws -> Portal.Answer {
        var fields = [("csrf", browser.csrf), ("username", user), ("password", password)]
        if let code { fields.append(("code", code)) }
        if let rd { fields.append(("rd", rd)) }
        let answer = try Portal.send(
            browser.port, "POST", "/.credfile/register",
            headers: [origin, ("Cookie", browser.cookie)] + (client.map { [("X-Forwarded-For", $0)] } ?? []),
            body: Portal.form(fields))
        if let token = answer.cookie("__Host-credfile") { browser.session = token }
        return answer
    }

    /// `POST {prefix}/password` from the own origin.
    static func changePassword(_ browser: inout Portal.Browser, current: String, new: String) throws -> Portal.Answer {
        let answer = try Portal.send(
            browser.port, "POST", "/.credfile/password", headers: [origin, ("Cookie", browser.cookie)],
            body: Portal.form([("csrf", browser.csrf), ("current", current), ("new", new)]))
        if let token = answer.cookie("__Host-credfile") { browser.session = token }
        return answer
    }

    /// New invitation codes from `credfile invite FILE` (in-process, as an admin runs it).
    static func invite(_ session: CLISession, _ file: String, _ extra: [String] = []) throws -> [String] {
        let result = session.run(["invite", file] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// The names of FILE's entries, in order.
    static func names(_ file: String) throws -> [String] {
        String(decoding: try readBytes(file), as: UTF8.self).split(separator: "\n")
            .map { String($0.prefix { $0 != "," }) }
    }

    @Test("the seed's five steps: sign in, Registrarse, register, a taken name refused, signed in at once")
    func seedFiveSteps() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(session, file, port: port, ["--register", "yes"])
            // 1. The sign-in page works with an existing account.
            var browser = Portal.Browser(port: port)
            let login = try browser.open("?rd=%2Fapp")
            #expect(try browser.signIn("alice", session.password(Self.alice.1)).status == 303, "\(service.log)")
            // 2. "Registrarse" under the sign-in button leads to the register page.
            #expect(login.body.contains("<a href=\"/.credfile/register?rd=%2Fapp\">Registrarse</a>"))
            var newcomer = Portal.Browser(port: port)
            _ = try newcomer.open()
            let page = try Portal.send(port, "GET", "/.credfile/register", headers: [("Cookie", newcomer.cookie)])
            #expect(page.status == 200 && page.body.contains("<h1>Registro</h1>"))
            #expect(
                page.body.contains("autocomplete=\"username\"") && page.body.contains("autocomplete=\"new-password\""))
            #expect(page.body.contains("<label for=\"username\">Usuario</label>"))
            #expect(page.body.contains("<label for=\"password\">Contraseña</label>"))
            #expect(
                page.body.contains("class=\"register\">Registrarse</button>") && !page.body.contains("name=\"code\""))
            #expect(page.header("Content-Security-Policy")?.contains("form-action 'self'") == true)
            // 3. Registering: the entry hashed by the policy, a session at once, 303 to rd.
            let password = session.password("naranjo-en-flor-2026")
            let made = try Self.register(&newcomer, "valencia", password, rd: "/app")
            #expect(made.status == 303 && made.header("Location") == "/app", "\(service.log) \(made.body)")
            let line = try #require(String(decoding: try readBytes(file), as: UTF8.self).split(separator: "\n").last)
            #expect(line.hasPrefix("valencia,$pbkdf2-sha256$\(Integration.rounds)$"))
            // 5. Signed in at once: the session opens the protected site.
            let auth = try newcomer.auth()
            #expect(auth.status == 200 && auth.header("Remote-User") == "valencia")
            // 4. The same name again: "El usuario ya existe.", nothing written.
            let before = try readBytes(file)
            var other = Portal.Browser(port: port)
            _ = try other.open()
            let again = try Self.register(&other, "valencia", session.password("otra-clave-larga-2026"))
            #expect(again.status == 200 && again.body.contains("El usuario ya existe."))
            #expect(try again.cookie("__Host-credfile") == nil && (try readBytes(file)) == before)
            // ... and the new account signs in with the form as any other.
            var later = Portal.Browser(port: port)
            _ = try later.open()
            #expect(try later.signIn("valencia", password).status == 303)
        }
    }

    @Test("the command line's rules and messages: §2 names, §8 reasons, empty fields; English too")
    func rulesAndMessages() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(session, file, port: port, ["--register", "yes"])
            var browser = Portal.Browser(port: port)
            _ = try browser.open()
            let before = try readBytes(file)
            let short = try Self.register(&browser, "bruno", "corta")
            #expect(short.body.contains("contraseña rechazada: debe tener al menos 15 caracteres"), "\(service.log)")
            let named = try Self.register(&browser, "bruno", "bruno-bruno-bruno-2026")
            #expect(named.body.contains("contraseña rechazada: contiene el nombre de usuario"))
            let common = try Self.register(&browser, "bruno", "1Q2w3E4r5T6y7U8i9O0p")
            #expect(common.body.contains("contraseña rechazada: está en la lista de contraseñas de uso común"))
            let comma = try Self.register(&browser, "a,b", "naranjo-en-flor-2026")
            #expect(comma.body.contains("el nombre de usuario contiene una coma"))
            let hash = try Self.register(&browser, "#root", "naranjo-en-flor-2026")
            #expect(hash.body.contains("empieza por &#39;#&#39;"))
            let empty = try Self.register(&browser, "", "naranjo-en-flor-2026")
            #expect(empty.body.contains("Usuario y contraseña no pueden estar vacíos."))
            let english = try Portal.send(
                port, "POST", "/.credfile/register",
                headers: [Self.origin, ("Cookie", browser.cookie), ("Accept-Language", "en")],
                body: Portal.form([("csrf", browser.csrf), ("username", "alice"), ("password", "naranjo-en-flor-2026")])
            )
            #expect(english.body.contains("The user already exists."))
            #expect(try readBytes(file) == before)
            // A forged POST (no token) is 403 and writes nothing.
            let forged = try Portal.send(
                port, "POST", "/.credfile/register", headers: [Self.origin, ("Cookie", browser.cookie)],
                body: Portal.form([("username", "mallory"), ("password", "naranjo-en-flor-2026")]))
            #expect(try forged.status == 403 && (try readBytes(file)) == before)
        }
    }

    @Test("register = no (the default): no page, no link; invite: the page asks for the code")
    func modes() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            do {
                let service = try Portal.service(session, file, port: port)
                var browser = Portal.Browser(port: port)
                let login = try browser.open()
                #expect(!login.body.contains("/register"), "\(service.log)")
                #expect(try Portal.send(port, "GET", "/.credfile/register").status == 404)
                let post = try Self.register(&browser, "bruno", "naranjo-en-flor-2026")
                #expect(try post.status == 404 && (try Self.names(file)) == ["alice"])
            }
            let invitePort = try Integration.freePort()
            let service = try Portal.service(session, file, port: invitePort, ["--register", "invite"])
            var browser = Portal.Browser(port: invitePort)
            #expect(try browser.open().body.contains("/.credfile/register"))
            let page = try Portal.send(invitePort, "GET", "/.credfile/register", headers: [("Cookie", browser.cookie)])
            #expect(page.body.contains("<label for=\"code\">Código de invitación</label>"), "\(service.log)")
            let none = try Self.register(&browser, "bruno", "naranjo-en-flor-2026")
            #expect(
                try none.body.contains("El código de invitación no es válido.") && (try Self.names(file)) == ["alice"])
        }
    }

    @Test("codes: single use, bound to a name, revoked, expired, wrong: one answer whatever the name")
    func invitations() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(session, file, port: port, ["--register", "invite"])
            let codes = try Self.invite(session, file, ["--count", "3"])
            #expect(codes.count == 3)
            for code in codes {
                #expect(
                    code.range(of: #"^([0-9A-HJKMNP-TV-Z]{4}-){5}[0-9A-HJKMNP-TV-Z]{4}$"#, options: .regularExpression)
                        != nil)
            }
            let password = "naranjo-en-flor-2026"
            var browser = Portal.Browser(port: port)
            _ = try browser.open()
            // Typed in lower case with spaces: still the code.
            let typed = codes[0].lowercased().replacingOccurrences(of: "-", with: " ")
            #expect(try Self.register(&browser, "bruno", password, code: typed).status == 303, "\(service.log)")
            #expect(try browser.auth().header("Remote-User") == "bruno")

            // The same answer for every refused code, whatever the name (taken, free, invalid).
            var answers: [Portal.Answer] = []
            func refused(_ user: String, _ code: String) throws {
                var stranger = Portal.Browser(port: port)
                stranger.preSession = browser.preSession
                stranger.csrf = browser.csrf
                answers.append(try Self.register(&stranger, user, password, code: code))
            }
            let wrong = "ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ"
            for user in ["alice", "carla", "bruno", "x,y"] {
                try refused(user, codes[0])  // used
                try refused(user, wrong)  // wrong
                try refused(user, "not a code")  // not even a code
            }
            let revoked = session.run(["invite", file, "--revoke", "2"])
            #expect(revoked.status == 0)
            for user in ["alice", "carla"] { try refused(user, codes[1]) }  // revoked
            let bound = try Self.invite(session, file, ["--user", "dora"])
            try refused("carla", bound[0])  // bound to another name
            let expiring = try Self.invite(session, file, ["--expires", "1s"])
            sleep(2)
            try refused("carla", expiring[0])  // expired
            let first = try #require(answers.first)
            #expect(first.status == 200 && first.body.contains("El código de invitación no es válido."))
            #expect(!first.body.contains("alice") && !first.body.contains("carla"))
            for answer in answers {
                #expect(answer.status == first.status && answer.body == first.body)
                #expect(answer.cookie("__Host-credfile") == nil)
            }
            #expect(try Self.names(file) == ["alice", "bruno"])
            // The bound code works for its name; the unused third once.
            var dora = Portal.Browser(port: port)
            _ = try dora.open()
            #expect(try Self.register(&dora, "dora", password, code: bound[0]).status == 303)
            var erik = Portal.Browser(port: port)
            _ = try erik.open()
            #expect(try Self.register(&erik, "erik", password, code: codes[2]).status == 303)
            // A taken name with a good code: "El usuario ya existe." and the code kept for another try.
            let spare = try Self.invite(session, file)
            var again = Portal.Browser(port: port)
            _ = try again.open()
            #expect(try Self.register(&again, "erik", password, code: spare[0]).body.contains("El usuario ya existe."))
            #expect(try Self.register(&again, "fabia", password, code: spare[0]).status == 303)
            // --list: ids, expiry, bound name and state; never a code.
            let list = session.run(["invite", file, "--list"])
            for code in codes + bound + spare { #expect(!list.stdout.contains(code)) }
            #expect(list.stdout.contains("\tdora\tused") && list.stdout.contains("expired"))
            #expect(try Self.names(file) == ["alice", "bruno", "dora", "erik", "fabia"])
        }
    }

    @Test(
        "register-per-hour per address and register-per-hour-total: refused, logged reason=register-limit, nothing written"
    )
    func limits() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(
                session, file, port: port,
                [
                    "--register", "yes", "--register-per-hour", "2", "--register-per-hour-total", "3",
                    "--trusted-proxy", "127.0.0.1/32",
                ])
            let password = "naranjo-en-flor-2026"
            var browser = Portal.Browser(port: port)
            _ = try browser.open()
            #expect(try Self.register(&browser, "u1", password, from: "198.51.100.7").status == 303, "\(service.log)")
            // A refusal for a taken name uses up nothing.
            #expect(try Self.register(&browser, "u1", password, from: "198.51.100.7").body.contains("ya existe"))
            #expect(try Self.register(&browser, "u2", password, from: "198.51.100.7").status == 303)
            let third = try Self.register(&browser, "u3", password, from: "198.51.100.7")
            #expect(third.status == 429 && third.body.contains("Demasiados registros; inténtelo más tarde."))
            service.waitForLog("reason=register-limit")
            #expect(
                service.log.contains(
                    "authentication failure; service=serve user=u3 rhost=198.51.100.7 file=\(file) reason=register-limit"
                ))
            // Another address may register, until the total is reached.
            #expect(try Self.register(&browser, "u4", password, from: "203.0.113.9").status == 303)
            let total = try Self.register(&browser, "u5", password, from: "192.0.2.1")
            #expect(total.status == 429)
            #expect(try Self.names(file) == ["alice", "u1", "u2", "u4"])
        }
    }

    @Test("password change: the entry rewritten, every other session ended, a new token here, the old password refused")
    func passwordChange() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(session, file, port: port)
            var phone = Portal.Browser(port: port)
            var laptop = Portal.Browser(port: port)
            _ = try phone.open()
            _ = try laptop.open()
            let old = session.password(Self.alice.1)
            #expect(try phone.signIn("alice", old).status == 303, "\(service.log)")
            #expect(try laptop.signIn("alice", old).status == 303)
            let home = try Portal.send(port, "GET", "/.credfile/", headers: [("Cookie", laptop.cookie)])
            #expect(home.body.contains("<a href=\"/.credfile/password\">Cambiar contraseña</a>"))
            let page = try Portal.send(port, "GET", "/.credfile/password", headers: [("Cookie", laptop.cookie)])
            #expect(
                page.body.contains("autocomplete=\"current-password\"")
                    && page.body.contains("autocomplete=\"new-password\""))
            #expect(try Portal.send(port, "GET", "/.credfile/password").header("Location") == "/.credfile/login")

            // A wrong current password: refused, counted by §9's guard, nothing changed.
            let before = try readBytes(file)
            let wrong = try Self.changePassword(&laptop, current: "not-the-password-1", new: "granada-y-limon-2027")
            #expect(wrong.status == 200 && wrong.body.contains("La contraseña actual no es correcta."))
            #expect(try readBytes(file) == before)
            let failures = session.run(["failures", file, "alice", "--json"])
            #expect(failures.stdout.contains("\"failures\":1"), "\(failures)")
            // §8 applies to the new one.
            let weak = try Self.changePassword(&laptop, current: old, new: "short")
            #expect(try weak.body.contains("debe tener al menos 15 caracteres") && (try readBytes(file)) == before)

            let oldToken = laptop.session
            let fresh = session.password("granada-y-limon-2027")
            let changed = try Self.changePassword(&laptop, current: old, new: fresh)
            #expect(changed.status == 303 && changed.header("Location") == "/.credfile/")
            #expect(laptop.session != oldToken && laptop.session != nil)
            #expect(try readBytes(file) != before)
            #expect(try laptop.auth().status == 200)
            #expect(try phone.auth().status == 401)
            var stale = laptop
            stale.session = oldToken
            #expect(try stale.auth().status == 401)
            var next = Portal.Browser(port: port)
            _ = try next.open()
            #expect(try next.signIn("alice", old).status == 200)
            #expect(try next.signIn("alice", fresh).status == 303)
            // Forged: no token, 403.
            let forged = try Portal.send(
                port, "POST", "/.credfile/password", headers: [Self.origin, ("Cookie", laptop.cookie)],
                body: Portal.form([("current", fresh), ("new", "otra-cosa-distinta-2028")]))
            #expect(forged.status == 403)
        }
    }

    @Test("50 sign-ups at once while serve answers logins and an admin runs credfile add: exactly the accepted lines")
    func concurrentSignUps() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(
                session, file, port: port,
                ["--register", "yes", "--register-per-hour", "1000", "--register-per-hour-total", "1000"])
            var seed = Portal.Browser(port: port)
            _ = try seed.open()
            // 50 sign-ups over 40 names (10 asked twice), from 50 threads at once.
            let names = (0..<50).map { "user\($0 % 40)" }
            let statuses = Mutex([Int](repeating: 0, count: 50))
            let password = "naranjo-en-flor-2026"
            let stop = Atomic(false)
            let logins = Atomic(0)
            let (preSession, csrf) = (seed.preSession, seed.csrf)
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                var browser = Portal.Browser(port: port, preSession: preSession, csrf: csrf)
                while !stop.load(ordering: .relaxed) {
                    if (try? browser.signIn("alice", IntegrationRegistrationTests.alice.1).status) == 303 {
                        logins.add(1, ordering: .relaxed)
                    }
                }
            }
            // The sign-ups start once serve has answered a login, and logins go on meanwhile.
            let deadline = ContinuousClock.now + .seconds(60)
            while logins.load(ordering: .relaxed) == 0 && ContinuousClock.now < deadline { usleep(10_000) }
            let loginsBefore = logins.load(ordering: .relaxed)
            let credfile = try Integration.credfile(in: session)
            let admin = try ChildProcess.start(
                "/bin/sh",
                [
                    "-c",
                    "for i in 1 2 3 4 5; do echo naranjo-en-flor-admin-$i | '\(credfile)' add '\(file)' admin$i --iterations \(Integration.rounds) || exit 1; done",
                ])
            DispatchQueue.concurrentPerform(iterations: 50) { index in
                var browser = Portal.Browser(port: port, preSession: preSession, csrf: csrf)
                let status = (try? Self.register(&browser, names[index], password))?.status ?? -1
                statuses.withLock { $0[index] = status }
            }
            #expect(try admin.wait().status == 0)
            stop.store(true, ordering: .relaxed)
            group.wait()
            let answers = statuses.withLock { $0 }
            let acceptedNames = answers.enumerated().filter { $0.element == 303 }.map { names[$0.offset] }
            let accepted = Set(acceptedNames)
            // 303 registered; 200 "El usuario ya existe." (its twin won); 503 when the logins'
            // queue (16 a core, fair between addresses) was full: not accepted, nothing written.
            #expect(answers.allSatisfy { [303, 200, 503].contains($0) }, "\(answers) \(service.log)")
            #expect(acceptedNames.count == accepted.count, "a name accepted twice: \(acceptedNames)")
            for (index, answer) in answers.enumerated() where answer == 200 {
                #expect(accepted.contains(names[index]), "\(names[index]) refused as taken, but never accepted")
            }
            #expect(accepted.count >= 20, "\(answers)")
            let entries = try Self.names(file)
            #expect(entries.count == Set(entries).count, "a name twice: \(entries)")
            #expect(Set(entries) == Set(["alice"] + accepted + (1...5).map { "admin\($0)" }))
            let check = session.run(["check", file])
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
            #expect(loginsBefore > 0 && logins.load(ordering: .relaxed) >= loginsBefore)
        }
    }
}
