/// Why a hash is over a cost limit (SPEC §3.1): what one login with it would take, and the
/// limit it passes. A value, so `check` and its `--json` give the figure and a caller can
/// word it; ``description`` is the English sentence. It never quotes the secret.
public struct TooCostly: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The hash's scheme and cost as `list` shows them (`bcrypt 31`, `yescrypt`).
    public let scheme: String
    /// The seconds of CPU one verification would take, when the work is over the limit.
    public let seconds: Double?
    /// The bytes one verification would allocate, when the memory is over the limit.
    public let memory: Int?
    /// The `max-work` limit it passes, in seconds (nil when it is the memory).
    public let maximumSeconds: Double?
    /// The `max-memory` limit, in bytes.
    public let maximumMemory: Int

    /// Creates the value.
    public init(scheme: String, seconds: Double?, memory: Int?, maximumSeconds: Double?, maximumMemory: Int) {
        self.scheme = scheme
        self.seconds = seconds
        self.memory = memory
        self.maximumSeconds = maximumSeconds
        self.maximumMemory = maximumMemory
    }

    /// `too costly: bcrypt 31 would take about 190000 s of CPU per login (max-work 2 s)`, or
    /// `too costly: yescrypt would allocate 16384 MiB per login (max-memory 256 MiB)`.
    public var description: String {
        if let memory {
            return "too costly: \(scheme) would allocate \(Self.mebibytes(memory)) MiB per login "
                + "(max-memory \(Self.mebibytes(maximumMemory)) MiB)"
        }
        return "too costly: \(scheme) would take about \(Self.seconds(seconds ?? 0)) s of CPU per login "
            + "(max-work \(Self.seconds(maximumSeconds ?? 0)) s)"
    }

    /// Whole MiB, rounded up (so 256 MiB and one byte reads 257).
    public static func mebibytes(_ bytes: Int) -> Int { (bytes >> 20) + (bytes & ((1 << 20) - 1) == 0 ? 0 : 1) }

    /// Seconds with two significant digits below 100, whole above: `2.4`, `0.031`, `190000`.
    public static func seconds(_ value: Double) -> String {
        guard value.isFinite else { return "∞" }
        if value >= 100 {
            return value >= 1e15 ? "\(Int((value / 1e15).rounded()))e15" : String(Int(value.rounded()))
        }
        var scale = 1.0
        while value * scale < 10, scale < 1e9 { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        let text = String(rounded)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}
