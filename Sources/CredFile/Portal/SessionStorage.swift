import Synchronization

/// Where the portal's sessions and keys are kept (SPEC §11: the state database of §9, a
/// `sessions` table beside the guard's). A small protocol, so that ``PortalSessions`` holds
/// the rules and the storage only stores: the SQLite state database implements it, and
/// ``MemorySessionStorage`` does for tests.
public protocol SessionStorage: Sendable {
    /// The secret named `name` (the anti-forgery, entry-digest and device-cookie keys):
    /// 32 random bytes made and stored the first time it is asked for, the same ever after.
    func key(named name: String) throws -> SecretBytes
    /// Stores a new session, first ending the user's oldest ones so that at most
    /// `limit` remain with it.
    func insert(_ record: SessionRecord, limit: Int) throws
    /// The session whose token has SHA-256 `tokenDigest`, or nil.
    func session(tokenDigest: [UInt8]) throws -> SessionRecord?
    /// Writes the session's last-seen time.
    func touch(tokenDigest: [UInt8], lastSeen: Int64) throws
    /// Ends one session; true when there was one.
    @discardableResult func remove(tokenDigest: [UInt8]) throws -> Bool
    /// Ends the sessions of `user` (every session when nil); how many ended.
    @discardableResult func removeAll(user: String?) throws -> Int
    /// The sessions of `user` (every session when nil), oldest first.
    func sessions(user: String?) throws -> [SessionRecord]
    /// The store's change counter (SPEC §11: sessions held in memory are checked against
    /// it): a value that differs whenever someone else may have changed the sessions since
    /// this storage last read it — another process's `credfile sessions --end`, another
    /// host's sign-out — and, ideally, not for this storage's own writes. Nil when the
    /// store keeps none (the default), so ``CachedSessionStorage`` trusts what it holds for
    /// ``CachedSessionStorage/trustSeconds`` at most.
    func changeCounter() throws -> UInt64?
}

extension SessionStorage {
    /// No change counter: see ``SessionStorage/changeCounter()``.
    public func changeCounter() throws -> UInt64? { nil }
}

/// Sessions held in memory: for tests, and for a process that keeps no state database.
public final class MemorySessionStorage: SessionStorage {
    private struct State {
        var keys: [String: SecretBytes] = [:]
        var sessions: [[UInt8]: SessionRecord] = [:]
    }

    private let state = Mutex(State())

    /// An empty storage.
    public init() {}

    /// See ``SessionStorage/key(named:)``.
    public func key(named name: String) throws -> SecretBytes {
        if let key = state.withLock({ $0.keys[name] }) { return key }
        let fresh = SecretBytes(try OpenSSL.randomBytes(count: 32))
        return state.withLock { state in
            if let key = state.keys[name] { return key }
            state.keys[name] = fresh
            return fresh
        }
    }

    /// See ``SessionStorage/insert(_:limit:)``.
    public func insert(_ record: SessionRecord, limit: Int) throws {
        state.withLock { state in
            let own = state.sessions.values.filter { $0.user == record.user }.sorted(by: Self.older)
            for old in own.prefix(max(0, own.count - (limit - 1))) { state.sessions[old.tokenDigest] = nil }
            state.sessions[record.tokenDigest] = record
        }
    }

    /// See ``SessionStorage/session(tokenDigest:)``.
    public func session(tokenDigest: [UInt8]) throws -> SessionRecord? {
        state.withLock { $0.sessions[tokenDigest] }
    }

    /// See ``SessionStorage/touch(tokenDigest:lastSeen:)``.
    public func touch(tokenDigest: [UInt8], lastSeen: Int64) throws {
        state.withLock { $0.sessions[tokenDigest]?.lastSeen = lastSeen }
    }

    /// See ``SessionStorage/remove(tokenDigest:)``.
    @discardableResult public func remove(tokenDigest: [UInt8]) throws -> Bool {
        state.withLock { $0.sessions.removeValue(forKey: tokenDigest) != nil }
    }

    /// See ``SessionStorage/removeAll(user:)``.
    @discardableResult public func removeAll(user: String?) throws -> Int {
        state.withLock { state in
            let before = state.sessions.count
            state.sessions = state.sessions.filter { user != nil && $0.value.user != user }
            return before - state.sessions.count
        }
    }

    /// See ``SessionStorage/sessions(user:)``.
    public func sessions(user: String?) throws -> [SessionRecord] {
        state.withLock { state in
            state.sessions.values.filter { user == nil || $0.user == user }.sorted(by: Self.older)
        }
    }

    /// Oldest first: by start, then by digest (so the order is total).
    private static func older(_ a: SessionRecord, _ b: SessionRecord) -> Bool {
        if a.started != b.started { return a.started < b.started }
        return a.tokenDigest.lexicographicallyPrecedes(b.tokenDigest)
    }
}
