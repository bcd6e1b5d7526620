import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// argon2id as the policy's algorithm (SPEC §3.1, #26): its parameters and their ranges,
/// the PHC strings it writes, which entries need an update under it, and the store's
/// register, login, upgrade-on-login and `upgrade` with it. (The real peers that verify
/// its strings are in CLITests' `Argon2PolicyTests`.)
@Suite("argon2id as the policy's algorithm")
struct Argon2PolicyLibraryTests {
    /// A cheap argon2id policy for tests.
    // swift-format-ignore: NeverUseForceTry
    // (a fixed, valid policy or hash of a test table: built where no error can be thrown)
    static let cheap = try! HashPolicy(algorithm: .argon2id, argon2: Argon2Parameters(memoryKiB: 64, time: 2))

    struct Boundary: CustomTestStringConvertible, Sendable {
        let testDescription: String
        let memory: Int
        let time: Int
        let lanes: Int
        let accepted: Bool
    }

    static let boundaries: [Boundary] = [
        Boundary(testDescription: "OWASP's 19456 KiB, t=2, p=1", memory: 19_456, time: 2, lanes: 1, accepted: true),
        Boundary(testDescription: "lanes 0 refused", memory: 64, time: 1, lanes: 0, accepted: false),
        Boundary(testDescription: "lanes 255 accepted", memory: 8 * 255, time: 1, lanes: 255, accepted: true),
        Boundary(testDescription: "lanes 256 refused", memory: 8 * 256, time: 1, lanes: 256, accepted: false),
        Boundary(testDescription: "time 0 refused", memory: 64, time: 0, lanes: 1, accepted: false),
        Boundary(testDescription: "time 10 accepted", memory: 64, time: 10, lanes: 1, accepted: true),
        Boundary(testDescription: "time 11 refused", memory: 64, time: 11, lanes: 1, accepted: false),
        Boundary(testDescription: "memory 8 KiB per lane accepted", memory: 32, time: 1, lanes: 4, accepted: true),
        Boundary(
            testDescription: "memory below 8 KiB per lane refused", memory: 31, time: 1, lanes: 4, accepted: false),
        Boundary(testDescription: "memory 1 GiB accepted", memory: 1 << 20, time: 1, lanes: 1, accepted: true),
        Boundary(
            testDescription: "memory 1 GiB + 1 KiB refused", memory: (1 << 20) + 1, time: 1, lanes: 1, accepted: false),
    ]

    @Test("argon2 parameters: both sides of every range (what credfile writes, it can verify)", arguments: boundaries)
    func parameterRanges(_ row: Boundary) throws {
        let made = try? Argon2Parameters(memoryKiB: row.memory, time: row.time, lanes: row.lanes)
        #expect((made != nil) == row.accepted)
        guard let made else {
            #expect(throws: CredFileError.self) {
                try Argon2Parameters(memoryKiB: row.memory, time: row.time, lanes: row.lanes)
            }
            return
        }
        // The parser of the family takes every accepted value back.
        let phc = "$argon2id$v=19$\(made)$c2FsdHNhbHRzYWx0c2FsdA$" + String(repeating: "A", count: 43)
        guard case .peer(let peer) = SecretSyntax.classify(ArraySlice(phc.utf8)) else {
            Issue.record("\(phc.prefix(40)) does not parse")
            return
        }
        #expect((peer.hash as? Argon2Hash).map { $0.memoryKiB == row.memory && $0.iterations == row.time } == true)
    }

    @Test("the PHC string: parameters, a 16-byte salt, a 32-byte hash; it verifies its password (NFC) only")
    func theStringVerifiesItsPasswordOnly() throws {
        let policy = try HashPolicy(algorithm: .argon2id, argon2: Argon2Parameters(memoryKiB: 256, time: 3, lanes: 2))
        let nfd = "contrase\u{006E}\u{0303}a-argon2"
        let text = try policy.hash(Password(nfd))
        #expect(text.hasPrefix("$argon2id$v=19$m=256,t=3,p=2$"))
        let fields = text.split(separator: "$")
        #expect(fields.count == 5)
        #expect(PeerText.base64(fields[3].utf8, padded: false)?.count == 16)
        #expect(PeerText.base64(fields[4].utf8, padded: false)?.count == 32)
        guard case .peer(let peer) = SecretSyntax.classify(ArraySlice(text.utf8)) else {
            Issue.record("credfile's own argon2id string does not parse")
            return
        }
        #expect(try peer.hash.verify(Password("contrase\u{00F1}a-argon2").bytes))  // the NFC form
        #expect(try !peer.hash.verify(Password("contrase\u{00F1}a-argon3").bytes))
        // Two hashes of one password differ (fresh salts).
        #expect(try policy.hash(Password(nfd)) != text)
    }

    @Test("PasswordHash is PBKDF2: hashing under an argon2id policy is a usage error, not a PBKDF2 in disguise")
    func passwordHashRefusesAnArgon2Policy() {
        #expect(throws: CredFileError.self) { try PasswordHash(hashing: Password("x"), policy: Self.cheap) }
        #expect(throws: CredFileError.self) {
            try ParallelHasher(policy: Self.cheap, jobs: 1).hash([Password("x")], progress: nil)
        }
    }

    struct UpdateCase: CustomTestStringConvertible, Sendable {
        let testDescription: String
        let secret: String
        let needsUpdate: Bool
    }

    static let salt16 = "c2FsdHNhbHRzYWx0c2FsdA"
    static let tag32 = String(repeating: "A", count: 43)

    static let updateCases: [UpdateCase] = [
        UpdateCase(testDescription: "plaintext", secret: "legacy-password", needsUpdate: true),
        UpdateCase(
            testDescription: "pbkdf2-sha256 (any rounds)", secret: TimingPlanTests.own(.sha256, 5_000_000),
            needsUpdate: true),
        UpdateCase(testDescription: "bcrypt", secret: TimingPlanTests.bcrypt5, needsUpdate: true),
        UpdateCase(
            testDescription: "argon2id at the policy's parameters",
            secret: "$argon2id$v=19$m=64,t=2,p=1$\(salt16)$\(tag32)",
            needsUpdate: false),
        UpdateCase(
            testDescription: "argon2id with more memory, passes and lanes",
            secret: "$argon2id$v=19$m=128,t=3,p=4$\(salt16)$\(tag32)",
            needsUpdate: false),
        UpdateCase(
            testDescription: "argon2id with less memory", secret: "$argon2id$v=19$m=32,t=2,p=1$\(salt16)$\(tag32)",
            needsUpdate: true),
        UpdateCase(
            testDescription: "argon2id with fewer passes", secret: "$argon2id$v=19$m=128,t=1,p=1$\(salt16)$\(tag32)",
            needsUpdate: true),
        UpdateCase(
            testDescription: "argon2id with an 8-byte salt", secret: "$argon2id$v=19$m=64,t=2,p=1$c2FsdHNhbHQ$\(tag32)",
            needsUpdate: true),
        UpdateCase(
            testDescription: "argon2id version 16", secret: "$argon2id$m=64,t=2,p=1$\(salt16)$\(tag32)",
            needsUpdate: true),
        UpdateCase(
            testDescription: "argon2i", secret: "$argon2i$v=19$m=64,t=2,p=1$\(salt16)$\(tag32)", needsUpdate: true),
        UpdateCase(
            testDescription: "Django's argon2$argon2id$ (another spelling)",
            secret: "argon2$argon2id$v=19$m=64,t=2,p=1$\(salt16)$\(tag32)", needsUpdate: true),
        UpdateCase(
            testDescription: "Dovecot's {ARGON2ID} (another spelling)",
            secret: "{ARGON2ID}$argon2id$v=19$m=64,t=2,p=1$\(salt16)$\(tag32)", needsUpdate: true),
        UpdateCase(testDescription: "malformed", secret: "$argon2id$v=19$m=64", needsUpdate: false),
    ]

    @Test(
        "needs update under an argon2id policy: everything but an argon2id string no weaker than the policy",
        arguments: updateCases)
    func needsUpdate(_ row: UpdateCase) {
        #expect(Self.cheap.needsUpdate(SecretSyntax.classify(ArraySlice(row.secret.utf8))) == row.needsUpdate)
    }

    @Test("weak: an argon2 hash is judged by OWASP's argon2 floor, not by PBKDF2 rounds")
    func argon2WeaknessFollowsOWASP() throws {
        for policy in [HashPolicy.standard, Self.cheap] {
            for (parameters, weak) in [
                ("m=19456,t=2,p=1", false), ("m=7168,t=5,p=1", false), ("m=47104,t=1,p=1", false),
                ("m=7168,t=4,p=1", true), ("m=1024,t=2,p=1", true),
            ] {
                let secret = SecretSyntax.classify(
                    ArraySlice("$argon2id$v=19$\(parameters)$\(Self.salt16)$\(Self.tag32)".utf8))
                #expect(policy.isWeak(secret) == weak, "\(parameters) under \(policy.algorithm)")
            }
        }
    }

    @Test(
        "the store under an argon2id policy: register, login, upgrade-on-login from PBKDF2 and from weaker argon2id, upgrade"
    )
    func theStoreMovesEntriesToArgon2id() throws {
        let directory = try TemporaryDirectory.make(prefix: "argon2-policy")
        defer { directory.remove() }
        let path = directory.file("users.txt")
        let pbkdf2 = try PasswordHash(hashing: Password("old-pbkdf2-pass"), policy: try HashPolicy(rounds: 10)).string
        let weaker = try HashPolicy(algorithm: .argon2id, argon2: Argon2Parameters(memoryKiB: 32, time: 1))
            .hash(Password("old-argon2-pass"))
        try writeText(path, "pb,\(pbkdf2)\nweak,\(weaker)\nplain,legacy-plain-pass\nother,other-plain-pass\n")
        var store = CredentialStore(path: path, policy: Self.cheap)
        store.passwordPolicy = .permissive
        try store.register(username: "new", password: Password("brand-new-password"), storage: .hashed)
        #expect(
            try store.read().firstEntry(named: "new")?.entry?.secretText?.hasPrefix("$argon2id$v=19$m=64,t=2,p=1$")
                == true)
        #expect(try store.authenticate(username: "new", password: "brand-new-password"))
        #expect(try !store.authenticate(username: "new", password: "brand-new-passwordx"))

        for (user, password) in [
            ("pb", "old-pbkdf2-pass"), ("weak", "old-argon2-pass"), ("plain", "legacy-plain-pass"),
        ] {
            let result = try store.verify(username: user, password: Password(password), upgradeOnSuccess: true)
            #expect(result.granted && result.upgraded, "\(user)")
            let secret = try #require(try store.read().firstEntry(named: user)?.entry?.secret)
            #expect(!Self.cheap.needsUpdate(secret), "\(user) still needs an update")
            #expect(try store.authenticate(username: user, password: password), "\(user)")
        }
        // A current argon2id entry is left byte for byte by a login.
        let before = try readBytes(path)
        #expect(
            try store.verify(username: "new", password: Password("brand-new-password"), upgradeOnSuccess: true).upgraded
                == false)
        #expect(try readBytes(path) == before)

        let summary = try store.upgrade(jobs: 2)
        #expect(summary.upgraded == 1 && summary.left == 0)
        #expect(try store.read().firstEntry(named: "other")?.entry?.secretText?.hasPrefix("$argon2id$") == true)
        #expect(try store.authenticate(username: "other", password: "other-plain-pass"))
        // list names the scheme.
        #expect(try store.read().listing(policy: Self.cheap).map(\.storage.scheme).allSatisfy { $0 == "argon2id" })
    }
}

extension Entry {
    /// The secret as text, for tests.
    var secretText: String? { String(validating: secretBytes, as: UTF8.self) }
}
