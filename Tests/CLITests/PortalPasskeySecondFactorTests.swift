import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

// SPEC §14's passkey as the second factor after a password, asked with the real curl
// through `credfile serve --portal --webauthn-origin`: a user with a passkey and no secret
// gets a pending sign-in and the code page's passkey button from a right password (no
// session from the password alone); the passkey's answer posted to `{prefix}/code` starts
// a session marked second factor and passkey. Another user's passkey, a replayed answer
// and an answer without a pending sign-in are refused, and logged as `wrong-code`.
@Suite(
    "The portal's passkey as the second factor (SPEC §14)", .serialized,
    .enabled(
        if: ExternalTool.runnable("curl") || ExternalTool.isCI, Comment(rawValue: ExternalTool.skipNote("curl"))))
struct PortalPasskeySecondFactorTests {
    typealias Browser = PortalSecondFactorTests.Browser
    typealias Answer = PortalSecondFactorTests.Answer
    static let alice = PortalPasskeyTests.alice
    static let bob = PortalPasskeyTests.bob

    /// The password, then the code page; the page's answer.
    static func passwordStep(_ browser: Browser, _ session: CLISession, _ user: (String, String)) throws -> Answer {
        let first = try browser.signIn(user.0, session.password(user.1))
        #expect(first.status == 303 && first.header("Location") == "/.credfile/code", "\(first.status)")
        #expect(first.cookie("__Host-credfile") == nil, "no session from the password alone")
        let page = try browser.send("GET", "/.credfile/code")
        if let token = PortalPasskeyTests.buttonToken(page) { browser.csrf = token }
        return page
    }

    /// The passkey's answer for a `second-factor` challenge, as the script posts it.
    static func answer(_ browser: Browser, _ authenticator: SoftwareAuthenticator) throws -> [(String, String)] {
        let (challenge, options) = try PortalPasskeyTests.challenge(browser, "second-factor")
        #expect(options.status == 200, "\(options.body)")
        return [("csrf", browser.csrf)]
            + PortalPasskeyTests.assertion(authenticator, challenge: try #require(challenge))
    }

    /// Registers a passkey for `user` from a password's session (no second factor yet).
    static func enrol(
        _ session: CLISession, port: Int, _ user: (String, String), counter: UInt32 = 1
    ) throws -> SoftwareAuthenticator {
        let browser = Browser(session, port: port)
        #expect(try browser.signIn(user.0, session.password(user.1)).status == 303)
        let authenticator = try SoftwareAuthenticator(counter: counter)
        #expect(try PortalPasskeyTests.register(browser, authenticator).status == 200)
        return authenticator
    }

    @Test("password, then the passkey: a session marked second factor and passkey; the password alone gives none")
    func passwordThenPasskey() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let port = try Integration.freePort()
            let service = try PortalPasskeyTests.service(session, file, port: port)
            let alices = try Self.enrol(session, port: port, Self.alice)

            let browser = Browser(session, port: port)
            let page = try Self.passwordStep(browser, session, Self.alice)
            #expect(page.status == 200 && page.body.contains("id=\"passkey-second-factor\""), "\(page.body)")
            #expect(!page.body.contains("name=\"code\""), "no code field without a secret")
            #expect(page.body.contains("/.credfile/passkeys.js"))
            #expect(try browser.send("GET", "/.credfile/auth").status == 401)

            let good = try browser.send("POST", "/.credfile/code", form: try Self.answer(browser, alices))
            #expect(good.status == 303 && good.header("Location") == "/.credfile/", "\(service.log)")
            let token = try #require(good.cookie("__Host-credfile"))
            let auth = try browser.send("GET", "/.credfile/auth")
            #expect(auth.status == 200 && auth.header("Remote-User") == "alice", "\(service.log)")
            let storage = SQLiteSessionStorage(path: file + ".guard.db")
            let parsed = try #require(SessionToken(cookieValue: Array(token.utf8)))
            let record = try #require(try storage.session(tokenDigest: parsed.digest))
            #expect(record.secondFactor && record.passkey && record.user == "alice")
        }
    }

    @Test("refused: another user's passkey, a replayed answer, no pending sign-in")
    func refusals() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.bob])
            let port = try Integration.freePort()
            let service = try PortalPasskeyTests.service(session, file, port: port)
            let alices = try Self.enrol(session, port: port, Self.alice)
            let bobs = try Self.enrol(session, port: port, Self.bob)

            // Bob's passkey for alice's pending sign-in (a challenge given for alice).
            let browser = Browser(session, port: port)
            _ = try Self.passwordStep(browser, session, Self.alice)
            let borrowed = try browser.send("POST", "/.credfile/code", form: try Self.answer(browser, bobs))
            #expect(borrowed.cookie("__Host-credfile") == nil, "\(service.log)")
            #expect(borrowed.body.contains("name=\"password\""), "the sign-in page again")
            service.waitForLog("reason=wrong-code")
            #expect(service.log.contains("user=alice") && service.log.contains("reason=wrong-code"), "\(service.log)")
            // The pending sign-in is gone with that one attempt: no challenge for a second one.
            #expect(try PortalPasskeyTests.challenge(browser, "second-factor").1.status == 401)

            // A good answer, then the same answer again after a new password step.
            _ = try Self.passwordStep(browser, session, Self.alice)
            let form = try Self.answer(browser, alices)
            #expect(try browser.send("POST", "/.credfile/code", form: form).cookie("__Host-credfile") != nil)
            let replayer = Browser(session, port: port)
            _ = try Self.passwordStep(replayer, session, Self.alice)
            var replayed = form
            replayed[0].1 = replayer.csrf
            let replay = try replayer.send("POST", "/.credfile/code", form: replayed)
            #expect(replay.cookie("__Host-credfile") == nil, "\(service.log)")
            #expect(try replayer.send("GET", "/.credfile/auth").status == 401)

            // No pending sign-in: no challenge, and an answer opens nothing.
            let visitor = Browser(session, port: port)
            try visitor.send("GET", "/.credfile/login")
            let (none, options) = try PortalPasskeyTests.challenge(visitor, "second-factor")
            #expect(none == nil && options.status == 401)
            let stray = try visitor.send(
                "POST", "/.credfile/code",
                form: [("csrf", visitor.csrf)]
                    + PortalPasskeyTests.assertion(alices, challenge: Array(repeating: 7, count: 32)))
            #expect(stray.cookie("__Host-credfile") == nil)
            #expect(try visitor.send("GET", "/.credfile/auth").status == 401)
        }
    }
}
