import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The state database in SQLite (SPEC §9, the default for one host): one file,
/// `FILE.guard.db` beside the credential file unless `state` puts it elsewhere, shared by
/// every process that checks FILE's logins. It owns the connection, the schema version
/// (`PRAGMA user_version`) and its migrations (``migrations``); its tables' SQL lives in
/// their own types (``SQLiteFailureTable``).
///
/// **Transactions.** The database is in WAL mode (readers never wait for the writer)
/// with a busy timeout, so any number of processes share it. ``read(_:)`` runs outside
/// any transaction; ``write(_:)`` runs one `BEGIN IMMEDIATE` transaction, committed when
/// its body returns and rolled back when it throws.
///
/// **Bounded log.** The write-ahead log is emptied when a commit leaves ``logPages``
/// pages in it (a `TRUNCATE` checkpoint, paid by that one login), not when a connection
/// closes: it stays under about 1 MiB plus one transaction, and a process per login pays
/// no `fdatasync` at the other logins.
///
/// **Replaced files.** Every use compares the device and inode at `path` with those of
/// the file the connection opened, and opens the file now there when they differ (a
/// database deleted, or replaced by `rename`, under `serve`). Remove a database with its
/// `-wal` and `-shm` files, as SQLite asks: a log left behind belongs to the old file.
///
/// **Files.** The database and SQLite's `-wal` and `-shm` files are mode 0600. When
/// root creates the database it gives it `owner` (see ``LoginGuard``: the credential
/// file's owner and group for the default path, the directory's for a `state`
/// elsewhere); SQLite gives the `-wal` and `-shm` files the database's owner when root
/// creates them, and they are kept when the last connection closes (it leaves the log
/// as it is), so a caller who may write them never needs to create files in their
/// directory. A symlink in the database's place is refused (``StateFile``).
final class SQLiteStateStore: StateStore {
    /// The database file.
    let path: String
    /// The open connection and its tables, one user at a time.
    private let connection: Mutex<SQLiteTables?>
    /// Who gets the file when root creates it.
    private let owner: (uid: uid_t, gid: gid_t)?

    /// How long a statement waits for another process's write lock, in milliseconds.
    static let busyTimeout: Int32 = 10_000
    /// The write-ahead log is copied into the database and emptied when a commit leaves
    /// this many pages in it (1 MiB of 4 KiB pages: a failure writes 2 or 3 pages, so
    /// a checkpoint every hundred or so failures).
    static let logPages: Int32 = 256

    /// A database at `path`, opened (and created when missing) at first use.
    init(path: String, owner: (uid: uid_t, gid: gid_t)?) {
        self.path = path
        self.owner = owner
        self.connection = Mutex(nil)
    }

    var location: String { path }

    func read<R: Sendable>(_ body: (any StateTables) throws -> R) throws(CredFileError) -> R? {
        try use(creating: false) { tables in try body(tables) }
    }

    func write<R: Sendable>(_ body: (any StateTables) throws -> R) throws(CredFileError) -> R {
        // A store that may create its file always gets a connection.
        try use(creating: true) { tables in try tables.transaction { try body(tables) } }!
    }

    func sessionChangeCounter() throws(CredFileError) -> UInt64? {
        try use(creating: false) { tables in try tables.changeCounter() }
    }

    // MARK: The connection

    /// Runs `body` on the open connection (opening it first; with `creating` false, nil
    /// when the file does not exist), one caller at a time; an SQLite failure becomes a
    /// ``CredFileError`` naming the file. A failed connection is dropped, so the next call
    /// opens it again.
    private func use<R: Sendable>(creating: Bool, _ body: (SQLiteTables) throws -> R) throws(CredFileError) -> R? {
        try connection.withLock { (current: inout SQLiteTables?) throws(CredFileError) -> R? in
            let tables: SQLiteTables
            // A database deleted or replaced under a long-running process (serve) is
            // noticed here, at every use, and the file now at the path is opened: else
            // this process would count in a file nobody else sees.
            if let opened = current, opened.identity != StateFile.identity(path) { current = nil }
            if let current {
                tables = current
            } else {
                guard creating || StateFile.exists(path) else { return nil }
                tables = try open()
                current = tables
            }
            do {
                return try body(tables)
            } catch let error as SQLiteError {
                current = nil
                throw failure(error)
            } catch let error as CredFileError {
                current = nil
                throw error
            } catch {
                current = nil
                throw CredFileError(.guardDatabase, "cannot use the guard database \(Escaped.path(path)): \(error)")
            }
        }
    }

    /// The library error for an SQLite failure on this database.
    private func failure(_ error: SQLiteError) -> CredFileError {
        let errno = error.systemErrno ?? (error.isReadOnly ? EACCES : EIO)
        let doing =
            error.isReadOnly
            ? "cannot write the guard database \(Escaped.path(path))"
            : "cannot use the guard database \(Escaped.path(path))"
        return CredFileError(
            .guardDatabase, "\(doing): \(error.message)", cause: .init(syscall: "sqlite3", errno: errno))
    }

    /// Creates the file when missing (``StateFile``), opens it, and makes sure it is in
    /// WAL mode with the current schema (``migrate(_:)``).
    private func open() throws(CredFileError) -> SQLiteTables {
        try StateFile.createIfMissing(path, owner: owner)
        // Taken before opening: a file replaced in between is noticed at the next use.
        let identity = StateFile.identity(path)
        do {
            let connection = try SQLiteConnection(path: path, busyTimeout: Self.busyTimeout)
            guard !connection.isReadOnly else {
                throw CredFileError(
                    .guardDatabase, "cannot write the guard database \(Escaped.path(path))",
                    cause: .init(syscall: "open", errno: EACCES))
            }
            try connection.leaveLogOnClose()
            try Self.retryingWhileBusy { () throws(SQLiteError) in
                try connection.execute("PRAGMA journal_mode = WAL")
            }
            // In WAL mode NORMAL syncs at checkpoints, not at each commit: a power cut may
            // forget the last failures, never corrupts; a crashed process loses nothing.
            try connection.execute("PRAGMA synchronous = NORMAL")
            // The log is emptied every logPages pages, not when the last connection closes
            // (above): that checkpoint cost a process per login (pam_exec, checkpassword)
            // three or four fdatasyncs at every login. A log left behind is read back by
            // the next process that opens the database alone: it rebuilds the log's index
            // (the -shm) from the -wal, and a rebuilt index counts no frame as copied into
            // the database yet, so a writer never starts the log over and SQLite's own
            // PASSIVE checkpoint would run at every commit past its threshold while the
            // file kept growing. A TRUNCATE checkpoint empties the file itself, which no
            // rebuild undoes.
            connection.emptyLog(atPages: Self.logPages)
            // Bounds the file too when a checkpoint copied everything but had to leave
            // the truncation to a later commit (a reader was still in the log then).
            try connection.execute("PRAGMA journal_size_limit = \(Self.logPages * 4096)")
            try Self.retryingWhileBusy { () throws(SQLiteError) in try Self.migrate(connection) }
            return try SQLiteTables(connection, identity: identity)
        } catch let error as SQLiteError {
            throw failure(error)
        } catch let error as CredFileError {
            throw error
        } catch {
            throw CredFileError(.guardDatabase, "cannot use the guard database \(Escaped.path(path))")
        }
    }
}

extension SQLiteStateStore {
    /// Runs `body` again while SQLite answers `SQLITE_BUSY` at once, for up to
    /// ``busyTimeout``. Processes that open a new database together (the first logins after
    /// an install, each a pam_exec process) each switch it to WAL and migrate it; the
    /// switch takes an exclusive lock while holding a shared one, and two connections
    /// doing that at once are told "database is locked" without the busy handler's wait
    /// (SQLite's deadlock rule): 6 of 320 such openers failed before this (8 at a time).
    /// Both steps are idempotent, so trying again is safe. Gives up (throws the busy
    /// error) after `milliseconds` of pauses.
    static func retryingWhileBusy(
        for milliseconds: Int64 = Int64(busyTimeout), _ body: () throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        var pause: useconds_t = 1_000
        var waited: Int64 = 0
        while true {
            do {
                return try body()
            } catch  where error.isBusy && waited < milliseconds * 1_000 {
                usleep(pause)
                waited += Int64(pause)
                pause = min(pause * 2, 50_000)
            }
        }
    }
}

/// The tables of one open SQLite connection (their statements prepared once).
final class SQLiteTables: StateTables {
    let connection: SQLiteConnection
    let sqliteFailures: SQLiteFailureTable
    /// The device and inode of the file this connection opened.
    let identity: StateFile.Identity?
    let sqliteSessions: SQLiteSessionTable
    let sqliteCodeSteps: SQLiteCodeStepTable
    let sqliteChallenges: SQLiteChallengeTable
    let sqlitePendingSignIns: SQLitePendingSignInTable
    let sqliteInvitations: SQLiteInvitationTable
    /// `PRAGMA data_version`, prepared once (``changeCounter()``).
    private let dataVersion: SQLiteStatement
    /// Random bits told apart from every other connection's (``changeCounter()``).
    private let epoch: UInt64

    init(_ connection: SQLiteConnection, identity: StateFile.Identity?) throws(SQLiteError) {
        self.connection = connection
        self.identity = identity
        sqliteFailures = try SQLiteFailureTable(connection)
        sqliteSessions = try SQLiteSessionTable(connection)
        sqliteCodeSteps = try SQLiteCodeStepTable(connection)
        sqliteChallenges = try SQLiteChallengeTable(connection)
        sqlitePendingSignIns = try SQLitePendingSignInTable(connection)
        sqliteInvitations = try SQLiteInvitationTable(connection)
        dataVersion = try connection.prepare("PRAGMA data_version")
        epoch = UInt64.random(in: 0...UInt64(UInt32.max)) << 32
    }

    /// The database's change counter as this connection sees it: SQLite's `data_version`,
    /// which changes whenever another connection (this process's guard, another process)
    /// commits, and not for this connection's own commits; in the high bits, this
    /// connection's own random epoch, so a reopened file never repeats an old value. It
    /// reads the log's index in shared memory, no page of the database.
    func changeCounter() throws(SQLiteError) -> UInt64 {
        defer { dataVersion.reset() }
        guard try dataVersion.step() else { return epoch }
        return epoch | UInt64(UInt32(truncatingIfNeeded: dataVersion.int64(0)))
    }

    var failures: any FailureTable { sqliteFailures }
    var sessions: any SessionTable { sqliteSessions }
    var codeSteps: any CodeStepTable { sqliteCodeSteps }
    var challenges: any ChallengeTable { sqliteChallenges }
    var pendingSignIns: any PendingSignInTable { sqlitePendingSignIns }
    var invitations: any InvitationTable { sqliteInvitations }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed when it returns,
    /// rolled back when it throws.
    func transaction<R>(_ body: () throws -> R) throws -> R {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
