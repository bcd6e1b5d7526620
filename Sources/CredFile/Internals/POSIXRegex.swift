#if canImport(Glibc)
import Glibc
#endif

/// A POSIX extended regular expression compiled by the C library's `regcomp`
/// (`REG_EXTENDED | REG_NOSUB`), matched by `regexec`: the one place credfile calls
/// them (SPEC §13's `path=~REGEX`). As `grep -E`, a match anywhere counts: anchor with
/// `^` and `$`.
final class POSIXRegex: @unchecked Sendable {
    // @unchecked: `regexec` only reads the compiled pattern (glibc locks what it
    // caches), and the pattern is freed once, in deinit.
    private var compiled = regex_t()

    /// Compiles `pattern`; nil when `regcomp` refuses it (or it holds a NUL byte).
    init?(_ pattern: [UInt8]) {
        guard !pattern.contains(0) else { return nil }
        let status = (pattern + [0]).withUnsafeBufferPointer { text in
            text.baseAddress!.withMemoryRebound(to: CChar.self, capacity: text.count) {
                regcomp(&compiled, $0, REG_EXTENDED | REG_NOSUB)
            }
        }
        guard status == 0 else { return nil }
    }

    deinit { regfree(&compiled) }

    /// Whether the pattern matches somewhere in `subject` (which holds no NUL byte:
    /// false otherwise, as C would stop there).
    func matches(_ subject: some Collection<UInt8>) -> Bool {
        guard !subject.contains(0) else { return false }
        return (Array(subject) + [0]).withUnsafeBufferPointer { text in
            text.baseAddress!.withMemoryRebound(to: CChar.self, capacity: text.count) {
                regexec(&compiled, $0, 0, nil, 0) == 0
            }
        }
    }
}
