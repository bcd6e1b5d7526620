#if canImport(Glibc)
import Glibc
#endif
#if DEBUG
import Synchronization  // the fault hook's call counter
#endif

/// In debug builds a test can make one system call fail on purpose (swift-system's
/// `ForceErrno.counted` idea) through the environment:
///
///     CREDFILE_TEST_FAULT=NAME[:ERRNO[:N]]
///
/// `NAME` is a wrapper's name (`open`, `read`, `write`, `copy_file_range` (a rewrite's
/// copy of the unchanged stretches of a large file), `fsync`, `fsync-directory` (the
/// `fsync` of the directory after `rename`), `open-directory` (its `open`), `rename`,
/// `mkstemp`, `fchmod`, `fchown`, `flock`, `lstat`, `readlink`, `write-output` (the CLI's
/// writes to standard output and error), `read-input` (its reads of standard input), …);
/// `ERRNO` a name such
/// as `EIO`, `ENOSPC`, `EACCES` or a
/// number (default `EIO`); `N` makes only the N-th call of that name in the process fail
/// (default: every call). `fsync:EIO:2` fails the second `fsync` with `EIO`.
extension Syscall {
    #if DEBUG
    /// The fault the environment asks for, parsed once.
    struct Fault: Sendable {
        let name: String
        let errno: Int32
        /// Only this call of `name` fails (1-based); nil: every call.
        let call: Int?

        static let fromEnvironment: Fault? = getenv("CREDFILE_TEST_FAULT").flatMap { parse(String(cString: $0)) }

        /// Parses `NAME[:ERRNO[:N]]`; nil when it is malformed (then no fault is injected).
        static func parse(_ text: String) -> Fault? {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (1...3).contains(parts.count), !parts[0].isEmpty else { return nil }
            var code = EIO
            if parts.count >= 2 {
                guard let parsed = Int32(parts[1]) ?? errnoNames[parts[1]] else { return nil }
                code = parsed
            }
            var call: Int?
            if parts.count == 3 {
                guard let n = Int(parts[2]), n >= 1 else { return nil }
                call = n
            }
            return Fault(name: parts[0], errno: code, call: call)
        }

        static let errnoNames: [String: Int32] = [
            "EIO": EIO, "ENOSPC": ENOSPC, "EDQUOT": EDQUOT, "EACCES": EACCES, "EPERM": EPERM, "EROFS": EROFS,
            "ENOENT": ENOENT, "EEXIST": EEXIST, "ENAMETOOLONG": ENAMETOOLONG, "ELOOP": ELOOP, "EINTR": EINTR,
            "EAGAIN": EAGAIN, "EWOULDBLOCK": EWOULDBLOCK, "EBADF": EBADF, "EINVAL": EINVAL, "ENOMEM": ENOMEM,
            "EMFILE": EMFILE, "EXDEV": EXDEV, "EBUSY": EBUSY, "ENOLCK": ENOLCK,
        ]

        /// How many calls of the fault's wrapper were made so far (no other name is counted).
        private static let calls = Mutex(0)

        /// Whether this call of `name` is the one to fail.
        func strikes(_ called: String) -> Bool {
            guard called == name else { return false }
            guard let call else { return true }
            return Self.calls.withLock { count in
                count += 1
                return count == call
            }
        }
    }

    /// Throws the injected fault when this call of `name` is the chosen one.
    static func injectFault(_ name: String) throws(SyscallError) {
        if let fault = Fault.fromEnvironment, fault.strikes(name) {
            throw SyscallError(name: name, errno: fault.errno)
        }
    }
    #else
    @inline(__always) static func injectFault(_ name: String) throws(SyscallError) {}
    #endif
}
