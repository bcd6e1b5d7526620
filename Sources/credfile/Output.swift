import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// Just enough JSON for the `--json` outputs (no Foundation).
enum JSON {
    static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// An object from already-encoded values, in the given order.
    static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}

/// A progress bar on standard error: done/total, rate and time left, redrawn at most
/// ten times a second. Only used when standard error is a terminal.
final class ProgressBar: @unchecked Sendable {  // called one at a time (ParallelHasher serializes)
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now - .seconds(1)

    func update(done: Int, total: Int) {
        let now = ContinuousClock.now
        guard done == total || now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        let elapsed = (now - start).inSeconds
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let left = rate > 0 ? Int((Double(total - done) / rate).rounded()) : 0
        let width = 30
        let filled = total > 0 ? width * done / total : width
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let line = "\r[\(bar)] \(done)/\(total)  \(Self.rate(rate))  \(Self.duration(left)) left "
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    /// `8.3/s` below 100 a second (a real upgrade hashes about 8), else whole numbers.
    static func rate(_ perSecond: Double) -> String {
        guard perSecond < 100 else { return "\(Int(perSecond.rounded()))/s" }
        let tenths = Int((perSecond * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)/s"
    }

    /// `42s`, `3m07s`, `29h04m`: an upgrade of a million entries takes hours.
    static func duration(_ seconds: Int) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m\(two(seconds % 60))s" }
        return "\(seconds / 3600)h\(two(seconds / 60 % 60))m"
    }

    func finish() { _ = Glibc.write(2, "\n", 1) }
}
