import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

/// One hash from Vectors/pbkdf2-peer-hashes.tsv, made by the real peer named in `tool`.
struct PBKDF2PeerVector: CustomTestStringConvertible, Sendable {
    let tool: String
    let password: [UInt8]
    let hash: String
    var testDescription: String { "\(tool): \(hash.prefix(24))…" }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")

    static let all: [PBKDF2PeerVector] = {
        let url = directory.appendingPathComponent("pbkdf2-peer-hashes.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line -> PBKDF2PeerVector? in
            guard !line.hasPrefix("#") else { return nil }
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 3, let password = VectorFile.hexBytes(String(f[1])) else { return nil }
            return PBKDF2PeerVector(tool: String(f[0]), password: password, hash: String(f[2]))
        }
    }()

    /// The password as the user types it (bytes as given; `Password` also keeps NFC).
    var typed: Password { Password(String(decoding: password, as: UTF8.self)) }
}

/// A store in a fresh directory holding `lines`, with a cheap policy so tests stay fast.
private func withStore<R>(_ lines: [String], rounds: Int = 1000, _ body: (CredentialStore, String) throws -> R) throws
    -> R
{
    try withTemporaryDirectory { dir in
        let path = dir.file("users.txt")
        try writeText(path, lines.map { $0 + "\n" }.joined())
        return try body(CredentialStore(path: path, policy: policy(rounds: rounds)), path)
    }
}

@Suite("peer hashes (SPEC §3.2)")
struct PeerHashTests {
    @Test func theVectorFileHoldsEveryFamily() {
        let tools = Set(PBKDF2PeerVector.all.map(\.tool))
        #expect(PBKDF2PeerVector.all.count >= 80)
        for family in [
            "passlib pbkdf2_sha1", "passlib ldap_pbkdf2_sha256", "django pbkdf2_sha1", "werkzeug pbkdf2:sha512:1000",
            "mosquitto_passwd", "mosquitto_passwd -H sha512", "doveadm pw -s PBKDF2", "slappasswd {PBKDF2-SHA512}",
        ] {
            #expect(tools.contains(family), "missing \(family)")
        }
    }

    /// Right password granted, wrong denied, the hash string itself denied (pass-the-hash),
    /// and the secret is a verified hash (never plaintext).
    @Test(arguments: PBKDF2PeerVector.all)
    func aPeerHashVerifiesTheRightPasswordOnly(_ vector: PBKDF2PeerVector) throws {
        try withStore(["alice,\(vector.hash)"]) { (store: CredentialStore, path: String) throws in
            let secret = try #require(try storedSecret(of: "alice", in: path))
            switch secret {
            case .peer, .pbkdf2: break
            default: Issue.record("\(vector.tool) reads as \(secret.storageDescription)")
            }
            #expect(try store.verify(username: "alice", password: vector.typed, upgradeOnSuccess: false).granted)
            #expect(try !store.verify(username: "alice", password: Password("wrong"), upgradeOnSuccess: false).granted)
            #expect(
                try !store.verify(username: "alice", password: Password(vector.hash), upgradeOnSuccess: false).granted)
            #expect(try !store.authenticate(username: "alice", password: vector.hash))
        }
    }

    /// Upgrade-on-login moves every peer scheme to the policy's PBKDF2; the new hash
    /// verifies the NFC form (credfile's rule from then on).
    @Test(arguments: Dictionary(grouping: PBKDF2PeerVector.all, by: \.tool).values.compactMap(\.first))
    func upgradeOnLoginMovesAPeerHashToThePolicy(_ vector: PBKDF2PeerVector) throws {
        try withStore(["alice,\(vector.hash)"]) { (store: CredentialStore, path: String) throws in
            let result = try store.verify(username: "alice", password: vector.typed, upgradeOnSuccess: true)
            #expect(result.granted)
            let isOwn = vector.hash.hasPrefix("$pbkdf2-sha256$1000$")
            #expect(result.upgraded == !isOwn)
            guard case .pbkdf2(let hash)? = try storedSecret(of: "alice", in: path) else {
                Issue.record("not rehashed to the policy")
                return
            }
            #expect(hash.algorithm == .sha256 && hash.rounds == 1000)
            #expect(
                try store.authenticate(username: "alice", password: String(decoding: vector.password, as: UTF8.self)))
        }
    }

    /// `upgrade` leaves every peer hash byte for byte and counts it per scheme.
    @Test func upgradeLeavesPeerHashesByteForByte() throws {
        let vectors = Dictionary(grouping: PBKDF2PeerVector.all, by: \.tool).values.compactMap(\.first)
        let lines = vectors.enumerated().map { "u\($0.offset),\($0.element.hash)" } + ["plain,hunter2"]
        try withStore(lines) { (store: CredentialStore, path: String) throws in
            let summary = try store.upgrade()
            #expect(summary.upgraded == 1)
            let after = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(Array(after.dropLast()) == Array(lines.dropLast()))
            #expect(
                summary.peerHashes.values.reduce(0, +)
                    == vectors.filter { !$0.hash.hasPrefix("$pbkdf2-sha2") && !$0.hash.hasPrefix("$pbkdf2-sha5") }.count
            )
        }
    }

    /// `list` names scheme and cost; `check` warns for weak schemes and costlier entries.
    @Test func listAndCheckNameTheScheme() throws {
        let django = try #require(PBKDF2PeerVector.all.first { $0.tool == "django pbkdf2_sha256" }).hash
        let mosquitto6 = try #require(PBKDF2PeerVector.all.first { $0.tool == "mosquitto_passwd -H sha512" }).hash
        let costly = try #require(PBKDF2PeerVector.all.first { $0.tool == "werkzeug pbkdf2:sha256" }).hash
        try withStore(["d,\(django)", "m,\(mosquitto6)", "w,\(costly)"], rounds: 600_000) {
            (store: CredentialStore, _: String) throws in
            // entries only
            let secrets = try store.read().effectiveEntries().map { $0.entry!.secret.storageDescription }
            #expect(secrets == ["django pbkdf2_sha256 1000", "mosquitto sha512", "werkzeug pbkdf2:sha256 1000000"])
            let findings = try store.findings()
            #expect(findings.contains { $0.line == 1 && $0.severity == .warning && $0.message.hasPrefix("weak hash") })
            #expect(
                findings.contains { $0.line == 2 && $0.severity == .warning && $0.message.contains("mosquitto sha512") }
            )
            #expect(findings.contains { $0.line == 3 && $0.message.hasPrefix("costly hash") })
            #expect(!findings.contains { $0.severity == .error })
        }
    }

    /// A weak hash's warning says what is weak about it (#28): a scheme that is only
    /// cheaper than the policy's minimum (bcrypt 9, about 320,000 rounds' work; Django's
    /// PBKDF2 at 1,000 rounds) names the minimum it misses; only a broken scheme (md5crypt)
    /// "no longer resists offline attack".
    @Test func weakWarningsSayWhyTheHashIsWeak() throws {
        let django = try #require(PBKDF2PeerVector.all.first { $0.tool == "django pbkdf2_sha256" }).hash
        let bcrypt9 = "$2b$09$WeSU2xHwXPh35LSZ4OeguOaA7P52ogCZ8pTlxpDYqBeg73B8lANQu"  // mkpasswd -m bcrypt -R 9
        let md5crypt = "$1$o215w1sW$PuLOx5ZJF8EGSM/KkGuyq1"  // mkpasswd -m md5crypt
        try withStore(["d,\(django)", "b,\(bcrypt9)", "m,\(md5crypt)"], rounds: 600_000) {
            (store: CredentialStore, _: String) throws in
            let weak = try store.findings().filter { $0.kind == .weakHash }.map { ($0.line, $0.message) }
            try #require(weak.count == 3, "\(weak)")
            for (line, message) in weak[..<2] {
                #expect(
                    message.hasSuffix("costs less to verify than the minimum of 600000 rounds"), "\(line): \(message)")
            }
            #expect(weak[2].1.hasSuffix("no longer resists offline attack"), "\(weak[2])")
        }
    }

    /// The rules on shared prefixes and on peers' identifiers (SPEC §2, §3.2): exact
    /// syntax decides, nothing with a peer's prefix is ever plaintext.
    @Test(arguments: [
        ("LDAP {PBKDF2}", "{PBKDF2}10000$00y.YG4mhBwKnJ/fRGNb0A$fOPQS4/bFju4AjSHQNaJr457u/s", "peer"),
        (
            "LDAP scheme case-insensitive", "{pbkdf2-sha1}10000$00y.YG4mhBwKnJ/fRGNb0A$fOPQS4/bFju4AjSHQNaJr457u/s",
            "peer"
        ),
        ("Dovecot {PBKDF2}$1$", "{PBKDF2}$1$tR4j.93ps32IWDEu$5000$038d0d1eb7042b1f75d02d6ab7779e708abedcee", "peer"),
        ("{PBKDF2} neither", "{PBKDF2}$2$tR4j$5000$038d", "malformed"),
        ("{PBKDF2} garbage", "{PBKDF2}garbage", "malformed"),
        (
            "Dovecot uppercase hex", "{PBKDF2}$1$tR4j.93ps32IWDEu$5000$038D0D1EB7042B1F75D02D6AB7779E708ABEDCEE",
            "malformed"
        ),
        (
            "libxcrypt scrypt $7$", "$7$CU..../....2SWmUw7Vgpq/JQAcNEVO3.$yJB0XFz0sPChC6JvT7HwEzIOsnCwHjiuIPJmAQIJ6GB",
            "peer"
        ),
        (
            "sha512-crypt $6$",
            "$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/", "peer"
        ),
        (
            "mosquitto $7$ leading zero",
            "$7$0101$O0JoSI8nNrkhsNuF$1CJ23v6kajrgrI2UBougazFFjqYDcFSbDnM1kwWGm/CAxVAojvaC8C05sot0p7DTJ/j/tOho+LCQm4xAxUDS5Q==",
            "malformed"
        ),
        ("Django md5$ (verified, weak)", "md5$salt$0123456789abcdef0123456789abcdef", "peer"),
        ("Django pbkdf2 garbage", "pbkdf2_sha256$abc", "malformed"),
        (
            "Django pbkdf2 unpadded base64", "pbkdf2_sha256$1000$salt$3X54RxzekNlrxv2UlRsr4RWyiynsnIgQn4ir6nMmqfc",
            "malformed"
        ),
        ("Werkzeug scrypt with a short hash", "scrypt:32768:8:1$salt$00ff", "malformed"),
        ("Werkzeug pbkdf2 md5", "pbkdf2:md5:1000$salt$00ff", "malformed"),
        ("passlib $pbkdf2-sha1$ (not a spelling)", "$pbkdf2-sha1$1000$salt$abc", "malformed"),
        ("a password with dollars", "pa$$word", "plaintext"),
        ("a password with a colon", "pbkdf2:nodollar", "plaintext"),
    ])
    func sharedPrefixesAreDecidedBySyntax(_ name: String, _ secret: String, _ expected: String) {
        let got: String
        switch CredentialFile("u,\(secret)\n").firstEntry(named: "u")?.entry?.secret {
        case .peer?, .pbkdf2?: got = "peer"
        case .malformed?: got = "malformed"
        case .unsupportedHash?: got = "unsupported"
        case .locked?: got = "locked"
        case .plaintext?: got = "plaintext"
        case nil: got = "none"
        }
        #expect(got == expected, "\(name)")
    }

    /// Hostile parameters are refused before any work: both sides of every limit.
    @Test(arguments: [
        ("passlib rounds 1000000", "$pbkdf2$1000000$c2FsdA$" + String(repeating: "A", count: 27), true),
        ("passlib rounds 50000001", "$pbkdf2$50000001$c2FsdA$" + String(repeating: "A", count: 27), false),
        ("ldap rounds 1000000", "{PBKDF2-SHA256}1000000$c2FsdA$" + String(repeating: "A", count: 43), true),
        ("ldap rounds 50000001", "{PBKDF2-SHA256}50000001$c2FsdA$" + String(repeating: "A", count: 43), false),
        ("ldap rounds 0", "{PBKDF2-SHA256}0$c2FsdA$" + String(repeating: "A", count: 43), false),
        ("django rounds 1000000", "pbkdf2_sha256$1000000$salt$" + String(repeating: "A", count: 43) + "=", true),
        (
            "django rounds 99999999999999999999",
            "pbkdf2_sha256$99999999999999999999$salt$" + String(repeating: "A", count: 43) + "=", false
        ),
        (
            "django salt 1024",
            "pbkdf2_sha256$1000$" + String(repeating: "s", count: 1024) + "$" + String(repeating: "A", count: 43) + "=",
            true
        ),
        (
            "django salt 1025",
            "pbkdf2_sha256$1000$" + String(repeating: "s", count: 1025) + "$" + String(repeating: "A", count: 43) + "=",
            false
        ),
        ("werkzeug rounds 50000001", "pbkdf2:sha256:50000001$salt$" + String(repeating: "0", count: 64), false),
        (
            "werkzeug salt 1025",
            "pbkdf2:sha256:1000$" + String(repeating: "s", count: 1025) + "$" + String(repeating: "0", count: 64), false
        ),
        ("werkzeug short hex", "pbkdf2:sha256:1000$salt$" + String(repeating: "0", count: 62), false),
        (
            "mosquitto rounds 50000001", "$7$50000001$c2FsdHNhbHRzYWx0$" + String(repeating: "A", count: 86) + "==",
            false
        ),
        ("mosquitto rounds 200000", "$7$200000$c2FsdHNhbHRzYWx0$" + String(repeating: "A", count: 86) + "==", true),
        ("dovecot rounds 50000001", "{PBKDF2}$1$salt$50000001$" + String(repeating: "0", count: 40), false),
        (
            "dovecot salt 1025",
            "{PBKDF2}$1$" + String(repeating: "s", count: 1025) + "$1000$" + String(repeating: "0", count: 40), false
        ),
    ])
    func hostileParametersAreRefusedBeforeAnyWork(_ name: String, _ secret: String, _ accepted: Bool) throws {
        // As a login judges it: the format's limits, then the cost limits (SPEC §3.1).
        let parsed = CredentialFile("u,\(secret)\n").firstEntry(named: "u")?.entry?.judged(by: try policy(rounds: 1000))
            .secret
        if case .peer? = parsed {
            #expect(accepted, "\(name)")
        } else {
            #expect(!accepted, "\(name)")
            if case .malformed? = parsed {} else { Issue.record("\(name): \(parsed?.storageDescription ?? "nil")") }
        }
        guard !accepted else { return }
        // A refused entry costs one dummy PBKDF2 at the policy (1,000 rounds here), never the line's rounds.
        try withStore(["u,\(secret)"]) { (store: CredentialStore, _: String) throws in
            let start = ContinuousClock.now
            #expect(try !store.authenticate(username: "u", password: "x"))
            #expect(ContinuousClock.now - start < .seconds(5), "\(name)")
        }
    }

    /// NFD: a peer's hash of NFD bytes verifies when the same bytes are typed, and the
    /// NFC form of the same password too only when the peer hashed NFC.
    @Test func nfdBytesAreTriedForPeerHashes() throws {
        let nfd = try #require(
            PBKDF2PeerVector.all.first {
                $0.tool == "passlib ldap_pbkdf2_sha256" && $0.password == Array("contrasen\u{0303}a".utf8)
            })
        try withStore(["alice,\(nfd.hash)"]) { (store: CredentialStore, _: String) throws in
            #expect(try store.verify(username: "alice", password: nfd.typed, upgradeOnSuccess: false).granted)
            #expect(
                try !store.verify(username: "alice", password: Password("contraseña"), upgradeOnSuccess: false).granted)
        }
    }

    /// After a rewrite (another user deleted), the peer's own library still verifies the
    /// line's secret: credfile kept it byte for byte.
    @Test(
        .enabled(
            if: ExternalTool.runnable(ExternalTool.peerPython),
            Comment(rawValue: ExternalTool.skipNote(ExternalTool.peerPython))))
    func peerHashesStillVerifyInTheirPeerAfterARewrite() throws {
        let python = try ExternalTool.path(ExternalTool.peerPython)
        let picks = [
            "passlib pbkdf2_sha1", "passlib ldap_pbkdf2_sha512", "django pbkdf2_sha256", "django pbkdf2_sha1",
            "werkzeug pbkdf2:sha512:1000",
        ]
        let vectors = picks.compactMap { tool in
            PBKDF2PeerVector.all.first { $0.tool == tool && $0.password == Array("secret".utf8) }
        }
        #expect(vectors.count == picks.count)
        try withStore(["bob,hunter2"] + vectors.enumerated().map { "u\($0.offset),\($0.element.hash)" }) {
            (store: CredentialStore, path: String) throws in
            #expect(try store.remove(username: "bob") == 1)
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            let script = """
                import sys
                from passlib.hash import pbkdf2_sha1, ldap_pbkdf2_sha512
                from django.conf import settings
                settings.configure(PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher", "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher"])
                import django; django.setup()
                from django.contrib.auth.hashers import check_password
                from werkzeug.security import check_password_hash
                h = [l.split(",", 1)[1] for l in sys.stdin.read().splitlines()]
                ok = [pbkdf2_sha1.verify("secret", h[0]), ldap_pbkdf2_sha512.verify("secret", h[1]),
                      check_password("secret", h[2]), check_password("secret", h[3]), check_password_hash(h[4], "secret")]
                print(sum(ok), len(ok))
                """
            let result = try ChildProcess.run(python, ["-c", script], stdin: Array(lines.joined(separator: "\n").utf8))
            #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "5 5", "\(result)")
        }
    }

    /// The real tools, run now, make hashes credfile verifies (cross-check of the committed data).
    @Test(
        .enabled(
            if: ExternalTool.runnable(ExternalTool.peerPython, "mosquitto_passwd", "doveadm", "slappasswd"),
            Comment(
                rawValue: ExternalTool.skipNote(ExternalTool.peerPython, "mosquitto_passwd", "doveadm", "slappasswd"))))
    func freshHashesFromTheInstalledToolsVerify() throws {
        let python = try ExternalTool.path(ExternalTool.peerPython)
        let script = PBKDF2PeerVector.directory.appendingPathComponent("make-pbkdf2-peer-hashes.py").path
        let nfd = Array("contrasen\u{0303}a".utf8)
        for tool in [
            "passlib ldap_pbkdf2_sha1", "django pbkdf2_sha1", "werkzeug pbkdf2:sha256:1000", "mosquitto_passwd",
            "mosquitto_passwd -H sha512", "doveadm pw -s PBKDF2", "slappasswd {PBKDF2-SHA256}",
        ] {
            let result = try ChildProcess.run(python, [script, "--tool", tool, "--password-hex", VectorFile.hex(nfd)])
            let hash = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(result.status == 0, "\(tool): \(result)")
            try withStore(["alice,\(hash)"]) { (store: CredentialStore, _: String) throws in
                #expect(
                    try store.authenticate(username: "alice", password: String(decoding: nfd, as: UTF8.self)), "\(tool)"
                )
                #expect(try !store.authenticate(username: "alice", password: hash), "\(tool)")
            }
        }
    }
}

@Suite("A password with a NUL byte")
struct NULPasswordTests {
    @Test("never logs in, though HMAC's zero padding would make PBKDF2 take pw\\0 for pw")
    func nulNeverMatches() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("users.txt")
            var store = CredentialStore(path: path, policy: try policy(rounds: 1))
            store.passwordPolicy = .permissive
            try store.register(username: "ana", password: Password("clave-de-ana"), storage: .hashed)
            #expect(try store.authenticate(username: "ana", password: "clave-de-ana"))
            #expect(try !store.authenticate(username: "ana", password: "clave-de-ana\u{0}"))
            #expect(try !store.authenticate(username: "ana", password: "clave-de-ana\u{0}\u{0}"))
        }
    }
}
