/// The portal's sessions (SPEC §11), the rules over a ``SessionStorage``: a new token at
/// every sign-in (a pre-login cookie is never promoted), at most `session-limit` per user,
/// idle and absolute limits, last-seen written at most once a minute, and the end of a
/// session whose user's line changed, at its next request.
public struct PortalSessions: Sendable {
    /// Where the sessions are kept.
    public let storage: any SessionStorage
    /// `session-idle`, `session-max`, `session-limit`.
    public let limits: SessionLimits
    private let entries: EntryDigester

    /// The name of the entry-digest key in the storage.
    public static let entryKeyName = "session-entry"

    /// Sessions in `storage` under `limits`.
    /// - Throws: what the storage throws reading or making its entry-digest key.
    public init(storage: any SessionStorage, limits: SessionLimits) throws {
        self.storage = storage
        self.limits = limits
        entries = EntryDigester(key: try storage.key(named: Self.entryKeyName))
    }

    /// Starts a session for `user` after a good login, ending the user's oldest beyond
    /// `session-limit`, and returns its new token (for the cookie; never stored).
    /// - Parameters:
    ///   - user: the name that signed in.
    ///   - line: the user's entry in FILE as it is after the login (its bytes, no line ending).
    ///   - now: seconds since 1970.
    ///   - client: the client's address, when known.
    ///   - userAgent: the browser's `User-Agent`, when given (cut to 256 bytes of UTF-8).
    ///   - secondFactor: the sign-in checked a one-time code too (SPEC §14; §13's `two-factor`).
    ///   - passkey: the sign-in was a passkey's (SPEC §14; ``SessionRecord/passkey``).
    /// - Throws: ``CredFileError/Code/crypto`` when `RAND_bytes` fails; what the storage throws.
    public func start(
        user: String, line: some Collection<UInt8>, now: Int64, client: String? = nil, userAgent: String? = nil,
        secondFactor: Bool = false, passkey: Bool = false
    ) throws -> SessionToken {
        let token = try SessionToken.generate()
        var record = SessionRecord(
            tokenDigest: token.digest, user: user, entryDigest: entries.digest(ofLine: line), started: now,
            lastSeen: now, client: client, userAgent: userAgent.map(Self.shortened), secondFactor: secondFactor)
        record.passkey = passkey
        try storage.insert(record, limit: limits.perUser)
        return token
    }

    /// What a request's session cookie is worth.
    public enum Check: Sendable, Equatable {
        /// Signed in as `user`.
        case signedIn(user: String)
        /// No session: none with that token, or it ended now for `reason` (and was removed).
        case none(reason: SessionVerdict?)
    }

    /// Checks the session of `token` at `now`: a valid one is answered with its user (and
    /// its last-seen written when a minute has passed); an idle, expired or changed one is
    /// removed.
    /// - Parameters:
    ///   - token: from the request's cookie.
    ///   - now: seconds since 1970.
    ///   - line: the user's line in FILE now (its bytes without line ending), nil when FILE
    ///     has no entry of that name.
    /// - Throws: what the storage throws.
    public func check(
        _ token: SessionToken, now: Int64, line: (String) throws -> [UInt8]?
    ) throws -> Check {
        switch try judged(token, now: now, line: line) {
        case .active(let record): .signedIn(user: record.user)
        case .ended(let verdict): .none(reason: verdict)
        }
    }

    /// The session of `token` when ``check(_:now:line:)`` finds it valid (and does what it
    /// does), with everything the record knows: whether its sign-in checked a second factor
    /// (``SessionRecord/secondFactor``, for §13's `two-factor`); nil otherwise.
    /// - Throws: what the storage throws.
    public func signedIn(_ token: SessionToken, now: Int64, line: (String) throws -> [UInt8]?) throws
        -> SessionRecord?
    {
        guard case .active(let record) = try judged(token, now: now, line: line) else { return nil }
        return record
    }

    private enum Judged {
        case active(SessionRecord)
        case ended(SessionVerdict?)
    }

    private func judged(_ token: SessionToken, now: Int64, line: (String) throws -> [UInt8]?) throws -> Judged {
        guard let record = try storage.session(tokenDigest: token.digest) else { return .ended(nil) }
        let current = try line(record.user).map { entries.digest(ofLine: $0) }
        let verdict = limits.judge(record, now: now, entryDigest: current)
        guard case .active(let touch) = verdict else {
            try storage.remove(tokenDigest: token.digest)
            return .ended(verdict)
        }
        if touch { try storage.touch(tokenDigest: token.digest, lastSeen: now) }
        return .active(record)
    }

    /// Ends the session of `token` (sign-out); true when there was one.
    /// - Throws: what the storage throws.
    @discardableResult public func end(_ token: SessionToken) throws -> Bool {
        try storage.remove(tokenDigest: token.digest)
    }

    /// Ends every session of `user` ("sign out everywhere", `credfile sessions FILE USER
    /// --end`), or every session when `user` is nil; how many ended.
    /// - Throws: what the storage throws.
    @discardableResult public func endAll(user: String?) throws -> Int { try storage.removeAll(user: user) }

    /// The sessions of `user`, or all, oldest first (`credfile sessions`): never a token.
    /// - Throws: what the storage throws.
    public func list(user: String?) throws -> [SessionRecord] { try storage.sessions(user: user) }

    /// At most 256 bytes of `text`, cut at a character boundary.
    private static func shortened(_ text: String) -> String {
        var result = ""
        for character in text {
            guard result.utf8.count + character.utf8.count <= SessionRecord.maximumUserAgentCount else { break }
            result.append(character)
        }
        return result
    }
}
