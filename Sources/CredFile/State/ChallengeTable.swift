/// The `webauthn_challenges` table of the state database (SPEC §14): the challenges the
/// portal gave browsers for a passkey's registration or sign-in, each usable once and for
/// 5 minutes, kept server-side so that every host of §15 honours them and none is used
/// twice. Made by step 5 of the SQLite migrations. Only storage; ``Passkeys`` decides.
///
///     webauthn_challenges (
///         challenge_sha256 BLOB PRIMARY KEY,  -- never the challenge itself
///         purpose INTEGER,                    -- 1 registration, 2 sign-in, 3 second factor
///         user BLOB,                          -- the user it was given to; empty for a sign-in
///         expires INTEGER                     -- seconds since 1970
///     )
protocol ChallengeTable {
    /// Stores a challenge's digest, and deletes the challenges that expired before `now`.
    func insert(digest: [UInt8], purpose: Int64, user: [UInt8], expires: Int64, now: Int64) throws
    /// Deletes the challenge of `digest` and gives back its purpose, user and expiry; nil
    /// when there is none (never given, or used).
    func take(digest: [UInt8]) throws -> (purpose: Int64, user: [UInt8], expires: Int64)?
}

/// The `webauthn_challenges` table in SQLite.
final class SQLiteChallengeTable: ChallengeTable {
    private let insertStatement, expire, select, delete: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        insertStatement = try connection.prepare(
            "INSERT INTO webauthn_challenges (challenge_sha256, purpose, user, expires) VALUES (?1, ?2, ?3, ?4)")
        expire = try connection.prepare("DELETE FROM webauthn_challenges WHERE expires < ?1")
        select = try connection.prepare(
            "SELECT purpose, user, expires FROM webauthn_challenges WHERE challenge_sha256 = ?1")
        delete = try connection.prepare("DELETE FROM webauthn_challenges WHERE challenge_sha256 = ?1")
    }

    func insert(digest: [UInt8], purpose: Int64, user: [UInt8], expires: Int64, now: Int64) throws {
        defer { expire.reset() }
        expire.bind(1, now)
        while try expire.step() {}
        defer { insertStatement.reset() }
        insertStatement.bind(1, digest)
        insertStatement.bind(2, purpose)
        insertStatement.bind(3, user)
        insertStatement.bind(4, expires)
        while try insertStatement.step() {}
    }

    func take(digest: [UInt8]) throws -> (purpose: Int64, user: [UInt8], expires: Int64)? {
        let found: (Int64, [UInt8], Int64)?
        do {
            defer { select.reset() }
            select.bind(1, digest)
            found = try select.step() ? (select.int64(0), select.bytes(1), select.int64(2)) : nil
        }
        guard let found else { return nil }
        defer { delete.reset() }
        delete.bind(1, digest)
        while try delete.step() {}
        return found
    }
}
