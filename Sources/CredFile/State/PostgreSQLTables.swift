/// The `failures` table in PostgreSQL (step 1 of ``PostgreSQLStateStore/migrations``).
///
/// **No read-then-write race.** ``GuardDatabase`` reads a name's row and then writes it in
/// one transaction; SQLite's `BEGIN IMMEDIATE` makes that safe by letting one writer in at
/// a time. Here many hosts write at once under `READ COMMITTED`, so inside a write
/// transaction ``row(_:)`` first takes a transaction lock of that name
/// (`pg_advisory_xact_lock`, released at commit or rollback) in a statement of its own,
/// before the `SELECT` (each statement reads its own snapshot, so the `SELECT`'s is taken
/// once the lock is held): the attempts on one name are judged one after the other,
/// attempts on different names go on together. The lock and the `SELECT` go in one round
/// trip (with the transaction's `BEGIN`).
///
/// **The name count** (one row of `names`) is changed in the statement that writes or
/// deletes a row: `INSERT … ON CONFLICT … DO UPDATE … RETURNING` says whether it inserted,
/// and a `WITH` query adds one to the count only then, so the count stays true even when
/// a row vanished (bounding the table) between read and write, and a write of a name that
/// has a row does not touch `names` (whose row lock would hold back every other host's
/// new names until commit). ``update(_:)``'s write, and ``insert(_:limit:sparing:)``'s
/// with the bound of the table, go with the `COMMIT` (``PostgreSQLConnection/later(_:)``),
/// so the `names` row is locked for no round trip and a failure costs two: `BEGIN`, the
/// lock and the `SELECT`; the write and `COMMIT`.
final class PostgreSQLFailureTable: FailureTable {
    private let connection: PostgreSQLConnection
    /// The first key of this table's advisory locks (`pg_advisory_xact_lock(int, int)`).
    static let lockClass: Int64 = 0x6366_6661  // "cffa"

    init(_ connection: PostgreSQLConnection) {
        self.connection = connection
    }

    private static let columns = "name, count, last_failure, locked_out"
    private static let select = "SELECT \(columns) FROM failures WHERE name = $1"

    /// Writes a row (`$1`…`$4`: name, count, last failure, locked out) and, when it
    /// inserted it, adds one to the name count; returns the name count.
    private static let store = """
        WITH written AS (
            INSERT INTO failures (name, count, last_failure, locked_out) VALUES ($1, $2, $3, $4)
            ON CONFLICT (name) DO UPDATE SET count = $2, last_failure = $3, locked_out = $4
            RETURNING xmax = 0 AS inserted),
        counted AS (UPDATE names SET count = count + 1 WHERE (SELECT inserted FROM written) RETURNING count)
        SELECT coalesce((SELECT count FROM counted), (SELECT count FROM names))
        """

    /// ``dropOldest(_:keeping:sparing:)`` in one statement, of as many names as the name
    /// count is past `$2` (none: its scans do not run), keeping `$1`, sparing below `$3`
    /// failures: fresh names first, then the least recently failed of the rest (names
    /// below the lockout before locked-out ones), and the name count less what it removed.
    private static let bound = """
        WITH excess AS (SELECT greatest(0, count - $2) AS n FROM names),
        fresh AS (
            DELETE FROM failures WHERE name = ANY (ARRAY(
                SELECT name FROM failures
                WHERE (SELECT n FROM excess) > 0 AND NOT locked_out AND count < $3 AND name <> $1
                ORDER BY last_failure LIMIT (SELECT n FROM excess)))
            RETURNING name),
        rest AS (
            DELETE FROM failures WHERE name = ANY (ARRAY(
                SELECT name FROM failures
                WHERE (SELECT n FROM excess) > (SELECT count(*) FROM fresh)
                    AND name <> $1 AND name NOT IN (SELECT name FROM fresh)
                ORDER BY locked_out, last_failure LIMIT greatest(0, (SELECT n FROM excess) - (SELECT count(*) FROM fresh))))
            RETURNING name)
        UPDATE names SET count = greatest(0, count - (SELECT count(*) FROM fresh) - (SELECT count(*) FROM rest))
        WHERE (SELECT n FROM excess) > 0
        """

    func row(_ name: [UInt8]) throws -> FailureRow? {
        let select = PostgreSQLStatement(Self.select, [.bytes(name)])
        guard connection.inTransaction else { return try connection.run([select])[0].rows.first.map(Self.row) }
        // The name's lock: 32 bits of its SHA-256 (two names sharing one only wait for
        // each other), taken by the statement before the SELECT.
        let digest = name.withUnsafeBytes { OpenSSL.sha256($0) }
        let key = digest.prefix(4).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
        let lock = PostgreSQLStatement(
            "SELECT pg_advisory_xact_lock($1::integer, $2::integer)",
            [.int(Self.lockClass), .int(key - (key > Int64(Int32.max) ? 1 << 32 : 0))])
        return try connection.run([lock, select])[1].rows.first.map(Self.row)
    }

    func rows() throws -> [FailureRow] {
        try connection.query("SELECT \(Self.columns) FROM failures ORDER BY last_failure DESC, name").rows.map(
            Self.row)
    }

    func nameCount() throws -> Int {
        Int(try connection.query("SELECT count FROM names").rows.first?[0].int ?? 0)
    }

    func insert(_ row: FailureRow) throws -> Int {
        Int(try connection.query(Self.store, Self.parameters(row)).rows.first?[0].int ?? 0)
    }

    func insert(_ row: FailureRow, limit: Int, sparing: Int) throws {
        // Both go with the COMMIT. The first takes the `names` row's lock (held to the
        // end); the bound is a statement of its own, so its snapshot is taken once that
        // lock is held and sees what another host's bounding committed meanwhile.
        try connection.later(PostgreSQLStatement(Self.store, Self.parameters(row)))
        try connection.later(
            PostgreSQLStatement(Self.bound, [.bytes(row.name), .int(Int64(limit)), .int(Int64(sparing))]))
    }

    func update(_ row: FailureRow) throws {
        // Its answer is not needed: it goes with the next statement or the COMMIT.
        try connection.later(PostgreSQLStatement(Self.store, Self.parameters(row)))
    }

    func delete(_ name: [UInt8]) throws -> Bool {
        try connection.query(
            """
            WITH removed AS (DELETE FROM failures WHERE name = $1 RETURNING name),
            counted AS (UPDATE names SET count = greatest(0, count - 1) WHERE EXISTS (SELECT FROM removed))
            SELECT count(*) FROM removed
            """, [.bytes(name)]
        ).rows.first?[0].int ?? 0 > 0
    }

    func deleteAll() throws -> Int {
        let removed = try connection.query("DELETE FROM failures").changed
        _ = try connection.query("UPDATE names SET count = 0")
        return removed
    }

    func dropOldest(_ count: Int, keeping name: [UInt8], sparing: Int) throws -> Int {
        // As the SQLite table: fresh names first, then the least recently failed, names
        // below the lockout before locked-out ones (failures_by_age serves both orders).
        var removed = try connection.query(
            """
            DELETE FROM failures WHERE name = ANY (ARRAY(
                SELECT name FROM failures WHERE NOT locked_out AND count < $3 AND name <> $1
                ORDER BY last_failure LIMIT $2))
            """, [.bytes(name), .int(Int64(count)), .int(Int64(sparing))]
        ).changed
        if removed < count {
            removed += try connection.query(
                """
                DELETE FROM failures WHERE name = ANY (ARRAY(
                    SELECT name FROM failures WHERE name <> $1 ORDER BY locked_out, last_failure LIMIT $2))
                """, [.bytes(name), .int(Int64(count - removed))]
            ).changed
        }
        if removed > 0 {
            _ = try connection.query("UPDATE names SET count = greatest(0, count - $1)", [.int(Int64(removed))])
        }
        return removed
    }

    private static func row(_ values: [PostgreSQLValue]) -> FailureRow {
        FailureRow(
            name: values[0].bytes, count: Int(values[1].int), lastFailure: values[2].int, lockedOut: values[3].bool)
    }

    private static func parameters(_ row: FailureRow) -> [PostgreSQLValue] {
        [.bytes(row.name), .int(Int64(row.count)), .int(row.lastFailure), .bool(row.lockedOut)]
    }
}

/// The `sessions` and `state_keys` tables in PostgreSQL (step 2).
final class PostgreSQLSessionTable: SessionTable {
    private let connection: PostgreSQLConnection
    private static let columns =
        "token_sha256, \"user\", entry_digest, started, last_seen, client, user_agent, second_factor, passkey"

    init(_ connection: PostgreSQLConnection) {
        self.connection = connection
    }

    func key(named name: [UInt8]) throws -> [UInt8]? {
        try connection.query("SELECT key FROM state_keys WHERE name = $1", [.bytes(name)]).rows.first?[0].bytes
    }

    func insertKey(named name: [UInt8], _ key: [UInt8]) throws {
        _ = try connection.query(
            "INSERT INTO state_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            [.bytes(name), .bytes(key)])
    }

    func count(user: [UInt8]) throws -> Int {
        Int(
            try connection.query("SELECT count(*) FROM sessions WHERE \"user\" = $1", [.bytes(user)]).rows.first?[0].int
                ?? 0)
    }

    func deleteOldest(user: [UInt8], count: Int) throws {
        _ = try connection.query(
            """
            DELETE FROM sessions WHERE token_sha256 IN
                (SELECT token_sha256 FROM sessions WHERE "user" = $1 ORDER BY started, token_sha256 LIMIT $2)
            """, [.bytes(user), .int(Int64(count))])
    }

    func insert(_ record: SessionRecord) throws {
        _ = try connection.query(
            """
            INSERT INTO sessions (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (token_sha256) DO UPDATE SET "user" = $2, entry_digest = $3, started = $4,
                last_seen = $5, client = $6, user_agent = $7, second_factor = $8, passkey = $9
            """,
            [
                .bytes(record.tokenDigest), .bytes(Array(record.user.utf8)), .bytes(record.entryDigest),
                .int(record.started), .int(record.lastSeen), .bytes(Array((record.client ?? "").utf8)),
                .bytes(Array((record.userAgent ?? "").utf8)), .bool(record.secondFactor), .bool(record.passkey),
            ])
    }

    func session(tokenDigest: [UInt8]) throws -> SessionRecord? {
        try connection.query("SELECT \(Self.columns) FROM sessions WHERE token_sha256 = $1", [.bytes(tokenDigest)])
            .rows.first.map(Self.record)
    }

    func touch(tokenDigest: [UInt8], lastSeen: Int64) throws {
        _ = try connection.query(
            "UPDATE sessions SET last_seen = $2 WHERE token_sha256 = $1", [.bytes(tokenDigest), .int(lastSeen)])
    }

    func delete(tokenDigest: [UInt8]) throws -> Bool {
        try connection.query("DELETE FROM sessions WHERE token_sha256 = $1", [.bytes(tokenDigest)]).changed > 0
    }

    func deleteAll(user: [UInt8]?) throws -> Int {
        if let user { return try connection.query("DELETE FROM sessions WHERE \"user\" = $1", [.bytes(user)]).changed }
        return try connection.query("DELETE FROM sessions").changed
    }

    func sessions(user: [UInt8]?) throws -> [SessionRecord] {
        let order = "ORDER BY started, token_sha256"
        if let user {
            return try connection.query(
                "SELECT \(Self.columns) FROM sessions WHERE \"user\" = $1 \(order)", [.bytes(user)]
            ).rows.map(Self.record)
        }
        return try connection.query("SELECT \(Self.columns) FROM sessions \(order)").rows.map(Self.record)
    }

    private static func record(_ values: [PostgreSQLValue]) -> SessionRecord {
        let client = String(decoding: values[5].bytes, as: UTF8.self)
        let userAgent = String(decoding: values[6].bytes, as: UTF8.self)
        var record = SessionRecord(
            tokenDigest: values[0].bytes, user: String(decoding: values[1].bytes, as: UTF8.self),
            entryDigest: values[2].bytes, started: values[3].int, lastSeen: values[4].int,
            client: client.isEmpty ? nil : client, userAgent: userAgent.isEmpty ? nil : userAgent,
            secondFactor: values[7].bool)
        record.passkey = values[8].bool
        return record
    }
}

/// The `code_steps` table in PostgreSQL (step 3): a code is accepted by one statement, so
/// two hosts racing with the same code see one acceptance (the second waits for the
/// first's row and finds its step no longer later).
final class PostgreSQLCodeStepTable: CodeStepTable {
    private let connection: PostgreSQLConnection

    init(_ connection: PostgreSQLConnection) {
        self.connection = connection
    }

    func accept(user: [UInt8], step: Int64) throws -> Bool {
        try connection.query(
            """
            INSERT INTO code_steps ("user", step) VALUES ($1, $2)
                ON CONFLICT ("user") DO UPDATE SET step = excluded.step WHERE excluded.step > code_steps.step
            """, [.bytes(user), .int(step)]
        ).changed > 0
    }

    func lastStep(user: [UInt8]) throws -> Int64? {
        try connection.query("SELECT step FROM code_steps WHERE \"user\" = $1", [.bytes(user)]).rows.first?[0].int
    }

    func remove(user: [UInt8]) throws {
        _ = try connection.query("DELETE FROM code_steps WHERE \"user\" = $1", [.bytes(user)])
    }
}

/// The `pending_sign_ins` table in PostgreSQL (step 6): §14's sign-ins waiting for their
/// code. A pending sign-in is used up by one `DELETE` (``delete(tokenDigest:)`` says
/// whether this host removed it), so two hosts given the same cookie take one attempt.
final class PostgreSQLPendingSignInTable: PendingSignInTable {
    private let connection: PostgreSQLConnection
    private static let columns = "token_sha256, \"user\", entry_digest, expires, target"

    init(_ connection: PostgreSQLConnection) {
        self.connection = connection
    }

    func insert(_ pending: PendingSignIn, now: Int64) throws {
        _ = try connection.query("DELETE FROM pending_sign_ins WHERE expires <= $1", [.int(now)])
        _ = try connection.query(
            """
            INSERT INTO pending_sign_ins (\(Self.columns)) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (token_sha256) DO UPDATE SET "user" = $2, entry_digest = $3, expires = $4, target = $5
            """,
            [
                .bytes(pending.tokenDigest), .bytes(Array(pending.user.utf8)), .bytes(pending.entryDigest),
                .int(pending.expires), .bytes(Array((pending.target ?? "").utf8)),
            ])
    }

    func pending(tokenDigest: [UInt8]) throws -> PendingSignIn? {
        try connection.query(
            "SELECT \(Self.columns) FROM pending_sign_ins WHERE token_sha256 = $1", [.bytes(tokenDigest)]
        ).rows.first.map { values in
            let target = String(decoding: values[4].bytes, as: UTF8.self)
            return PendingSignIn(
                tokenDigest: values[0].bytes, user: String(decoding: values[1].bytes, as: UTF8.self),
                entryDigest: values[2].bytes, expires: values[3].int, target: target.isEmpty ? nil : target)
        }
    }

    func delete(tokenDigest: [UInt8]) throws -> Bool {
        try connection.query("DELETE FROM pending_sign_ins WHERE token_sha256 = $1", [.bytes(tokenDigest)]).changed > 0
    }
}

/// The `invitations` and `registrations` tables in PostgreSQL (step 4): SPEC §12. A code is
/// redeemed by one conditional `UPDATE … RETURNING`, so two hosts given the same code see
/// one registration; the hourly counts are read under a transaction lock
/// (`pg_advisory_xact_lock`) that every host's registration takes, so two hosts cannot both
/// count the last free registration of the hour.
final class PostgreSQLInvitationTable: InvitationTable {
    private let connection: PostgreSQLConnection
    /// The key of the registrations' advisory lock.
    static let lockClass: Int64 = 0x6366_7267  // "cfrg"

    init(_ connection: PostgreSQLConnection) {
        self.connection = connection
    }

    func insert(codeDigest: [UInt8], user: [UInt8], created: Int64, expires: Int64) throws -> Int64 {
        try connection.query(
            """
            INSERT INTO invitations (code_sha256, "user", created, expires, used) VALUES ($1, $2, $3, $4, 0)
            RETURNING id
            """, [.bytes(codeDigest), .bytes(user), .int(created), .int(expires)]
        ).rows.first?[0].int ?? 0
    }

    func redeem(codeDigest: [UInt8], user: [UInt8], now: Int64) throws -> Int64? {
        try connection.query(
            """
            UPDATE invitations SET used = $3
                WHERE code_sha256 = $1 AND used = 0 AND expires > $3 AND ("user" = '\\x'::bytea OR "user" = $2)
                RETURNING id
            """, [.bytes(codeDigest), .bytes(user), .int(now)]
        ).rows.first?[0].int
    }

    func isRedeemable(codeDigest: [UInt8], user: [UInt8], now: Int64) throws -> Bool {
        try !connection.query(
            """
            SELECT id FROM invitations
                WHERE code_sha256 = $1 AND used = 0 AND expires > $3 AND ("user" = '\\x'::bytea OR "user" = $2)
            """, [.bytes(codeDigest), .bytes(user), .int(now)]
        ).rows.isEmpty
    }

    func unredeem(id: Int64) throws {
        _ = try connection.query("UPDATE invitations SET used = 0 WHERE id = $1", [.int(id)])
    }

    func delete(id: Int64) throws -> Bool {
        try connection.query("DELETE FROM invitations WHERE id = $1", [.int(id)]).changed > 0
    }

    func deleteAll() throws -> Int {
        try connection.query("DELETE FROM invitations").changed
    }

    func all() throws -> [InvitationRecord] {
        try connection.query("SELECT id, \"user\", created, expires, used FROM invitations ORDER BY id").rows.map {
            values in
            let user = values[1].bytes
            let used = values[4].int
            return InvitationRecord(
                id: values[0].int, user: user.isEmpty ? nil : String(decoding: user, as: UTF8.self),
                created: values[2].int, expires: values[3].int, used: used == 0 ? nil : used)
        }
    }

    func recentRegistrations(client: [UInt8], after before: Int64) throws -> (client: Int, total: Int) {
        if connection.inTransaction {
            _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.int(Self.lockClass)])
        }
        _ = try connection.query("DELETE FROM registrations WHERE at <= $1", [.int(before)])
        let row = try connection.query(
            "SELECT count(*) FILTER (WHERE client = $1), count(*) FROM registrations", [.bytes(client)]
        ).rows.first
        return (Int(row?[0].int ?? 0), Int(row?[1].int ?? 0))
    }

    func insertRegistration(client: [UInt8], at: Int64) throws -> Int64 {
        try connection.query(
            "INSERT INTO registrations (at, client) VALUES ($1, $2) RETURNING id", [.int(at), .bytes(client)]
        ).rows.first?[0].int ?? 0
    }

    func deleteRegistration(row: Int64) throws {
        _ = try connection.query("DELETE FROM registrations WHERE id = $1", [.int(row)])
    }
}

/// The `webauthn_challenges` table in PostgreSQL (step 5): a challenge is taken by one
/// `DELETE … RETURNING`, so two hosts given the same challenge see it once.
final class PostgreSQLChallengeTable: ChallengeTable {
    private let connection: PostgreSQLConnection

    init(_ connection: PostgreSQLConnection) {
        self.connection = connection
    }

    func insert(digest: [UInt8], purpose: Int64, user: [UInt8], expires: Int64, now: Int64) throws {
        _ = try connection.query("DELETE FROM webauthn_challenges WHERE expires < $1", [.int(now)])
        _ = try connection.query(
            "INSERT INTO webauthn_challenges (challenge_sha256, purpose, \"user\", expires) VALUES ($1, $2, $3, $4)",
            [.bytes(digest), .int(purpose), .bytes(user), .int(expires)])
    }

    func take(digest: [UInt8]) throws -> (purpose: Int64, user: [UInt8], expires: Int64)? {
        try connection.query(
            "DELETE FROM webauthn_challenges WHERE challenge_sha256 = $1 RETURNING purpose, \"user\", expires",
            [.bytes(digest)]
        ).rows.first.map { ($0[0].int, $0[1].bytes, $0[2].int) }
    }
}
