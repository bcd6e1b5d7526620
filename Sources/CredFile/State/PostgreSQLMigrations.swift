/// The schema of the PostgreSQL state database (SPEC §15): the twin of
/// ``SQLiteStateStore/migrations``, step for step, in PostgreSQL's dialect.
///
/// `credfile_schema` holds one row, how many of ``migrations`` the database has had.
/// The missing steps run in one transaction under an advisory lock (so hosts starting
/// at once migrate it once), at the first connection of a process or by
/// `credfile state FILE --init`; a database of a newer credfile is refused, never written.
///
/// **Adding a table** (the steps in Documentation/Decisions.md's order): step N here is
/// step N of ``SQLiteStateStore/migrations`` — append both in the same commit, and give
/// the table's protocol (as ``CodeStepTable``) a `PostgreSQL…Table` beside its
/// `SQLite…Table`, created in ``PostgreSQLTables/init(_:)`` beside the SQLite one in
/// ``SQLiteTables``. Types: `BLOB` → `bytea`, `INTEGER` → `bigint`, a flag → `boolean`;
/// `WITHOUT ROWID` is dropped; a column named `user` is written `"user"`.
/// `PostgreSQLStateTests` checks that both lists have the same length.
extension PostgreSQLStateStore {
    /// The schema's steps: step i takes a database from version i to version i + 1.
    static let migrations: [String] = [
        // 1: SPEC §9's failures (PostgreSQLFailureTable), and how many names they hold.
        """
        CREATE TABLE failures (
            name bytea PRIMARY KEY,
            count bigint NOT NULL,
            last_failure bigint NOT NULL,
            locked_out boolean NOT NULL
        );
        CREATE INDEX failures_by_age ON failures (locked_out, last_failure);
        CREATE TABLE names (count bigint NOT NULL);
        INSERT INTO names (count) VALUES (0);
        """,
        // 2: SPEC §11's sessions (PostgreSQLSessionTable): only the token's SHA-256; and
        // the state's keys.
        """
        CREATE TABLE sessions (
            token_sha256 bytea PRIMARY KEY,
            "user" bytea NOT NULL,
            entry_digest bytea NOT NULL,
            started bigint NOT NULL,
            last_seen bigint NOT NULL,
            client bytea NOT NULL,
            user_agent bytea NOT NULL
        );
        CREATE INDEX sessions_by_user ON sessions ("user", started);
        CREATE TABLE state_keys (name bytea PRIMARY KEY, key bytea NOT NULL);
        """,
        // 3: SPEC §14's last accepted time step of each user's one-time codes.
        """
        CREATE TABLE code_steps ("user" bytea PRIMARY KEY, step bigint NOT NULL);
        """,
        // 4: SPEC §12's invitations (only each code's SHA-256) and the registrations of the
        // last hour (PostgreSQLInvitationTable).
        """
        CREATE TABLE invitations (
            id bigserial PRIMARY KEY,
            code_sha256 bytea UNIQUE NOT NULL,
            "user" bytea NOT NULL,
            created bigint NOT NULL,
            expires bigint NOT NULL,
            used bigint NOT NULL
        );
        CREATE TABLE registrations (id bigserial PRIMARY KEY, at bigint NOT NULL, client bytea NOT NULL);
        CREATE INDEX registrations_by_client ON registrations (client);
        CREATE INDEX registrations_by_time ON registrations (at);
        """,
        // 5: SPEC §14's WebAuthn challenges of the passkeys (PostgreSQLChallengeTable): only
        // their SHA-256, each used once; and the sessions' mark of a passkey sign-in.
        """
        CREATE TABLE webauthn_challenges (
            challenge_sha256 bytea PRIMARY KEY,
            purpose bigint NOT NULL,
            "user" bytea NOT NULL,
            expires bigint NOT NULL
        );
        CREATE INDEX webauthn_challenges_by_expiry ON webauthn_challenges (expires);
        ALTER TABLE sessions ADD COLUMN passkey boolean NOT NULL DEFAULT false;
        """,
        // 6: SPEC §14's sign-ins waiting for their code (PostgreSQLPendingSignInTable); and
        // whether a session's sign-in had a second factor (§13's `two-factor`).
        """
        CREATE TABLE pending_sign_ins (
            token_sha256 bytea PRIMARY KEY,
            "user" bytea NOT NULL,
            entry_digest bytea NOT NULL,
            expires bigint NOT NULL,
            target bytea NOT NULL
        );
        CREATE INDEX pending_sign_ins_by_age ON pending_sign_ins (expires);
        ALTER TABLE sessions ADD COLUMN second_factor boolean NOT NULL DEFAULT false;
        """,
        // 7: every end of a session, whoever ends it (serve, `credfile sessions --end`, an
        // older credfile, an administrator's SQL), notifies `credfile_sessions` at commit,
        // so the sessions other processes hold in memory are read again
        // (PostgreSQLChangeListener). A DELETE that removed nothing notifies nobody.
        """
        CREATE FUNCTION credfile_sessions_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM ended) THEN PERFORM pg_notify('credfile_sessions', ''); END IF;
            RETURN NULL;
        END $$;
        CREATE FUNCTION credfile_sessions_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('credfile_sessions', '');
            RETURN NULL;
        END $$;
        CREATE TRIGGER sessions_deleted AFTER DELETE ON sessions REFERENCING OLD TABLE AS ended
            FOR EACH STATEMENT EXECUTE FUNCTION credfile_sessions_deleted();
        CREATE TRIGGER sessions_truncated AFTER TRUNCATE ON sessions
            FOR EACH STATEMENT EXECUTE FUNCTION credfile_sessions_truncated();
        """,
    ]

    /// The advisory lock that migrations hold (any constant no other lock of ours uses).
    static let migrationLock: Int64 = 0x6372_6564_6669_6C65  // "credfile"

    /// Brings the database of `connection` to the current schema.
    /// - Returns: the version it had.
    /// - Throws: ``PostgreSQLError`` when a step fails (nothing of it stays) or the
    ///   database is of a newer schema than this credfile knows.
    @discardableResult
    static func migrate(_ connection: PostgreSQLConnection) throws(PostgreSQLError) -> Int {
        // A plain read first: a current database takes no lock (and needs no CREATE right).
        if let version = try? version(connection), version == migrations.count { return version }
        try connection.execute("BEGIN")
        do {
            _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.int(migrationLock)])
            try connection.execute("CREATE TABLE IF NOT EXISTS credfile_schema (version bigint NOT NULL)")
            let version = try Self.version(connection) ?? 0
            if version == 0 { try connection.execute("DELETE FROM credfile_schema") }
            guard (0...migrations.count).contains(version) else {
                throw PostgreSQLError(
                    message: "schema version \(version) is not one this credfile knows (\(migrations.count))")
            }
            for step in migrations.dropFirst(version) { try connection.execute(step) }
            if version == 0 {
                _ = try connection.query(
                    "INSERT INTO credfile_schema (version) VALUES ($1)", [.int(Int64(migrations.count))])
            } else {
                _ = try connection.query("UPDATE credfile_schema SET version = $1", [.int(Int64(migrations.count))])
            }
            try connection.execute("COMMIT")
            return version
        } catch let error as PostgreSQLError {
            if !connection.isBroken { try? connection.execute("ROLLBACK") }
            throw error
        } catch {
            try? connection.execute("ROLLBACK")
            throw PostgreSQLError(message: "\(error)")
        }
    }

    /// The version in `credfile_schema`; nil when it has no row.
    /// - Throws: ``PostgreSQLError`` when the table is missing too.
    private static func version(_ connection: PostgreSQLConnection) throws(PostgreSQLError) -> Int? {
        try connection.query("SELECT version FROM credfile_schema").rows.first.map { Int($0[0].int) }
    }
}
