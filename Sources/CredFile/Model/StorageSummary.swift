/// How an entry's secret is stored, as values and without the secret: what `list`
/// shows, so nobody splits ``StoredSecret/storageDescription`` back into fields.
public struct StorageSummary: Equatable, Sendable, CustomStringConvertible {
    /// `plaintext`, `malformed`, `unsupported`, or the hash's scheme (`pbkdf2-sha256`).
    public let scheme: String
    /// The scheme of an unsupported hash as it is named (`$2y$`, `{SSHA}`, `$?$`); nil otherwise.
    public let unsupportedScheme: String?
    /// The hash's cost parameter (PBKDF2 rounds); nil when it has none.
    public let cost: Int?
    /// Whether the hash is weak under the policy asked (``HashPolicy/isWeak(_:)``).
    public let isWeak: Bool

    /// What `list` prints: `plaintext`, `pbkdf2-sha256 1200000`, `unsupported $2y$`, `malformed`.
    public var description: String {
        if let unsupportedScheme { return "\(scheme) \(unsupportedScheme)" }
        return cost.map { "\(scheme) \($0)" } ?? scheme
    }
}

extension StoredSecret {
    /// How this secret is stored, judged under `policy`.
    public func storage(under policy: HashPolicy) -> StorageSummary {
        switch self {
        case .plaintext:
            StorageSummary(scheme: "plaintext", unsupportedScheme: nil, cost: nil, isWeak: false)
        case .pbkdf2(let hash):
            StorageSummary(
                scheme: hash.algorithm.identifier, unsupportedScheme: nil, cost: hash.rounds, isWeak: policy.isWeak(self))
        case .unsupportedHash(let scheme):
            StorageSummary(scheme: "unsupported", unsupportedScheme: scheme, cost: nil, isWeak: false)
        case .malformed:
            StorageSummary(scheme: "malformed", unsupportedScheme: nil, cost: nil, isWeak: false)
        }
    }
}

extension HashPolicy {
    /// Whether `secret` is a hash that still verifies but is weak under this policy
    /// (SPEC §3.1: fewer rounds than ``minimumRounds``): `check` warns, `list` and
    /// `upgrade` count it. The one place that decides it; the hash layer may take it over.
    public func isWeak(_ secret: StoredSecret) -> Bool {
        guard case .pbkdf2(let hash) = secret else { return false }
        return hash.rounds < minimumRounds
    }
}
