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

/// One connection to a PostgreSQL server: the one place Swift calls libpq (SPEC §15's
/// state database; STYLE practice 1). libpq is opened at the first connection (it is not
/// linked, Sources/CCredFile/postgresql.c).
///
/// Not thread-safe on its own: its owner (``PostgreSQLStateStore``) gives it to one user
/// at a time. Every statement is sent with its parameters apart from its text
/// (`PQexecParams`, binary both ways), never spliced into SQL.
final class PostgreSQLConnection {
    private let handle: OpaquePointer
    private let libpq: UnsafePointer<credfile_libpq>

    /// How long a connection attempt waits, in seconds, unless the connection string
    /// says `connect_timeout` itself (libpq waits forever by default).
    static let connectTimeout = 5

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
    var isBroken: Bool { libpq.pointee.PQstatus(handle) != CONNECTION_OK }

    /// Whether a transaction is open (or failed and not yet rolled back) on it.
    var inTransaction: Bool { libpq.pointee.PQtransactionStatus(handle) != PQTRANS_IDLE }

    /// Runs `sql`, which may be several statements and takes no parameters (migrations,
    /// `BEGIN`, `COMMIT`).
    func execute(_ sql: String) throws(PostgreSQLError) {
        let result = libpq.pointee.PQexec(handle, sql)
        defer { libpq.pointee.PQclear(result) }
        try check(result)
    }

    /// Runs one statement with `parameters` as `$1`, `$2`, … and returns its rows.
    func query(_ sql: String, _ parameters: [PostgreSQLValue] = []) throws(PostgreSQLError) -> PostgreSQLRows {
        // Every parameter's bytes in one buffer (a sentinel byte, so an empty bytea still
        // has an address: a NULL pointer would mean SQL NULL).
        var buffer: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        var types: [Oid] = []
        for parameter in parameters {
            offsets.append(buffer.count)
            switch parameter {
            case .int(let value):
                buffer += withUnsafeBytes(of: value.bigEndian) { Array($0) }
                types.append(20)  // int8
            case .bytes(let bytes):
                buffer += bytes
                types.append(17)  // bytea
            case .bool(let value):
                buffer.append(value ? 1 : 0)
                types.append(16)  // bool
            case .null:
                types.append(0)
            }
            lengths.append(Int32(buffer.count - offsets[offsets.count - 1]))
        }
        buffer.append(0)
        let formats = [Int32](repeating: 1, count: parameters.count)
        let result = buffer.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = parameters.indices.map { index in
                if case .null = parameters[index] { return nil }
                return base + offsets[index]
            }
            return libpq.pointee.PQexecParams(
                handle, sql, Int32(parameters.count), types, pointers, lengths, formats, 1)
        }
        defer { libpq.pointee.PQclear(result) }
        try check(result)
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
        let state = result.flatMap { libpq.pointee.PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }
        var message = Self.text(libpq.pointee.PQerrorMessage(handle))
        if message.isEmpty { message = "PostgreSQL failed (status \(status.rawValue))" }
        throw PostgreSQLError(message: message, sqlState: state.map { String(cString: $0) }, connectionLost: isBroken)
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
