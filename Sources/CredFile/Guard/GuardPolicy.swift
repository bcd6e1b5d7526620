/// How hard repeated failures of one name are slowed down and when the name is locked
/// out (SPEC §9), as pam_faillock's `deny` and a growing delay together:
///
/// * the first ``freeFailures`` consecutive failures of a name cost nothing more;
/// * after the n-th consecutive failure, n > ``freeFailures``, the next attempt is
///   checked only when 2^(n − ``freeFailures`` − 1) seconds have passed since that
///   failure (1 s after the 6th with the defaults, 2 s after the 7th, …), at most
///   ``maximumDelay`` seconds; an attempt that comes earlier is denied without looking at
///   the password and is not counted;
/// * after ``maximumFailures`` consecutive failures (NIST SP 800-63B-4 §3.2.2: at most
///   100) every attempt is denied until the failures are reset;
/// * a good login resets the count.
public struct GuardPolicy: Sendable, Equatable {
    /// Failures in a row that cost nothing more (default 5).
    public let freeFailures: Int
    /// Failures in a row that lock the name out (default and most: 100).
    public let maximumFailures: Int
    /// The longest delay between two checks of one name, in seconds (default 900).
    public let maximumDelay: Double

    /// The default of ``freeFailures``.
    public static let defaultFreeFailures = 5
    /// The default of ``maximumFailures``: NIST's ceiling.
    public static let defaultMaximumFailures = 100
    /// The default of ``maximumDelay``, in seconds (15 minutes, as pam_faillock's `unlock_time`).
    public static let defaultMaximumDelay = 900.0

    /// The values ``freeFailures`` may take.
    public static let freeFailuresRange = 0...100
    /// The values ``maximumFailures`` may take: NIST SP 800-63B-4 allows no more than 100.
    public static let maximumFailuresRange = 1...100
    /// The values ``maximumDelay`` may take, in seconds (up to a day).
    public static let maximumDelayRange = 0.0...86_400.0

    /// The defaults: 5 free failures, then 1 s doubling up to 900 s, lockout at 100.
    public static let standard = GuardPolicy(
        checkedFreeFailures: defaultFreeFailures, maximumFailures: defaultMaximumFailures,
        maximumDelay: defaultMaximumDelay)

    /// A policy with these values.
    /// - Throws: ``CredFileError/Code/usage`` naming the value out of its range (more
    ///   than 100 failures before a lockout is refused, as NIST requires).
    public init(
        freeFailures: Int = defaultFreeFailures, maximumFailures: Int = defaultMaximumFailures,
        maximumDelay: Double = defaultMaximumDelay
    ) throws(CredFileError) {
        guard Self.freeFailuresRange.contains(freeFailures) else {
            throw CredFileError.usage(
                "free-failures must be from \(Self.freeFailuresRange.lowerBound) to \(Self.freeFailuresRange.upperBound)"
            )
        }
        guard Self.maximumFailuresRange.contains(maximumFailures) else {
            throw CredFileError.usage(
                "max-failures must be from \(Self.maximumFailuresRange.lowerBound) to \(Self.maximumFailuresRange.upperBound) (NIST SP 800-63B-4 allows no more than 100 failures in a row)"
            )
        }
        guard Self.maximumDelayRange.contains(maximumDelay) else {
            throw CredFileError.usage("max-delay must be from 0 to \(Int(Self.maximumDelayRange.upperBound)) seconds")
        }
        self.init(checkedFreeFailures: freeFailures, maximumFailures: maximumFailures, maximumDelay: maximumDelay)
    }

    private init(checkedFreeFailures: Int, maximumFailures: Int, maximumDelay: Double) {
        self.freeFailures = checkedFreeFailures
        self.maximumFailures = maximumFailures
        self.maximumDelay = maximumDelay
    }

    /// The seconds the next attempt must wait after `failures` consecutive failures:
    /// 0 up to ``freeFailures``, then 2^(failures − freeFailures − 1), at most ``maximumDelay``.
    public func delay(afterFailures failures: Int) -> Double {
        guard failures > freeFailures else { return 0 }
        let exponent = failures - freeFailures - 1
        // 2^exponent passes any allowed maximum (a day) long before 2^63.
        guard exponent < 40 else { return maximumDelay }
        return min(Double(1 << exponent), maximumDelay)
    }

    /// Whether `failures` consecutive failures lock the name out.
    public func locksOut(afterFailures failures: Int) -> Bool { failures >= maximumFailures }
}
