#if canImport(Glibc)
import Glibc
#endif

/// The one error type of credfile.
///
/// A struct rather than an enum, so a new code breaks no caller. Errors compare by
/// ``code``; the ``message`` is for people and never holds a password or a secret.
public struct CredFileError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What kind of failure this is. Each code maps to one exit status of the CLI.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let rawValue: String
        /// A bad argument, option, username or password (exit 2).
        public static let usage = Code(rawValue: "usage")
        /// `register` of a name that already exists (exit 3).
        public static let userExists = Code(rawValue: "userExists")
        /// `changePassword` or `remove` of a name that does not exist (exit 3).
        public static let userNotFound = Code(rawValue: "userNotFound")
        /// The file cannot be used as asked, e.g. the user's entry is malformed (exit 4).
        public static let malformedFile = Code(rawValue: "malformedFile")
        /// A read, write, fsync or rename failed (exit 5).
        public static let io = Code(rawValue: "io")
        /// The lock could not be taken (exit 5).
        public static let lock = Code(rawValue: "lock")
        /// OpenSSL reported a failure (exit 5).
        public static let crypto = Code(rawValue: "crypto")
        /// The task of an `async` call was cancelled before its work started.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The description of the code, e.g. `io`.
        public var description: String { rawValue }
    }

    /// The system call and errno behind an I/O or lock error.
    public struct Cause: Equatable, Sendable, CustomStringConvertible {
        /// The failing call, e.g. `rename`.
        public var syscall: String
        /// The `errno` value it set.
        public var errno: Int32
        /// `"rename: Permission denied"`.
        public var description: String { "\(syscall): \(String(cString: strerror(errno)))" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for people; never contains a password or a secret.
    public var message: String
    /// The underlying system call failure, when there is one.
    public var cause: Cause?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: Cause? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message followed by its cause, if any.
    public var description: String {
        guard let cause else { return message }
        return "\(message) (\(cause))"
    }

    /// Equal when the codes are equal.
    public static func == (a: Self, b: Self) -> Bool { a.code == b.code }

    /// The error of an `async` call whose task was cancelled before its work started.
    public static var cancelled: Self { Self(.cancelled, "cancelled before the work started") }

    /// A usage error: a bad argument, option, username or password.
    public static func usage(_ message: String) -> Self { Self(.usage, message) }

    static func io(_ message: String, _ syscall: String, _ errno: Int32) -> Self {
        Self(.io, message, cause: Cause(syscall: syscall, errno: errno))
    }
}
