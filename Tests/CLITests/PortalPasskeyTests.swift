import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

// SPEC §14's passkeys on the portal, asked with the real curl through `credfile serve
// --portal --webauthn-origin`: a user signed in with a password minutes ago registers a
// credential made by a software authenticator, then signs in with it alone and gets a
// session `/auth` accepts, marked as a passkey's; replayed challenges, a wrong origin, a
// lowered counter, another user's credential, a stale sign-in and a form without the
// anti-forgery token are refused at the HTTP level.
@Suite(
    "The portal's passkey routes over HTTP (SPEC §14)", .serialized,
    .enabled(
        if: ExternalTool.runnable("curl") || ExternalTool.isCI, Comment(rawValue: ExternalTool.skipNote("curl"))))
struct PortalPasskeyTests {
    typealias Browser = PortalSecondFactorTests.Browser
    static let alice = PortalSecondFactorTests.alice
    static let bob = ("bob", "Mandarina-del-sur-2026")
    static let origin = "https://\(PortalSecondFactorTests.host)"
    static let rpID = PortalSecondFactorTests.host

    /// A JSON answer's object.
    static func object(_ answer: PortalSecondFactorTests.Answer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any] ?? [:]
    }

    /// The page's anti-forgery token as the passkey button carries it.
    static func buttonToken(_ answer: PortalSecondFactorTests.Answer) -> String? {
        guard let marker = answer.body.range(of: "data-csrf=\"") else { return nil }
        return String(answer.body[marker.upperBound...].prefix { $0 != "\"" })
    }

    /// A challenge for `purpose`, as the script asks for it.
    static func challenge(_ browser: Browser, _ purpose: String) throws -> ([UInt8]?, PortalSecondFactorTests.Answer) {
        let answer = try browser.send(
            "POST", "/.credfile/passkey/options", form: [("csrf", browser.csrf), ("purpose", purpose)])
        let text = object(answer)["challenge"] as? String
        return (text.flatMap { Passkeys.bytes(base64URL: $0) }, answer)
    }

    /// Registers `authenticator` for the signed-in user of `browser`.
    static func register(
        _ browser: Browser, _ authenticator: SoftwareAuthenticator, name: String = "phone"
    ) throws -> PortalSecondFactorTests.Answer {
        let (challenge, _) = try challenge(browser, "registration")
        let made = authenticator.register(challenge: challenge ?? [], origin: origin, rpID: rpID)
        return try browser.send(
            "POST", "/.credfile/passkey/register",
            form: [
                ("csrf", browser.csrf), ("name", name),
                ("clientDataJSON", Passkeys.base64URL(made.clientDataJSON)),
                ("attestationObject", Passkeys.base64URL(made.attestationObject)),
            ])
    }

    /// An assertion's form fields for a sign-in challenge.
    static func assertion(
        _ authenticator: SoftwareAuthenticator, challenge: [UInt8], origin: String = origin, id: [UInt8]? = nil
    ) -> [(String, String)] {
        let made = authenticator.assert(challenge: challenge, origin: origin, rpID: rpID)
        return [
            ("credentialId", Passkeys.base64URL(id ?? authenticator.id)),
            ("clientDataJSON", Passkeys.base64URL(made.clientDataJSON)),
            ("authenticatorData", Passkeys.base64URL(made.authenticatorData)),
            ("signature", Passkeys.base64URL(made.signature)),
        ]
    }

    /// A signed-out browser's passkey sign-in with `authenticator`.
    static func signIn(
        _ browser: Browser, _ authenticator: SoftwareAuthenticator, origin: String = origin, id: [UInt8]? = nil
    ) throws -> PortalSecondFactorTests.Answer {
        try browser.send("GET", "/.credfile/login")
        let (challenge, _) = try challenge(browser, "sign-in")
        return try browser.send(
            "POST", "/.credfile/passkey/sign-in",
            form: [("csrf", browser.csrf)]
                + assertion(authenticator, challenge: challenge ?? [], origin: origin, id: id))
    }

    static func service(_ session: CLISession, _ file: String, port: Int) throws -> IntegrationServeTests.Service {
        try IntegrationPortalTests.service(session, file, port: port, ["--webauthn-origin", origin])
    }

    @Test("register after a fresh sign-in, sign in with the passkey alone: a session /auth accepts, marked passkey")
    func registerAndSignIn() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port)
            let browser = Browser(session, port: port)
            #expect(try browser.signIn("alice", session.password(Self.alice.1)).status == 303, "\(service.log)")
            let home = try browser.send("GET", "/.credfile/")
            #expect(home.body.contains("id=\"passkey-register\""), "\(home.body)")
            #expect(home.body.contains("<script src=\"/.credfile/passkeys.js\" defer></script>"))
            #expect(home.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            #expect(Self.buttonToken(home) == browser.csrf)

            let authenticator = try SoftwareAuthenticator(counter: 1)
            let registered = try Self.register(browser, authenticator)
            #expect(registered.status == 200 && Self.object(registered)["ok"] as? Bool == true, "\(service.log)")
            let saved = try String(contentsOfFile: file + ".passkeys", encoding: .utf8)
            #expect(saved.contains("alice:\(Passkeys.base64URL(authenticator.id)):"), "\(saved)")
            #expect(try browser.send("GET", "/.credfile/").body.contains("<li>phone</li>"))

            // The script: its own path, JavaScript, the same headers as the pages.
            let script = try browser.send("GET", "/.credfile/passkeys.js")
            #expect(script.status == 200 && script.header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(script.header("X-Content-Type-Options") == "nosniff")
            #expect(script.body.contains("navigator.credentials"))

            // Signed out, the sign-in page offers the passkey under `script-src 'self'`.
            let visitor = Browser(session, port: port)
            let login = try visitor.send("GET", "/.credfile/login")
            #expect(login.body.contains("id=\"passkey-sign-in\"") && login.body.contains("/.credfile/passkeys.js"))
            let policy = try #require(login.header("Content-Security-Policy"))
            #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"), "\(policy)")
            #expect(try visitor.send("GET", "/.credfile/auth").status == 401)

            let good = try Self.signIn(visitor, authenticator)
            #expect(good.status == 200 && Self.object(good)["redirect"] as? String == "/.credfile/", "\(service.log)")
            let token = try #require(good.cookie("__Host-credfile"))
            #expect(
                good.cookies().contains("__Host-credfile=\(token); Path=/; Secure; HttpOnly; SameSite=Lax"),
                "\(good.cookies())")
            let auth = try visitor.send("GET", "/.credfile/auth")
            #expect(auth.status == 200 && auth.header("Remote-User") == "alice", "\(service.log)")
            let storage = SQLiteSessionStorage(path: file + ".guard.db")
            let parsed = try #require(SessionToken(cookieValue: Array(token.utf8)))
            let record = try #require(try storage.session(tokenDigest: parsed.digest))
            #expect(record.passkey && record.user == "alice")
            #expect(try storage.sessions(user: "alice").filter(\.passkey).count == 1, "the password's session is not")
            let listed = session.run(["passkeys", file, "alice"])
            #expect(listed.status == 0 && listed.stdout.contains("\tphone\t"), "\(listed.stdout)")
        }
    }

    @Test(
        "refused over HTTP: replay, wrong origin, lowered counter, flipped signature, unknown or another user's credential, no token"
    )
    func refusals() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.bob])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port)
            let alices = try SoftwareAuthenticator(counter: 10)
            let owner = Browser(session, port: port)
            #expect(try owner.signIn("alice", session.password(Self.alice.1)).status == 303, "\(service.log)")
            #expect(try Self.register(owner, alices).status == 200, "\(service.log)")

            // A replayed challenge: the same assertion posted twice.
            let browser = Browser(session, port: port)
            try browser.send("GET", "/.credfile/login")
            let (challenge, _) = try Self.challenge(browser, "sign-in")
            let form = [("csrf", browser.csrf)] + Self.assertion(alices, challenge: try #require(challenge))
            #expect(try browser.send("POST", "/.credfile/passkey/sign-in", form: form).status == 200)
            browser.cookies["__Host-credfile"] = nil
            let replay = try browser.send("POST", "/.credfile/passkey/sign-in", form: form)
            #expect(replay.status == 403 && replay.cookie("__Host-credfile") == nil)
            #expect(Self.object(replay)["error"] as? String == "refused")

            // A wrong origin (a phishing site's), with a real challenge.
            let phished = try Self.signIn(Browser(session, port: port), alices, origin: "https://app.examp1e.test")
            #expect(phished.status == 403 && phished.cookie("__Host-credfile") == nil)

            // A lowered counter: a clone behind the original; logged.
            alices.counter = 5
            let clone = try Self.signIn(Browser(session, port: port), alices)
            #expect(clone.status == 403 && clone.cookie("__Host-credfile") == nil)
            service.waitForLog("clonedAuthenticator")
            #expect(service.log.contains("a passkey sign-in refused (clonedAuthenticator)"), "\(service.log)")
            alices.counter = 20
            #expect(try Self.signIn(Browser(session, port: port), alices).status == 200, "\(service.log)")

            // A flipped signature byte, and an unknown credential id.
            let flipper = Browser(session, port: port)
            try flipper.send("GET", "/.credfile/login")
            let (next, _) = try Self.challenge(flipper, "sign-in")
            var flipped = Self.assertion(alices, challenge: try #require(next))
            var signature = try #require(Passkeys.bytes(base64URL: flipped[3].1))
            signature[signature.count / 2] ^= 0x01
            flipped[3].1 = Passkeys.base64URL(signature)
            let forged = try flipper.send(
                "POST", "/.credfile/passkey/sign-in", form: [("csrf", flipper.csrf)] + flipped)
            #expect(forged.status == 403 && forged.cookie("__Host-credfile") == nil, "\(service.log)")
            let stranger = try Self.signIn(Browser(session, port: port), try SoftwareAuthenticator(counter: 1))
            #expect(stranger.status == 403 && stranger.cookie("__Host-credfile") == nil)

            // Another user's credential: bob's key under alice's credential id signs nothing,
            // and bob cannot register alice's credential id as his.
            let bobBrowser = Browser(session, port: port)
            #expect(try bobBrowser.signIn("bob", session.password(Self.bob.1)).status == 303)
            let bobs = try SoftwareAuthenticator(counter: 1)
            #expect(try Self.register(bobBrowser, bobs).status == 200, "\(service.log)")
            let borrowed = try Self.signIn(Browser(session, port: port), bobs, id: alices.id)
            #expect(borrowed.status == 403 && borrowed.cookie("__Host-credfile") == nil)
            let taken = try SoftwareAuthenticator(counter: 1, id: alices.id)
            #expect(try Self.register(bobBrowser, taken).status == 400)
            let bobsOwn = try Self.signIn(Browser(session, port: port), bobs)
            #expect(bobsOwn.status == 200, "\(service.log)")
            let bobSession = Browser(session, port: port)
            bobSession.cookies["__Host-credfile"] = bobsOwn.cookie("__Host-credfile")
            #expect(try bobSession.send("GET", "/.credfile/auth").header("Remote-User") == "bob")

            // Without the anti-forgery token (or with another's): 403, no challenge made.
            let forger = Browser(session, port: port)
            try forger.send("GET", "/.credfile/login")
            for route in ["options", "sign-in", "register"] {
                let bare = try forger.send("POST", "/.credfile/passkey/\(route)", form: [("purpose", "sign-in")])
                #expect(bare.status == 403, "\(route)")
                let wrong = try forger.send(
                    "POST", "/.credfile/passkey/\(route)", form: [("csrf", "x" + forger.csrf), ("purpose", "sign-in")])
                #expect(wrong.status == 403, "\(route)")
            }
            // A GET is no route of theirs.
            #expect(try forger.send("GET", "/.credfile/passkey/options").status != 200)
        }
    }

    @Test("registration needs a sign-in under 5 minutes old: none → 401, an older one → 403 'sign-in-again'")
    func freshSignInOnly() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try Self.service(session, file, port: port)
            let authenticator = try SoftwareAuthenticator(counter: 1)

            let signedOut = Browser(session, port: port)
            try signedOut.send("GET", "/.credfile/login")
            let (none, noneAnswer) = try Self.challenge(signedOut, "registration")
            #expect(
                none == nil && noneAnswer.status == 401 && Self.object(noneAnswer)["error"] as? String == "signed-out")
            #expect(try Self.register(signedOut, authenticator).status == 401)

            let browser = Browser(session, port: port)
            #expect(try browser.signIn("alice", session.password(Self.alice.1)).status == 303, "\(service.log)")
            // The session started 6 minutes ago (moved back in the state database).
            let storage = SQLiteSessionStorage(path: file + ".guard.db")
            let token = try #require(browser.cookies["__Host-credfile"])
            let digest = try #require(SessionToken(cookieValue: Array(token.utf8))).digest
            var record = try #require(try storage.session(tokenDigest: digest))
            #expect(try storage.remove(tokenDigest: digest))
            record.started -= 360
            try storage.insert(record, limit: 100)
            #expect(try browser.send("GET", "/.credfile/auth").status == 200, "the session itself is good")
            try browser.send("GET", "/.credfile/")
            let (stale, staleAnswer) = try Self.challenge(browser, "registration")
            #expect(stale == nil && staleAnswer.status == 403)
            #expect(Self.object(staleAnswer)["error"] as? String == "sign-in-again")
            #expect(access(file + ".passkeys", F_OK) != 0, "nothing saved")

            // Signing in again makes it fresh.
            #expect(try browser.signIn("alice", session.password(Self.alice.1)).status == 303)
            #expect(try Self.register(browser, authenticator).status == 200, "\(service.log)")
        }
    }
}
