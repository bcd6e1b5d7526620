internal import CCredFile
internal import CPostgreSQL

#if canImport(Glibc)
import Glibc
#endif

/// A failed libpq call: PostgreSQL's message (never a password: libpq's messages name
/// none, and the connection string holds none, ``PostgreSQLConnection/password(in:)``),
/// its SQLSTATE when the server gave one, and whether the connection is gone.
struct PostgreSQLError: Error, CustomStringConvertible {
    /// The message, one line.
    let message: String
    /// The five-character SQLSTATE (`40001`, `23505`, …), when the server sent one.
    var sqlState: String? = nil
    /// Whether the connection broke (the server stopped, the network failed): a new one
    /// is needed, and a statement sent on it was not committed unless it was `COMMIT`.
    var connectionLost = false

    var description: String { message }
}

/// A value bound to a statement's parameter or read from a row (binary format both ways).
enum PostgreSQLValue: Equatable {
    case int(Int64)
    case bytes([UInt8])
    case bool(Bool)
    case null

    /// The type the value is sent as (int8, bytea, bool; none for NULL: the server infers it).
    var type: Oid {
        switch self {
        case .int: 20
        case .bytes: 17
        case .bool: 16
        case .null: 0
        }
    }

    /// The integer (int2, int4, int8 columns), or 0.
    var int: Int64 {
        if case .int(let value) = self { return value }
        return 0
    }
    /// The bytes (bytea, text columns), or none.
    var bytes: [UInt8] {
        if case .bytes(let value) = self { return value }
        return []
    }
    /// The boolean, or false.
    var bool: Bool {
        if case .bool(let value) = self { return value }
        return false
    }
}

/// What a statement returned: its rows, and how many rows it changed.
struct PostgreSQLRows {
    var rows: [[PostgreSQLValue]] = []
    /// `PQcmdTuples`: the rows an INSERT, UPDATE or DELETE changed.
    var changed = 0
}

/// One statement and the values of its parameters `$1`, `$2`, ….
struct PostgreSQLStatement {
    /// The statement's text (fixed: the values go apart, never into it).
    var sql: String
    /// The values of `$1`, `$2`, ….
    var parameters: [PostgreSQLValue]

    init(_ sql: String, _ parameters: [PostgreSQLValue] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}

/// One connection to a PostgreSQL server: the one place Swift calls libpq (SPEC §15's
/// state database; STYLE practice 1). libpq is opened at the first connection (it is not
/// linked, Sources/CCredFile/postgresql.c).
///
/// Not thread-safe on its own: its owner (``PostgreSQLStateStore``) gives it to one user
/// at a time. Every statement is sent with its parameters apart from its text (binary
/// both ways), never spliced into SQL.
///
/// **Round trips.** A login's transaction is a few small statements, so the time is in
/// the round trips, not the server's work. Statements go in libpq's pipeline mode
/// (``run(_:)``: several statements, one round trip, executed in order, each in its own
/// snapshot under `READ COMMITTED`), each prepared once per connection (parsed and planned
/// once, then only bound and executed). A transaction's `BEGIN` goes with its first
/// statement (``begin()``), a write whose answer is not needed with the next statement or
/// the `COMMIT` (``later(_:)``), so a transaction that reads a row and writes it takes two
/// round trips.
final class PostgreSQLConnection {
    private let handle: OpaquePointer
    private let libpq: UnsafePointer<credfile_libpq>
    /// The statements prepared on this connection: their names by text and parameter types.
    private var prepared: [String: String] = [:]
    /// How many statement names were given out (each name used once).
    private var named = 0
    /// Whether ``begin()`` was called and `BEGIN` is not sent yet.
    private var beginPending = false
    /// Statements waiting to go with the next one (``later(_:)``).
    private var deferred: [PostgreSQLStatement] = []
    /// Whether a pipeline ended in a state libpq could not leave: the connection is dropped.
    private var unusable = false
    /// How many round trips the connection made (statements sent, answers awaited).
    private(set) var roundTrips = 0

    /// How long a connection attempt waits, in seconds, unless the connection string
    /// says `connect_timeout` itself (libpq waits forever by default).
    static let connectTimeout = 5
    /// The most statements ``later(_:)`` holds back before sending them.
    static let deferredLimit = 16
    /// The most statements kept prepared on a connection (the tables' texts are fixed and
    /// fewer; a text made up at run time would otherwise grow the server's memory).
    static let preparedLimit = 128

    /// libpq's functions, or the reason it cannot be loaded.
    private static func load() throws(PostgreSQLError) -> UnsafePointer<credfile_libpq> {
        var reason: UnsafePointer<CChar>?
        guard let libpq = credfile_libpq(&reason) else {
            throw PostgreSQLError(message: reason.map { String(cString: $0) } ?? "cannot load libpq.so.5")
        }
        return libpq
    }

    /// Connects with `connectionString` (a URI or `key=value …`; libpq's environment,
    /// `PGPASSFILE` and `PGSERVICEFILE` supply the rest).
    /// - Throws: ``PostgreSQLError`` when libpq is missing or the connection fails.
    init(connectionString: String) throws(PostgreSQLError) {
        let libpq = try Self.load()
        self.libpq = libpq
        // Ours first: the connection string's own values, expanded after, win.
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = ["\(Self.connectTimeout)", "credfile", connectionString]
        let connection = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in
                libpq.pointee.PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let connection else { throw PostgreSQLError(message: "out of memory", connectionLost: true) }
        guard libpq.pointee.PQstatus(connection) == CONNECTION_OK else {
            let message = Self.text(libpq.pointee.PQerrorMessage(connection))
            libpq.pointee.PQfinish(connection)
            throw PostgreSQLError(message: message, connectionLost: true)
        }
        libpq.pointee.quiet(connection)
        handle = connection
    }

    deinit { libpq.pointee.PQfinish(handle) }

    /// Whether the connection is broken (a new one is needed).
    var isBroken: Bool { unusable || libpq.pointee.PQstatus(handle) != CONNECTION_OK }

    /// Whether a transaction is open (begun, or failed and not yet rolled back) on it.
    var inTransaction: Bool { beginPending || libpq.pointee.PQtransactionStatus(handle) != PQTRANS_IDLE }

    /// Runs `sql`, which may be several statements and takes no parameters (migrations).
    func execute(_ sql: String) throws(PostgreSQLError) {
        roundTrips += 1
        let result = libpq.pointee.PQexec(handle, sql)
        defer { libpq.pointee.PQclear(result) }
        try check(result)
    }

    /// Runs one statement with `parameters` as `$1`, `$2`, … and returns its rows.
    func query(_ sql: String, _ parameters: [PostgreSQLValue] = []) throws(PostgreSQLError) -> PostgreSQLRows {
        try run([PostgreSQLStatement(sql, parameters)])[0]
    }

    // MARK: Transactions

    /// Begins a transaction: `BEGIN` goes with the first statement (none is sent for a
    /// transaction that runs none).
    func begin() throws(PostgreSQLError) {
        if inTransaction { throw PostgreSQLError(message: "a transaction is already open") }
        beginPending = true
    }

    /// Commits the transaction with the statements still held back, in one round trip.
    /// - Throws: ``PostgreSQLError`` when a held-back statement or `COMMIT` fails (the
    ///   transaction then needs ``rollback()``).
    func commit() throws(PostgreSQLError) {
        if beginPending && deferred.isEmpty {
            beginPending = false  // nothing was sent: nothing to commit
            return
        }
        _ = try run([PostgreSQLStatement("COMMIT")])
    }

    /// Rolls the transaction back (when `BEGIN` was sent), dropping what is held back.
    func rollback() {
        beginPending = false
        deferred = []
        if !isBroken && libpq.pointee.PQtransactionStatus(handle) != PQTRANS_IDLE { try? execute("ROLLBACK") }
    }

    /// Runs `statement` with the next one sent (or ``commit()``) when a transaction is
    /// open, so that a write whose answer is not needed costs no round trip of its own;
    /// its error then comes from that statement or from ``commit()``. Outside a
    /// transaction it runs now.
    func later(_ statement: PostgreSQLStatement) throws(PostgreSQLError) {
        guard inTransaction else {
            _ = try run([statement])
            return
        }
        deferred.append(statement)
        if deferred.count >= Self.deferredLimit { _ = try run([]) }
    }

    // MARK: Pipelines

    /// Runs `statements` in order in one round trip (after a pending `BEGIN` and the
    /// statements ``later(_:)`` held back), each prepared at its first use on this
    /// connection. Each statement takes its own snapshot (`READ COMMITTED`), so a lock
    /// taken by one holds for the reads of the next.
    /// - Returns: the rows of each of `statements`.
    /// - Throws: ``PostgreSQLError``: the first statement's that failed (the ones after it
    ///   were not run; an open transaction then needs rolling back).
    func run(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [PostgreSQLRows] {
        var all = deferred
        if beginPending { all.insert(PostgreSQLStatement("BEGIN"), at: 0) }
        let held = all.count
        beginPending = false
        deferred = []
        all += statements
        guard !all.isEmpty else { return [] }
        return Array(try pipeline(all).dropFirst(held))
    }

    /// What one message of a pipeline was: preparing a statement (the name it gets, and
    /// the key it is known by), or running one.
    private enum Step {
        case prepare(name: String, key: String)
        case execute
    }

    private func pipeline(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [PostgreSQLRows] {
        guard libpq.pointee.PQenterPipelineMode(handle) == 1 else {
            unusable = true  // results left unread: never reused
            throw failure(nil)
        }
        roundTrips += 1
        var steps: [Step] = []
        var naming: [String: String] = [:]  // prepared in this pipeline
        var sent = true
        for statement in statements where sent {
            let types = statement.parameters.map(\.type)
            let key = statement.sql + "\u{0}" + types.map { String($0) }.joined(separator: ",")
            var name = prepared[key] ?? naming[key]
            if name == nil {
                // Past the limit, the unnamed statement: parsed at each use, never kept.
                let keep = prepared.count + naming.count < Self.preparedLimit
                if keep { named += 1 }
                let fresh = keep ? "credfile_\(named)" : ""
                sent = libpq.pointee.PQsendPrepare(handle, fresh, statement.sql, Int32(types.count), types) == 1
                steps.append(.prepare(name: fresh, key: key))
                if keep { naming[key] = fresh }
                name = fresh
            }
            sent = sent && send(name!, statement.parameters)
            steps.append(.execute)
        }
        sent = sent && libpq.pointee.PQpipelineSync(handle) == 1
        var results: [PostgreSQLRows] = []
        var firstError: PostgreSQLError?
        if sent {
            for step in steps {
                // A message's results, then a NULL; its first result is its answer.
                var answer: OpaquePointer?
                while let result = libpq.pointee.PQgetResult(handle) {
                    if answer == nil { answer = result } else { libpq.pointee.PQclear(result) }
                }
                defer { libpq.pointee.PQclear(answer) }
                let status = answer.map { libpq.pointee.PQresultStatus($0) } ?? PGRES_FATAL_ERROR
                switch step {
                case .prepare(let name, let key):
                    if status == PGRES_COMMAND_OK && !name.isEmpty { prepared[key] = name }
                case .execute:
                    if status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK { results.append(rows(answer)) }
                }
                if status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && firstError == nil {
                    firstError = failure(answer)
                }
                if isBroken { break }
            }
            // The end of the pipeline: PGRES_PIPELINE_SYNC, then pipeline mode may end.
            let sync = isBroken ? nil : libpq.pointee.PQgetResult(handle)
            let synced = sync.map { libpq.pointee.PQresultStatus($0) == PGRES_PIPELINE_SYNC } ?? false
            libpq.pointee.PQclear(sync)
            sent = synced && libpq.pointee.PQexitPipelineMode(handle) == 1
        }
        if !sent {
            // Not sent whole, or not answered whole: the connection cannot be trusted.
            unusable = true
            throw firstError ?? PostgreSQLError(message: failure(nil).message, connectionLost: true)
        }
        if let firstError { throw firstError }
        return results
    }

    /// Sends the prepared statement `name` with `parameters` (binary both ways).
    private func send(_ name: String, _ parameters: [PostgreSQLValue]) -> Bool {
        // Every parameter's bytes in one buffer (a sentinel byte, so an empty bytea still
        // has an address: a NULL pointer would mean SQL NULL).
        var buffer: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        for parameter in parameters {
            offsets.append(buffer.count)
            switch parameter {
            case .int(let value): buffer += withUnsafeBytes(of: value.bigEndian) { Array($0) }
            case .bytes(let bytes): buffer += bytes
            case .bool(let value): buffer.append(value ? 1 : 0)
            case .null: break
            }
            lengths.append(Int32(buffer.count - offsets[offsets.count - 1]))
        }
        buffer.append(0)
        let formats = [Int32](repeating: 1, count: parameters.count)
        return buffer.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = parameters.indices.map { index in
                if case .null = parameters[index] { return nil }
                return base + offsets[index]
            }
            return libpq.pointee.PQsendQueryPrepared(
                handle, name, Int32(parameters.count), pointers, lengths, formats, 1) == 1
        }
    }

    /// The rows of a successful `result`.
    private func rows(_ result: OpaquePointer?) -> PostgreSQLRows {
        var rows = PostgreSQLRows()
        let count = libpq.pointee.PQntuples(result)
        let columns = libpq.pointee.PQnfields(result)
        for row in 0..<count {
            rows.rows.append((0..<columns).map { column in value(result, row, column) })
        }
        rows.changed = libpq.pointee.PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        return rows
    }

    private func value(_ result: OpaquePointer?, _ row: Int32, _ column: Int32) -> PostgreSQLValue {
        if libpq.pointee.PQgetisnull(result, row, column) != 0 { return .null }
        let length = Int(libpq.pointee.PQgetlength(result, row, column))
        guard let start = libpq.pointee.PQgetvalue(result, row, column) else { return .null }
        let bytes = UnsafeRawBufferPointer(start: start, count: length).map { $0 }
        switch libpq.pointee.PQftype(result, column) {
        case 16: return .bool(bytes.first == 1)
        case 20, 23, 21:
            // Big-endian, 8, 4 or 2 bytes, signed.
            var value: Int64 = bytes.first.map { $0 & 0x80 != 0 ? -1 : 0 } ?? 0
            for byte in bytes { value = (value << 8) | Int64(byte) }
            return .int(value)
        default: return .bytes(bytes)
        }
    }

    /// Throws the error `result` holds, if it holds one.
    private func check(_ result: OpaquePointer?) throws(PostgreSQLError) {
        let status = result.map { libpq.pointee.PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK else { return }
        throw failure(result)
    }

    /// The error `result` holds (or the connection's last one, with no result).
    private func failure(_ result: OpaquePointer?) -> PostgreSQLError {
        let status = result.map { libpq.pointee.PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        let state = result.flatMap { libpq.pointee.PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }
        var message = Self.text(result.flatMap { libpq.pointee.PQresultErrorMessage($0) })
        if message.isEmpty { message = Self.text(libpq.pointee.PQerrorMessage(handle)) }
        if message.isEmpty { message = "PostgreSQL failed (status \(status.rawValue))" }
        return PostgreSQLError(message: message, sqlState: state.map { String(cString: $0) }, connectionLost: isBroken)
    }

    /// How many notifications (of any `LISTEN`ed channel) have arrived since the last
    /// call: reads what the server already sent, never waits and sends nothing (no round
    /// trip).
    /// - Throws: ``PostgreSQLError`` when the connection broke.
    func takeNotifications() throws(PostgreSQLError) -> Int {
        guard libpq.pointee.PQconsumeInput(handle) == 1 else {
            throw PostgreSQLError(message: Self.text(libpq.pointee.PQerrorMessage(handle)), connectionLost: true)
        }
        var count = 0
        while let notification = libpq.pointee.PQnotifies(handle) {
            count += 1
            libpq.pointee.PQfreemem(notification)
        }
        return count
    }

    // MARK: Connection strings

    /// Whether `connectionString` gives a password (`password=…`, or a URI's
    /// `user:secret@`); nil when libpq cannot parse it (with libpq's reason in the error).
    /// - Throws: ``PostgreSQLError`` when libpq is missing or the string is not one.
    static func password(in connectionString: String) throws(PostgreSQLError) -> Bool {
        let libpq = try load()
        var reason: UnsafeMutablePointer<CChar>?
        guard let options = libpq.pointee.PQconninfoParse(connectionString, &reason) else {
            let message = reason.map { text(UnsafePointer($0)) } ?? "not a connection string"
            if let reason { libpq.pointee.PQfreemem(reason) }
            throw PostgreSQLError(message: message)
        }
        defer { libpq.pointee.PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val, value.pointee != 0 {
                return true
            }
            option += 1
        }
        return false
    }

    // MARK: Helpers

    private static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        // libpq's messages end in a newline and may span lines ("DETAIL: …"): one line.
        let lines = String(cString: pointer).split(whereSeparator: \.isNewline)
        return lines.map { $0.trimmingSpaces }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// `strings` as a NULL-terminated array of C strings for the duration of `body`.
    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        var copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        copies.append(nil)
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }
}

extension Substring {
    /// Without the spaces and tabs at either end.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
