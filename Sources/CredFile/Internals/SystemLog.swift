import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// syslog(3), wrapped once: facility `authpriv`, ident `credfile`, with the process ID
/// (journald collects it on systemd hosts; glibc writes to `/dev/log`, and drops the
/// line when no syslog daemon listens there).
enum SystemLog {
    /// How urgent a line is.
    enum Priority {
        /// A denied login (as pam_unix logs its failures).
        case notice
        /// A granted login.
        case info
        /// A name locked out, guarding turned off.
        case warning
        /// A login that could not be guarded (the guard database is unusable).
        case error

        var value: Int32 {
            switch self {
            case .notice: LOG_NOTICE
            case .info: LOG_INFO
            case .warning: LOG_WARNING
            case .error: LOG_ERR
            }
        }
    }

    /// `openlog` keeps the ident's pointer: one C string for the life of the process.
    private static let opened: Mutex<Bool> = Mutex(false)

    /// Sends one line (it is passed through `%s`, never as a format).
    /// The corresponding C functions are `openlog` and `vsyslog`.
    static func write(_ line: String, priority: Priority) {
        opened.withLock { opened in
            guard !opened else { return }
            openlog(strdup("credfile"), LOG_PID, LOG_AUTHPRIV)  // kept for the process's life
            opened = true
        }
        line.withCString { text in
            withVaList([text]) { vsyslog(LOG_AUTHPRIV | priority.value, "%s", $0) }
        }
    }
}
