import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

/// SPEC §3.1's timing rule without timing anything: every login of a file version runs
/// the same plan (``LoginPlan``), whatever the name, its entry's scheme, cost or state.
/// These tests check the plan's choices and the steps each login ran (``WorkMeter``);
/// the times themselves are measured by `Benchmarks/bench.py timing`, never in a test.
@Suite("Timing rule: one plan per file version, the same steps for every name")
struct TimingPlanTests {
    /// A bcrypt cost 5 hash of "password" (htpasswd -nbB -C 5, Tests/CredFileTests/Vectors/peers-debian.txt).
    static let bcrypt5 = "$2y$05$EQa4KXgBoniQtpHKRtLvK.Mw/W5bArjsvWPNeqad51oK1.XmLo7km"

    /// A hash in credfile's own format with a fixed salt: well-formed, matching no password.
    static func own(_ digest: HashAlgorithm, _ rounds: Int) -> String {
        // swift-format-ignore: NeverUseForceTry
        // (a fixed, valid policy or hash of a test table: built where no error can be thrown)
        let hash = try! PasswordHash(  // in range by construction
            algorithm: digest, rounds: rounds, salt: Array(repeating: 7, count: 16),
            checksum: Array(repeating: 1, count: digest.digestCount))
        return hash.string
    }

    /// The census of a file holding `secrets` as `user0,…`, `user1,…`, under `policy`'s cost limits.
    static func census(_ secrets: [String], within policy: HashPolicy = .standard) -> CostCensus {
        let text = secrets.enumerated().map { "user\($0.offset),\($0.element)\n" }.joined()
        return Array(text.utf8).withUnsafeBytes { CostCensus(file: $0, within: policy) }
    }

    /// Every class of `census` and the policy's own is stacked in `plan` or fits its host:
    /// PBKDF2 of the host's PRF by rounds, anything else with the plan's margin.
    static func everyClassFits(_ plan: LoginPlan, _ census: CostCensus, _ policy: HashPolicy) -> Bool {
        var classes: [(VerificationCost, Double)] = census.pbkdf2Rounds.map {
            (.pbkdf2($0.key, rounds: $0.value), Double($0.value) * $0.key.workPerRound)
        }
        classes += census.schemes.keys.map { (.scheme($0), $0.work) }
        classes.append((policy.dummyCost, policy.estimatedWork))
        return classes.allSatisfy { cost, work in
            if plan.stacked.contains(where: { $0.holds(cost) }) { return true }
            if case .pbkdf2(let prf, let rounds) = cost, prf == plan.host.prf { return rounds <= plan.host.rounds }
            let margin = if case .pbkdf2 = cost { LoginPlan.pbkdf2Margin } else { LoginPlan.schemeMargin }
            return work * margin <= Double(plan.host.rounds) * plan.host.prf.workPerRound
        }
    }

    struct PlanCase: CustomTestStringConvertible, Sendable {
        let testDescription: String
        let secrets: [String]
        let policy: HashPolicy
        /// The host the plan must end with, when the case decides it.
        let host: (prf: PRF, rounds: Int)?
    }

    // The table's policies are fixed and valid: built where no error can be thrown.
    // swift-format-ignore: NeverUseForceTry
    static let planCases: [PlanCase] = [
        PlanCase(
            testDescription: "a sha512 entry under a sha256 policy: the sha512 entry is the host",
            secrets: [own(.sha256, 1_200_000), own(.sha512, 1_200_000)], policy: .standard, host: (.sha512, 1_200_000)),
        PlanCase(
            testDescription: "a 1,200,000-round entry under --iterations 200000: the host has its rounds",
            secrets: [own(.sha256, 200_000), own(.sha256, 1_200_000)], policy: try! HashPolicy(rounds: 200_000),
            host: (.sha256, 1_200_000)),
        PlanCase(
            testDescription: "a user added at calibrate's advice, checked at the default: the host has its rounds",
            secrets: [own(.sha256, 1_200_000), own(.sha256, 2_914_000)], policy: .standard, host: (.sha256, 2_914_000)),
        PlanCase(
            testDescription: "bcrypt among PBKDF2 users: stacked, or absorbed with its margin",
            secrets: [own(.sha256, 1_000), bcrypt5], policy: try! HashPolicy(rounds: 1_000), host: nil),
        PlanCase(
            testDescription: "no costlier entry: the policy's own PBKDF2 is the host, nothing stacked",
            secrets: [own(.sha256, 600_000), "plain-password", "$pbkdf2-sha256$40000000$bad$bad", "$9$c2FsdA$aGFzaA"],
            policy: .standard, host: (.sha256, 1_200_000)),
        PlanCase(
            testDescription: "an argon2id policy over argon2id users: the policy's class stacked, an empty host",
            secrets: [],
            policy: try! HashPolicy(algorithm: .argon2id, argon2: Argon2Parameters(memoryKiB: 64, time: 1)),
            host: (.sha256, 0)),
    ]

    @Test(arguments: planCases)
    func thePlanCostsTheCostliestEntryAndHoldsEveryClass(_ row: PlanCase) {
        let census = Self.census(row.secrets, within: row.policy)
        let plan = LoginPlan(census: census, policy: row.policy)
        if let host = row.host {
            #expect(plan.host.prf == host.prf && plan.host.rounds == host.rounds, "host \(plan.host)")
        }
        #expect(Self.everyClassFits(plan, census, row.policy))
        // At least the costliest class, and not much more than a margin over it.
        let costliest =
            ([row.policy.estimatedWork] + census.schemes.keys.map(\.work)
            + census.pbkdf2Rounds.map { Double($0.value) * $0.key.workPerRound }).max()!
        #expect(plan.estimatedWork >= costliest)
        #expect(plan.estimatedWork <= costliest * LoginPlan.schemeMargin + 1)
    }

    @Test("the plan does not depend on the order the census saw the entries in")
    func thePlanIsTheSameInEveryProcess() {
        let secrets = [
            Self.own(.sha256, 1_200_000), Self.own(.sha512, 700_000), Self.bcrypt5,
            "$1$saltsalt$7N7XZ6QEDGxlGNczoNTXc1",
        ]
        let plans = [secrets, Array(secrets.reversed())].map { LoginPlan(census: Self.census($0), policy: .standard) }
        #expect(plans[0].host == plans[1].host)
        #expect(plans[0].stacked.count == plans[1].stacked.count)
        #expect(plans[0].estimatedWork == plans[1].estimatedWork)
    }

    // MARK: The census

    @Test("the census: duplicates and later lines count, comments, plaintext and broken hashes do not")
    func theCensusCountsWhatCanVerify() {
        let census = Self.census([
            Self.own(.sha256, 1_000), Self.own(.sha256, 5_000), "$pbkdf2-sha256$40000000$bad$bad", "plain,with,commas",
            Self.own(.sha512, 2_000), Self.bcrypt5, "$9$c2FsdA$aGFzaA",
        ])
        #expect(census.pbkdf2Rounds == [.sha256: 5_000, .sha512: 2_000])
        #expect(census.schemes.keys.map(\.name) == ["bcrypt"])
        let commented = Array("#user,\(Self.own(.sha256, 9_000))\n,\(Self.own(.sha256, 8_000))\n".utf8)
        #expect(commented.withUnsafeBytes { CostCensus(file: $0, within: .standard) }.pbkdf2Rounds.isEmpty)
        // A BOM, CRLF endings and a last line without one.
        let bom = Array("\u{FEFF}a,\(Self.own(.sha256, 3_000))\r\nb,\(Self.own(.sha512, 4_000))".utf8)
        #expect(
            bom.withUnsafeBytes { CostCensus(file: $0, within: .standard) }.pbkdf2Rounds == [
                .sha256: 3_000, .sha512: 4_000,
            ])
    }

    @Test(
        "the census of random files equals a naive reading: each line split by hand, each secret classified in full",
        arguments: 0..<40)
    func theCensusMatchesANaiveReading(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let pieces = [
            Self.own(.sha256, 1_000), Self.own(.sha256, 7_000), Self.own(.sha512, 300), "$pbkdf2-sha256$90000$bad$bad",
            "$pbkdf2-sha256$000$x$y", "$pbkdf2-sha512$99999999$x$y", Self.bcrypt5, "$1$saltsalt$7N7XZ6QEDGxlGNczoNTXc1",
            "$5$rounds=5000$saltsalt$\(String(repeating: "a", count: 43))", "plain", "pl$ain", "{SSHA}x", "$9$a$b", "",
        ]
        var text: [UInt8] = random.chance(0.2) ? [0xEF, 0xBB, 0xBF] : []
        for _ in 0..<Int.random(in: 0...30, using: &random) {
            let name = random.pick(["u", "", "#c", " v", "w\u{0301}", "x,y"])
            let line = random.chance(0.1) ? "no-comma-line" : name + "," + random.pick(pieces)
            text += Array(line.utf8) + random.pick([[0x0A], [0x0D, 0x0A], [0x0D], [0x00, 0x0A]])
        }
        if random.chance(0.3) { text += Array("last,\(Self.own(.sha512, 5_000))".utf8) }
        let fast = text.withUnsafeBytes { CostCensus(file: $0, within: .standard) }
        // The naive reading: after a BOM, split at every LF by hand, a CR before an LF is the
        // ending's (a CR ending the file is not), a line with a name (not a comment)
        // counts its whole secret.
        var naive = CostCensus(within: .standard)
        var body = text[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        let lines = body.split(separator: 0x0A, omittingEmptySubsequences: false)
        for (index, var line) in lines.enumerated() {
            if line.last == 0x0D, index < lines.count - 1 { line = line.dropLast() }
            guard line.first != UInt8(ascii: "#"), let comma = line.firstIndex(of: UInt8(ascii: ",")),
                comma > line.startIndex
            else { continue }
            naive.add(SecretSyntax.classify(line[(comma + 1)...]))
        }
        #expect(fast.pbkdf2Rounds == naive.pbkdf2Rounds, "seed \(seed)")
        #expect(Set(fast.schemes.keys) == Set(naive.schemes.keys), "seed \(seed)")
        #expect(fast.droppedWork == naive.droppedWork, "seed \(seed)")

        // A login's one pass finds the line the parser's firstEntry(named:) finds, for every
        // name (NFC-compared: "w" + U+0301 is found as "ẃ"), through pieces of any size.
        let directory = try TemporaryDirectory.make(prefix: "census-names")
        defer { directory.remove() }
        let path = directory.file("users.txt")
        try writeBytes(path, text)
        let parsed = CredentialFile(bytes: text)
        let store = CredentialStore(path: path)
        for name in ["u", " v", "w\u{0301}", "\u{1E83}", "x", "last", "#c", "nobody"] {
            let expected = parsed.firstEntry(named: name).map { Array($0.content) }
            for pieceSize in [5, 1 << 17] {
                let found = try store.loginLookUp(named: name, pieceSize: pieceSize).0.map(Array.init)
                #expect(found == expected, "seed \(seed), \(name.debugDescription), pieces of \(pieceSize)")
            }
        }
    }

    @Test(
        "only entries within the cost limits count: too costly ones (work or memory) are refused like unknown names, so they must not raise every login's cost"
    )
    func theCensusLeavesOutTooCostlyEntries() throws {
        var policy = try HashPolicy(rounds: 1_000)
        // ~14,000 rounds here; bcrypt 12 and 5,000,000 rounds far above
        try policy.costLimits.setMaximumWork(seconds: 0.001)
        try policy.costLimits.setMaximumMemory(1 << 20)
        let argon2 = { (memory: Int) in
            "$argon2id$v=19$m=\(memory),t=1,p=1$\(Argon2PolicyLibraryTests.salt16)$\(Argon2PolicyLibraryTests.tag32)"
        }
        let secrets = [
            Self.own(.sha256, 5_000_000), Self.own(.sha256, 1_000), Self.own(.sha256, 5_000_000),
            Self.own(.sha256, 2_000),
            Self.own(.sha512, 3_000_000), Self.bcrypt5.replacingOccurrences(of: "$05$", with: "$12$"), argon2(2_048),
            argon2(64),
        ]
        for census in [Self.census(secrets, within: policy), Self.census(secrets.reversed(), within: policy)] {
            #expect(census.pbkdf2Rounds == [.sha256: 2_000])
            #expect(census.schemes.keys.map(\.name) == ["argon2id"])
            #expect(census.schemes.values.map { $0.estimatedMemory } == [64 * 1024], "the m=64 one, not m=2048")
        }
        // The one-shot pass and the caching store's census say the same.
        let directory = try TemporaryDirectory.make(prefix: "census-limits")
        defer { directory.remove() }
        let path = directory.file("users.txt")
        try writeBytes(path, Array(secrets.enumerated().map { "user\($0.offset),\($0.element)\n" }.joined().utf8))
        for caching in [false, true] {
            let store = CredentialStore(path: path, policy: policy, caching: caching)
            let census = try store.loginLookUp(named: "user0").1
            #expect(census.pbkdf2Rounds == [.sha256: 2_000], "caching \(caching)")
            #expect(census.schemes.keys.map(\.name) == ["argon2id"], "caching \(caching)")
        }
    }

    @Test("a census is bounded: the cheapest scheme classes are dropped and their work remembered")
    func theCensusIsBounded() {
        // sha256-crypt with 1,000…1,011 rounds: twelve classes of one scheme.
        var census = CostCensus(within: .standard)
        for extra in 0..<12 {
            guard
                case .peer(let peer) = SecretSyntax.classify(
                    ArraySlice("$5$rounds=\(1000 + extra)$saltsalt$\(String(repeating: "a", count: 42)).".utf8))
            else { Issue.record("sha256-crypt did not parse"); return }
            census.add(peer.hash)
        }
        #expect(census.schemes.count == CostCensus.keptSchemes)
        let kept = census.schemes.keys.map(\.work)
        #expect(census.droppedWork > 0 && census.droppedWork < kept.min()!)
    }

    // MARK: The steps of each login

    /// Logs in as each user of `secrets` with a wrong password, and as an unknown name,
    /// and gives the steps each login ran.
    static func steps(_ secrets: [String], policy: HashPolicy, password: String = "wrong-password-2026")
        throws -> [String: [WorkMeter.Step]]
    {
        let text = secrets.enumerated().map { "user\($0.offset),\($0.element)\n" }.joined()
        let bytes = Array(text.utf8)
        let census = bytes.withUnsafeBytes { CostCensus(file: $0, within: .standard) }
        let file = CredentialFile(bytes: bytes)
        let meter = WorkMeter()
        let verifier = Verifier(policy: policy, census: census, meter: meter)
        var steps: [String: [WorkMeter.Step]] = [:]
        for (index, secret) in secrets.enumerated() {
            meter.reset()
            #expect(
                try verifier.denial(of: Password(password), against: file.firstEntry(named: "user\(index)")?.entry)
                    != nil)
            steps[secret] = meter.steps
        }
        meter.reset()
        #expect(try verifier.denial(of: Password(password), against: nil) == .unknownUser)
        steps["unknown name"] = meter.steps
        return steps
    }

    /// The steps without who ran them: what must be the same for every login.
    static func shape(_ steps: [WorkMeter.Step]) -> [WorkMeter.Step] {
        steps.map {
            switch $0 {
            case .stacked(let index, _, let rounds): .stacked(index: index, own: false, rounds: rounds)
            case .host(let rounds, _): .host(rounds: rounds, measured: false)
            }
        }
    }

    struct StepsCase: CustomTestStringConvertible, Sendable {
        let testDescription: String
        let secrets: [String]
        let policy: HashPolicy
        /// The secrets whose verification must be absorbed by measurement (no other may be).
        let measured: Set<String>
    }

    // The table's policies are fixed and valid: built where no error can be thrown.
    // swift-format-ignore: NeverUseForceTry
    static let stepsCases: [StepsCase] = [
        StepsCase(
            testDescription: "a sha512 entry under a sha256 policy",
            secrets: [own(.sha256, 2_000), own(.sha512, 2_000)], policy: try! HashPolicy(rounds: 2_000),
            measured: [own(.sha256, 2_000), "unknown name"]),
        StepsCase(
            testDescription: "more rounds than --iterations, weak, plaintext, malformed, unsupported, locked",
            secrets: [
                own(.sha256, 1_000), own(.sha256, 3_000), own(.sha256, 10), "plain-password-2026",
                "$pbkdf2-sha256$1000$bad$bad", "$9$c2FsdA$aGFzaA", "!" + own(.sha256, 1_000),
            ],
            policy: try! HashPolicy(rounds: 1_000), measured: []),
        StepsCase(
            testDescription: "bcrypt and md5crypt among PBKDF2 users",
            secrets: [own(.sha256, 1_000), bcrypt5, "$1$saltsalt$7N7XZ6QEDGxlGNczoNTXc1"],
            policy: try! HashPolicy(rounds: 1_000), measured: ["$1$saltsalt$7N7XZ6QEDGxlGNczoNTXc1"]),
    ]

    @Test(arguments: stepsCases)
    func everyLoginRunsTheSameSteps(_ row: StepsCase) throws {
        let steps = try Self.steps(row.secrets, policy: row.policy)
        let unknown = try #require(steps["unknown name"])
        let plan = LoginPlan(census: Self.census(row.secrets), policy: row.policy)
        // One step per stacked class, then the host, whose rounds are the plan's.
        #expect(unknown.count == plan.stacked.count + 1)
        #expect(Self.shape(Array(unknown.suffix(1))) == [.host(rounds: plan.host.rounds, measured: false)])
        for (secret, login) in steps {
            #expect(Self.shape(login) == Self.shape(unknown), "\(secret.prefix(20))…: \(login) ≠ \(unknown)")
            if case .host(_, let measured)? = login.last {
                #expect(measured == row.measured.contains(secret), "\(secret.prefix(20))… measured: \(measured)")
            }
        }
    }

    @Test("with bcrypt stacked, its own users verify in its place and everyone else runs its dummy")
    func aStackedClassIsRunByEveryLogin() throws {
        // A policy of one round: bcrypt 5 is far costlier, too costly to absorb cheaply.
        let policy = try HashPolicy(rounds: 1)
        let secrets = [Self.own(.sha256, 1), Self.bcrypt5]
        let plan = LoginPlan(census: Self.census(secrets), policy: policy)
        try #require(plan.stacked.count == 1)
        let steps = try Self.steps(secrets, policy: policy)
        #expect(steps[Self.bcrypt5]?.first == .stacked(index: 0, own: true, rounds: 0))
        #expect(steps[secrets[0]]?.first == .stacked(index: 0, own: false, rounds: 0))
        #expect(steps["unknown name"]?.first == .stacked(index: 0, own: false, rounds: 0))
    }

    @Test("a typed password whose bytes are not NFC doubles every step, whatever the name")
    func twoFormsDoubleTheWholePlan() throws {
        let secrets = [Self.own(.sha256, 1_000), Self.own(.sha256, 3_000)]
        let nfd = "contrase\u{006E}\u{0303}a-2026-wrong"  // "ñ" as n + combining tilde
        let steps = try Self.steps(secrets, policy: try HashPolicy(rounds: 1_000), password: nfd)
        for (_, login) in steps { #expect(login == [.host(rounds: 6_000, measured: false)]) }
    }

    @Test("a right password still logs in through its place in the plan, for every kind")
    func theRightPasswordIsGranted() throws {
        let password = "password"
        let policy = try HashPolicy(rounds: 1)
        let mine = try PasswordHash(hashing: Password(password), policy: try HashPolicy(algorithm: .sha512, rounds: 50))
            .string
        let argon2 = try HashPolicy(algorithm: .argon2id, argon2: Argon2Parameters(memoryKiB: 64, time: 1)).hash(
            Password(password))
        let secrets = [mine, Self.bcrypt5, argon2, "password"]
        let text = secrets.enumerated().map { "user\($0.offset),\($0.element)\n" }.joined()
        let bytes = Array(text.utf8)
        let verifier = Verifier(
            policy: policy, census: bytes.withUnsafeBytes { CostCensus(file: $0, within: .standard) })
        let file = CredentialFile(bytes: bytes)
        for index in secrets.indices {
            let entry = file.firstEntry(named: "user\(index)")?.entry
            #expect(try verifier.denial(of: Password(password), against: entry) == nil, "user\(index)")
            #expect(try verifier.denial(of: Password("x" + password), against: entry) == .wrongPassword, "user\(index)")
        }
    }

    // MARK: Through the store

    @Test("a one-shot login reads the whole file: the census sees an entry after the name's line")
    func aOneShotLoginReadsTheWholeFile() throws {
        let directory = try TemporaryDirectory.make(prefix: "timing-scan")
        defer { directory.remove() }
        let path = directory.file("users.txt")
        let costly = Self.own(.sha512, 3_000)
        try writeText(
            path,
            "\u{FEFF}first,\(Self.own(.sha256, 1_000))\n" + (0..<300).map { "u\($0),plain\($0)\n" }.joined()
                + "last,\(costly)")
        let store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1_000))
        for pieceSize in [7, 64, 1 << 17] {
            let (content, census) = try store.loginLookUp(named: "first", pieceSize: pieceSize)
            #expect(content.map { String(decoding: $0, as: UTF8.self) } == "first,\(Self.own(.sha256, 1_000))")
            #expect(census.pbkdf2Rounds == [.sha256: 1_000, .sha512: 3_000], "piece size \(pieceSize)")
        }
        // The caching store's census of the same file is the same.
        let cached = CredentialStore(path: path, policy: try HashPolicy(rounds: 1_000), caching: true)
        #expect(try cached.loginLookUp(named: "first").1.pbkdf2Rounds == [.sha256: 1_000, .sha512: 3_000])
        #expect(try cached.authenticate(username: "last", password: "wrong") == false)
    }
}
