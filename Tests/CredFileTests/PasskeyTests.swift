import CredFileTestSupport
import Testing

@testable import CredFile

// SPEC §14's passkeys in the library: registrations and assertions made in the test by a
// software authenticator (OpenSSL EC P-256), checked by libfido2 and libcbor; each
// refusal the issue names (wrong origin, replayed challenge, lowered counter, flipped
// signature byte, unknown credential, another user's credential), a deleted user's
// passkeys unusable at once, and a recorded assertion mutated byte by byte (0 accepted).

private let origin = "https://example.com"
private let rpID = "example.com"
private let now: Int64 = 1_796_083_200

/// A credential file with alice and bob, and the passkeys of its users.
private func withPasskeys<R>(_ body: (Passkeys, CredentialStore) throws -> R) throws -> R {
    try withTemporaryDirectory { directory in
        let store = CredentialStore(path: directory.file("users"), policy: oneRound)
        try store.register(username: "alice", password: "correct horse battery")
        try store.register(username: "bob", password: "correct horse battery")
        let passkeys = try Passkeys(credentialFile: store.path, origin: origin, rpID: rpID)
        return try body(passkeys, store)
    }
}

/// Registers `authenticator` for `user`.
@discardableResult
private func register(_ passkeys: Passkeys, _ authenticator: SoftwareAuthenticator, user: String = "alice") throws
    -> Passkeys.Outcome
{
    let challenge = try passkeys.newChallenge(for: .registration, usernameBytes: Array(user.utf8), time: now)
    let (json, object) = authenticator.register(challenge: challenge)
    return try passkeys.register(
        usernameBytes: Array(user.utf8), name: "phone", clientDataJSON: json, attestationObject: object, time: now)
}

/// Signs in with `authenticator` (a fresh challenge of `purpose`).
private func signIn(
    _ passkeys: Passkeys, _ authenticator: SoftwareAuthenticator, purpose: Passkeys.Purpose = .signIn,
    user: String = "", flags: UInt8 = 0x05, origin: String = origin, time: Int64 = now
) throws -> Passkeys.Outcome {
    let challenge = try passkeys.newChallenge(for: purpose, usernameBytes: Array(user.utf8), time: now)
    let (json, data, signature) = authenticator.assert(challenge: challenge, origin: origin, flags: flags)
    return try passkeys.signIn(
        purpose: purpose, credentialID: authenticator.id, clientDataJSON: json, authenticatorData: data,
        signature: signature, time: time)
}

private let alice = Passkeys.Outcome.accepted(user: Array("alice".utf8))

@Suite("Passkeys (SPEC §14): WebAuthn through libfido2 and libcbor")
struct PasskeyTests {
    @Test("register, then sign in alone and as a second factor; the counter and last use are saved")
    func registerAndSignIn() throws {
        try withPasskeys { passkeys, _ in
            let authenticator = try SoftwareAuthenticator(counter: 5)
            #expect(try register(passkeys, authenticator) == alice)
            #expect(try signIn(passkeys, authenticator) == alice)
            #expect(try signIn(passkeys, authenticator, purpose: .secondFactor, user: "alice", flags: 0x01) == alice)
            let listed = try passkeys.credentials()
            #expect(listed.count == 1)
            #expect(listed.first?.counter == 7 && listed.first?.lastUsed == now && listed.first?.name == "phone")
            #expect(listed.first?.id == Base64URL.encode(authenticator.id))
            #expect(try Syscall.status(of: passkeys.passkeyFile).st_mode & 0o777 == 0o600)
            // An authenticator without a counter (0 always) is accepted again and again.
            let counterless = try SoftwareAuthenticator(counter: 0)
            #expect(try register(passkeys, counterless, user: "bob") == .accepted(user: Array("bob".utf8)))
            #expect(try signIn(passkeys, counterless) == .accepted(user: Array("bob".utf8)))
            #expect(try signIn(passkeys, counterless) == .accepted(user: Array("bob".utf8)))
            #expect(try passkeys.credentials(usernameBytes: Array("bob".utf8)).count == 1)
        }
    }

    @Test("refused: wrong origin, replayed challenge, lowered counter, flipped signature byte, unknown id, other user")
    func refusals() throws {
        try withPasskeys { passkeys, _ in
            let authenticator = try SoftwareAuthenticator(counter: 10)
            try register(passkeys, authenticator)
            // A wrong origin (a phishing site's), even with a real challenge.
            #expect(try signIn(passkeys, authenticator, origin: "https://examp1e.com") == .refused(.clientData))
            // A replayed challenge: the same assertion twice.
            let challenge = try passkeys.newChallenge(for: .signIn, time: now)
            let (json, data, signature) = authenticator.assert(challenge: challenge)
            let replay = {
                try passkeys.signIn(
                    credentialID: authenticator.id, clientDataJSON: json, authenticatorData: data, signature: signature,
                    time: now)
            }
            #expect(try replay() == alice)
            #expect(try replay() == .refused(.challenge))
            // A lowered counter: a clone whose counter is behind the original's.
            authenticator.counter = 5
            #expect(try signIn(passkeys, authenticator) == .refused(.clonedAuthenticator))
            // The same counter again is a clone too.
            authenticator.counter = 10
            #expect(try signIn(passkeys, authenticator) == .refused(.clonedAuthenticator))
            authenticator.counter = 20
            #expect(try signIn(passkeys, authenticator) == alice)
            // A flipped signature byte.
            let next = try passkeys.newChallenge(for: .signIn, time: now)
            var forged = authenticator.assert(challenge: next)
            forged.signature[forged.signature.count / 2] ^= 0x01
            #expect(
                try passkeys.signIn(
                    credentialID: authenticator.id, clientDataJSON: forged.clientDataJSON,
                    authenticatorData: forged.authenticatorData, signature: forged.signature, time: now)
                    == .refused(.signature))
            // An unknown credential id.
            let stranger = try SoftwareAuthenticator()
            #expect(try signIn(passkeys, stranger) == .refused(.unknownCredential))
            // Another user's credential as the second factor of alice's password.
            let bobs = try SoftwareAuthenticator()
            #expect(try register(passkeys, bobs, user: "bob") == .accepted(user: Array("bob".utf8)))
            #expect(try signIn(passkeys, bobs, purpose: .secondFactor, user: "alice") == .refused(.otherUser))
        }
    }

    @Test(
        "refused: no user verification alone, an expired or misused challenge, another RP ID, a deleted or locked user")
    func moreRefusals() throws {
        try withPasskeys { passkeys, store in
            let authenticator = try SoftwareAuthenticator(counter: 1)
            try register(passkeys, authenticator)
            // UV is required to sign in with the passkey alone, not as a second factor.
            #expect(try signIn(passkeys, authenticator, flags: 0x01) == .refused(.signature))
            #expect(try signIn(passkeys, authenticator, purpose: .secondFactor, user: "alice", flags: 0x01) == alice)
            // No user presence at all.
            #expect(try signIn(passkeys, authenticator, flags: 0x04) == .refused(.signature))
            // A challenge 5 minutes and 1 second old, or made for a registration.
            #expect(try signIn(passkeys, authenticator, time: now + 301) == .refused(.challenge))
            #expect(try signIn(passkeys, authenticator, time: now + 300) == alice)
            #expect(try signIn(passkeys, authenticator, purpose: .registration) == .refused(.challenge))
            // An assertion for another relying party.
            let challenge = try passkeys.newChallenge(for: .signIn, time: now)
            let other = authenticator.assert(challenge: challenge, rpID: "evil.example")
            #expect(
                try passkeys.signIn(
                    credentialID: authenticator.id, clientDataJSON: other.clientDataJSON,
                    authenticatorData: other.authenticatorData, signature: other.signature, time: now)
                    == .refused(.signature))
            // A locked user, then a deleted one: refused at once, the passkey still listed.
            _ = try store.lock(username: "alice")
            #expect(try signIn(passkeys, authenticator) == .refused(.userGone))
            _ = try store.unlock(username: "alice")
            #expect(try signIn(passkeys, authenticator) == alice)
            _ = try store.remove(username: "alice")
            #expect(try signIn(passkeys, authenticator) == .refused(.userGone))
            #expect(try passkeys.credentials().count == 1)
            #expect(try passkeys.remove(id: Base64URL.encode(authenticator.id)))
            #expect(try passkeys.credentials().isEmpty)
        }
    }

    @Test("registration refused: another user's challenge, wrong origin, other fmt, other RP, no UP, not ES256, twice")
    func registrationRefusals() throws {
        try withPasskeys { passkeys, _ in
            let authenticator = try SoftwareAuthenticator()
            let user = Array("alice".utf8)
            func attempt(
                challengeUser: String = "alice", origin: String = origin, rpID: String = rpID, flags: UInt8 = 0x45,
                fmt: String = "none", coseKey: [UInt8]? = nil, trailing: [UInt8] = [], name: String = "key"
            ) throws -> Passkeys.Outcome {
                let challenge = try passkeys.newChallenge(
                    for: .registration, usernameBytes: Array(challengeUser.utf8), time: now)
                let (json, object) = authenticator.register(
                    challenge: challenge, origin: origin, rpID: rpID, flags: flags, fmt: fmt, coseKey: coseKey)
                return try passkeys.register(
                    usernameBytes: user, name: name, clientDataJSON: json, attestationObject: object + trailing,
                    time: now)
            }
            let ed25519 = TestCBOR.encode(
                .map([
                    (.unsigned(1), .unsigned(1)), (.unsigned(3), .negative(-8)), (.negative(-1), .unsigned(6)),
                    (.negative(-2), .bytes([UInt8](repeating: 7, count: 32))),
                ]))
            #expect(try attempt(challengeUser: "bob") == .refused(.challenge))
            #expect(try attempt(origin: "https://example.com.evil") == .refused(.clientData))
            #expect(try attempt(fmt: "packed") == .refused(.attestation))
            #expect(try attempt(rpID: "evil.example") == .refused(.attestation))
            #expect(try attempt(flags: 0x44) == .refused(.attestation))
            #expect(try attempt(coseKey: ed25519) == .refused(.attestation))
            #expect(try attempt(trailing: [0]) == .refused(.attestation))
            #expect(try attempt(name: "") == .refused(.name))
            #expect(try attempt(name: "a\u{7}b") == .refused(.name))
            #expect(try attempt() == alice)
            #expect(try attempt() == .refused(.duplicate))
        }
    }

    @Test("a recorded assertion mutated byte by byte: 0 of its mutations accepted")
    func mutations() throws {
        let authenticator = try SoftwareAuthenticator(counter: 41)
        let challenge = [UInt8](repeating: 0xA5, count: 32)
        let (json, data, signature) = authenticator.assert(challenge: challenge)
        let key = authenticator.coseKey
        func accepted(_ json: [UInt8], _ data: [UInt8], _ signature: [UInt8]) -> Bool {
            guard let clientData = WebAuthn.clientData(json, type: "webauthn.get", origin: origin),
                clientData.challenge == challenge
            else { return false }
            return WebAuthn.assertion(
                clientDataJSON: json, authenticatorData: data, signature: signature, rpID: rpID, coseKey: key,
                userVerification: true) != nil
        }
        #expect(accepted(json, data, signature))
        var tried = 0
        var passed = 0
        for mask: UInt8 in [0x01, 0x80, 0xFF] {
            for part in 0..<3 {
                let original = [json, data, signature][part]
                for index in original.indices {
                    var parts = [json, data, signature]
                    parts[part][index] ^= mask
                    tried += 1
                    if accepted(parts[0], parts[1], parts[2]) { passed += 1 }
                }
            }
        }
        #expect(tried > 600)
        #expect(passed == 0)
    }

    @Test(
        "clientDataJSON: strict JSON",
        arguments: [
            (#"{"type":"webauthn.get","challenge":"AA","origin":"https://e"}"#, true),
            (
                #" {"type":"webauthn.get","challenge":"AA","origin":"https://e","tokenBinding":{"status":"supported"},"x":[1,-2.5e3,null,true]} "#,
                true
            ),
            (#"{"type":"webauthn.get","challenge":"AA","origin":"https:\/\/e\u00e9\ud83d\ude00"}"#, true),
            (#"{"type":"webauthn.get","challenge":"AA","origin":"https://e","type":"webauthn.get"}"#, false),
            (#"{"type":"webauthn.get","challenge":"AA==","origin":"https://e"}"#, false),
            (#"{"type":"webauthn.get","challenge":"AA","origin":"https://e"}x"#, false),
            (#"{"type":"webauthn.get","challenge":"AA","origin":"https://e",}"#, false),
            (#"{"type":"webauthn.get","challenge":"AA","origin":"\ud83d"}"#, false),
            (#"{"type":"webauthn.get","challenge":"AA","origin":"https://e","crossOrigin":"false"}"#, false),
            (#"{"type":"webauthn.get","challenge":"AA","origin":"https://e","n":01}"#, false),
            (#"{"type":"webauthn.get","challenge":"AA"}"#, false),
            (#"["type"]"#, false),
        ])
    func clientData(text: String, good: Bool) {
        #expect((ClientData(parsing: Array(text.utf8)) != nil) == good)
    }

    @Test("the passkeys file: lines parse and render back, bad lines are named by number")
    func file() throws {
        let authenticator = try SoftwareAuthenticator()
        let key = Base64URL.encode(authenticator.coseKey)
        let good = "# passkeys\nalice:AAEC:3:100:0:\(key):my phone: work\n\nbob:AAED:0:100:200:\(key):key\r\n"
        let parsed = try PasskeyFile(parsing: Array(good.utf8), path: "p")
        #expect(parsed.entries.map(\.name) == ["my phone: work", "key"])
        #expect(parsed.entries.map(\.line) == [2, 4])
        #expect(
            String(decoding: parsed.entries[0].rendered, as: UTF8.self) == "alice:AAEC:3:100:0:\(key):my phone: work")
        for (bad, line) in [
            ("alice:AAEC:3:100:0:\(key)", 1), ("x\nalice:AA=:3:100:0:\(key):n", 1), ("alice:AAEC:x:100:0:\(key):n", 1),
            ("alice:AAEC:3:100:0:AAAA:n", 1), ("# c\nalice:AAEC:3:100:0:\(key):", 2),
            ("alice:AAEC:3:100:0:\(key):n\nbob:AAEC:3:100:0:\(key):n", 2), (":AAEC:3:100:0:\(key):n", 1),
        ] {
            #expect(throws: CredFileError.self) { try PasskeyFile(parsing: Array(bad.utf8), path: "p") }
            do {
                _ = try PasskeyFile(parsing: Array(bad.utf8), path: "p")
            } catch {
                #expect(error.message.hasPrefix("p:\(line):"), "\(bad)")
            }
        }
    }

    @Test("a session started by a passkey keeps the mark in the state database; a password's has none")
    func sessionMark() throws {
        try withTemporaryDirectory { directory in
            let storage = SQLiteSessionStorage(path: directory.file("users.guard.db"))
            let sessions = try PortalSessions(storage: storage, limits: try SessionLimits())
            let passkey = try sessions.start(
                user: "alice", line: Array("alice:x".utf8), now: now, client: nil, userAgent: nil, passkey: true)
            let password = try sessions.start(user: "alice", line: Array("alice:x".utf8), now: now)
            #expect(try storage.session(tokenDigest: passkey.digest)?.passkey == true)
            #expect(try storage.session(tokenDigest: password.digest)?.passkey == false)
        }
    }

    @Test("webauthn-origin and webauthn-rp-id are checked together")
    func settings() throws {
        #expect((try? Passkeys(credentialFile: "f", origin: "https://login.example.com", rpID: "example.com")) != nil)
        #expect((try? Passkeys(credentialFile: "f", origin: "http://localhost:8080", rpID: "localhost")) != nil)
        #expect((try? Passkeys(credentialFile: "f", origin: "http://example.com", rpID: "example.com")) == nil)
        #expect((try? Passkeys(credentialFile: "f", origin: "https://example.com", rpID: "other.com")) == nil)
        #expect((try? Passkeys(credentialFile: "f", origin: "https://example.com/", rpID: "example.com")) == nil)
        #expect((try? Passkeys(credentialFile: "f", origin: "https://badexample.com", rpID: "example.com")) == nil)
        #expect(
            try Passkeys(credentialFile: "/etc/users", origin: origin, rpID: rpID).passkeyFile == "/etc/users.passkeys")
    }
}
