import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The guard database of SPEC §9: per name (its NFC bytes; unknown names too) the
/// consecutive failures, the time of the last one, and whether the name is locked out.
///
/// Schema (version 1, in `PRAGMA user_version`):
///
///     CREATE TABLE failures (
///         name BLOB PRIMARY KEY NOT NULL,   -- the name's NFC bytes (raw bytes if not UTF-8)
///         count INTEGER NOT NULL,           -- consecutive failures
///         last_failure INTEGER NOT NULL,    -- milliseconds since 1970-01-01 UTC
///         locked_out INTEGER NOT NULL       -- 1 once count reached max-failures
///     ) WITHOUT ROWID;
///     CREATE INDEX failures_by_age ON failures (locked_out, last_failure);
///     CREATE TABLE names (count INTEGER NOT NULL);  -- one row: how many rows failures has
///
/// **Transactions.** The database is in WAL mode (readers never wait for the writer)
/// with a busy timeout, so any number of processes share it. An attempt is first
/// judged by a plain read (a throttled or locked-out attempt writes nothing, so a flood
/// of them never contends for the write lock); an attempt to be checked then takes one
/// `BEGIN IMMEDIATE` transaction that judges it again and **counts it as a failure
/// before the password is looked at** (pam_faillock and pam_tally2 count the same way).
/// A good login then removes the row (a second small transaction); a failure needs no
/// more. Counting first is what makes the limits hold under concurrency: eight clients
/// that arrive together each see the others' attempts, so no more get through than
/// the policy allows, and a process killed while it hashes leaves its attempt counted.
///
/// **Bounded.** At most ``nameLimit`` rows (100,000): a new name that goes past it
/// drops the least recently failed names below the lockout first (locked-out ones
/// only when no other is left), inside the same transaction. The write-ahead log is
/// emptied when a commit leaves ``logPages`` pages in it (a `TRUNCATE` checkpoint, paid
/// by that one login), not when a connection closes: it stays under about 1 MiB plus one
/// transaction, and a process per login pays no `fdatasync` at the other logins.
///
/// **Files.** The database and SQLite's `-wal` and `-shm` files are mode 0600. When
/// root creates the database it gives it `owner` (see ``LoginGuard``: the credential
/// file's owner and group for the default path, the directory's for a `state`
/// elsewhere); SQLite gives the `-wal` and `-shm` files the database's owner when root
/// creates them, and they are kept when the last connection closes (it leaves the log
/// as it is), so a caller who may write them never needs to create files in their
/// directory. A symlink in the database's place is refused.
final class GuardDatabase: Sendable {
    /// The database file.
    let path: String
    /// The most names kept.
    let nameLimit: Int
    /// The open connection and its statements, one user at a time.
    private let connection: Mutex<Statements?>
    /// Who gets the file when root creates it.
    private let owner: (uid: uid_t, gid: gid_t)?

    /// The most names the database keeps (SPEC §9).
    static let defaultNameLimit = 100_000
    /// How long a statement waits for another process's write lock, in milliseconds.
    static let busyTimeout: Int32 = 10_000
    /// The write-ahead log is copied into the database and emptied when a commit leaves
    /// this many pages in it (1 MiB of 4 KiB pages: a failure writes 2 or 3 pages, so
    /// a checkpoint every hundred or so failures).
    static let logPages: Int32 = 256

    /// A database at `path`, opened (and created when missing) at first use.
    init(path: String, owner: (uid: uid_t, gid: gid_t)?, nameLimit: Int = defaultNameLimit) {
        self.path = path
        self.owner = owner
        self.nameLimit = max(1, nameLimit)
        self.connection = Mutex(nil)
    }

    /// One name's row.
    struct Row: Equatable, Sendable {
        /// The name's NFC bytes.
        var name: [UInt8]
        /// Consecutive failures (attempts being checked now included).
        var count: Int
        /// Milliseconds since the Unix epoch.
        var lastFailure: Int64
        var lockedOut: Bool
    }

    /// What ``reserve(_:now:policy:)`` decided.
    enum Reservation: Equatable, Sendable {
        /// The attempt may be checked; it is counted as the `count`-th failure until settled.
        case admitted(count: Int)
        /// Too early after the last failure: not counted.
        case throttled(count: Int)
        /// The name is locked out: not counted.
        case lockedOut(count: Int)
    }

    // MARK: Reading

    /// The row of `name`, if it has one.
    func row(_ name: [UInt8]) throws(CredFileError) -> Row? {
        try use { s throws(SQLiteError) in try s.row(name) }
    }

    /// Every row, the most recent failure first.
    func rows() throws(CredFileError) -> [Row] {
        try use { s throws(SQLiteError) in
            defer { s.all.reset() }
            var rows: [Row] = []
            while try s.all.step() { rows.append(Statements.row(of: s.all)) }
            return rows
        }
    }

    /// How many names the database holds.
    func nameCount() throws(CredFileError) -> Int {
        try use { s throws(SQLiteError) in try s.names() }
    }

    // MARK: Writing

    /// Judges an attempt on `name` at `now` (milliseconds since the epoch) and, when it
    /// may be checked, counts it as a failure, all in one transaction. A plain read comes
    /// first, so an attempt that is refused takes no write lock.
    func reserve(_ name: [UInt8], now: Int64, policy: GuardPolicy) throws(CredFileError) -> Reservation {
        try use { s throws(SQLiteError) in
            if let refusal = Self.refusal(of: try s.row(name), now: now, policy: policy) { return refusal }
            return try s.transaction { () throws(SQLiteError) in
                let current = try s.row(name)
                if let refusal = Self.refusal(of: current, now: now, policy: policy) { return refusal }
                let count = (current?.count ?? 0) + 1
                try s.run(
                    s.upsert, name: name,
                    [Int64(count), now, policy.locksOut(afterFailures: count) ? 1 : 0])
                if current == nil { try s.addName(keeping: name, limit: nameLimit) }
                return .admitted(count: count)
            }
        }
    }

    /// Takes back one counted attempt of `name` whose password could not be checked
    /// (the credential file could not be read): it was not a guess.
    func release(_ name: [UInt8], policy: GuardPolicy) throws(CredFileError) {
        try use { s throws(SQLiteError) in
            try s.transaction { () throws(SQLiteError) in
                guard let current = try s.row(name) else { return }
                if current.count <= 1 {
                    try s.run(s.delete, name: name, [])
                    try s.adjustNames(by: -s.connection.changes)
                } else {
                    let count = current.count - 1
                    try s.run(
                        s.upsert, name: name,
                        [Int64(count), current.lastFailure, policy.locksOut(afterFailures: count) ? 1 : 0])
                }
            }
        }
    }

    /// Removes `name`'s row (a good login, `failures --reset USER`, `unlock`).
    /// - Returns: whether there was one.
    @discardableResult
    func clear(_ name: [UInt8]) throws(CredFileError) -> Bool {
        try use { s throws(SQLiteError) in
            try s.transaction { () throws(SQLiteError) in
                try s.run(s.delete, name: name, [])
                let removed = s.connection.changes
                try s.adjustNames(by: -removed)
                return removed > 0
            }
        }
    }

    /// Removes every row (`failures --reset`). - Returns: how many there were.
    @discardableResult
    func clearAll() throws(CredFileError) -> Int {
        try use { s throws(SQLiteError) in
            try s.transaction { () throws(SQLiteError) in
                try s.connection.execute("DELETE FROM failures")
                let removed = s.connection.changes
                try s.connection.execute("UPDATE names SET count = 0")
                return removed
            }
        }
    }

    /// Stores rows as they are, in one transaction (tests fill a database this way).
    func insert(_ rows: [Row]) throws(CredFileError) {
        try use { s throws(SQLiteError) in
            try s.transaction { () throws(SQLiteError) in
                for row in rows {
                    let existed = try s.row(row.name) != nil
                    try s.run(s.upsert, name: row.name, [Int64(row.count), row.lastFailure, row.lockedOut ? 1 : 0])
                    if !existed { try s.adjustNames(by: 1) }
                }
            }
        }
    }

    /// Why an attempt on a name with `row` at `now` is refused, if it is. A clock set back
    /// below the last failure does not hold attempts back (the delay is bounded anyway,
    /// and the lockout still counts).
    static func refusal(of row: Row?, now: Int64, policy: GuardPolicy) -> Reservation? {
        guard let row else { return nil }
        if row.lockedOut || policy.locksOut(afterFailures: row.count) { return .lockedOut(count: row.count) }
        let wait = Int64((policy.delay(afterFailures: row.count) * 1000).rounded(.up))
        let elapsed = now - row.lastFailure
        if elapsed >= 0 && elapsed < wait { return .throttled(count: row.count) }
        return nil
    }

    // MARK: The connection

    /// Runs `body` on the open connection (opening it first), one caller at a time; an
    /// SQLite failure becomes a ``CredFileError`` naming the file. A failed connection is
    /// dropped, so the next call opens it again.
    private func use<R: Sendable>(_ body: (Statements) throws(SQLiteError) -> R) throws(CredFileError) -> R {
        try connection.withLock { (current: inout Statements?) throws(CredFileError) -> R in
            let statements: Statements
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
                throw failure(error)
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

    /// Creates the file when missing (0600, given ``owner`` when root creates it), opens
    /// it, and makes sure it is in WAL mode with the current schema.
    private func open() throws(CredFileError) -> Statements {
        try createIfMissing()
        do {
            let connection = try SQLiteConnection(path: path, busyTimeout: Self.busyTimeout)
            guard !connection.isReadOnly else {
                throw CredFileError(
                    .guardDatabase, "cannot write the guard database \(Escaped.path(path))",
                    cause: .init(syscall: "open", errno: EACCES))
            }
            try connection.leaveLogOnClose()
            try connection.execute("PRAGMA journal_mode = WAL")
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
            try Statements.createSchema(connection)
            return try Statements(connection)
        } catch let error as SQLiteError {
            throw failure(error)
        } catch let error as CredFileError {
            throw error
        } catch {
            throw CredFileError(.guardDatabase, "cannot use the guard database \(Escaped.path(path))")
        }
    }

    /// Creates the database file, mode 0600, when it does not exist; as root, gives a
    /// file it creates ``owner``. A symlink is refused (`O_NOFOLLOW`).
    private func createIfMissing() throws(CredFileError) {
        let fd: Int32
        do {
            fd = try Syscall.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        } catch  where error.errno == EEXIST {
            return
        } catch {
            throw error.credFileError("cannot create the guard database \(Escaped.path(path))", code: .guardDatabase)
        }
        defer { Syscall.close(fd) }
        do {
            try Syscall.fchmod(fd, 0o600)
            if let owner, geteuid() == 0, owner.uid != 0 || owner.gid != 0 {
                try Syscall.fchown(fd, owner.uid, owner.gid)
            }
        } catch {
            Syscall.unlink(path)
            throw error.credFileError("cannot create the guard database \(Escaped.path(path))", code: .guardDatabase)
        }
    }
}

/// The prepared statements of one connection.
private final class Statements {
    let connection: SQLiteConnection
    let select: SQLiteStatement
    let all: SQLiteStatement
    let upsert: SQLiteStatement
    let delete: SQLiteStatement
    let countNames: SQLiteStatement
    let addToNames: SQLiteStatement
    let prune: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        select = try connection.prepare("SELECT name, count, last_failure, locked_out FROM failures WHERE name = ?1")
        all = try connection.prepare(
            "SELECT name, count, last_failure, locked_out FROM failures ORDER BY last_failure DESC, name")
        upsert = try connection.prepare(
            """
            INSERT INTO failures (name, count, last_failure, locked_out) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (name) DO UPDATE SET count = ?2, last_failure = ?3, locked_out = ?4
            """)
        delete = try connection.prepare("DELETE FROM failures WHERE name = ?1")
        countNames = try connection.prepare("SELECT count FROM names")
        addToNames = try connection.prepare("UPDATE names SET count = max(0, count + ?1) RETURNING count")
        // The least recently failed first, names below the lockout before locked-out ones
        // (the index failures_by_age serves this order).
        prune = try connection.prepare(
            """
            DELETE FROM failures WHERE name IN (
                SELECT name FROM failures WHERE name != ?1 ORDER BY locked_out, last_failure LIMIT ?2)
            """)
    }

    /// Creates the tables in a fresh database (inside a write transaction, so two
    /// processes that create it at once do it once).
    static func createSchema(_ connection: SQLiteConnection) throws(SQLiteError) {
        let version = try userVersion(connection)
        if version == 1 { return }
        guard version == 0 else {
            throw SQLiteError(code: 1, message: "schema version \(version) is not one this credfile knows (1)")
        }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            if try userVersion(connection) == 0 {
                try connection.execute(
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
                    PRAGMA user_version = 1;
                    """)
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        let statement = try connection.prepare("PRAGMA user_version")
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed when it returns,
    /// rolled back when it throws.
    func transaction<R>(_ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
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

    func row(_ name: [UInt8]) throws(SQLiteError) -> GuardDatabase.Row? {
        defer { select.reset() }
        select.bind(1, name)
        guard try select.step() else { return nil }
        return Self.row(of: select)
    }

    static func row(of statement: SQLiteStatement) -> GuardDatabase.Row {
        GuardDatabase.Row(
            name: statement.bytes(0), count: Int(statement.int64(1)), lastFailure: statement.int64(2),
            lockedOut: statement.int64(3) != 0)
    }

    /// Runs a statement whose first parameter is a name and the rest integers.
    func run(_ statement: SQLiteStatement, name: [UInt8], _ values: [Int64]) throws(SQLiteError) {
        defer { statement.reset() }
        statement.bind(1, name)
        for (offset, value) in values.enumerated() { statement.bind(Int32(offset + 2), value) }
        while try statement.step() {}
    }

    func names() throws(SQLiteError) -> Int {
        defer { countNames.reset() }
        guard try countNames.step() else { return 0 }
        return Int(countNames.int64(0))
    }

    /// Adds `delta` to the name count; the new count.
    @discardableResult
    func adjustNames(by delta: Int) throws(SQLiteError) -> Int {
        defer { addToNames.reset() }
        addToNames.bind(1, Int64(delta))
        guard try addToNames.step() else { return 0 }
        let count = Int(addToNames.int64(0))
        while try addToNames.step() {}
        return count
    }

    /// Counts a new name and, past `limit`, drops the oldest others.
    func addName(keeping name: [UInt8], limit: Int) throws(SQLiteError) {
        let count = try adjustNames(by: 1)
        guard count > limit else { return }
        try run(prune, name: name, [Int64(count - limit)])
        try adjustNames(by: -connection.changes)
    }
}
