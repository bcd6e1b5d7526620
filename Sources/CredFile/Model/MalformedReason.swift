/// Why an entry is malformed (SPEC §2): it never authenticates and is kept byte for
/// byte. A value, so a caller can render it in its own words; ``description`` is the
/// English sentence. None of the reasons quotes the secret.
public enum MalformedReason: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Nothing before the first comma.
    case emptyUsername
    /// Nothing after the first comma.
    case emptySecret
    /// No comma between username and secret.
    case noComma
    /// A control byte (0x00–0x08, 0x0A–0x1F, 0x7F) at a 1-based column.
    case controlByte(UInt8, column: Int)
    /// The line is not valid UTF-8.
    case invalidUTF8
    /// The line is longer than `limit` bytes without its ending.
    case lineTooLong(limit: Int)
    /// The secret has hash syntax but does not parse; the reason comes from the hash
    /// layer (`SecretSyntax`) and never quotes the secret.
    case malformedHash(String)
    /// A well-formed hash over a cost limit (SPEC §3.1): what one login would take.
    case tooCostly(TooCostly)

    /// The English sentence, e.g. `control byte 0x01 at column 6`.
    public var description: String {
        switch self {
        case .emptyUsername: "empty username"
        case .emptySecret: "empty secret"
        case .noComma: "no comma between username and secret"
        case .controlByte(let byte, let column): "control byte \(Escaped.hexByte(byte)) at column \(column)"
        case .invalidUTF8: "not valid UTF-8"
        case .lineTooLong(let limit): "line is longer than \(limit) bytes"
        case .malformedHash(let reason): reason
        case .tooCostly(let why): why.description
        }
    }
}
