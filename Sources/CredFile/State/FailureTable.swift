/// One name's row of the `failures` table (SPEC §9).
struct FailureRow: Equatable, Sendable {
    /// The name's key: its NFC bytes (raw bytes if not UTF-8).
    var name: [UInt8]
    /// Consecutive failures (attempts being checked now included).
    var count: Int
    /// Milliseconds since the Unix epoch.
    var lastFailure: Int64
    /// Whether the name reached `max-failures` (kept even if the policy changes).
    var lockedOut: Bool
}

/// The `failures` table of the state database (SPEC §9): per name the consecutive
/// failures, the time of the last one, and whether the name is locked out, and how many
/// names it holds. Only storage: the counting rules are ``GuardDatabase``'s.
///
///     failures (
///         name BLOB PRIMARY KEY,   -- the name's key (FailureRow.name)
///         count INTEGER,           -- consecutive failures
///         last_failure INTEGER,    -- milliseconds since 1970-01-01 UTC
///         locked_out INTEGER       -- 1 once count reached max-failures
///     )
protocol FailureTable {
    /// The row of `name`, if it has one.
    func row(_ name: [UInt8]) throws -> FailureRow?
    /// Every row, the most recent failure first.
    func rows() throws -> [FailureRow]
    /// How many names the table holds.
    func nameCount() throws -> Int
    /// Adds the row of a name that has none. - Returns: how many names there are now.
    func insert(_ row: FailureRow) throws -> Int
    /// Replaces the row of a name that has one.
    func update(_ row: FailureRow) throws
    /// Removes `name`'s row. - Returns: whether there was one.
    func delete(_ name: [UInt8]) throws -> Bool
    /// Removes every row. - Returns: how many there were.
    func deleteAll() throws -> Int
    /// Removes up to `count` rows other than `keeping`'s: first the least recently failed
    /// names with fewer than `sparing` failures that are not locked out; only when those
    /// are not enough, the least recently failed of the rest, names below the lockout
    /// before locked-out ones.
    /// - Returns: how many were removed.
    func dropOldest(_ count: Int, keeping: [UInt8], sparing: Int) throws -> Int
    /// Adds the row of a name that has none and, when the table then holds more than
    /// `limit` names, removes as many as ``dropOldest(_:keeping:sparing:)`` would
    /// (keeping the row's name), in the caller's transaction. A table may send it with the
    /// transaction's end, so it returns nothing.
    func insert(_ row: FailureRow, limit: Int, sparing: Int) throws
}

extension FailureTable {
    /// ``insert(_:)``, then ``dropOldest(_:keeping:sparing:)`` when past `limit`.
    func insert(_ row: FailureRow, limit: Int, sparing: Int) throws {
        let names = try insert(row)
        if names > limit { _ = try dropOldest(names - limit, keeping: row.name, sparing: sparing) }
    }
}
