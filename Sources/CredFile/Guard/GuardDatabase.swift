#if canImport(Glibc)
import Glibc
#endif

/// The guard database of SPEC §9: the rules by which failures are counted, over the
/// `failures` table of the state database (``StateStore``, ``FailureTable``), the same
/// for every backend. Per name (its NFC bytes; unknown names too): the consecutive
/// failures, the time of the last one, and whether the name is locked out.
///
/// **Transactions.** An attempt is first judged by a plain read (a throttled or
/// locked-out attempt writes nothing, so a flood of them never contends for the write
/// lock); an attempt to be checked then takes one write transaction that judges it again
/// and **counts it as a failure before the password is looked at** (pam_faillock and
/// pam_tally2 count the same way). A good login then removes the row (a second small
/// transaction); a failure needs no more. Counting first is what makes the limits hold
/// under concurrency: eight clients that arrive together each see the others' attempts,
/// so no more get through than the policy allows, and a process killed while it hashes
/// leaves its attempt counted.
///
/// **Bounded.** At most ``nameLimit`` rows (100,000): a new name that goes past it
/// drops the least recently failed names below the lockout first (locked-out ones
/// only when no other is left), inside the same transaction.
final class GuardDatabase: Sendable {
    /// The state database holding the failures.
    let store: any StateStore
    /// The most names kept.
    let nameLimit: Int

    /// The most names the database keeps (SPEC §9).
    static let defaultNameLimit = 100_000
    /// How long a statement waits for another process's write lock, in milliseconds
    /// (the SQLite store's).
    static var busyTimeout: Int32 { SQLiteStateStore.busyTimeout }
    /// The pages in SQLite's write-ahead log at which a commit empties it (the SQLite store's).
    static var logPages: Int32 { SQLiteStateStore.logPages }

    /// The failures kept in `store`.
    init(store: any StateStore, nameLimit: Int = defaultNameLimit) {
        self.store = store
        self.nameLimit = max(1, nameLimit)
    }

    /// The failures kept in the SQLite database at `path`, opened (and created when
    /// missing) at first use; when root creates it, it gets `owner`.
    convenience init(path: String, owner: (uid: uid_t, gid: gid_t)?, nameLimit: Int = defaultNameLimit) {
        self.init(store: SQLiteStateStore(path: path, owner: owner), nameLimit: nameLimit)
    }

    /// One name's row.
    typealias Row = FailureRow

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
        try store.read { try $0.failures.row(name) } ?? nil
    }

    /// Every row, the most recent failure first.
    func rows() throws(CredFileError) -> [Row] {
        try store.read { try $0.failures.rows() } ?? []
    }

    /// How many names the database holds.
    func nameCount() throws(CredFileError) -> Int {
        try store.read { try $0.failures.nameCount() } ?? 0
    }

    // MARK: Writing

    /// Judges an attempt on `name` at `now` (milliseconds since the epoch) and, when it
    /// may be checked, counts it as a failure, all in one transaction. A plain read comes
    /// first, so an attempt that is refused takes no write lock.
    func reserve(_ name: [UInt8], now: Int64, policy: GuardPolicy) throws(CredFileError) -> Reservation {
        let seen = try store.read { try $0.failures.row(name) }
        if let seen, let refusal = Self.refusal(of: seen, now: now, policy: policy) { return refusal }
        return try store.write { tables in
            let failures = tables.failures
            let current = try failures.row(name)
            if let refusal = Self.refusal(of: current, now: now, policy: policy) { return refusal }
            let count = (current?.count ?? 0) + 1
            let row = Row(name: name, count: count, lastFailure: now, lockedOut: policy.locksOut(afterFailures: count))
            if current == nil {
                let names = try failures.insert(row)
                if names > nameLimit { _ = try failures.dropOldest(names - nameLimit, keeping: name) }
            } else {
                try failures.update(row)
            }
            return .admitted(count: count)
        }
    }

    /// Takes back one counted attempt of `name` whose password could not be checked
    /// (the credential file could not be read): it was not a guess.
    func release(_ name: [UInt8], policy: GuardPolicy) throws(CredFileError) {
        try store.write { tables in
            let failures = tables.failures
            guard var current = try failures.row(name) else { return }
            if current.count <= 1 {
                _ = try failures.delete(name)
            } else {
                current.count -= 1
                current.lockedOut = policy.locksOut(afterFailures: current.count)
                try failures.update(current)
            }
        }
    }

    /// Removes `name`'s row (a good login, `failures --reset USER`, `unlock`).
    /// - Returns: whether there was one.
    @discardableResult
    func clear(_ name: [UInt8]) throws(CredFileError) -> Bool {
        try store.write { try $0.failures.delete(name) }
    }

    /// Removes every row (`failures --reset`). - Returns: how many there were.
    @discardableResult
    func clearAll() throws(CredFileError) -> Int {
        try store.write { try $0.failures.deleteAll() }
    }

    /// Stores rows as they are, in one transaction (tests fill a database this way).
    func insert(_ rows: [Row]) throws(CredFileError) {
        try store.write { tables in
            for row in rows {
                if try tables.failures.row(row.name) != nil {
                    try tables.failures.update(row)
                } else {
                    _ = try tables.failures.insert(row)
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
}
