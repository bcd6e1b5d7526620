import Synchronization

/// Throttling by client address (SPEC §11's `address-free-failures`): after that many
/// consecutive failed logins from one address, each further login from it waits the same
/// doubling delay as §9's (1 s, 2 s, 4 s, … up to the guard's `max-delay`) — but an
/// address is never locked out, so many people behind one NAT are slowed, not shut out,
/// and failures under many made-up names from one address slow that address only.
///
/// Kept in memory per process (a restart or a reload forgets it; §9's guard, in the state
/// database, still counts each name), at most ``maximumAddresses`` addresses: when full,
/// the half least recently failed is forgotten. A good login from an address clears its count.
public final class AddressThrottle: Sendable {
    /// The default of `address-free-failures`.
    public static let defaultFreeFailures = 20
    /// The most addresses remembered.
    public static let maximumAddresses = 65_536

    /// Consecutive failures from one address that cost nothing more.
    public let freeFailures: Int
    /// The longest wait, in seconds (the guard's `max-delay`).
    public let maximumDelay: Double

    private struct Entry {
        var failures: Int
        var lastFailure: Double
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// A throttle allowing `freeFailures` consecutive failures per address before the
    /// doubling delay starts, never waiting more than `maximumDelay` seconds.
    public init(freeFailures: Int = defaultFreeFailures, maximumDelay: Double = GuardPolicy.defaultMaximumDelay) {
        self.freeFailures = max(1, freeFailures)
        self.maximumDelay = max(0, maximumDelay)
    }

    /// Whether a login from `address` may be checked at `now` (seconds); false while the
    /// address must wait, and the login is then denied without being checked.
    public func admits(_ address: String, now: Double) -> Bool {
        guard let entry = entries.withLock({ $0[address] }), entry.failures >= freeFailures else { return true }
        return now - entry.lastFailure >= delay(after: entry.failures)
    }

    /// Records a checked login from `address` at `now`: a failure counts, a good login
    /// clears the address's count.
    public func record(_ address: String, granted: Bool, now: Double) {
        entries.withLock { entries in
            if granted {
                entries[address] = nil
                return
            }
            if entries[address] == nil, entries.count >= Self.maximumAddresses {
                let oldest = entries.sorted { $0.value.lastFailure < $1.value.lastFailure }.prefix(entries.count / 2)
                for (key, _) in oldest { entries[key] = nil }
            }
            let failures = (entries[address]?.failures ?? 0) + 1
            entries[address] = Entry(failures: failures, lastFailure: now)
        }
    }

    /// The wait after `failures` consecutive failures: 0 within the free ones, then 1 s,
    /// doubling, at most ``maximumDelay``.
    public func delay(after failures: Int) -> Double {
        guard failures >= freeFailures else { return 0 }
        let exponent = min(failures - freeFailures, 30)
        return min(Double(1 << exponent), maximumDelay)
    }
}
