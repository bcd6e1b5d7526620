/// How much one login may cost (SPEC §3.1 "Cost limits"), whatever the entry's scheme:
/// at most ``maximumWorkSeconds`` of CPU (`max-work`; by default 2 s or 16 × the policy's
/// own hash, whichever is more) and at most ``maximumMemory`` bytes (`max-memory`,
/// default 256 MiB). A hash over a limit is malformed ("too costly"): refused before any
/// work, reported by `check` with the work or memory it would take, never verified, so a
/// single line (a bcrypt of cost 31, a yescrypt of 16 GiB) cannot hang or exhaust a
/// server's logins. The limits replace SPEC version 2's per-scheme hostile parameters.
///
/// The estimate comes from the entry's parameters alone (``KnownHash/estimatedWork``,
/// ``KnownHash/estimatedMemory``). Work is counted in rounds of credfile's own
/// PBKDF2-HMAC-SHA256 loop, the relative cost of each scheme being the `PeerWork`
/// constants (`Benchmarks/peer-work.sh` measures them); it becomes seconds through this
/// machine's rate of that loop, measured once per process and only when a limit needs
/// it (``MachineRate``).
public struct CostLimits: Equatable, Sendable {
    /// The default's floor: a login may always cost this many seconds of CPU.
    public static let defaultMinimumWorkSeconds = 2.0
    /// The default's multiple of the policy's own hash, when that is more than the floor.
    public static let policyMultiple = 16.0
    /// `max-memory`'s default: 256 MiB.
    public static let defaultMaximumMemory = 256 << 20
    /// What `max-work` may be set to, in seconds.
    public static let workSecondsRange = 0.001...1_000_000.0
    /// What `max-memory` may be set to, in bytes: 1 MiB to 1 TiB.
    public static let memoryRange = (1 << 20)...(1 << 40)

    /// `max-work`: the seconds of CPU one login may cost; nil for the default (2 s or 16 ×
    /// the policy's own hash, whichever is more). Always in ``workSecondsRange``.
    public private(set) var maximumWorkSeconds: Double?
    /// `max-memory`: the bytes one login may allocate. Always in ``memoryRange``.
    public private(set) var maximumMemory: Int

    /// Limits of the default kind, or the ones given.
    /// - Throws: ``CredFileError/Code/usage`` when a limit is outside its range.
    public init(maximumWorkSeconds: Double? = nil, maximumMemory: Int = CostLimits.defaultMaximumMemory) throws {
        self.maximumWorkSeconds = nil
        self.maximumMemory = Self.defaultMaximumMemory
        try setMaximumWork(seconds: maximumWorkSeconds)
        try setMaximumMemory(maximumMemory)
    }

    /// The defaults: 2 s or 16 × the policy, 256 MiB.
    public static let standard = CostLimits(unchecked: ())

    private init(unchecked: Void) {
        maximumWorkSeconds = nil
        maximumMemory = Self.defaultMaximumMemory
    }

    /// Sets `max-work` (nil: back to the default).
    /// - Throws: ``CredFileError/Code/usage`` outside ``workSecondsRange``; nothing changes then.
    public mutating func setMaximumWork(seconds: Double?) throws {
        if let seconds, !Self.workSecondsRange.contains(seconds) {
            throw CredFileError.usage("max-work must be between 0.001 and 1000000 seconds")
        }
        maximumWorkSeconds = seconds
    }

    /// Sets `max-memory`, in bytes.
    /// - Throws: ``CredFileError/Code/usage`` outside ``memoryRange``; nothing changes then.
    public mutating func setMaximumMemory(_ bytes: Int) throws {
        guard Self.memoryRange.contains(bytes) else {
            throw CredFileError.usage("max-memory must be between 1M and 1T")
        }
        maximumMemory = bytes
    }

    /// A size as `max-memory` takes it: a decimal number of bytes, or followed by `K`, `M`,
    /// `G` or `T` (or `KiB`, `MiB`, `GiB`, `TiB`), each 1,024 times the one before, as
    /// `ulimit`, systemd's `MemoryMax=` and Dovecot's sizes count: `256M`, `1G`, `262144K`.
    /// Nil for anything else (the caller names the argument).
    public static func parseSize(_ text: String) -> Int? {
        let units: [(String, Int)] = [
            ("KiB", 10), ("MiB", 20), ("GiB", 30), ("TiB", 40), ("K", 10), ("M", 20), ("G", 30), ("T", 40),
        ]
        var digits = Substring(text)
        var shift = 0
        if let (suffix, bits) = units.first(where: { text.hasSuffix($0.0) }) {
            digits = digits.dropLast(suffix.count)
            shift = bits
        }
        guard let value = PeerText.decimal(digits.utf8, maximum: Int.max >> shift) else { return nil }
        return value << shift
    }

    /// `256M`, `1G`, `1536K`: a size in the largest unit that writes it whole.
    public static func formatSize(_ bytes: Int) -> String {
        for (suffix, bits) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] where bytes >= 1 << bits {
            if bytes & ((1 << bits) - 1) == 0 { return "\(bytes >> bits)\(suffix)" }
        }
        return "\(bytes)"
    }
}

/// This machine's rate of the unit every estimate is counted in: rounds per second of CPU
/// of credfile's PBKDF2-HMAC-SHA256 loop (the policy's), measured once per process, the
/// first time a limit needs it (a login or `check` line that costs more than 16 × the
/// policy, or any line once `max-work` is set). The measure: three runs of 10,000
/// rounds timed by the thread's CPU clock (so a loaded machine, whose other processes
/// preempt the run, does not look slow), the fastest kept; and the same of OpenSSL's
/// `PKCS5_PBKDF2_HMAC`, whose round is `PeerWork.openSSLRound` of the loop's: the
/// faster reading wins (a debug build's loop is unoptimized C, five times slower than
/// OpenSSL's, not what the login of a shipped build costs). About 8 ms of CPU in all. A
/// login's timing padding measures for itself (`Verifier`).
public enum MachineRate {
    /// Rounds per second of credfile's PBKDF2-HMAC-SHA256, as measured in this process.
    public static var sha256RoundsPerSecond: Double { measured }

    /// `static let`: computed once, at the first use, and safely from any thread.
    private static let measured: Double = {
        let password = SecretBytes(Array("credfile cost rate".utf8))
        let salt = [UInt8](repeating: 0x5A, count: HashPolicy.saltCount)
        let rounds = 10_000
        func rate(_ implementation: PBKDF2.Implementation) -> Double {
            var fastest = Double.infinity
            for _ in 0..<3 {
                let start = Syscall.threadCPUSeconds()
                _ = try? PBKDF2.deriveKey(
                    .sha256, password: password, salt: salt, rounds: rounds, count: 32, using: implementation)
                fastest = min(fastest, max(Syscall.threadCPUSeconds() - start, 1e-6))
            }
            return Double(rounds) / fastest
        }
        return max(rate(.preferred), rate(.openSSL) * PeerWork.openSSLRound)
    }()
}

/// What the cost limits say of a hash (``HashPolicy/costVerdict(of:)``).
public enum CostVerdict: Equatable, Sendable {
    /// Within both limits: the hash may be verified.
    case within
    /// Over a limit: the entry is malformed and never verified.
    case tooCostly(TooCostly)
}

extension HashPolicy {
    /// Whether `hash` is within this policy's cost limits (SPEC §3.1), judged from its
    /// parameters before any work. The work is checked against 16 × the policy's own hash
    /// without measuring anything; only a hash above that (or any hash, once `max-work`
    /// is set) needs this machine's rate (``MachineRate``).
    public func costVerdict(of hash: any KnownHash) -> CostVerdict {
        costVerdict(work: hash.estimatedWork, memory: hash.estimatedMemory, scheme: hash.description)
    }

    /// ``costVerdict(of:)`` from the estimates themselves (the fast paths of `check` and
    /// `list` judge credfile's own format from its header, without a parsed hash).
    func costVerdict(work: Double, memory: Int, scheme: @autoclosure () -> String) -> CostVerdict {
        let limits = costLimits
        if memory > limits.maximumMemory {
            return .tooCostly(
                TooCostly(
                    scheme: scheme(), seconds: nil, memory: memory, maximumSeconds: nil,
                    maximumMemory: limits.maximumMemory))
        }
        let policyWork = estimatedWork
        if limits.maximumWorkSeconds == nil, work <= CostLimits.policyMultiple * policyWork { return .within }
        let rate = MachineRate.sha256RoundsPerSecond
        let limit =
            limits.maximumWorkSeconds
            ?? max(CostLimits.defaultMinimumWorkSeconds, CostLimits.policyMultiple * policyWork / rate)
        let seconds = work / rate
        guard seconds > limit else { return .within }
        return .tooCostly(
            TooCostly(
                scheme: scheme(), seconds: seconds, memory: nil, maximumSeconds: limit,
                maximumMemory: limits.maximumMemory))
    }

    /// ``costVerdict(of:)`` of a hash in credfile's own format, from its header.
    func costVerdict(of header: PasswordHash.Header) -> CostVerdict {
        costVerdict(work: Double(header.rounds) * header.algorithm.workPerRound, memory: 0, scheme: header.description)
    }

    /// `secret` as this policy treats it: a hash over a cost limit is malformed.
    func judged(_ secret: StoredSecret) -> (secret: StoredSecret, tooCostly: TooCostly?) {
        guard let hash = secret.knownHash, case .tooCostly(let why) = costVerdict(of: hash) else {
            return (secret, nil)
        }
        return (.malformed(reason: why.description), why)
    }
}

extension Entry {
    /// This entry as `policy` treats it: one whose hash is over a cost limit is malformed
    /// (``MalformedReason/tooCostly(_:)``), so the login refuses it before any work.
    func judged(by policy: HashPolicy) -> Entry {
        let (secret, tooCostly) = policy.judged(self.secret)
        guard let tooCostly else { return self }
        return Entry(username: username, secretBytes: secretBytes, secret: secret, malformation: .tooCostly(tooCostly))
    }
}
