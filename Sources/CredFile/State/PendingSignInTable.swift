/// The `pending_sign_ins` table of the state database (SPEC §14): the sign-in page's
/// second steps, each a right password waiting for its one-time code. Made by step 6 of the
/// SQLite migrations. Only storage: the rules (5 minutes, one attempt, bound to the user's
/// line) are ``PendingSignIns``'.
///
///     pending_sign_ins (
///         token_sha256 BLOB PRIMARY KEY,   -- SHA-256 of the cookie's token; never the token
///         user BLOB, entry_digest BLOB,    -- the keyed digest of the user's line at the password
///         expires INTEGER,                 -- seconds since 1970-01-01 UTC
///         target BLOB                      -- where the sign-in goes after (`rd`), empty for none
///     )
protocol PendingSignInTable {
    /// Stores a pending sign-in, first removing every expired one (so the table stays small).
    func insert(_ pending: PendingSignIn, now: Int64) throws
    /// The pending sign-in of `tokenDigest`, left in place; nil when there is none.
    func pending(tokenDigest: [UInt8]) throws -> PendingSignIn?
    /// Removes the pending sign-in of `tokenDigest`. - Returns: whether there was one.
    func delete(tokenDigest: [UInt8]) throws -> Bool
}

/// The `pending_sign_ins` table in SQLite: one connection's prepared statements.
final class SQLitePendingSignInTable: PendingSignInTable {
    private let connection: SQLiteConnection
    private let insertStatement, expire, select, deleteStatement: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        insertStatement = try connection.prepare(
            "INSERT OR REPLACE INTO pending_sign_ins (token_sha256, user, entry_digest, expires, target)"
                + " VALUES (?1, ?2, ?3, ?4, ?5)")
        expire = try connection.prepare("DELETE FROM pending_sign_ins WHERE expires <= ?1")
        select = try connection.prepare(
            "SELECT token_sha256, user, entry_digest, expires, target FROM pending_sign_ins WHERE token_sha256 = ?1")
        deleteStatement = try connection.prepare("DELETE FROM pending_sign_ins WHERE token_sha256 = ?1")
    }

    func insert(_ pending: PendingSignIn, now: Int64) throws {
        do {
            defer { expire.reset() }
            expire.bind(1, now)
            while try expire.step() {}
        }
        defer { insertStatement.reset() }
        insertStatement.bind(1, pending.tokenDigest)
        insertStatement.bind(2, Array(pending.user.utf8))
        insertStatement.bind(3, pending.entryDigest)
        insertStatement.bind(4, pending.expires)
        insertStatement.bind(5, Array((pending.target ?? "").utf8))
        while try insertStatement.step() {}
    }

    func pending(tokenDigest: [UInt8]) throws -> PendingSignIn? {
        defer { select.reset() }
        select.bind(1, tokenDigest)
        guard try select.step() else { return nil }
        let target = String(decoding: select.bytes(4), as: UTF8.self)
        return PendingSignIn(
            tokenDigest: select.bytes(0), user: String(decoding: select.bytes(1), as: UTF8.self),
            entryDigest: select.bytes(2), expires: select.int64(3), target: target.isEmpty ? nil : target)
    }

    func delete(tokenDigest: [UInt8]) throws -> Bool {
        defer { deleteStatement.reset() }
        deleteStatement.bind(1, tokenDigest)
        while try deleteStatement.step() {}
        return connection.changes > 0
    }
}

/// A sign-in waiting for its one-time code (SPEC §14): the password was right, the code is
/// asked on a page of its own. Kept by ``PendingSignIns`` in the state database.
public struct PendingSignIn: Sendable, Equatable {
    /// SHA-256 of the token in the browser's cookie (never the token).
    public let tokenDigest: [UInt8]
    /// The name whose password was right.
    public let user: String
    /// The keyed digest of the user's line when the password was checked: a line changed
    /// since (`passwd`, `lock`, `delete`) ends the pending sign-in.
    public let entryDigest: [UInt8]
    /// When it ends, seconds since 1970.
    public let expires: Int64
    /// Where the sign-in goes once the code is right (a checked `rd`), nil for `{prefix}/`.
    public let target: String?
}
