import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The state database in PostgreSQL (SPEC §15, `state = postgresql://…`): every process on
/// every host that checks one credential file's logins shares it, so failures alternated
/// between hosts lock a name out at exactly `max-failures`, a sign-out on one host ends the
/// session on all, and a code used on one host fails on the others.
///
/// **Connections.** A small pool (at most ``poolSize`` idle), opened at first use through
/// libpq (``PostgreSQLConnection``): the password comes from libpq's own means
/// (`PGPASSFILE`, a service file), never from credfile. A broken connection is dropped
/// and the next use opens a new one, so the store reconnects by itself when the database
/// comes back; a use whose connection broke before anything was committed is tried once
/// more on a new one. Any failure is a ``CredFileError/Code/guardDatabase`` error, which
/// every caller treats as a temporary failure, never an unguarded login.
///
/// **Transactions.** ``write(_:)`` is one `READ COMMITTED` transaction. The tables hold
/// their own rules against races: the failures of a name are read under a transaction
/// lock of that name (``PostgreSQLFailureTable``), rows are written with
/// `INSERT … ON CONFLICT … DO UPDATE … RETURNING`, and a code step is accepted by one
/// statement, so no count is lost with many processes on many hosts. Writers on different
/// names do not wait for each other, so ``GuardDatabase`` reads no row before the write
/// transaction (``readsBeforeWriting``): a failure is two round trips (`BEGIN`, the lock
/// and the read; the write and `COMMIT`), each statement prepared once per connection
/// (``PostgreSQLConnection``).
///
/// **Schema.** ``PostgreSQLStateStore/migrations``, run at first use (or by
/// `credfile state FILE --init`) under an advisory lock, with the version in
/// `credfile_schema`.
final class PostgreSQLStateStore: StateStore, @unchecked Sendable {
    /// The libpq connection string (without a password).
    let connectionString: String
    /// Idle connections, the most recently used last.
    private let idle = Mutex<[PostgreSQLTables]>([])
    /// Whether this process has seen the schema current (checked once per store).
    private let current = Atomic<Bool>(false)
    /// The sessions' change counter: one more connection, listening (opened at first use).
    private let listener: PostgreSQLChangeListener
    /// The round trips of the uses so far (not counting connecting).
    private let trips = Atomic<Int>(0)

    /// The most idle connections kept.
    static let poolSize = 8

    /// A store on the database `connectionString` names, connected at first use.
    init(connectionString: String) {
        self.connectionString = connectionString
        listener = PostgreSQLChangeListener(connectionString: connectionString)
    }

    var location: String { connectionString }

    /// False: a write transaction holds back only the writers of the same name.
    var readsBeforeWriting: Bool { false }

    /// How many round trips to the server the uses of this store made so far (connecting
    /// and migrating not counted): what a transaction costs, for tests.
    var roundTrips: Int { trips.load(ordering: .relaxed) }

    func read<R: Sendable>(_ body: (any StateTables) throws -> R) throws(CredFileError) -> R? {
        try use { tables in try body(tables) }
    }

    func write<R: Sendable>(_ body: (any StateTables) throws -> R) throws(CredFileError) -> R {
        try use { tables in try tables.transaction { try body(tables) } }
    }

    func sessionChangeCounter() throws(CredFileError) -> UInt64? {
        // The tables (and step 7's triggers) exist before anything is listened for.
        if !current.load(ordering: .acquiring) { giveBack(try take()) }
        do {
            return try listener.counter()
        } catch {
            throw failure(error)
        }
    }

    func awaitSessionChange(since: UInt64) {
        var pause: useconds_t = 50
        var waited: useconds_t = 0
        while waited < 1_000_000, (try? listener.counter()) == since {
            usleep(pause)
            waited += pause
            pause = min(pause * 2, 10_000)
        }
    }

    /// Brings the schema up to date now (`credfile state FILE --init`).
    /// - Returns: the version before and after.
    func initialize() throws(CredFileError) -> (before: Int, after: Int) {
        do {
            let connection = try PostgreSQLConnection(connectionString: connectionString)
            let before = try Self.migrate(connection)
            current.store(true, ordering: .releasing)
            return (before, Self.migrations.count)
        } catch {
            throw failure(error)
        }
    }

    // MARK: The pool

    /// Runs `body` on a connection of the pool (a new one when none is idle); once more on
    /// a new connection when the one taken turned out broken before anything was committed.
    private func use<R>(_ body: (PostgreSQLTables) throws -> R) throws(CredFileError) -> R {
        var tries = 0
        while true {
            tries += 1
            let tables = try take()
            let before = tables.connection.roundTrips
            defer { trips.add(tables.connection.roundTrips - before, ordering: .relaxed) }
            do {
                let result = try body(tables)
                giveBack(tables)
                return result
            } catch let error as PostgreSQLError {
                giveBack(tables)  // kept only when still usable
                // A connection that broke while idle (the server restarted) fails at its
                // first statement: nothing was committed, so a new connection may retry.
                if error.connectionLost && !tables.committing && tries == 1 { continue }
                throw failure(error)
            } catch let error as CredFileError {
                giveBack(tables)
                throw error
            } catch {
                giveBack(tables)
                throw CredFileError(.guardDatabase, "cannot use the state database \(connectionString): \(error)")
            }
        }
    }

    /// An idle connection, or a new one (its schema brought up to date at the first).
    private func take() throws(CredFileError) -> PostgreSQLTables {
        if let tables = idle.withLock({ $0.popLast() }) { return tables }
        do {
            let connection = try PostgreSQLConnection(connectionString: connectionString)
            // As the SQLite store's `synchronous = NORMAL`: a commit does not wait for its
            // WAL flush. A crash of the database server may forget the last few failures
            // (never corrupts, never half a transaction); every attempt costs no fsync.
            try connection.execute("SET synchronous_commit = off")
            if !current.load(ordering: .acquiring) {
                try Self.migrate(connection)
                current.store(true, ordering: .releasing)
            }
            return PostgreSQLTables(connection)
        } catch {
            throw failure(error)
        }
    }

    private func giveBack(_ tables: PostgreSQLTables) {
        guard !tables.connection.isBroken, !tables.connection.inTransaction else { return }
        tables.committing = false
        idle.withLock { if $0.count < Self.poolSize { $0.append(tables) } }
    }

    /// The library error for a PostgreSQL failure on this database.
    private func failure(_ error: PostgreSQLError) -> CredFileError {
        CredFileError(
            .guardDatabase, "cannot use the state database \(connectionString): \(error.message)",
            cause: error.connectionLost ? .init(syscall: "libpq", errno: ECONNREFUSED) : nil)
    }
}

/// The tables of one PostgreSQL connection (sendable to the pool: one user at a time
/// holds it, taken out of the pool's lock and given back).
final class PostgreSQLTables: StateTables, @unchecked Sendable {
    let connection: PostgreSQLConnection
    /// Whether `COMMIT` was sent (a broken connection then may have committed).
    var committing = false
    private let postgreSQLFailures: PostgreSQLFailureTable
    private let postgreSQLSessions: PostgreSQLSessionTable
    private let postgreSQLCodeSteps: PostgreSQLCodeStepTable
    private let postgreSQLPendingSignIns: PostgreSQLPendingSignInTable
    private let postgreSQLInvitations: PostgreSQLInvitationTable
    private let postgreSQLChallenges: PostgreSQLChallengeTable

    init(_ connection: PostgreSQLConnection) {
        self.connection = connection
        postgreSQLFailures = PostgreSQLFailureTable(connection)
        postgreSQLSessions = PostgreSQLSessionTable(connection)
        postgreSQLCodeSteps = PostgreSQLCodeStepTable(connection)
        postgreSQLPendingSignIns = PostgreSQLPendingSignInTable(connection)
        postgreSQLInvitations = PostgreSQLInvitationTable(connection)
        postgreSQLChallenges = PostgreSQLChallengeTable(connection)
    }

    var failures: any FailureTable { postgreSQLFailures }
    var sessions: any SessionTable { postgreSQLSessions }
    var codeSteps: any CodeStepTable { postgreSQLCodeSteps }
    var pendingSignIns: any PendingSignInTable { postgreSQLPendingSignIns }
    var invitations: any InvitationTable { postgreSQLInvitations }
    var challenges: any ChallengeTable { postgreSQLChallenges }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// `BEGIN` goes with `body`'s first statement and `COMMIT` with its held-back writes
    /// (``PostgreSQLConnection/begin()``).
    func transaction<R>(_ body: () throws -> R) throws -> R {
        try connection.begin()
        do {
            let result = try body()
            committing = true
            try connection.commit()
            return result
        } catch {
            connection.rollback()
            throw error
        }
    }
}
