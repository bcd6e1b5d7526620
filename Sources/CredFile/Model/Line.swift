/// How a line ends. Each line keeps its own ending on rewrite.
public enum LineEnding: Sendable, Equatable {
    /// `\n`.
    case lf
    /// `\r\n`: the CR right before the LF belongs to the ending.
    case crlf
    /// The last line of a file that does not end with `\n`.
    case none

    /// The bytes of the ending.
    public var bytes: [UInt8] {
        switch self {
        case .lf: [0x0A]
        case .crlf: [0x0D, 0x0A]
        case .none: []
        }
    }
}

/// What one line of the file is.
public enum LineKind: Sendable {
    /// Empty, or only spaces and tabs.
    case blank
    /// First byte `#`.
    case comment
    /// Anything else, well-formed or not.
    case entry(Entry)
}

/// A `username,secret` line, split at the first comma.
public struct Entry: Sendable {
    /// The raw bytes of the name field, before the first comma (empty when the line has
    /// no comma). The one stored form of the name; ``usernameText`` and the comparison
    /// key are views of it.
    public let username: ArraySlice<UInt8>
    /// The raw bytes after the first comma. Internal: a secret never leaves the library.
    let secretBytes: ArraySlice<UInt8>
    /// What the secret is.
    public let secret: StoredSecret
    /// Why the entry is malformed, as a value (nil when it is not).
    public let malformation: MalformedReason?

    /// The username as text when it is valid UTF-8 (for messages: escape it with
    /// ``Escaped/name(_:)-(Collection<UInt8>)`` before printing).
    public var usernameText: String? { String(validating: username, as: UTF8.self) }
    /// The username as text when it is valid UTF-8.
    @available(*, deprecated, renamed: "usernameText")
    public var name: String? { usernameText }
    /// Whether the entry can never authenticate because it is broken.
    public var isMalformed: Bool { malformation != nil }
    /// Whether the entry has a name, and so shadows later entries of that name.
    public var hasName: Bool { !username.isEmpty }
}
