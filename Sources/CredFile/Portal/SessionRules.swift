/// The limits on the portal's sessions (SPEC §11): `session-idle`, `session-max` and
/// `session-limit`.
public struct SessionLimits: Sendable, Equatable {
    /// The longest `session-max`: 30 days (NIST SP 800-63B-4's bound at AAL1).
    public static let longestLifetime = 30 * 86_400
    /// The most sessions `session-limit` may allow one user.
    public static let largestPerUser = 1024
    /// Last-seen is written at most once in this many seconds per session.
    public static let touchInterval: Int64 = 60

    /// Seconds without a request after which a session ends (`session-idle`, default 3,600).
    public let idle: Int
    /// Seconds after sign-in after which a session ends whatever its activity (`session-max`,
    /// default 86,400).
    public let maximum: Int
    /// Sessions one user may hold; a new one ends the oldest (`session-limit`, default 16).
    public let perUser: Int

    /// Limits checked against SPEC §11's bounds.
    /// - Throws: ``CredFileError/Code/usage`` for an idle or maximum below one second, a
    ///   maximum over 30 days, or a per-user count outside 1–1,024.
    public init(idle: Int = 3600, maximum: Int = 86_400, perUser: Int = 16) throws {
        guard idle >= 1 else { throw CredFileError(.usage, "session-idle must be at least 1 second") }
        guard (1...Self.longestLifetime).contains(maximum) else {
            throw CredFileError(.usage, "session-max must be between 1 and \(Self.longestLifetime) seconds (30 days)")
        }
        guard (1...Self.largestPerUser).contains(perUser) else {
            throw CredFileError(.usage, "session-limit must be between 1 and \(Self.largestPerUser)")
        }
        self.idle = idle
        self.maximum = maximum
        self.perUser = perUser
    }

    /// What a stored session is worth at `now`, and whether its last-seen needs writing.
    ///
    /// In this order: `session-max` seconds after its start it has ``SessionVerdict/expired``
    /// (activity never moves that); `session-idle` seconds after the last-seen stored it is
    /// ``SessionVerdict/idle``; when its user's entry is gone or its keyed digest differs from
    /// the one remembered at sign-in it is ``SessionVerdict/entryChanged``. Otherwise it is
    /// active, and last-seen is due for writing once ``touchInterval`` seconds have passed
    /// since the stored one. (Last-seen stored at most a minute late means a session may end
    /// up to a minute before `session-idle` seconds of true idleness; never after.)
    /// - Parameters:
    ///   - record: the stored session.
    ///   - now: seconds since 1970.
    ///   - entryDigest: the keyed digest of the user's line now, nil when the user has none.
    public func judge(_ record: SessionRecord, now: Int64, entryDigest: [UInt8]?) -> SessionVerdict {
        if now - record.started >= Int64(maximum) || now < record.started { return .expired }
        if now - record.lastSeen >= Int64(idle) { return .idle }
        guard let entryDigest,
            entryDigest.withUnsafeBytes({ a in record.entryDigest.withUnsafeBytes { OpenSSL.constantTimeEqual(a, $0) } }
            )
        else { return .entryChanged }
        return .active(touch: now - record.lastSeen >= Self.touchInterval)
    }
}

/// What a session is worth at one moment (``SessionLimits/judge(_:now:entryDigest:)``).
public enum SessionVerdict: Sendable, Equatable {
    /// Valid; `touch` when its last-seen should be written now.
    case active(touch: Bool)
    /// Idle for `session-idle` seconds.
    case idle
    /// Older than `session-max` seconds (or started in the future: a clock set back).
    case expired
    /// Its user's entry changed (passwd, lock, delete, a rehash, another tool's edit).
    case entryChanged
}

/// The keyed digest of a user's line (SPEC §11): HMAC-SHA-256 under a key kept in the state
/// database. A session remembers it at sign-in; any change of the line — `passwd`, `lock`,
/// `delete`, `upgrade`'s rehash, an edit by another tool — gives another digest, and the
/// session ends at its next request. Keyed, so the database does not hold a plain digest
/// of each line (a hash of a hash an attacker could test guesses against offline).
public struct EntryDigester: Sendable {
    private let key: SecretBytes

    /// A digester under `key` (at least 32 bytes, from the state database).
    public init(key: SecretBytes) {
        precondition(key.count >= 32, "an entry-digest key has at least 32 bytes")
        self.key = key
    }

    /// The digest of `line` (the entry's bytes, without its line ending).
    public func digest(ofLine line: some Collection<UInt8>) -> [UInt8] {
        let labelled = Array("credfile entry\u{0}".utf8) + Array(line)
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { key in
            labelled.withUnsafeBytes { data in
                out.withUnsafeMutableBytes { OpenSSL.hmacSHA256(key: key, data, into: $0) }
            }
        }
        return out
    }
}
