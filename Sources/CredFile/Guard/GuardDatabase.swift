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
/// lock; a store whose writers of different names do not wait for each other, PostgreSQL,
/// skips it: ``StateStore/readsBeforeWriting``); an attempt to be checked then takes one
/// write transaction that judges it again and **counts it as a failure before the
/// password is looked at** (pam_faillock and pam_tally2 count the same way). A good login then removes the row (a second small
/// transaction); a failure needs no more. Counting first is what makes the limits hold
/// under concurrency: eight clients that arrive together each see the others' attempts,
/// so no more get through than the policy allows, and a process killed while it hashes
/// leaves its attempt counted.
///
/// **Bounded.** At most ``nameLimit`` rows (100,000), of at most 256 bytes of name each
/// (``storedKey(_:)``). A new name that goes past the bound drops, inside the same
/// transaction, the least recently failed of the names that are not yet throttled (fewer
/// than `free-failures` failures, not locked out), so fresh names, however many an attacker
/// makes up, never push out a name whose count matters; only when every other name is
/// throttled or locked out does the least recently failed of them go (locked-out ones
/// last). Documentation/Decisions.md (§9) says why NIST's 100 holds.
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

    /// The row of `name`, if it has one. Nothing is created.
    func row(_ name: [UInt8]) throws(CredFileError) -> Row? {
        let key = Self.storedKey(name)
        return try store.read { try $0.failures.row(key) } ?? nil
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
    /// first (``StateStore/readsBeforeWriting``), so an attempt that is refused takes no
    /// write lock.
    func reserve(_ name: [UInt8], now: Int64, policy: GuardPolicy) throws(CredFileError) -> Reservation {
        let name = Self.storedKey(name)
        if store.readsBeforeWriting, let seen = try store.read({ try $0.failures.row(name) }) ?? nil,
            let refusal = Self.refusal(of: seen, now: now, policy: policy)
        {
            return refusal
        }
        return try store.write { tables in
            let failures = tables.failures
            let current = try failures.row(name)
            if let refusal = Self.refusal(of: current, now: now, policy: policy) { return refusal }
            let count = (current?.count ?? 0) + 1
            let row = Row(name: name, count: count, lastFailure: now, lockedOut: policy.locksOut(afterFailures: count))
            if current == nil {
                try failures.insert(row, limit: nameLimit, sparing: policy.freeFailures)
            } else {
                try failures.update(row)
            }
            return .admitted(count: count)
        }
    }

    /// Takes back one counted attempt of `name` whose password could not be checked
    /// (the credential file could not be read): it was not a guess.
    func release(_ name: [UInt8], policy: GuardPolicy) throws(CredFileError) {
        let name = Self.storedKey(name)
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
        // A plain read first: nothing to clear takes no write lock and creates no file.
        guard try row(name) != nil else { return false }
        let key = Self.storedKey(name)
        return try store.write { try $0.failures.delete(key) }
    }

    /// Removes the rows of `name`'s known devices (``KnownDevice``), when an admin resets
    /// the name. - Returns: how many there were.
    @discardableResult
    func clearDevices(ofName name: [UInt8]) throws(CredFileError) -> Int {
        let keys = try rows().map(\.name).filter { KnownDevice.isDeviceKey($0, ofName: name) }
        guard !keys.isEmpty else { return 0 }
        return try store.write { tables in
            var removed = 0
            for key in keys where try tables.failures.delete(key) { removed += 1 }
            return removed
        }
    }

    /// Removes every row (`failures --reset`). - Returns: how many there were.
    @discardableResult
    func clearAll() throws(CredFileError) -> Int {
        guard try nameCount() > 0 else { return 0 }
        return try store.write { try $0.failures.deleteAll() }
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

extension GuardDatabase {
    /// The longest name key stored as it is.
    static let longestStoredKey = 255

    /// The key a name is stored under: its key as it is up to ``longestStoredKey`` bytes;
    /// a longer one (an 8 KiB name would make a 17 KB row) as its first 224 bytes and the
    /// SHA-256 of the whole, 256 bytes, so rows stay small and long names stay apart
    /// (every 256-byte key is a digested one, so no name as typed can equal one).
    static func storedKey(_ key: [UInt8]) -> [UInt8] {
        guard key.count > longestStoredKey else { return key }
        return Array(key.prefix(longestStoredKey + 1 - 32)) + key.withUnsafeBytes { OpenSSL.sha256($0) }
    }
}
