import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The portal's sessions and keys in an SQLite file (SPEC §11: the state database of §9,
/// WAL mode, 0600), so they survive a restart of `serve` and every process on the host
/// sees the same ones. Two tables beside the guard's, made when missing:
///
///     CREATE TABLE sessions (
///         token_sha256 BLOB PRIMARY KEY NOT NULL,   -- never the token
///         user BLOB NOT NULL, entry_digest BLOB NOT NULL,
///         started INTEGER NOT NULL, last_seen INTEGER NOT NULL,   -- seconds since 1970
///         client BLOB NOT NULL, user_agent BLOB NOT NULL          -- empty when unknown
///     ) WITHOUT ROWID;
///     CREATE INDEX sessions_by_user ON sessions (user, started);
///     CREATE TABLE state_keys (name BLOB PRIMARY KEY NOT NULL, key BLOB NOT NULL) WITHOUT ROWID;
///
/// (When the guard database becomes the versioned state store, these tables become its
/// next migration; until then they are made with `IF NOT EXISTS` and leave the guard's
/// schema version alone.)
public final class SQLiteSessionStorage: SessionStorage {
    /// The database file.
    public let path: String
    private let connection: Mutex<SessionStatements?>
    private let keys = Mutex<[String: SecretBytes]>([:])

    /// How long a statement waits for another process's write lock, in milliseconds.
    static let busyTimeout: Int32 = 10_000

    /// Sessions in the SQLite file at `path`, opened (and created, mode 0600, when
    /// missing) at first use. A symlink in its place is refused.
    public init(path: String) {
        self.path = path
        connection = Mutex(nil)
    }

    /// See ``SessionStorage/key(named:)``.
    public func key(named name: String) throws -> SecretBytes {
        if let key = keys.withLock({ $0[name] }) { return key }
        let fresh = try OpenSSL.randomBytes(count: 32)
        let stored = try use { s throws(SQLiteError) in
            try s.connection.transaction { () throws(SQLiteError) in
                try s.run(s.insertKey, [.bytes(Array(name.utf8)), .bytes(fresh)])
                return try s.first(s.selectKey, [.bytes(Array(name.utf8))]) { $0.bytes(0) } ?? []
            }
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

    /// See ``SessionStorage/insert(_:limit:)``.
    public func insert(_ record: SessionRecord, limit: Int) throws {
        let user = Array(record.user.utf8)
        try use { s throws(SQLiteError) in
            try s.connection.transaction { () throws(SQLiteError) in
                let count = try s.first(s.countUser, [.bytes(user)]) { $0.int64(0) } ?? 0
                let surplus = count - Int64(limit - 1)
                if surplus > 0 { try s.run(s.deleteOldest, [.bytes(user), .int(surplus)]) }
                try s.run(
                    s.insertSession,
                    [
                        .bytes(record.tokenDigest), .bytes(user), .bytes(record.entryDigest), .int(record.started),
                        .int(record.lastSeen), .bytes(Array((record.client ?? "").utf8)),
                        .bytes(Array((record.userAgent ?? "").utf8)),
                    ])
            }
        }
    }

    /// See ``SessionStorage/session(tokenDigest:)``.
    public func session(tokenDigest: [UInt8]) throws -> SessionRecord? {
        try use { s throws(SQLiteError) in try s.first(s.selectSession, [.bytes(tokenDigest)], SessionStatements.record)
        }
    }

    /// See ``SessionStorage/touch(tokenDigest:lastSeen:)``.
    public func touch(tokenDigest: [UInt8], lastSeen: Int64) throws {
        try use { s throws(SQLiteError) in try s.run(s.touchSession, [.bytes(tokenDigest), .int(lastSeen)]) }
    }

    /// See ``SessionStorage/remove(tokenDigest:)``.
    @discardableResult public func remove(tokenDigest: [UInt8]) throws -> Bool {
        try use { s throws(SQLiteError) in
            try s.run(s.deleteSession, [.bytes(tokenDigest)])
            return s.connection.changes > 0
        }
    }

    /// See ``SessionStorage/removeAll(user:)``.
    @discardableResult public func removeAll(user: String?) throws -> Int {
        try use { s throws(SQLiteError) in
            if let user {
                try s.run(s.deleteUser, [.bytes(Array(user.utf8))])
            } else {
                try s.run(s.deleteAll, [])
            }
            return s.connection.changes
        }
    }

    /// See ``SessionStorage/sessions(user:)``.
    public func sessions(user: String?) throws -> [SessionRecord] {
        try use { s throws(SQLiteError) in
            if let user { return try s.all(s.selectUser, [.bytes(Array(user.utf8))], SessionStatements.record) }
            return try s.all(s.selectAll, [], SessionStatements.record)
        }
    }

    // MARK: The connection

    /// Runs `body` on the open connection (opening it first), one caller at a time; a
    /// failed connection is dropped, so the next call opens it again.
    private func use<R: Sendable>(_ body: (SessionStatements) throws(SQLiteError) -> R) throws(CredFileError) -> R {
        try connection.withLock { (current: inout SessionStatements?) throws(CredFileError) -> R in
            let statements: SessionStatements
            if let current {
                statements = current
            } else {
                statements = try open()
                current = statements
            }
            do throws(SQLiteError) {
                return try body(statements)
            } catch {
                current = nil
                throw CredFileError(
                    .guardDatabase, "cannot use the state database \(Escaped.path(path)): \(error.message)",
                    cause: .init(syscall: "sqlite3", errno: error.systemErrno ?? (error.isReadOnly ? EACCES : EIO)))
            }
        }
    }

    private func open() throws(CredFileError) -> SessionStatements {
        do {
            let fd = try Syscall.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
            Syscall.close(fd)
        } catch  where error.errno == EEXIST {
        } catch {
            throw error.credFileError("cannot create the state database \(Escaped.path(path))", code: .guardDatabase)
        }
        do {
            let connection = try SQLiteConnection(path: path, busyTimeout: Self.busyTimeout)
            guard !connection.isReadOnly else {
                throw CredFileError(
                    .guardDatabase, "cannot write the state database \(Escaped.path(path))",
                    cause: .init(syscall: "open", errno: EACCES))
            }
            try connection.leaveLogOnClose()
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL")
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS sessions (
                    token_sha256 BLOB PRIMARY KEY NOT NULL,
                    user BLOB NOT NULL,
                    entry_digest BLOB NOT NULL,
                    started INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    client BLOB NOT NULL,
                    user_agent BLOB NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user, started);
                CREATE TABLE IF NOT EXISTS state_keys (name BLOB PRIMARY KEY NOT NULL, key BLOB NOT NULL) WITHOUT ROWID;
                """)
            return try SessionStatements(connection)
        } catch let error as SQLiteError {
            throw CredFileError(
                .guardDatabase, "cannot use the state database \(Escaped.path(path)): \(error.message)",
                cause: .init(syscall: "sqlite3", errno: error.systemErrno ?? EIO))
        } catch let error as CredFileError {
            throw error
        } catch {
            throw CredFileError(.guardDatabase, "cannot use the state database \(Escaped.path(path))")
        }
    }
}

/// A value bound to a statement's parameter.
private enum SQLValue {
    case int(Int64)
    case bytes([UInt8])
}

/// The prepared statements of one connection.
private final class SessionStatements {
    let connection: SQLiteConnection
    let insertKey: SQLiteStatement
    let selectKey: SQLiteStatement
    let countUser: SQLiteStatement
    let deleteOldest: SQLiteStatement
    let insertSession: SQLiteStatement
    let selectSession: SQLiteStatement
    let touchSession: SQLiteStatement
    let deleteSession: SQLiteStatement
    let deleteUser: SQLiteStatement
    let deleteAll: SQLiteStatement
    let selectUser: SQLiteStatement
    let selectAll: SQLiteStatement

    static let columns = "token_sha256, user, entry_digest, started, last_seen, client, user_agent"

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        insertKey = try connection.prepare("INSERT OR IGNORE INTO state_keys (name, key) VALUES (?1, ?2)")
        selectKey = try connection.prepare("SELECT key FROM state_keys WHERE name = ?1")
        countUser = try connection.prepare("SELECT count(*) FROM sessions WHERE user = ?1")
        deleteOldest = try connection.prepare(
            """
            DELETE FROM sessions WHERE token_sha256 IN
                (SELECT token_sha256 FROM sessions WHERE user = ?1 ORDER BY started, token_sha256 LIMIT ?2)
            """)
        insertSession = try connection.prepare(
            "INSERT OR REPLACE INTO sessions (\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        selectSession = try connection.prepare("SELECT \(Self.columns) FROM sessions WHERE token_sha256 = ?1")
        touchSession = try connection.prepare("UPDATE sessions SET last_seen = ?2 WHERE token_sha256 = ?1")
        deleteSession = try connection.prepare("DELETE FROM sessions WHERE token_sha256 = ?1")
        deleteUser = try connection.prepare("DELETE FROM sessions WHERE user = ?1")
        deleteAll = try connection.prepare("DELETE FROM sessions")
        selectUser = try connection.prepare(
            "SELECT \(Self.columns) FROM sessions WHERE user = ?1 ORDER BY started, token_sha256")
        selectAll = try connection.prepare("SELECT \(Self.columns) FROM sessions ORDER BY started, token_sha256")
    }

    static func record(_ statement: SQLiteStatement) -> SessionRecord {
        let client = String(decoding: statement.bytes(5), as: UTF8.self)
        let userAgent = String(decoding: statement.bytes(6), as: UTF8.self)
        return SessionRecord(
            tokenDigest: statement.bytes(0), user: String(decoding: statement.bytes(1), as: UTF8.self),
            entryDigest: statement.bytes(2), started: statement.int64(3), lastSeen: statement.int64(4),
            client: client.isEmpty ? nil : client, userAgent: userAgent.isEmpty ? nil : userAgent)
    }

    private func bind(_ statement: SQLiteStatement, _ values: [SQLValue]) {
        for (offset, value) in values.enumerated() {
            switch value {
            case .int(let number): statement.bind(Int32(offset + 1), number)
            case .bytes(let bytes): statement.bind(Int32(offset + 1), bytes)
            }
        }
    }

    /// Runs a statement that returns no rows.
    func run(_ statement: SQLiteStatement, _ values: [SQLValue]) throws(SQLiteError) {
        defer { statement.reset() }
        bind(statement, values)
        while try statement.step() {}
    }

    /// The first row, read by `read`, or nil.
    func first<R>(_ statement: SQLiteStatement, _ values: [SQLValue], _ read: (SQLiteStatement) -> R)
        throws(SQLiteError) -> R?
    {
        defer { statement.reset() }
        bind(statement, values)
        return try statement.step() ? read(statement) : nil
    }

    /// Every row, read by `read`.
    func all<R>(_ statement: SQLiteStatement, _ values: [SQLValue], _ read: (SQLiteStatement) -> R)
        throws(SQLiteError) -> [R]
    {
        defer { statement.reset() }
        bind(statement, values)
        var rows: [R] = []
        while try statement.step() { rows.append(read(statement)) }
        return rows
    }
}

extension SQLiteConnection {
    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed when it returns,
    /// rolled back when it throws.
    fileprivate func transaction<R>(_ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
