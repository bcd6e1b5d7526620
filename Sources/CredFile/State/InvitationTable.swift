/// The `invitations` and `registrations` tables of the state database (SPEC §12), made by
/// step 4 of the SQLite migrations. Only storage: each rule that must hold while processes
/// race (a code redeemed once, the hourly limits) is one statement or one transaction of
/// the caller, and ``RegistrationState`` holds the rules.
///
///     invitations (
///         id INTEGER PRIMARY KEY,          -- what --list shows and --revoke takes
///         code_sha256 BLOB UNIQUE,         -- SHA-256 of the code's 15 bytes; never the code
///         user BLOB,                       -- the name it is bound to; empty: any name
///         created INTEGER, expires INTEGER, used INTEGER   -- seconds since 1970; used 0: not yet
///     )
///     registrations (at INTEGER, client BLOB)   -- one row per registration of the last hour
protocol InvitationTable {
    /// Stores a new invitation. - Returns: its id.
    func insert(codeDigest: [UInt8], user: [UInt8], created: Int64, expires: Int64) throws -> Int64
    /// Marks the invitation of `codeDigest` used at `now`, when it is unused, unexpired
    /// and bound to `user` or to no name. - Returns: its id, or nil (nothing changed).
    func redeem(codeDigest: [UInt8], user: [UInt8], now: Int64) throws -> Int64?
    /// Whether the invitation of `codeDigest` is unused, unexpired at `now` and bound to
    /// `user` or to no name (nothing changed).
    func isRedeemable(codeDigest: [UInt8], user: [UInt8], now: Int64) throws -> Bool
    /// Marks invitation `id` unused again (a registration that failed after redeeming it).
    func unredeem(id: Int64) throws
    /// Removes invitation `id`. - Returns: whether there was one.
    func delete(id: Int64) throws -> Bool
    /// Removes every invitation. - Returns: how many.
    func deleteAll() throws -> Int
    /// Every invitation, by id.
    func all() throws -> [InvitationRecord]
    /// Forgets registrations at or before `before`, then counts those of `client` and all.
    func recentRegistrations(client: [UInt8], after before: Int64) throws -> (client: Int, total: Int)
    /// Records a registration. - Returns: its row, for ``deleteRegistration(row:)``.
    func insertRegistration(client: [UInt8], at: Int64) throws -> Int64
    /// Forgets one recorded registration (one that did not happen after all).
    func deleteRegistration(row: Int64) throws
}

/// The `invitations` and `registrations` tables in SQLite: one connection's prepared statements.
final class SQLiteInvitationTable: InvitationTable {
    private let connection: SQLiteConnection
    private let insertStatement, redeemStatement, unredeemStatement, deleteStatement, deleteEvery,
        selectAll: SQLiteStatement
    private let peekStatement: SQLiteStatement
    private let forgetOld, countClient, countAll, insertEvent, deleteEvent: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        insertStatement = try connection.prepare(
            "INSERT INTO invitations (code_sha256, user, created, expires, used) VALUES (?1, ?2, ?3, ?4, 0) RETURNING id"
        )
        // One statement: two processes redeeming the same code cannot both change the row.
        redeemStatement = try connection.prepare(
            """
            UPDATE invitations SET used = ?3
                WHERE code_sha256 = ?1 AND used = 0 AND expires > ?3 AND (user = x'' OR user = ?2)
                RETURNING id
            """)
        peekStatement = try connection.prepare(
            """
            SELECT id FROM invitations
                WHERE code_sha256 = ?1 AND used = 0 AND expires > ?3 AND (user = x'' OR user = ?2)
            """)
        unredeemStatement = try connection.prepare("UPDATE invitations SET used = 0 WHERE id = ?1")
        deleteStatement = try connection.prepare("DELETE FROM invitations WHERE id = ?1")
        deleteEvery = try connection.prepare("DELETE FROM invitations")
        selectAll = try connection.prepare("SELECT id, user, created, expires, used FROM invitations ORDER BY id")
        forgetOld = try connection.prepare("DELETE FROM registrations WHERE at <= ?1")
        countClient = try connection.prepare("SELECT count(*) FROM registrations WHERE client = ?1")
        countAll = try connection.prepare("SELECT count(*) FROM registrations")
        insertEvent = try connection.prepare("INSERT INTO registrations (at, client) VALUES (?1, ?2) RETURNING rowid")
        deleteEvent = try connection.prepare("DELETE FROM registrations WHERE rowid = ?1")
    }

    func insert(codeDigest: [UInt8], user: [UInt8], created: Int64, expires: Int64) throws -> Int64 {
        defer { insertStatement.reset() }
        insertStatement.bind(1, codeDigest)
        insertStatement.bind(2, user)
        insertStatement.bind(3, created)
        insertStatement.bind(4, expires)
        var id: Int64 = 0
        while try insertStatement.step() { id = insertStatement.int64(0) }
        return id
    }

    func redeem(codeDigest: [UInt8], user: [UInt8], now: Int64) throws -> Int64? {
        defer { redeemStatement.reset() }
        redeemStatement.bind(1, codeDigest)
        redeemStatement.bind(2, user)
        redeemStatement.bind(3, now)
        var id: Int64?
        while try redeemStatement.step() { id = redeemStatement.int64(0) }
        return id
    }

    func isRedeemable(codeDigest: [UInt8], user: [UInt8], now: Int64) throws -> Bool {
        defer { peekStatement.reset() }
        peekStatement.bind(1, codeDigest)
        peekStatement.bind(2, user)
        peekStatement.bind(3, now)
        return try peekStatement.step()
    }

    func unredeem(id: Int64) throws {
        defer { unredeemStatement.reset() }
        unredeemStatement.bind(1, id)
        while try unredeemStatement.step() {}
    }

    func delete(id: Int64) throws -> Bool {
        defer { deleteStatement.reset() }
        deleteStatement.bind(1, id)
        while try deleteStatement.step() {}
        return connection.changes > 0
    }

    func deleteAll() throws -> Int {
        defer { deleteEvery.reset() }
        while try deleteEvery.step() {}
        return connection.changes
    }

    func all() throws -> [InvitationRecord] {
        defer { selectAll.reset() }
        var rows: [InvitationRecord] = []
        while try selectAll.step() {
            let user = selectAll.bytes(1)
            let used = selectAll.int64(4)
            rows.append(
                InvitationRecord(
                    id: selectAll.int64(0), user: user.isEmpty ? nil : String(decoding: user, as: UTF8.self),
                    created: selectAll.int64(2), expires: selectAll.int64(3), used: used == 0 ? nil : used))
        }
        return rows
    }

    func recentRegistrations(client: [UInt8], after before: Int64) throws -> (client: Int, total: Int) {
        do {
            defer { forgetOld.reset() }
            forgetOld.bind(1, before)
            while try forgetOld.step() {}
        }
        defer {
            countClient.reset()
            countAll.reset()
        }
        countClient.bind(1, client)
        let own = try countClient.step() ? Int(countClient.int64(0)) : 0
        let total = try countAll.step() ? Int(countAll.int64(0)) : 0
        return (own, total)
    }

    func insertRegistration(client: [UInt8], at: Int64) throws -> Int64 {
        defer { insertEvent.reset() }
        insertEvent.bind(1, at)
        insertEvent.bind(2, client)
        var row: Int64 = 0
        while try insertEvent.step() { row = insertEvent.int64(0) }
        return row
    }

    func deleteRegistration(row: Int64) throws {
        defer { deleteEvent.reset() }
        deleteEvent.bind(1, row)
        while try deleteEvent.step() {}
    }
}

/// One invitation as the state database keeps it (SPEC §12): never the code.
public struct InvitationRecord: Sendable, Equatable {
    /// What `credfile invite --list` shows and `--revoke` takes.
    public var id: Int64
    /// The name it is bound to; nil: any name may use it.
    public var user: String?
    /// When it was made, seconds since 1970.
    public var created: Int64
    /// When it stops working, seconds since 1970.
    public var expires: Int64
    /// When it was used, seconds since 1970; nil while unused.
    public var used: Int64?
}
