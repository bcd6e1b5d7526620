/// The `code_steps` table of the state database (SPEC §14): per user, the last time step
/// whose one-time code was accepted, so that a code works once on every host. Made by step
/// 3 of the SQLite migrations. Only storage: the rule (a step must be later than the last)
/// is one statement here so it holds under processes racing, and ``SecondFactor`` uses it.
///
///     code_steps (
///         user BLOB PRIMARY KEY,   -- the name's bytes as FILE holds them
///         step INTEGER             -- RFC 6238's T of the last accepted code
///     )
protocol CodeStepTable {
    /// Records `step` as `user`'s last accepted step when it is later than the one
    /// recorded (or none is). - Returns: whether it was (false: the code was used).
    func accept(user: [UInt8], step: Int64) throws -> Bool
    /// `user`'s last accepted step, or nil.
    func lastStep(user: [UInt8]) throws -> Int64?
    /// Forgets `user`'s step (the second factor removed).
    func remove(user: [UInt8]) throws
}

/// The `code_steps` table in SQLite: one connection's prepared statements.
final class SQLiteCodeStepTable: CodeStepTable {
    private let connection: SQLiteConnection
    private let upsert, select, delete: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        // One statement: a later step replaces the row, an equal or earlier one changes nothing.
        upsert = try connection.prepare(
            """
            INSERT INTO code_steps (user, step) VALUES (?1, ?2)
                ON CONFLICT (user) DO UPDATE SET step = excluded.step WHERE excluded.step > code_steps.step
            """)
        select = try connection.prepare("SELECT step FROM code_steps WHERE user = ?1")
        delete = try connection.prepare("DELETE FROM code_steps WHERE user = ?1")
    }

    func accept(user: [UInt8], step: Int64) throws -> Bool {
        defer { upsert.reset() }
        upsert.bind(1, user)
        upsert.bind(2, step)
        while try upsert.step() {}
        return connection.changes > 0
    }

    func lastStep(user: [UInt8]) throws -> Int64? {
        defer { select.reset() }
        select.bind(1, user)
        return try select.step() ? select.int64(0) : nil
    }

    func remove(user: [UInt8]) throws {
        defer { delete.reset() }
        delete.bind(1, user)
        while try delete.step() {}
    }
}
