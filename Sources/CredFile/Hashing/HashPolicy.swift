/// The PRF of PBKDF2: what `$pbkdf2-sha256$`/`$pbkdf2-sha512$` hashes are made with. (The
/// policy's algorithm, which can also be argon2id, is ``HashPolicy/Algorithm``.)
public enum HashAlgorithm: String, CaseIterable, Sendable, CustomStringConvertible {
    /// HMAC-SHA-256, passlib's `pbkdf2_sha256`.
    case sha256
    /// HMAC-SHA-512, passlib's `pbkdf2_sha512`.
    case sha512

    /// Bytes of the digest, and so of a passlib checksum: 32 or 64.
    public var digestCount: Int { self == .sha256 ? 32 : 64 }
    /// The identifier between the first two `$`: `pbkdf2-sha256`.
    public var identifier: String { self == .sha256 ? "pbkdf2-sha256" : "pbkdf2-sha512" }
    /// `sha256` or `sha512`.
    public var description: String { rawValue }
}

/// The parameters of a new argon2id hash (SPEC §3.1: `memory`, `time`, `lanes`), always
/// within the ranges credfile itself verifies, so a hash it writes is one it can read.
public struct Argon2Parameters: Equatable, Sendable, CustomStringConvertible {
    /// Memory in KiB: 8 × lanes (Argon2's floor) up to 1 GiB.
    public let memoryKiB: Int
    /// Passes over the memory: 1…10.
    public let time: Int
    /// Lanes (Argon2's parallelism `p`): 1…255.
    public let lanes: Int

    /// OWASP's first argon2id configuration: 19,456 KiB (19 MiB), 2 passes, 1 lane.
    public static let owasp = Argon2Parameters(unchecked: 19_456, 2, 1)
    /// The lanes accepted.
    public static let lanesRange = 1...255
    /// The passes a policy may set (what a hash may hold is the cost limits' business).
    public static let timeRange = 1...10
    /// The most memory a policy may set, in KiB: 1 GiB (within ``CostLimits/memoryRange``;
    /// `max-memory` must also allow it, as the configuration file is read).
    public static let maximumMemoryKiB = 1 << 20

    /// Parameters checked against the ranges above.
    /// - Throws: ``CredFileError/Code/usage`` naming the parameter that is out of range.
    public init(
        memoryKiB: Int = Argon2Parameters.owasp.memoryKiB, time: Int = Argon2Parameters.owasp.time,
        lanes: Int = Argon2Parameters.owasp.lanes
    ) throws {
        guard Self.lanesRange.contains(lanes) else {
            throw CredFileError.usage("lanes must be between 1 and \(Self.lanesRange.upperBound)")
        }
        guard Self.timeRange.contains(time) else {
            throw CredFileError.usage("time must be between 1 and \(Self.timeRange.upperBound)")
        }
        guard memoryKiB >= 8 * lanes, memoryKiB <= Self.maximumMemoryKiB else {
            throw CredFileError.usage(
                "memory must be between 8 KiB per lane (\(8 * lanes)) and \(Self.maximumMemoryKiB) KiB")
        }
        self.init(unchecked: memoryKiB, time, lanes)
    }

    private init(unchecked memoryKiB: Int, _ time: Int, _ lanes: Int) {
        self.memoryKiB = memoryKiB
        self.time = time
        self.lanes = lanes
    }

    /// The PHC parameter field: `m=19456,t=2,p=1`.
    public var description: String { "m=\(memoryKiB),t=\(time),p=\(lanes)" }
}

/// How new hashes are made and which existing ones are weak (SPEC §3).
public struct HashPolicy: Equatable, Sendable {
    /// The algorithm of new hashes: PBKDF2 with one of two PRFs, or argon2id (SPEC §3.1,
    /// `--algorithm sha256|sha512|argon2id`).
    public enum Algorithm: String, CaseIterable, Sendable, CustomStringConvertible {
        /// PBKDF2-HMAC-SHA256, `$pbkdf2-sha256$` (the default).
        case sha256
        /// PBKDF2-HMAC-SHA512, `$pbkdf2-sha512$`.
        case sha512
        /// Argon2id in the PHC string format, `$argon2id$v=19$m=…,t=…,p=…$salt$hash`.
        case argon2id

        /// PBKDF2 with `digest`.
        public static func pbkdf2(_ digest: HashAlgorithm) -> Algorithm { digest == .sha256 ? .sha256 : .sha512 }

        /// The PRF when this is PBKDF2; nil for argon2id.
        public var pbkdf2Digest: HashAlgorithm? {
            switch self {
            case .sha256: .sha256
            case .sha512: .sha512
            case .argon2id: nil
            }
        }

        /// `sha256`, `sha512` or `argon2id`: the value of `--algorithm`.
        public var description: String { rawValue }
    }

    /// Rounds a policy may set for new hashes: 1…50,000,000. (A hash string may hold
    /// more; what one costs is judged by ``costLimits``.)
    public static let roundsRange = 1...50_000_000
    /// Django 6.0's default, twice OWASP's floor.
    public static let defaultRounds = 1_200_000
    /// OWASP's 2023 floor for PBKDF2-HMAC-SHA256.
    public static let defaultMinimumRounds = 600_000
    /// Bytes of salt in a new hash.
    public static let saltCount = 16
    /// Bytes of an argon2id hash's tag (argon2-cffi's, passlib's and Django's default).
    public static let argon2TagCount = 32

    /// The algorithm of new hashes.
    public var algorithm: Algorithm
    /// PBKDF2 rounds for new hashes when the algorithm is PBKDF2; always in ``roundsRange``
    /// (change it with ``setRounds(_:)``).
    public private(set) var rounds: Int
    /// Below this a PBKDF2 hash is weak: it verifies, and `check` warns; always in
    /// ``roundsRange`` (change it with ``setMinimumRounds(_:)``).
    public private(set) var minimumRounds: Int
    /// The parameters of new hashes when the algorithm is argon2id.
    public var argon2: Argon2Parameters
    /// How much one login may cost (SPEC §3.1: `max-work`, `max-memory`); an entry over a
    /// limit is malformed ("too costly") under this policy.
    public var costLimits: CostLimits = .standard

    /// Creates a policy.
    /// - Throws: ``CredFileError/Code/usage`` when `rounds` is outside ``roundsRange``.
    public init(
        algorithm: Algorithm = .sha256, rounds: Int = HashPolicy.defaultRounds,
        minimumRounds: Int = HashPolicy.defaultMinimumRounds, argon2: Argon2Parameters = .owasp
    ) throws {
        try Self.check(rounds: rounds, minimumRounds: minimumRounds)
        self.algorithm = algorithm
        self.rounds = rounds
        self.minimumRounds = minimumRounds
        self.argon2 = argon2
    }

    /// Creates a PBKDF2 policy from the PRF alone (the type ``algorithm`` had before it
    /// could be argon2id).
    /// - Throws: ``CredFileError/Code/usage`` when `rounds` is outside ``roundsRange``.
    @_disfavoredOverload
    @available(*, deprecated, message: "use HashPolicy(algorithm: .pbkdf2(digest), …)")
    public init(
        algorithm digest: HashAlgorithm, rounds: Int = HashPolicy.defaultRounds,
        minimumRounds: Int = HashPolicy.defaultMinimumRounds
    ) throws {
        try self.init(algorithm: .pbkdf2(digest), rounds: rounds, minimumRounds: minimumRounds)
    }

    /// Sets the rounds for new hashes.
    /// - Throws: ``CredFileError/Code/usage`` when `rounds` is outside ``roundsRange``; the policy is unchanged then.
    public mutating func setRounds(_ rounds: Int) throws {
        try Self.check(rounds: rounds, minimumRounds: minimumRounds)
        self.rounds = rounds
    }

    /// Sets the weak-hash bar.
    /// - Throws: ``CredFileError/Code/usage`` when `minimumRounds` is outside ``roundsRange``; the policy is unchanged then.
    public mutating func setMinimumRounds(_ minimumRounds: Int) throws {
        try Self.check(rounds: rounds, minimumRounds: minimumRounds)
        self.minimumRounds = minimumRounds
    }

    /// The one range check of a policy: both counts within ``roundsRange``.
    private static func check(rounds: Int, minimumRounds: Int) throws {
        guard roundsRange.contains(rounds) else {
            throw CredFileError.usage("iterations must be between 1 and 50000000")
        }
        guard roundsRange.contains(minimumRounds) else {
            throw CredFileError.usage("the minimum rounds must be between 1 and 50000000")
        }
    }

    /// SHA-256, 1,200,000 rounds, minimum 600,000.
    public static let standard = HashPolicy(unchecked: .sha256, HashPolicy.defaultRounds)

    private init(unchecked algorithm: Algorithm, _ rounds: Int) {
        self.algorithm = algorithm
        self.rounds = rounds
        self.minimumRounds = Self.defaultMinimumRounds
        self.argon2 = .owasp
    }

    /// True when `rounds` are below this policy's minimum (only PBKDF2 policies have rounds).
    public var isBelowMinimum: Bool { algorithm.pbkdf2Digest != nil && rounds < minimumRounds }

    /// True when a PBKDF2 hash is weaker than this policy: fewer rounds, or another
    /// algorithm (Django's `must_update`, passlib's `needs_update`).
    public func needsUpdate(_ hash: PasswordHash) -> Bool {
        hash.algorithm != algorithm.pbkdf2Digest || hash.rounds < rounds
    }

    /// Whether upgrade-on-login rehashes this secret (SPEC §3.1, §3.2, §5): plaintext; a
    /// PBKDF2 hash with fewer rounds or another algorithm than the policy; any other
    /// program's hash (weak or not), except, under an argon2id policy, a PHC `$argon2id$`
    /// string (credfile's own spelling of it) whose memory, passes, salt and tag are
    /// no weaker than the policy's. Unsupported, malformed and locked secrets are never
    /// rehashed (a locked entry never logs in).
    public func needsUpdate(_ secret: StoredSecret) -> Bool {
        switch secret {
        case .plaintext: true
        case .pbkdf2(let hash): needsUpdate(hash)
        case .peer(let peer):
            if algorithm == .argon2id, let hash = peer.hash as? Argon2Hash, peer.isSpelled(startingWith: "$argon2id$") {
                hash.isWeaker(than: argon2)
            } else {
                true
            }
        case .unsupportedHash, .malformed, .locked: false
        }
    }

    /// The work of one verification at this policy, in SHA-256 rounds (see ``KnownHash/estimatedWork``).
    public var estimatedWork: Double {
        algorithm.pbkdf2Digest.map { Double(rounds) * $0.workPerRound } ?? argon2DummyHash.estimatedWork
    }

    /// The work of the weakest PBKDF2 hash that is not weak, in SHA-256 rounds.
    private var minimumWork: Double { Double(minimumRounds) * (algorithm.pbkdf2Digest?.workPerRound ?? 1) }

    /// Whether a peer's hash is weak under this policy (SPEC §3.2): a scheme that no
    /// longer resists offline attack, or less work than the policy's minimum rounds. An
    /// argon2 hash is judged by OWASP's own floor for argon2 instead
    /// (``Argon2Parameters/owaspFloorKiBPasses``): its cost is memory as much as work,
    /// which PBKDF2 rounds do not measure.
    public func isWeak(_ hash: any KnownHash) -> Bool {
        if let argon2 = hash as? Argon2Hash {
            return argon2.memoryKiB * argon2.iterations < Argon2Parameters.owaspFloorKiBPasses
        }
        return hash.isWeak || hash.estimatedWork < minimumWork
    }

    /// Whether a hash costs more to verify than the policy (SPEC §3.1): `check` warns,
    /// since every login of the file then costs what that entry costs.
    public func isCostlier(_ hash: any KnownHash) -> Bool { hash.estimatedWork > estimatedWork * 1.05 }

    /// Whether a hash in credfile's own format costs more to verify than the policy.
    public func isCostlier(_ hash: PasswordHash) -> Bool { costRatio(hash.header) != nil }

    /// The policy's own argon2id hash with a fixed salt and an all-zero tag: what an
    /// unknown name is checked against under an argon2id policy (it matches no password),
    /// and the policy's work when it is argon2id.
    var argon2DummyHash: Argon2Hash {
        Argon2Hash(
            variant: .argon2id, version: 0x13, memoryKiB: argon2.memoryKiB, iterations: argon2.time,
            lanes: argon2.lanes, salt: Self.dummySalt, tag: [UInt8](repeating: 0, count: Self.argon2TagCount))
    }

    /// A fixed salt for dummy hashes; their results are thrown away.
    static let dummySalt = [UInt8](repeating: 0xA5, count: HashPolicy.saltCount)
}

extension Argon2Parameters {
    /// OWASP's smallest argon2id configuration (m = 7,168 KiB, t = 5) in KiB × passes:
    /// an argon2 hash below it is weak. (Its other configurations — 47,104 × 1,
    /// 19,456 × 2, 12,288 × 3, 9,216 × 4 — are all above.)
    public static let owaspFloorKiBPasses = 7_168 * 5

    /// Whether hashes with these parameters are weak: memory × passes below
    /// ``owaspFloorKiBPasses``.
    public var isBelowOWASPFloor: Bool { memoryKiB * time < Self.owaspFloorKiBPasses }
}

extension Argon2Hash {
    /// Whether this hash is weaker than new hashes made with `parameters`: less memory,
    /// fewer passes, or a shorter salt or tag than credfile writes (passlib's
    /// `needs_update` compares the same settings).
    func isWeaker(than parameters: Argon2Parameters) -> Bool {
        variant != .argon2id || version != 0x13 || memoryKiB < parameters.memoryKiB || iterations < parameters.time
            || salt.count < HashPolicy.saltCount || tag.count < HashPolicy.argon2TagCount
    }
}

extension HashAlgorithm {
    /// The PRF of this policy algorithm.
    var prf: PRF { self == .sha256 ? .sha256 : .sha512 }
}

// MARK: Judging stored secrets

extension StoredSecret {
    /// How this secret is stored, judged under `policy`.
    public func storage(under policy: HashPolicy) -> StorageSummary {
        switch self {
        case .plaintext:
            StorageSummary(scheme: "plaintext", unsupportedScheme: nil, cost: nil, isWeak: false)
        case .pbkdf2(let hash): hash.header.storage(under: policy)
        case .peer(let peer) where policy.costVerdict(of: peer.hash) != .within:  // SPEC §3.1: too costly
            StoredSecret.malformed(reason: "").storage(under: policy)
        case .peer(let peer):
            StorageSummary(
                scheme: peer.hash.scheme, unsupportedScheme: nil, cost: peer.hash.cost, isWeak: policy.isWeak(self))
        case .unsupportedHash(let scheme):
            StorageSummary(scheme: "unsupported", unsupportedScheme: scheme, cost: nil, isWeak: false)
        case .malformed:
            StorageSummary(scheme: "malformed", unsupportedScheme: nil, cost: nil, isWeak: false)
        case .locked(let hash): hash.storage(under: policy).locked()
        }
    }
}

extension HashPolicy {
    /// Whether `secret` is a hash that still verifies but is weak under this policy
    /// (SPEC §3.1: fewer rounds than ``minimumRounds``; SPEC §3.2: a scheme that no longer
    /// resists offline attack, or less work than the minimum): `check` warns, `list` and
    /// `upgrade` count it. The one place that decides it for a stored secret.
    public func isWeak(_ secret: StoredSecret) -> Bool {
        switch secret {
        case .pbkdf2(let hash): isWeak(hash.header)
        case .peer(let peer): isWeak(peer.hash)
        case .locked(let hash): isWeak(hash)  // weak again the day it is unlocked
        case .plaintext, .unsupportedHash, .malformed: false
        }
    }

    /// Whether `secret` costs more to verify than this policy (SPEC §3.1: a `check`
    /// warning, since such logins take longer and tell that the user exists), and how
    /// many times the policy's work it is.
    public func costRatio(_ secret: StoredSecret) -> Double? {
        switch secret {
        case .pbkdf2(let hash): costRatio(hash.header)
        case .peer(let peer) where isCostlier(peer.hash):
            peer.hash.estimatedWork / estimatedWork
        default: nil
        }
    }
}

extension PasswordHash.Header {
    /// How a hash with this header is stored, judged under `policy`.
    func storage(under policy: HashPolicy) -> StorageSummary {
        if policy.costVerdict(of: self) != .within {  // SPEC §3.1: too costly, so malformed
            return StoredSecret.malformed(reason: "").storage(under: policy)
        }
        return StorageSummary(
            scheme: algorithm.identifier, unsupportedScheme: nil, cost: rounds, isWeak: policy.isWeak(self))
    }
}

extension HashPolicy {
    /// Whether a hash in credfile's own format is weak: fewer rounds than ``minimumRounds``.
    func isWeak(_ header: PasswordHash.Header) -> Bool { header.rounds < minimumRounds }

    /// How many times this policy's work a hash in credfile's own format costs, when it
    /// costs more (``isCostlier(_:)-(PasswordHash)``); nil otherwise.
    func costRatio(_ header: PasswordHash.Header) -> Double? {
        let work = Double(header.rounds) * header.algorithm.workPerRound
        return work > estimatedWork * 1.05 ? work / estimatedWork : nil
    }
}
