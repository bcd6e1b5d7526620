import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Sessions held in memory in front of any ``SessionStorage`` (SPEC §11 "Fast": a signed-in
/// request costs a cookie parse, a SHA-256 and a lookup held in memory, checked against
/// the database's change counter), so the signed-in path does not read the sessions
/// table: SQLite's, or PostgreSQL's of §15 alike.
///
/// **Revocation.** A session read from the storage is held with the storage's change
/// counter of that moment (``SessionStorage/changeCounter()``), and answered from memory
/// only while the counter is the same: another process's or host's end of a session
/// (`credfile sessions --end`, a sign-out served elsewhere) changes it, and the next
/// request re-reads its session. This storage's own writes (sign-in, sign-out, "sign out
/// everywhere", last-seen) change the memory as they change the storage. A storage with
/// no counter has what it holds trusted for ``trustSeconds`` at most.
/// A change of the user's line (`passwd`, `lock`) is not the storage's business: the
/// entry digest is checked at every request (``PortalSessions/check(_:now:line:)``).
///
/// **Last seen.** A session held is read again once its last-seen is
/// ``SessionLimits/touchInterval`` old, before the request that would write it: so a
/// session kept busy through another host (whose last-seen writes move no counter in
/// PostgreSQL) is judged idle on its stored last-seen, never on this memory's.
///
/// **Bounded.** At most ``capacity`` sessions are held (when full, half of them are
/// dropped); an unknown token is never held (it is read from the storage each time).
public final class CachedSessionStorage: SessionStorage {
    /// The storage under the memory.
    public let base: any SessionStorage
    /// The most sessions held in memory.
    public let capacity: Int
    /// How long a session is trusted without the storage's change counter, in seconds.
    public static let trustSeconds: Int64 = 5
    /// The default ``capacity``.
    public static let defaultCapacity = 100_000

    /// What the check of a session needs (its token digest is the key), about 250 bytes
    /// with the dictionary's share; the client's address and `User-Agent` stay in the
    /// storage, for ``sessions(user:)``.
    private struct Held {
        let user: String
        let entryDigest: [UInt8]
        let started: Int64
        var lastSeen: Int64
        /// Whether its sign-in checked a second factor (§13's `two-factor`).
        let secondFactor: Bool
        /// The change counter when it was read (nil: the storage keeps none).
        let counter: UInt64?
        /// When it was read (monotonic seconds).
        let read: Int64

        func record(_ tokenDigest: [UInt8]) -> SessionRecord {
            SessionRecord(
                tokenDigest: tokenDigest, user: user, entryDigest: entryDigest, started: started, lastSeen: lastSeen,
                client: nil, userAgent: nil, secondFactor: secondFactor)
        }
    }

    /// The sessions held, and how many of this storage's own removals there have been: a
    /// session read from the storage is held only when no removal came in between (else a
    /// sign-out racing a request could leave the ended session in memory, and this
    /// storage's own writes do not move the change counter).
    private struct State {
        var held: [[UInt8]: Held] = [:]
        var removals: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Sessions of `base` held in memory, at most `capacity` of them.
    public init(_ base: any SessionStorage, capacity: Int = defaultCapacity) {
        self.base = base
        self.capacity = max(1, capacity)
    }

    /// How many sessions are held in memory now.
    public var count: Int { state.withLock { $0.held.count } }

    /// See ``SessionStorage/key(named:)``.
    public func key(named name: String) throws -> SecretBytes { try base.key(named: name) }

    /// See ``SessionStorage/insert(_:limit:)``: the user's sessions held are dropped, since
    /// the storage may have ended its oldest.
    public func insert(_ record: SessionRecord, limit: Int) throws {
        defer { forget { held, _ in held.user == record.user } }
        try base.insert(record, limit: limit)
    }

    /// See ``SessionStorage/session(tokenDigest:)``: from memory while the storage's change
    /// counter is the one it was read at (or, without a counter, for ``trustSeconds``).
    /// A session answered from memory has no ``SessionRecord/client`` or
    /// ``SessionRecord/userAgent`` (the check needs neither; ``sessions(user:)`` lists them).
    public func session(tokenDigest: [UInt8]) throws -> SessionRecord? {
        let counter = try base.changeCounter()
        let now = Self.monotonicSeconds()
        let (entry, removals) = state.withLock { ($0.held[tokenDigest], $0.removals) }
        if let entry, Int64(time(nil)) - entry.lastSeen < SessionLimits.touchInterval {
            let current =
                if let counter { entry.counter == counter } else {
                    entry.counter == nil && now - entry.read < Self.trustSeconds
                }
            if current { return entry.record(tokenDigest) }
        }
        let record = try base.session(tokenDigest: tokenDigest)
        state.withLock { state in
            guard let record, state.removals == removals else {
                state.held[tokenDigest] = nil
                return
            }
            if state.held[tokenDigest] == nil, state.held.count >= capacity {
                for key in state.held.keys.prefix(max(1, state.held.count / 2)) { state.held[key] = nil }
            }
            state.held[tokenDigest] = Held(
                user: record.user, entryDigest: record.entryDigest, started: record.started, lastSeen: record.lastSeen,
                secondFactor: record.secondFactor, counter: counter, read: now)
        }
        return record
    }

    /// See ``SessionStorage/touch(tokenDigest:lastSeen:)``.
    public func touch(tokenDigest: [UInt8], lastSeen: Int64) throws {
        try base.touch(tokenDigest: tokenDigest, lastSeen: lastSeen)
        state.withLock { $0.held[tokenDigest]?.lastSeen = lastSeen }
    }

    /// See ``SessionStorage/remove(tokenDigest:)``.
    @discardableResult public func remove(tokenDigest: [UInt8]) throws -> Bool {
        defer { forget { _, key in key == tokenDigest } }
        return try base.remove(tokenDigest: tokenDigest)
    }

    /// See ``SessionStorage/removeAll(user:)``.
    @discardableResult public func removeAll(user: String?) throws -> Int {
        defer { forget { held, _ in user == nil || held.user == user } }
        return try base.removeAll(user: user)
    }

    /// See ``SessionStorage/sessions(user:)``: always the storage's.
    public func sessions(user: String?) throws -> [SessionRecord] { try base.sessions(user: user) }

    /// See ``SessionStorage/changeCounter()``: the storage's.
    public func changeCounter() throws -> UInt64? { try base.changeCounter() }

    /// After a write to the storage (done or failed), drops the sessions held that
    /// `matching` picks (without copying the rest) and counts a removal.
    private func forget(_ matching: (Held, [UInt8]) -> Bool) {
        state.withLock { state in
            state.removals &+= 1
            for key in state.held.compactMap({ matching($0.value, $0.key) ? $0.key : nil }) { state.held[key] = nil }
        }
    }

    private static func monotonicSeconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec)
    }
}
