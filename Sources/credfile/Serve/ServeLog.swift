import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The service's own messages (listening, reloads, 503s and why): one line each on
/// standard error, where journald files them under the unit. The login decisions go to
/// §9's log (syslog, `authpriv`), not here.
enum ServeLog {
    private static let lock = Mutex(())

    /// Writes `credfile: serve: <message>` and a newline, whole, in one write.
    static func notice(_ message: String) {
        let line = Array("credfile: serve: \(message)\n".utf8)
        lock.withLock { _ in
            var rest = line[...]
            while !rest.isEmpty {
                let n = rest.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                rest = rest.dropFirst(n)
            }
        }
    }
}
