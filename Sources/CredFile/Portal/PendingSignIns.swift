/// The sign-in page's second steps (SPEC §14): after a right password of a user with a
/// second factor, a pending sign-in of ``lifetime`` seconds bound to that password check
/// (to the user's line as it was) and to a cookie's token; the code page takes it **once**
/// (``take(_:now:line:)``): one code attempt for each right password, whatever the code.
///
/// Kept in the state database (a `pending_sign_ins` table beside §11's sessions), so that
/// every process and host (§15) that shares the state answers the code page alike.
public struct PendingSignIns: Sendable {
    private let store: any StateStore
    private let entries: EntryDigester

    /// How long a pending sign-in lasts: 5 minutes (SPEC §14).
    public static let lifetime: Int64 = 300

    /// The pending sign-ins in the state database of `storage`, beside its sessions and
    /// under the entry-digest key they use (``PortalSessions/entryKeyName``).
    /// - Throws: what the state database throws reading or making that key.
    public init(storage: SQLiteSessionStorage) throws {
        self.init(store: storage.stateStore, key: try storage.key(named: PortalSessions.entryKeyName))
    }

    init(store: any StateStore, key: SecretBytes) {
        self.store = store
        entries = EntryDigester(key: key)
    }

    /// Starts a pending sign-in for `user`, whose password was right at `now`, and returns
    /// its new token (for the cookie; never stored).
    /// - Parameters:
    ///   - user: the name.
    ///   - line: the user's entry in FILE (its bytes, no line ending).
    ///   - target: where to go once the code is right; nil for `{prefix}/`.
    ///   - now: seconds since 1970.
    /// - Throws: ``CredFileError/Code/crypto`` when `RAND_bytes` fails;
    ///   ``CredFileError/Code/guardDatabase`` when the state database cannot be written.
    public func start(user: String, line: some Collection<UInt8>, target: String?, now: Int64) throws -> SessionToken {
        let token = try SessionToken.generate()
        let pending = PendingSignIn(
            tokenDigest: token.digest, user: user, entryDigest: entries.digest(ofLine: line),
            expires: now + Self.lifetime, target: target)
        try store.write { try $0.pendingSignIns.insert(pending, now: now) }
        return token
    }

    /// The pending sign-in of `token` while it lasts, left in place (the code page's `GET`).
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the state database cannot be read.
    public func peek(_ token: SessionToken, now: Int64) throws -> PendingSignIn? {
        guard let pending = try store.read({ try $0.pendingSignIns.pending(tokenDigest: token.digest) }) ?? nil,
            pending.expires > now
        else { return nil }
        return pending
    }

    /// Takes the pending sign-in of `token` (removing it: one code attempt) when it has not
    /// expired and its user's line is what it was at the password; nil otherwise.
    /// - Parameters:
    ///   - token: from the request's cookie.
    ///   - now: seconds since 1970.
    ///   - line: the user's line in FILE now (its bytes without line ending), nil when FILE
    ///     has no entry of that name.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the state database cannot be written.
    public func take(_ token: SessionToken, now: Int64, line: (String) throws -> [UInt8]?) throws -> PendingSignIn? {
        let digest = token.digest
        guard
            let pending = try store.write({ tables -> PendingSignIn? in
                guard let pending = try tables.pendingSignIns.pending(tokenDigest: digest) else { return nil }
                _ = try tables.pendingSignIns.delete(tokenDigest: digest)
                return pending
            }), pending.expires > now, let current = try line(pending.user).map({ entries.digest(ofLine: $0) })
        else { return nil }
        let same = current.withUnsafeBytes { a in
            pending.entryDigest.withUnsafeBytes { OpenSSL.constantTimeEqual(a, $0) }
        }
        return same ? pending : nil
    }
}
