/// One problem `check` found in a file: a value, printed compiler-style by the CLI as
/// `FILE:LINE: error: …`. A finding never quotes a secret.
public struct Finding: Equatable, Sendable, CustomStringConvertible {
    /// How bad it is.
    public enum Severity: String, Sendable {
        /// The entry never authenticates, or the file is not what it should be.
        case error
        /// Works, but should be fixed (plaintext, weak hash, odd name).
        case warning
    }

    /// What the finding is about, for callers that sort or translate findings without
    /// reading the message. (Minimal on this branch; the parsing work adds the full set.)
    public enum Kind: String, Sendable {
        /// Any finding of `check`'s lint.
        case other
        /// A plaintext entry whose password is on a blocklist (`check --passwords`).
        case blocklisted
    }

    /// The 1-based line number.
    public let line: Int
    /// Error or warning.
    public let severity: Severity
    /// A sentence for people, without any secret.
    public let message: String
    /// What it is about.
    public let kind: Kind

    /// Creates a finding.
    public init(line: Int, severity: Severity, message: String, kind: Kind = .other) {
        self.line = line
        self.severity = severity
        self.message = message
        self.kind = kind
    }

    /// `LINE: error: message`.
    public var description: String { "\(line): \(severity.rawValue): \(message)" }
}
