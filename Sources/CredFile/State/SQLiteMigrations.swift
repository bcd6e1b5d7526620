/// The schema of the SQLite state database and how a database of an older credfile is
/// brought up to it.
///
/// `PRAGMA user_version` holds how many of ``migrations`` a database has had (0: a new,
/// empty file). Opening runs the missing ones, in order, in one `BEGIN IMMEDIATE`
/// transaction that sets the version at its end, so two processes that open a new
/// database at once migrate it once, and a failed step leaves the database as it was.
/// A database of a newer credfile (a version past the list) is refused, never written.
///
/// **Adding a table** (§11's sessions, §12's invitations, §14's code steps): append one
/// step; never change a released one (databases in the field have run it). The table's
/// own type (as ``SQLiteFailureTable``) holds its statements. PostgreSQL (SPEC §15) has the
/// twin of every step, in the same commit:
/// 1. append step N to ``PostgreSQLStateStore/migrations`` (PostgreSQLMigrations.swift) in
///    its dialect: `BLOB` → `bytea`, `INTEGER` → `bigint`, a 0/1 flag → `boolean`, no
///    `WITHOUT ROWID`, a column `user` written `"user"`;
/// 2. add the table's protocol to ``StateTables`` and give it two types, `SQLite…Table`
///    (created in ``SQLiteTables``) and `PostgreSQL…Table` (PostgreSQLTables.swift, created
///    in ``PostgreSQLTables``): `$1` for `?1`, `INSERT … ON CONFLICT … DO UPDATE … RETURNING`
///    or one conditional statement for a rule that must hold under racing hosts (as
///    ``PostgreSQLCodeStepTable/accept(user:step:)``), `PostgreSQLRows.changed` for
///    `connection.changes`;
/// 3. run its tests over ``StateBackend`` (Tests/CredFileTests/StateBackendTests.swift):
///    `arguments: StateBackend.allCases` and `backend.location(directory).store()`.
/// `StateBackendTests/schema` fails while the two lists differ in length.
extension SQLiteStateStore {
    /// The schema's steps: step i takes a database from version i to version i + 1.
    static let migrations: [String] = [
        // 1: SPEC §9's failures (SQLiteFailureTable), and how many names they hold.
        """
        CREATE TABLE failures (
            name BLOB PRIMARY KEY NOT NULL,
            count INTEGER NOT NULL,
            last_failure INTEGER NOT NULL,
            locked_out INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX failures_by_age ON failures (locked_out, last_failure);
        CREATE TABLE names (count INTEGER NOT NULL);
        INSERT INTO names (count) VALUES (0);
        """,
        // 2: SPEC §11's sessions (SQLiteSessionTable): only the token's SHA-256, never the
        // token; and the state's keys (anti-forgery, entry digest), 32 random bytes each.
        """
        CREATE TABLE sessions (
            token_sha256 BLOB PRIMARY KEY NOT NULL,
            user BLOB NOT NULL,
            entry_digest BLOB NOT NULL,
            started INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            client BLOB NOT NULL,
            user_agent BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX sessions_by_user ON sessions (user, started);
        CREATE TABLE state_keys (name BLOB PRIMARY KEY NOT NULL, key BLOB NOT NULL) WITHOUT ROWID;
        """,
        // 3: SPEC §14's last accepted time step of each user's one-time codes (SQLiteCodeStepTable).
        """
        CREATE TABLE code_steps (user BLOB PRIMARY KEY NOT NULL, step INTEGER NOT NULL) WITHOUT ROWID;
        """,
        // 4: SPEC §12's invitations (only each code's SHA-256) and the registrations of the
        // last hour that `register-per-hour` and `register-per-hour-total` count (SQLiteInvitationTable).
        """
        CREATE TABLE invitations (
            id INTEGER PRIMARY KEY,
            code_sha256 BLOB UNIQUE NOT NULL,
            user BLOB NOT NULL,
            created INTEGER NOT NULL,
            expires INTEGER NOT NULL,
            used INTEGER NOT NULL
        );
        CREATE TABLE registrations (at INTEGER NOT NULL, client BLOB NOT NULL);
        CREATE INDEX registrations_by_client ON registrations (client);
        CREATE INDEX registrations_by_time ON registrations (at);
        """,
        // 5: SPEC §14's WebAuthn challenges of the passkeys (SQLiteChallengeTable): only
        // their SHA-256, each used once; and the sessions' mark of a passkey sign-in.
        """
        CREATE TABLE webauthn_challenges (
            challenge_sha256 BLOB PRIMARY KEY NOT NULL,
            purpose INTEGER NOT NULL,
            user BLOB NOT NULL,
            expires INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX webauthn_challenges_by_expiry ON webauthn_challenges (expires);
        ALTER TABLE sessions ADD COLUMN passkey INTEGER NOT NULL DEFAULT 0;
        """,
        // 6: SPEC §14's sign-ins waiting for their code (SQLitePendingSignInTable): only the
        // token's SHA-256; and whether a session's sign-in had a second factor (§13's `two-factor`).
        """
        CREATE TABLE pending_sign_ins (
            token_sha256 BLOB PRIMARY KEY NOT NULL,
            user BLOB NOT NULL,
            entry_digest BLOB NOT NULL,
            expires INTEGER NOT NULL,
            target BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX pending_sign_ins_by_age ON pending_sign_ins (expires);
        ALTER TABLE sessions ADD COLUMN second_factor INTEGER NOT NULL DEFAULT 0;
        """,
        // 7: nothing here. PostgreSQL's step 7 makes every end of a session notify the
        // processes that hold sessions in memory; in SQLite, `PRAGMA data_version` already
        // tells a connection of every other connection's commit (SQLiteTables.changeCounter).
        """
        -- the twin of PostgreSQL's step 7 (a trigger that notifies the ends of sessions)
        """,
    ]

    /// The schema version this credfile writes: the number of ``migrations``.
    static var schemaVersion: Int64 { Int64(migrations.count) }

    /// Brings the database of `connection` to ``schemaVersion``.
    /// - Throws: ``SQLiteError`` when a step fails (nothing of it stays) or the database
    ///   is of a newer schema than this credfile knows.
    static func migrate(_ connection: SQLiteConnection) throws(SQLiteError) {
        let version = try userVersion(connection)
        if version == schemaVersion { return }
        try refuseNewer(version)
        try connection.execute("BEGIN IMMEDIATE")
        do {
            // Another process may have migrated it while this one waited for the lock.
            let current = try userVersion(connection)
            try refuseNewer(current)
            for step in migrations.dropFirst(Int(current)) { try connection.execute(step) }
            try connection.execute("PRAGMA user_version = \(schemaVersion)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private static func refuseNewer(_ version: Int64) throws(SQLiteError) {
        guard (0...schemaVersion).contains(version) else {
            throw SQLiteError(
                code: 1, message: "schema version \(version) is not one this credfile knows (\(schemaVersion))")
        }
    }

    static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        let statement = try connection.prepare("PRAGMA user_version")
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }
}
