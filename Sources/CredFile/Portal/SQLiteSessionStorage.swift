import Synchronization

/// The portal's sessions and keys in the state database (SPEC §9, §11): the `sessions` and
/// `state_keys` tables of the state store, beside the guard's `failures`, in the same file
/// (`FILE.guard.db`, or `state`) under the same rules (WAL, 0600, no symlink, a schema
/// version and migrations), so they survive a restart of `serve` and every process on the
/// host sees the same ones.
public final class SQLiteSessionStorage: SessionStorage {
    private let store: any StateStore
    private let keys = Mutex<[String: SecretBytes]>([:])

    /// The state store, shared with §14's pending sign-ins (``PendingSignIns``).
    var stateStore: any StateStore { store }

    /// The state database's file (or, in PostgreSQL, its connection string).
    public var path: String { store.location }

    /// Sessions in the SQLite state database at `path`, opened (and created, mode 0600,
    /// when missing) at first use.
    public convenience init(path: String) {
        self.init(store: SQLiteStateStore(path: path, owner: nil))
    }

    /// Sessions in the state database at `location` (SQLite or PostgreSQL, SPEC §15; the
    /// name is the first backend's), opened (and created) at first use.
    public convenience init(location: StateLocation) {
        self.init(store: location.store())
    }

    /// Sessions in `store`.
    init(store: any StateStore) {
        self.store = store
    }

    /// See ``SessionStorage/key(named:)``.
    public func key(named name: String) throws -> SecretBytes {
        if let key = keys.withLock({ $0[name] }) { return key }
        let fresh = try OpenSSL.randomBytes(count: 32)
        let label = Array(name.utf8)
        let stored = try store.write { tables in
            try tables.sessions.insertKey(named: label, fresh)
            return try tables.sessions.key(named: label) ?? []
        }
        guard stored.count >= 32 else {
            throw CredFileError(.guardDatabase, "the key \(name) in \(Escaped.path(path)) is shorter than 32 bytes")
        }
        let key = SecretBytes(stored)
        return keys.withLock { keys in
            if let existing = keys[name] { return existing }
            keys[name] = key
            return key
        }
    }

    /// See ``SessionStorage/changeCounter()``: in SQLite, the `data_version` of this
    /// storage's connection (another connection's commit changes it, this one's own do
    /// not); in PostgreSQL, the notifications of ended sessions on a listening connection
    /// (any process's, this one's included). Nil while the database does not exist.
    public func changeCounter() throws -> UInt64? {
        try store.sessionChangeCounter()
    }

    /// See ``SessionStorage/insert(_:limit:)``.
    public func insert(_ record: SessionRecord, limit: Int) throws {
        let user = Array(record.user.utf8)
        try endingSessions {
            try store.write { tables in
                let surplus = max(0, try tables.sessions.count(user: user) - (limit - 1))
                if surplus > 0 { try tables.sessions.deleteOldest(user: user, count: surplus) }
                try tables.sessions.insert(record)
                return surplus
            }
        }
    }

    /// See ``SessionStorage/session(tokenDigest:)``.
    public func session(tokenDigest: [UInt8]) throws -> SessionRecord? {
        try store.read { try $0.sessions.session(tokenDigest: tokenDigest) } ?? nil
    }

    /// See ``SessionStorage/touch(tokenDigest:lastSeen:)``.
    public func touch(tokenDigest: [UInt8], lastSeen: Int64) throws {
        try store.write { try $0.sessions.touch(tokenDigest: tokenDigest, lastSeen: lastSeen) }
    }

    /// See ``SessionStorage/remove(tokenDigest:)``.
    @discardableResult public func remove(tokenDigest: [UInt8]) throws -> Bool {
        try endingSessions { try store.write { try $0.sessions.delete(tokenDigest: tokenDigest) } ? 1 : 0 } > 0
    }

    /// See ``SessionStorage/removeAll(user:)``.
    @discardableResult public func removeAll(user: String?) throws -> Int {
        let name = user.map { Array($0.utf8) }
        return try endingSessions { try store.write { try $0.sessions.deleteAll(user: name) } }
    }

    /// Runs `body`, which ends sessions and says how many, and returns once every process
    /// holding sessions in memory knows of them (``StateStore/awaitSessionChange(since:)``:
    /// in PostgreSQL, a sign-out is answered only after the other hosts' notification).
    @discardableResult
    private func endingSessions(_ body: () throws -> Int) throws -> Int {
        // Read first: in PostgreSQL this opens the listening connection before the delete.
        let before = try store.sessionChangeCounter()
        let ended = try body()
        if ended > 0, let before { store.awaitSessionChange(since: before) }
        return ended
    }

    /// See ``SessionStorage/sessions(user:)``.
    public func sessions(user: String?) throws -> [SessionRecord] {
        let name = user.map { Array($0.utf8) }
        return try store.read { try $0.sessions.sessions(user: name) } ?? []
    }
}
