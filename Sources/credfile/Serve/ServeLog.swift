import CredFile
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The service's own messages (listening, reloads, 503s and why): one line each on
/// standard error, where journald files them under the unit. The login decisions go to
/// §9's log (syslog, `authpriv`), not here.
enum ServeLog {
    private static let lock = Mutex(())
    /// The second of CLOCK_MONOTONIC ``limited(_:)`` last wrote in, and the lines it dropped since.
    private static let lastLimited = Mutex<(second: Int, dropped: Int)>((-1, 0))

    /// Writes `message` at most once a second (a flood that is answered 503 must not
    /// flood the journal too); the next line that is written says how many were dropped.
    static func limited(_ message: String) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let second = Int(now.tv_sec)
        let dropped: Int? = lastLimited.withLock { state in
            guard state.second != second else {
                state.dropped += 1
                return nil
            }
            defer { state = (second, 0) }
            return state.dropped
        }
        guard let dropped else { return }
        notice(dropped > 0 ? "\(message) (and \(dropped) more since the last such line)" : message)
    }

    /// Writes `credfile: serve: <message>` and a newline, whole, in one write.
    static func notice(_ message: String) {
        let line = Array("credfile: serve: \(message)\n".utf8)
        lock.withLock { _ in
            try? Syscall.writeAll(2, line, name: "write-output")  // nobody to tell when it fails
        }
    }
}
