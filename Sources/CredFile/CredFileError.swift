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
        /// The guard database (SPEC §9) cannot be opened or written, so a login was not
        /// checked: a temporary failure (exit 5, checkpassword 111, Squid `BH`, HTTP 503),
        /// never an unguarded login.
        public static let guardDatabase = Code(rawValue: "guardDatabase")
        /// An invitation code (SPEC §12) that is wrong, used, expired, revoked or bound to
        /// another name: one code for all of them, so the answer tells nothing more (exit 1).
        public static let invitationRefused = Code(rawValue: "invitationRefused")
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
    /// A sentence for people; never contains a password or a secret. It does not name
    /// ``item``: ``description`` does.
    public var message: String
    /// The underlying system call failure, when there is one.
    public var cause: Cause?
    /// What input was refused and why, as a value (for usage errors about a name, a
    /// password or a secret), so a caller renders it in its own words and knows the
    /// error is about the input, not about how the command was called.
    public var refusal: Refusal?
    /// The 0-based index of the failing item when a call takes many (``CredentialStore/importUsers(_:storage:jobs:existing:)-2wsmm``),
    /// so a caller can name its own line instead of the library's item number.
    public var item: Int?

    /// An input the library refuses, with the values of the reason.
    public enum Refusal: Equatable, Sendable {
        /// A new username breaks a rule (SPEC §2).
        case username(Username.Problem)
        /// A new password breaks a rule (SPEC §2).
        case password(PasswordRules.Problem)
        /// A secret handed to ``CredentialFile/Changes`` would make the line malformed
        /// (empty, a line break or another control byte, invalid UTF-8, too long).
        case secret(MalformedReason)
        /// The same user as the item at this 0-based index, earlier in the same call.
        case sameUser(asItem: Int)
        /// A new password breaks the password policy (SPEC §8: length, blocklist,
        /// username or context word).
        case passwordPolicy(PasswordViolation)
    }

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: Cause? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// A usage error refusing an input; the message says why in English (the item, if
    /// any, is added by ``description``).
    public init(refusing refusal: Refusal, item: Int? = nil) {
        let reason: String
        switch refusal {
        case .username(let problem): reason = "username \(problem)"
        case .password(let problem): reason = problem.description
        case .secret(let problem): reason = "secret: \(problem)"
        case .sameUser(let first): reason = "same user as item \(first + 1)"
        case .passwordPolicy(let violation): reason = violation.description
        }
        self.init(.usage, reason)
        self.refusal = refusal
        self.item = item
    }

    /// `item N: ` (1-based) when the error is about one item of many, the message, and
    /// its cause, if any.
    public var description: String {
        let text = (item.map { "item \($0 + 1): " } ?? "") + message
        guard let cause else { return text }
        return "\(text) (\(cause))"
    }

    /// Equal when the codes are equal.
    public static func == (a: Self, b: Self) -> Bool { a.code == b.code }

    /// The error of an `async` call whose task was cancelled before its work started.
    public static var cancelled: Self { Self(.cancelled, "cancelled before the work started") }

    /// A usage error: a bad argument, option, username or password.
    public static func usage(_ message: String) -> Self { Self(.usage, message) }

    /// The error of a file that must exist and does not: `cannot open PATH` (escaped),
    /// caused by `open` failing with `ENOENT`, as if the call itself had failed.
    static func missingFile(_ path: String) -> Self {
        Self(.io, "cannot open \(Escaped.path(path))", cause: .init(syscall: "open", errno: ENOENT))
    }
}
