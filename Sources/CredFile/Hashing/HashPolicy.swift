/// The PRF of PBKDF2.
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

/// How new hashes are made and which existing ones are weak (SPEC §3).
public struct HashPolicy: Equatable, Sendable {
    /// Rounds a policy may set for new hashes: 1…50,000,000. (A hash string may hold
    /// more; what one costs is judged by ``costLimits``.)
    public static let roundsRange = 1...50_000_000
    /// Django 6.0's default, twice OWASP's floor.
    public static let defaultRounds = 1_200_000
    /// OWASP's 2023 floor for PBKDF2-HMAC-SHA256.
    public static let defaultMinimumRounds = 600_000
    /// Bytes of salt in a new hash.
    public static let saltCount = 16

    /// The PRF for new hashes.
    public var algorithm: HashAlgorithm
    /// Rounds for new hashes, and the work every `verify` costs at least; always in
    /// ``roundsRange`` (change it with ``setRounds(_:)``).
    public private(set) var rounds: Int
    /// Below this a hash is weak: it verifies, and `check` warns; always in
    /// ``roundsRange`` (change it with ``setMinimumRounds(_:)``).
    public private(set) var minimumRounds: Int
    /// How much one login may cost (SPEC §3.1: `max-work`, `max-memory`); an entry over a
    /// limit is malformed ("too costly") under this policy.
    public var costLimits: CostLimits = .standard

    /// Creates a policy.
    /// - Throws: ``CredFileError/Code/usage`` when `rounds` is outside ``roundsRange``.
    public init(
        algorithm: HashAlgorithm = .sha256, rounds: Int = HashPolicy.defaultRounds,
        minimumRounds: Int = HashPolicy.defaultMinimumRounds
    ) throws {
        try Self.check(rounds: rounds, minimumRounds: minimumRounds)
        self.algorithm = algorithm
        self.rounds = rounds
        self.minimumRounds = minimumRounds
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

    private init(unchecked algorithm: HashAlgorithm, _ rounds: Int) {
        self.algorithm = algorithm
        self.rounds = rounds
        self.minimumRounds = Self.defaultMinimumRounds
    }

    /// True when `rounds` are below this policy's minimum.
    public var isBelowMinimum: Bool { rounds < minimumRounds }

    /// True when a hash is weaker than this policy: fewer rounds, or another algorithm
    /// (Django's `must_update`, passlib's `needs_update`).
    public func needsUpdate(_ hash: PasswordHash) -> Bool {
        hash.algorithm != algorithm || hash.rounds < rounds
    }

    /// The work of one verification at this policy, in SHA-256 rounds (see ``KnownHash/estimatedWork``).
    public var estimatedWork: Double { Double(rounds) * algorithm.workPerRound }

    /// Whether a peer's hash is weak under this policy (SPEC §3.2): a scheme that no
    /// longer resists offline attack, or less work than the policy's minimum rounds.
    public func isWeak(_ hash: any KnownHash) -> Bool {
        hash.isWeak || hash.estimatedWork < Double(minimumRounds) * algorithm.workPerRound
    }

    /// Whether a hash costs more to verify than the policy (SPEC §3.1): its logins take
    /// longer than an unknown user's, which tells that the user exists; `check` warns.
    public func isCostlier(_ hash: any KnownHash) -> Bool { hash.estimatedWork > estimatedWork * 1.05 }

    /// Whether a hash in credfile's own format costs more to verify than the policy.
    public func isCostlier(_ hash: PasswordHash) -> Bool { costRatio(hash.header) != nil }
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
            StorageSummary(scheme: peer.hash.scheme, unsupportedScheme: nil, cost: peer.hash.cost, isWeak: policy.isWeak(self))
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
        return StorageSummary(scheme: algorithm.identifier, unsupportedScheme: nil, cost: rounds, isWeak: policy.isWeak(self))
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
