/// The `sessions` and `state_keys` tables of the state database (SPEC §11), made by step 2
/// of the SQLite migrations. Only storage: the rules (limits, expiry, the entry digest) are
/// ``PortalSessions``'.
///
///     sessions (
///         token_sha256 BLOB PRIMARY KEY,   -- SHA-256 of the token; never the token
///         user BLOB, entry_digest BLOB,    -- the keyed digest of the user's line
///         started INTEGER, last_seen INTEGER,   -- seconds since 1970-01-01 UTC
///         client BLOB, user_agent BLOB,    -- empty when unknown
///         second_factor INTEGER            -- 1: signed in with a code (migration 6)
///     )
///     state_keys (name BLOB PRIMARY KEY, key BLOB)
protocol SessionTable {
    /// The key named `name`, or nil.
    func key(named name: [UInt8]) throws -> [UInt8]?
    /// Stores `key` under `name` unless one is there.
    func insertKey(named name: [UInt8], _ key: [UInt8]) throws
    /// How many sessions `user` has.
    func count(user: [UInt8]) throws -> Int
    /// Removes `user`'s `count` oldest sessions.
    func deleteOldest(user: [UInt8], count: Int) throws
    /// Stores a session.
    func insert(_ record: SessionRecord) throws
    /// The session of `tokenDigest`, or nil.
    func session(tokenDigest: [UInt8]) throws -> SessionRecord?
    /// Writes a session's last-seen time.
    func touch(tokenDigest: [UInt8], lastSeen: Int64) throws
    /// Removes one session. - Returns: whether there was one.
    func delete(tokenDigest: [UInt8]) throws -> Bool
    /// Removes `user`'s sessions, or all when nil. - Returns: how many.
    func deleteAll(user: [UInt8]?) throws -> Int
    /// `user`'s sessions, or all when nil, oldest first.
    func sessions(user: [UInt8]?) throws -> [SessionRecord]
}

/// The `sessions` and `state_keys` tables in SQLite: one connection's prepared statements.
final class SQLiteSessionTable: SessionTable {
    private let connection: SQLiteConnection
    private let selectKey, insertKeyStatement, countUser, deleteOldestStatement, insertSession: SQLiteStatement
    private let selectSession, touchSession, deleteSession, deleteUser, deleteEvery, selectUser,
        selectAll: SQLiteStatement

    private static let columns =
        "token_sha256, user, entry_digest, started, last_seen, client, user_agent, second_factor, passkey"

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        selectKey = try connection.prepare("SELECT key FROM state_keys WHERE name = ?1")
        insertKeyStatement = try connection.prepare("INSERT OR IGNORE INTO state_keys (name, key) VALUES (?1, ?2)")
        countUser = try connection.prepare("SELECT count(*) FROM sessions WHERE user = ?1")
        deleteOldestStatement = try connection.prepare(
            """
            DELETE FROM sessions WHERE token_sha256 IN
                (SELECT token_sha256 FROM sessions WHERE user = ?1 ORDER BY started, token_sha256 LIMIT ?2)
            """)
        insertSession = try connection.prepare(
            "INSERT OR REPLACE INTO sessions (\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
        selectSession = try connection.prepare("SELECT \(Self.columns) FROM sessions WHERE token_sha256 = ?1")
        touchSession = try connection.prepare("UPDATE sessions SET last_seen = ?2 WHERE token_sha256 = ?1")
        deleteSession = try connection.prepare("DELETE FROM sessions WHERE token_sha256 = ?1")
        deleteUser = try connection.prepare("DELETE FROM sessions WHERE user = ?1")
        deleteEvery = try connection.prepare("DELETE FROM sessions")
        selectUser = try connection.prepare(
            "SELECT \(Self.columns) FROM sessions WHERE user = ?1 ORDER BY started, token_sha256")
        selectAll = try connection.prepare("SELECT \(Self.columns) FROM sessions ORDER BY started, token_sha256")
    }

    func key(named name: [UInt8]) throws -> [UInt8]? {
        try first(selectKey, [.bytes(name)]) { $0.bytes(0) }
    }

    func insertKey(named name: [UInt8], _ key: [UInt8]) throws {
        try run(insertKeyStatement, [.bytes(name), .bytes(key)])
    }

    func count(user: [UInt8]) throws -> Int { Int(try first(countUser, [.bytes(user)]) { $0.int64(0) } ?? 0) }

    func deleteOldest(user: [UInt8], count: Int) throws {
        try run(deleteOldestStatement, [.bytes(user), .int(Int64(count))])
    }

    func insert(_ record: SessionRecord) throws {
        try run(
            insertSession,
            [
                .bytes(record.tokenDigest), .bytes(Array(record.user.utf8)), .bytes(record.entryDigest),
                .int(record.started), .int(record.lastSeen), .bytes(Array((record.client ?? "").utf8)),
                .bytes(Array((record.userAgent ?? "").utf8)), .int(record.secondFactor ? 1 : 0),
                .int(record.passkey ? 1 : 0),
            ])
    }

    func session(tokenDigest: [UInt8]) throws -> SessionRecord? {
        try first(selectSession, [.bytes(tokenDigest)], Self.record)
    }

    func touch(tokenDigest: [UInt8], lastSeen: Int64) throws {
        try run(touchSession, [.bytes(tokenDigest), .int(lastSeen)])
    }

    func delete(tokenDigest: [UInt8]) throws -> Bool {
        try run(deleteSession, [.bytes(tokenDigest)])
        return connection.changes > 0
    }

    func deleteAll(user: [UInt8]?) throws -> Int {
        if let user { try run(deleteUser, [.bytes(user)]) } else { try run(deleteEvery, []) }
        return connection.changes
    }

    func sessions(user: [UInt8]?) throws -> [SessionRecord] {
        if let user { return try all(selectUser, [.bytes(user)], Self.record) }
        return try all(selectAll, [], Self.record)
    }

    private static func record(_ statement: SQLiteStatement) -> SessionRecord {
        let client = String(decoding: statement.bytes(5), as: UTF8.self)
        let userAgent = String(decoding: statement.bytes(6), as: UTF8.self)
        var record = SessionRecord(
            tokenDigest: statement.bytes(0), user: String(decoding: statement.bytes(1), as: UTF8.self),
            entryDigest: statement.bytes(2), started: statement.int64(3), lastSeen: statement.int64(4),
            client: client.isEmpty ? nil : client, userAgent: userAgent.isEmpty ? nil : userAgent,
            secondFactor: statement.int64(7) != 0)
        record.passkey = statement.int64(8) != 0
        return record
    }

    /// A value bound to a statement's parameter.
    private enum Value {
        case int(Int64)
        case bytes([UInt8])
    }

    private func bind(_ statement: SQLiteStatement, _ values: [Value]) {
        for (offset, value) in values.enumerated() {
            switch value {
            case .int(let number): statement.bind(Int32(offset + 1), number)
            case .bytes(let bytes): statement.bind(Int32(offset + 1), bytes)
            }
        }
    }

    private func run(_ statement: SQLiteStatement, _ values: [Value]) throws {
        defer { statement.reset() }
        bind(statement, values)
        while try statement.step() {}
    }

    private func first<R>(_ statement: SQLiteStatement, _ values: [Value], _ read: (SQLiteStatement) -> R) throws
        -> R?
    {
        defer { statement.reset() }
        bind(statement, values)
        return try statement.step() ? read(statement) : nil
    }

    private func all<R>(_ statement: SQLiteStatement, _ values: [Value], _ read: (SQLiteStatement) -> R) throws
        -> [R]
    {
        defer { statement.reset() }
        bind(statement, values)
        var rows: [R] = []
        while try statement.step() { rows.append(read(statement)) }
        return rows
    }
}

/// One session as the state database keeps it: never the token, only its SHA-256.
public struct SessionRecord: Sendable, Equatable {
    /// SHA-256 of the token's 32 bytes (``SessionToken/digest``).
    public var tokenDigest: [UInt8]
    /// The user's name.
    public var user: String
    /// The keyed digest of the user's line at sign-in (``EntryDigester``).
    public var entryDigest: [UInt8]
    /// Sign-in time, seconds since 1970.
    public var started: Int64
    /// The last request's time as last written, seconds since 1970.
    public var lastSeen: Int64
    /// The client's address at sign-in, when known.
    public var client: String?
    /// The browser's `User-Agent` at sign-in, cut to ``maximumUserAgentCount`` bytes.
    public var userAgent: String?
    /// Whether the sign-in that started the session checked a second factor (a one-time
    /// code, SPEC §14): what §13's `two-factor` rules ask of a session.
    public var secondFactor: Bool
    /// Whether the session began with a passkey (SPEC §14): a sign-in with user
    /// verification, so §13's `two-factor` rules may count it.
    public var passkey = false

    /// The most bytes of a `User-Agent` kept.
    public static let maximumUserAgentCount = 256

    /// A record with every field given; `secondFactor`: the sign-in checked a one-time code.
    public init(
        tokenDigest: [UInt8], user: String, entryDigest: [UInt8], started: Int64, lastSeen: Int64,
        client: String?, userAgent: String?, secondFactor: Bool = false
    ) {
        self.secondFactor = secondFactor
        self.tokenDigest = tokenDigest
        self.user = user
        self.entryDigest = entryDigest
        self.started = started
        self.lastSeen = lastSeen
        self.client = client
        self.userAgent = userAgent
    }
}
