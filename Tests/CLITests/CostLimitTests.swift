import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// SPEC §3.1's cost limits (issue #25 items 1–3): no line may make one login cost more than
/// `max-work` seconds of CPU (2 s or 16 × the policy's own hash, whichever is more) or
/// allocate more than `max-memory` (256 MiB), whatever its scheme; over a limit the entry
/// is malformed ("too costly"), reported by `check` with the figure, and never verified.
@Suite("Cost limits (SPEC §3.1)")
struct CostLimitTests {
    static let bcryptBody = "Mey1/eqXqYWDCiO1EFF0P.DwEQKnF0pm425362qNAL3BfRsaDp/PW"
    static let hash43 = "XQDNaFQpn3YFD.KptOy3mg8JRkO6ILUsDQHKxzxKL90"
    static let sha512Body =
        "pNyhdvO/rtfc4X0J$llubxuYT8w8Jhlwb7XhikuQIkVbNYyp3J7Xfxf6gQCXDfoY4CcqvzbKiFTCyv/NkjwA0emtBenN5oD4bTOC8S/"
    static let phcSalt = "c2FsdHNhbHQ"
    static let phcTag = "2RRuQ+9kCHWYcD2NS1DQRxSzt4jy6cJyUQxj3SJJimo"

    /// A well-formed hash of credfile's own format with `rounds`.
    static func own(rounds: Int) -> String {
        (try? PasswordHash(
            algorithm: .sha256, rounds: rounds, salt: Array(repeating: 7, count: 16),
            checksum: Array(repeating: 9, count: 32)))?.string ?? ""
    }

    /// The parsed hash of `text`, or a recorded failure.
    static func hash(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> (any KnownHash)? {
        let hash = SecretSyntax.classify(ArraySlice(Array(text.utf8))).knownHash
        if hash == nil { Issue.record("\(text.prefix(16))… does not parse", sourceLocation: sourceLocation) }
        return hash
    }

    struct Hostile: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        /// Over the memory limit (else the work limit).
        let memory: Bool
        var testDescription: String { name }
    }

    /// The red team's lines (issue #25) and their kin, well-formed in their peers' formats.
    static let hostile: [Hostile] = [
        Hostile(name: "bcrypt cost 31 (about a day)", text: "$2b$31$" + bcryptBody, memory: false),
        Hostile(name: "yescrypt $y$jJT$ (N 2^22, r 32: 16 GiB)", text: "$y$jJT$salt$" + hash43, memory: true),
        Hostile(
            name: "Werkzeug scrypt:16777216:8:1 (16 GiB)",
            text: "scrypt:16777216:8:1$salt$" + String(repeating: "ab", count: 64), memory: true),
        Hostile(
            name: "Django scrypt N 2^24 r 8 (16 GiB)",
            text: "scrypt$16777216$salt$8$1$" + Data(repeating: 7, count: 64).base64EncodedString(), memory: true),
        Hostile(name: "argon2 m 1 GiB", text: "$argon2id$v=19$m=1048576,t=1,p=1$\(phcSalt)$\(phcTag)", memory: true),
        Hostile(
            name: "argon2 t 100000", text: "$argon2i$v=19$m=65536,t=100000,p=1$\(phcSalt)$\(phcTag)", memory: false),
        Hostile(name: "libxcrypt scrypt $7$ N 2^30", text: "$7$SU..../....salt$" + hash43, memory: true),
        Hostile(name: "sha512-crypt 999,999,999 rounds", text: "$6$rounds=999999999$" + sha512Body, memory: false),
        Hostile(name: "pbkdf2-sha256 50,000,001 rounds", text: own(rounds: 50_000_001), memory: false),
        Hostile(name: "pbkdf2-sha256 2^31 − 1 rounds", text: own(rounds: 2_147_483_647), memory: false),
        Hostile(
            name: "LDAP PBKDF2-SHA512 2^31 − 1 rounds",
            text: "{PBKDF2-SHA512}2147483647$c2FsdA$" + String(repeating: "A", count: 86), memory: false),
        Hostile(
            name: "SunMD5 2^32 − 4097 extra rounds",
            text: "{CRYPT}$md5,rounds=4294963199$saltsalt$$" + String(repeating: "A", count: 21) + ".", memory: false),
    ]

    @Test(arguments: hostile)
    func aHostileLineIsTooCostlyUnderTheDefaults(_ line: Hostile) throws {
        let hash = try #require(Self.hash(line.text))
        guard case .tooCostly(let why) = HashPolicy.standard.costVerdict(of: hash) else {
            Issue.record("\(line.name) is within the limits")
            return
        }
        if line.memory {
            #expect((why.memory ?? 0) > CostLimits.defaultMaximumMemory)
            #expect(why.description.contains("MiB per login"))
        } else {
            #expect((why.seconds ?? 0) > CostLimits.defaultMinimumWorkSeconds)
            #expect(why.description.contains("s of CPU per login"))
        }
        // The entry as the login sees it: malformed, before any work.
        let entry = try #require(CredentialFile(bytes: Array("victim,\(line.text)\n".utf8)).line(1).entry)
        let judged = entry.judged(by: .standard)
        #expect(judged.malformation == .tooCostly(why))
        if case .malformed = judged.secret {} else { Issue.record("\(line.name): not malformed") }
    }

    @Test func theMemoryLimitIsExactAndCanBeRaised() throws {
        let at = try #require(Self.hash("$argon2id$v=19$m=262144,t=1,p=1$\(Self.phcSalt)$\(Self.phcTag)"))
        let over = try #require(Self.hash("$argon2id$v=19$m=262145,t=1,p=1$\(Self.phcSalt)$\(Self.phcTag)"))
        #expect(at.estimatedMemory == 256 << 20)
        #expect(HashPolicy.standard.costVerdict(of: at) == .within)
        guard case .tooCostly(let why) = HashPolicy.standard.costVerdict(of: over) else {
            Issue.record("256 MiB + 1 KiB is within the default max-memory")
            return
        }
        #expect(why.memory == (256 << 20) + 1024 && why.maximumMemory == 256 << 20)
        #expect(why.description.contains("257 MiB per login (max-memory 256 MiB)"))
        var policy = HashPolicy.standard
        try policy.costLimits.setMaximumMemory(512 << 20)
        #expect(policy.costVerdict(of: over) == .within)
        try policy.costLimits.setMaximumMemory(128 << 20)
        #expect(policy.costVerdict(of: at) != .within)
    }

    /// The default is 16 × the policy's own hash when that is more than 2 s: an entry of
    /// 16 × the policy's rounds is allowed and one of 17 × is not, whatever this machine's
    /// speed (a policy of 10,000,000 rounds takes well over 2 s / 16 anywhere credfile runs).
    @Test func theDefaultFollowsThePolicy() throws {
        let policy = try HashPolicy(rounds: 10_000_000)
        let sixteen = try #require(Self.hash(Self.own(rounds: 160_000_000)))
        let seventeen = try #require(Self.hash(Self.own(rounds: 170_000_000)))
        #expect(policy.costVerdict(of: sixteen) == .within)
        #expect(policy.costVerdict(of: seventeen) != .within)
        // Under the standard policy the same entries are far too costly.
        #expect(HashPolicy.standard.costVerdict(of: sixteen) != .within)
    }

    /// …and at least 2 s: a policy of 1,000 rounds still allows an entry of a million
    /// (about 0.2–0.5 s here), not one of 500 million (minutes).
    @Test func theDefaultIsAtLeastTwoSeconds() throws {
        let policy = try HashPolicy(rounds: 1000)
        #expect(policy.costVerdict(of: try #require(Self.hash(Self.own(rounds: 1_000_000)))) == .within)
        #expect(policy.costVerdict(of: try #require(Self.hash(Self.own(rounds: 500_000_000)))) != .within)
        #expect(MachineRate.sha256RoundsPerSecond > 100_000 && MachineRate.sha256RoundsPerSecond < 100_000_000)
    }

    @Test func maxWorkReplacesTheDefault() throws {
        var policy = try HashPolicy(rounds: 1000)
        try policy.costLimits.setMaximumWork(seconds: 0.01)
        #expect(policy.costVerdict(of: try #require(Self.hash(Self.own(rounds: 1000)))) == .within)
        guard case .tooCostly(let why) = policy.costVerdict(of: try #require(Self.hash(Self.own(rounds: 10_000_000))))
        else {
            Issue.record("10,000,000 rounds within max-work 0.01 s")
            return
        }
        #expect(why.maximumSeconds == 0.01)
        #expect(why.description.contains("(max-work 0.01 s)"))
        try policy.costLimits.setMaximumWork(seconds: nil)
        #expect(policy.costVerdict(of: try #require(Self.hash(Self.own(rounds: 1_000_000)))) == .within)
    }

    @Test func limitsStayInTheirRanges() throws {
        #expect(throws: CredFileError.self) { try CostLimits(maximumWorkSeconds: 0) }
        #expect(throws: CredFileError.self) { try CostLimits(maximumWorkSeconds: -1) }
        #expect(throws: CredFileError.self) { try CostLimits(maximumWorkSeconds: .infinity) }
        #expect(throws: CredFileError.self) { try CostLimits(maximumWorkSeconds: .nan) }
        #expect(throws: CredFileError.self) { try CostLimits(maximumMemory: (1 << 20) - 1) }
        #expect(throws: CredFileError.self) { try CostLimits(maximumMemory: (1 << 40) + 1) }
        var limits = CostLimits.standard
        #expect(throws: CredFileError.self) { try limits.setMaximumMemory(0) }
        #expect(limits == .standard)
        #expect(try CostLimits(maximumWorkSeconds: 0.001, maximumMemory: 1 << 20).maximumMemory == 1 << 20)
    }

    @Test(arguments: [
        ("256M", 256 << 20), ("1G", 1 << 30), ("262144K", 256 << 20), ("1GiB", 1 << 30), ("512MiB", 512 << 20),
        ("1048576", 1 << 20), ("1T", 1 << 40), ("2KiB", 2048),
    ])
    func sizesAreRead(_ text: String, _ bytes: Int) {
        #expect(CostLimits.parseSize(text) == bytes)
        #expect(CostLimits.parseSize(CostLimits.formatSize(bytes)) == bytes)
    }

    @Test(arguments: ["", "M", "-1M", "1.5G", "1 G", "01M", "1g", "1MB", "1e9", "9223372036854775807K", "+1G"])
    func badSizesAreRefused(_ text: String) {
        #expect(CostLimits.parseSize(text) == nil)
    }

    // MARK: Through the front door and the binary

    @Test func checkReportsTheFigureAndListSaysMalformed() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeText(path, "victim,$2b$31$\(Self.bcryptBody)\nbig,$y$jJT$salt$\(Self.hash43)\n")
            let store = CredentialStore(path: path)
            let findings = try store.findings().filter { $0.line > 0 }
            #expect(findings.count == 2)
            for finding in findings {
                guard case .malformedEntry(_, .tooCostly(let why)) = finding.detail else {
                    Issue.record("line \(finding.line): \(finding.message)")
                    continue
                }
                #expect(finding.severity == .error)
                // bcrypt 31: about 1.4 days here; yescrypt N 2^22 r 32: V alone is 16 GiB.
                #expect(finding.line == 1 ? (why.seconds ?? 0) > 50_000 : (why.memory ?? 0) >= 16 << 30)
            }
            let listing = try store.read().listing(policy: store.policy)
            #expect(listing.map(\.storage.scheme) == ["malformed", "malformed"])
        }
    }

    /// The login refuses the entry before any work: a bcrypt of cost 31 would take about a
    /// day; the binary answers "denied" at once (the child is killed, and the test fails,
    /// if it ever starts the hash).
    @Test func aLoginNeverStartsTheWork() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeText(path, "victim,$2b$31$\(Self.bcryptBody)\nbig,$y$jJT$salt$\(Self.hash43)\n")
            for user in ["victim", "big"] {
                let result = try CLI.start(["verify", path, user, "--iterations", "1000"], stdin: "right-or-wrong\n")
                    .checkedWait(timeout: .seconds(60))
                #expect(result.status == 1, "\(user): \(result.stderr)")
            }
            let check = try CLI.run(["check", path, "--iterations", "1000"])
            #expect(check.status == 1)
            #expect(check.stdout.contains("too costly") || check.stderr.contains("too costly"))
            #expect((check.stdout + check.stderr).contains("yescrypt would allocate 1638"))
            #expect((check.stdout + check.stderr).contains("MiB per login (max-memory 256 MiB)"))
        }
    }

    @Test func theOptionsReachTheBinary() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeText(path, "big,$y$jJT$salt$\(Self.hash43)\n")
            #expect(try CLI.run(["check", path, "--iterations", "1000"]).status == 1)
            let raised = try CLI.run([
                "check", path, "--iterations", "1000", "--max-memory", "32G", "--max-work", "100000",
            ])
            #expect(!(raised.stdout + raised.stderr).contains("too costly"), "\(raised.stdout)")
            let bad = try CLI.run(["check", path, "--max-memory", "12X"])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("--max-memory takes a size"))
            let configuration = dir.file("credfile.conf")
            try writeText(configuration, "max-work = 0.001\n")
            _ = chmod(configuration, 0o600)
            try writeText(path, "own,\(Self.own(rounds: 5_000_000))\n")
            let strict = try CLI.run(
                ["check", path, "--iterations", "1000"], environment: ["CREDFILE_CONFIG": configuration])
            #expect((strict.stdout + strict.stderr).contains("(max-work 0.001 s)"), "\(strict.stdout)\(strict.stderr)")
        }
    }

    // MARK: Strings libxcrypt refuses (issue #25 item 3)

    /// A yescrypt salt that libxcrypt's decoder rejects (1 character, a group with unused
    /// bits set, more than 64 bytes) is malformed when parsed, so `check` finds it and a
    /// login denies it as it denies an unknown name (exit 1, not an I/O error).
    @Test(arguments: ["z", "zz", "zzz", "zzzzz", String(repeating: "A", count: 87)])
    func aYescryptSaltLibxcryptCannotDecodeIsMalformed(_ salt: String) throws {
        let text = "$y$j9T$\(salt)$\(Self.hash43)"
        guard case .malformed(let reason) = SecretSyntax.classify(ArraySlice(Array(text.utf8))) else {
            Issue.record("\(salt): not malformed")
            return
        }
        #expect(reason.contains("salt does not decode"))
        // libxcrypt itself refuses it: crypt_rn fails, and matching says no, never throws.
        #expect(!Libxcrypt.matches(SecretBytes(Array("pw".utf8)), stored: ArraySlice(Array(text.utf8))))
    }

    @Test func aStringLibxcryptRefusesIsDeniedLikeAnUnknownName() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeText(path, "victim,$y$j9T$z$\(Self.hash43)\n")
            let victim = try CLI.run(["verify", path, "victim", "--iterations", "1000"], stdin: "some-password\n")
            let stranger = try CLI.run(["verify", path, "nobody", "--iterations", "1000"], stdin: "some-password\n")
            #expect(victim.status == 1 && stranger.status == 1)
            #expect(victim.stdout == stranger.stdout)
            #expect(victim.message == stranger.message)
            let check = try CLI.run(["check", path, "--iterations", "1000"])
            #expect(check.status == 1)
            #expect((check.stdout + check.stderr).contains("yescrypt salt does not decode"))
        }
    }
}

/// `max-work` and `max-memory` as configuration keys and options (SPEC §5).
@Suite("Cost limits in the configuration file")
struct CostLimitConfigurationTests {
    @Test func theKeysSetThePolicysLimits() throws {
        let text = "max-work = 0.5\nmax-memory = 1G\n[/srv/other.cred]\nmax-memory = 64M\n"
        let configuration = try CredFileConfiguration(parsing: Array(text.utf8), source: "/etc/credfile.conf")
        let policy = try configuration.hashPolicy(for: "/srv/app.cred")
        #expect(policy.costLimits.maximumWorkSeconds == 0.5)
        #expect(policy.costLimits.maximumMemory == 1 << 30)
        #expect(try configuration.hashPolicy(for: "/srv/other.cred").costLimits.maximumMemory == 64 << 20)
        #expect(try CredFileConfiguration.none.hashPolicy(for: nil).costLimits == .standard)
    }

    @Test(arguments: [
        "max-memory = 12X", "max-memory = 0", "max-memory = 2T", "max-memory = 512", "max-work = 0", "max-work = -1",
        "max-work = 1e3",
    ])
    func aBadValueNamesItsLine(_ line: String) {
        do {
            _ = try CredFileConfiguration(parsing: Array("# limits\n\(line)\n".utf8), source: "/etc/credfile.conf")
            Issue.record("\(line) accepted")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message.contains("/etc/credfile.conf:2"), "\(error.message)")
        }
    }
}
