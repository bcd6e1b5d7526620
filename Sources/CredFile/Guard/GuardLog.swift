#if canImport(Glibc)
import Glibc
#endif

/// Where a guarded login's decisions are written (SPEC §9, `log = syslog|stderr|none`):
/// one line per decision, in one format that fail2ban matches
/// (`Examples/fail2ban/`), never a password or a secret:
///
///     authentication failure; service=pam user=bob rhost=203.0.113.9 file=/etc/app.cred reason=wrong-password
///     authentication success; service=serve user=bob rhost=203.0.113.9 file=/etc/app.cred
///     locked out; user=bob failures=100
///
/// Each value is escaped as `credfile` escapes names (control, bidi and invisible
/// characters as `\u{…}`, bytes that are not UTF-8 as `\xFF`), and a space, `=`, `"`,
/// `;` or `\` inside a value is written `\xHH`, so no name can forge another field
/// (`eve rhost=192.0.2.66` is logged `user=eve\x20rhost\x3D192.0.2.66`). An empty value
/// (no client address) is written as nothing: `rhost=`.
public enum GuardLog: String, Sendable, CaseIterable {
    /// syslog(3), facility `authpriv`, ident `credfile` (the default).
    case syslog
    /// Standard error, each line after `credfile: `.
    case stderr
    /// Nowhere.
    case none

    /// Writes one decision.
    func write(_ line: String, priority: SystemLog.Priority) {
        switch self {
        case .syslog: SystemLog.write(line, priority: priority)
        case .stderr: Self.writeStandardError("credfile: " + line + "\n")
        case .none: break
        }
    }

    /// One `write` of the whole line, so lines of concurrent logins do not mix.
    private static func writeStandardError(_ text: String) {
        try? Syscall.writeAll(2, Array(text.utf8), name: "write-output")  // nobody to tell when it fails
    }

    // MARK: The lines

    /// `authentication failure; service=… user=… rhost=… file=… reason=…`
    static func failureLine(
        service: String, user: some Collection<UInt8>, client: String?, file: String, reason: LoginDenial
    )
        -> String
    {
        "authentication failure; service=\(value(service)) user=\(value(user)) rhost=\(value(client ?? "")) "
            + "file=\(value(file)) reason=\(reason.rawValue)"
    }

    /// `authentication success; service=… user=… rhost=… file=…`
    static func successLine(service: String, user: some Collection<UInt8>, client: String?, file: String) -> String {
        "authentication success; service=\(value(service)) user=\(value(user)) rhost=\(value(client ?? "")) file=\(value(file))"
    }

    /// `locked out; user=… failures=…`
    static func lockedOutLine(user: some Collection<UInt8>, failures: Int) -> String {
        "locked out; user=\(value(user)) failures=\(failures)"
    }

    /// A field's value: escaped as names are, then the bytes that separate fields as `\xHH`.
    static func value(_ text: String) -> String { value(Array(text.utf8)) }

    /// A field's value from raw bytes (a name that is not UTF-8 shows its bytes as `\xHH`).
    static func value(_ bytes: some Collection<UInt8>) -> String {
        var out = ""
        var segment: [UInt8] = []
        for byte in bytes {
            if separatesFields(byte) {
                if !segment.isEmpty { out += Escaped.name(segment) }
                segment.removeAll(keepingCapacity: true)
                out +=
                    "\\x" + String(byte >> 4, radix: 16, uppercase: true)
                    + String(byte & 15, radix: 16, uppercase: true)
            } else {
                segment.append(byte)
            }
        }
        if !segment.isEmpty { out += Escaped.name(segment) }
        return out
    }

    /// Space, `=`, `"`, `;` and `\`: ASCII bytes, never part of a longer UTF-8 sequence,
    /// so splitting at them keeps every other character whole.
    private static func separatesFields(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: ";")
            || byte == UInt8(ascii: "\\")
    }
}
