/// The `failures` table in SQLite (created by step 1 of ``SQLiteStateStore/migrations``):
/// its prepared statements, one connection's. The name count is kept in the one-row
/// `names` table, updated in the same transaction as the rows, so bounding the table
/// never counts it.
final class SQLiteFailureTable: FailureTable {
    private let connection: SQLiteConnection
    private let select: SQLiteStatement
    private let all: SQLiteStatement
    private let upsert: SQLiteStatement
    private let remove: SQLiteStatement
    private let countNames: SQLiteStatement
    private let addToNames: SQLiteStatement
    private let prune: SQLiteStatement

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
        remove = try connection.prepare("DELETE FROM failures WHERE name = ?1")
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

    func row(_ name: [UInt8]) throws -> FailureRow? {
        defer { select.reset() }
        select.bind(1, name)
        guard try select.step() else { return nil }
        return Self.row(of: select)
    }

    func rows() throws -> [FailureRow] {
        defer { all.reset() }
        var rows: [FailureRow] = []
        while try all.step() { rows.append(Self.row(of: all)) }
        return rows
    }

    func nameCount() throws -> Int {
        defer { countNames.reset() }
        guard try countNames.step() else { return 0 }
        return Int(countNames.int64(0))
    }

    func insert(_ row: FailureRow) throws -> Int {
        try store(row)
        return try adjustNames(by: 1)
    }

    func update(_ row: FailureRow) throws {
        try store(row)
    }

    func delete(_ name: [UInt8]) throws -> Bool {
        try run(remove, name: name, [])
        let removed = connection.changes
        try adjustNames(by: -removed)
        return removed > 0
    }

    func deleteAll() throws -> Int {
        try connection.execute("DELETE FROM failures")
        let removed = connection.changes
        try connection.execute("UPDATE names SET count = 0")
        return removed
    }

    func dropOldest(_ count: Int, keeping name: [UInt8]) throws -> Int {
        try run(prune, name: name, [Int64(count)])
        let removed = connection.changes
        try adjustNames(by: -removed)
        return removed
    }

    // MARK: Statements

    private static func row(of statement: SQLiteStatement) -> FailureRow {
        FailureRow(
            name: statement.bytes(0), count: Int(statement.int64(1)), lastFailure: statement.int64(2),
            lockedOut: statement.int64(3) != 0)
    }

    private func store(_ row: FailureRow) throws(SQLiteError) {
        try run(upsert, name: row.name, [Int64(row.count), row.lastFailure, row.lockedOut ? 1 : 0])
    }

    /// Runs a statement whose first parameter is a name and the rest integers.
    private func run(_ statement: SQLiteStatement, name: [UInt8], _ values: [Int64]) throws(SQLiteError) {
        defer { statement.reset() }
        statement.bind(1, name)
        for (offset, value) in values.enumerated() { statement.bind(Int32(offset + 2), value) }
        while try statement.step() {}
    }

    /// Adds `delta` to the name count; the new count.
    @discardableResult
    private func adjustNames(by delta: Int) throws(SQLiteError) -> Int {
        defer { addToNames.reset() }
        addToNames.bind(1, Int64(delta))
        guard try addToNames.step() else { return 0 }
        let count = Int(addToNames.int64(0))
        while try addToNames.step() {}
        return count
    }
}
