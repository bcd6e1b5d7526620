internal import CCredFile
internal import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// A failed SQLite call: its extended result code and SQLite's message (which names
/// neither a password nor a secret: only statements of the guard database run here).
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_READONLY_DBMOVED`, …).
    let code: Int32
    /// `sqlite3_errmsg`, or the code's `sqlite3_errstr`.
    let message: String

    /// The primary result code (the low byte of the extended one).
    var primaryCode: Int32 { code & 0xFF }
    /// Whether another connection held the lock it needed (`SQLITE_BUSY`).
    var isBusy: Bool { primaryCode == SQLITE_BUSY }
    /// Whether the database could not be written (read-only file, directory or mount).
    var isReadOnly: Bool {
        primaryCode == SQLITE_READONLY || primaryCode == SQLITE_CANTOPEN || primaryCode == SQLITE_PERM
    }
    /// The errno SQLite saw, when the failure was a system call's.
    var systemErrno: Int32?

    var description: String { message }
}

/// One connection to an SQLite database: the one place Swift calls SQLite (SPEC §9's
/// guard database; STYLE practice 1, only files of `Internals/` import C modules).
///
/// Not thread-safe on its own: its owner (``SQLiteStateStore``) serializes every use.
/// Opened `SQLITE_OPEN_NOMUTEX` for that reason, `SQLITE_OPEN_NOFOLLOW` (the path is
/// never a symlink) and `SQLITE_OPEN_EXRESCODE` (extended codes). SQLite opens its own
/// descriptors close-on-exec, so `checkpassword`'s PROG inherits none of them.
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// How long a statement waits for another connection's lock, in milliseconds.
    private let busyTimeout: Int32
    /// The log's size in pages at which a commit empties it (``emptyLog(atPages:)``).
    private var logLimit: Int32 = .max

    /// Opens the existing database file at `path` for reading and writing.
    /// - Parameter busyTimeout: how long a statement waits for another connection's
    ///   lock before it fails with `SQLITE_BUSY`, in milliseconds.
    /// - Throws: ``SQLiteError`` when it cannot be opened.
    init(path: String, busyTimeout: Int32) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let error =
                db.map { Self.error(of: $0, status) } ?? SQLiteError(code: status, message: Self.text(of: status))
            if let db { sqlite3_close_v2(db) }
            throw error
        }
        handle = db
        self.busyTimeout = busyTimeout
        sqlite3_busy_timeout(db, busyTimeout)
    }

    deinit {
        sqlite3_wal_hook(handle, nil, nil)  // the hook points at self (emptyLog(atPages:))
        sqlite3_close_v2(handle)
    }

    /// Whether SQLite opened the file read-only (it does so silently when the file is
    /// not writable). The corresponding C function is `sqlite3_db_readonly`.
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Leaves the write-ahead log as it is when this connection closes, even as the
    /// last one: SQLite would checkpoint it then (and delete or truncate it), which costs
    /// `fdatasync`s. The `-wal` and `-shm` files stay, so a caller who may write them
    /// never needs to create files in their directory. The corresponding C function is
    /// `sqlite3_db_config` with `SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE` (called through
    /// `credfile_sqlite_db_config_flag`: Swift cannot call a variadic C function).
    func leaveLogOnClose() throws(SQLiteError) {
        var state: Int32 = 0
        let status = credfile_sqlite_db_config_flag(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &state)
        guard status == SQLITE_OK else { throw Self.error(of: handle, status) }
        guard state == 1 else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE did not take")
        }
    }

    /// After each commit that leaves `pages` frames or more in the write-ahead log,
    /// copies the whole log into the database and truncates the log to zero bytes (a
    /// `TRUNCATE` checkpoint), in place of SQLite's automatic checkpoint (`PASSIVE`, at
    /// 1000 pages). The checkpoint does not wait for locks: while another connection
    /// writes, or reads an older state, it copies what it may and leaves the rest to a
    /// later commit (readers never hold a writer back in WAL mode, and a stuck one must
    /// not make every login wait out the busy timeout); the commit stands either way, as
    /// it does when the checkpoint fails. The corresponding C functions are
    /// `sqlite3_wal_hook` and `sqlite3_wal_checkpoint_v2`.
    func emptyLog(atPages pages: Int32) {
        precondition(pages > 0)
        logLimit = pages
        let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            connection, _, database, frames in
            if let connection {
                Unmanaged<SQLiteConnection>.fromOpaque(connection).takeUnretainedValue().committed(
                    frames: frames, in: database)
            }
            return SQLITE_OK
        }
        _ = sqlite3_wal_hook(handle, hook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A commit left `frames` frames in `database`'s log: empties it past ``logLimit``.
    private func committed(frames: Int32, in database: UnsafePointer<CChar>?) {
        guard frames >= logLimit else { return }
        sqlite3_busy_timeout(handle, 0)
        _ = sqlite3_wal_checkpoint_v2(handle, database, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        sqlite3_busy_timeout(handle, busyTimeout)
    }

    /// Runs statements that return no rows (pragmas, schema, `BEGIN`, `COMMIT`).
    /// The corresponding C function is `sqlite3_exec`.
    func execute(_ sql: String) throws(SQLiteError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw Self.error(of: handle, status) }
    }

    /// Compiles one statement. The corresponding C function is `sqlite3_prepare_v3`.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw Self.error(of: handle, status) }
        return SQLiteStatement(statement, connection: handle)
    }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` changed.
    /// The corresponding C function is `sqlite3_changes`.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The error of `handle` after a call returned `status`.
    fileprivate static func error(of handle: OpaquePointer, _ status: Int32) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        let message = sqlite3_errmsg(handle).map { String(cString: $0) } ?? text(of: status)
        var error = SQLiteError(code: extended != 0 ? extended : status, message: message)
        let systemErrno = sqlite3_system_errno(handle)
        if systemErrno != 0 { error.systemErrno = systemErrno }
        return error
    }

    private static func text(of status: Int32) -> String {
        sqlite3_errstr(status).map { String(cString: $0) } ?? "SQLite error \(status)"
    }
}

/// A compiled statement of a ``SQLiteConnection``, run with ``step()`` after its
/// parameters are bound (1-based, as SQLite numbers them) and reset by ``reset()``.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer

    fileprivate init(_ handle: OpaquePointer, connection: OpaquePointer) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// SQLite copies bound bytes at once (`SQLITE_TRANSIENT`, a macro Swift cannot import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds an integer. The corresponding C function is `sqlite3_bind_int64`.
    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds bytes as a BLOB (an empty one is a zero-length BLOB, not NULL).
    /// The corresponding C function is `sqlite3_bind_blob`.
    func bind(_ index: Int32, _ bytes: [UInt8]) {
        if bytes.isEmpty {
            sqlite3_bind_zeroblob(handle, index, 0)
            return
        }
        bytes.withUnsafeBytes { _ = sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// Runs the statement to its next row: true when a row is there to read, false
    /// when it is done. The corresponding C function is `sqlite3_step`.
    func step() throws(SQLiteError) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteConnection.error(of: connection, status)
        }
    }

    /// An integer column of the current row (0-based). The corresponding C function
    /// is `sqlite3_column_int64`.
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// A BLOB column of the current row (0-based). The corresponding C functions are
    /// `sqlite3_column_blob` and `sqlite3_column_bytes`.
    func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Makes the statement ready to run again and clears its parameters.
    /// The corresponding C functions are `sqlite3_reset` and `sqlite3_clear_bindings`.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}
