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
        var text: [UInt8] = []
        append(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends ``description`` to `out` as UTF-8, without building a String.
    public func append(to out: inout [UInt8]) {
        out.append(contentsOf: scheme.utf8)
        if let unsupportedScheme {
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: unsupportedScheme.utf8)
        } else if var cost {
            out.append(UInt8(ascii: " "))
            if cost < 0 { out.append(UInt8(ascii: "-")) }
            let start = out.count
            repeat {
                out.append(UInt8(ascii: "0") + UInt8(abs(cost % 10)))
                cost /= 10
            } while cost != 0
            out[start...].reverse()
        }
    }
}

extension StoredSecret {
    /// How this secret is stored, judged under `policy`.
    public func storage(under policy: HashPolicy) -> StorageSummary {
        switch self {
        case .plaintext:
            StorageSummary(scheme: "plaintext", unsupportedScheme: nil, cost: nil, isWeak: false)
        case .pbkdf2(let hash): hash.header.storage(under: policy)
        case .peer(let peer):
            StorageSummary(scheme: peer.hash.scheme, unsupportedScheme: nil, cost: peer.hash.cost, isWeak: policy.isWeak(self))
        case .unsupportedHash(let scheme):
            StorageSummary(scheme: "unsupported", unsupportedScheme: scheme, cost: nil, isWeak: false)
        case .malformed:
            StorageSummary(scheme: "malformed", unsupportedScheme: nil, cost: nil, isWeak: false)
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
        StorageSummary(scheme: algorithm.identifier, unsupportedScheme: nil, cost: rounds, isWeak: policy.isWeak(self))
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
