/// The rules for a new username (SPEC §2): 1–255 bytes, no comma, no control
/// characters (C0, DEL, U+0080–U+009F), no leading or trailing whitespace, not
/// starting with `#`. A name that passes can never inject a second line.
public enum Username {
    /// The longest username, in UTF-8 bytes.
    public static let maximumCount = 255

    /// The rule a name breaks, as a value; ``description`` says it in English after
    /// the word "username" (`username is empty`).
    public enum Problem: Equatable, Hashable, Sendable, CustomStringConvertible {
        /// No bytes at all.
        case empty
        /// More than `limit` UTF-8 bytes.
        case tooLong(limit: Int)
        /// Not valid UTF-8.
        case invalidUTF8
        /// Holds a comma (it would end the name field).
        case comma
        /// Holds a C0 or C1 control character or DEL.
        case controlCharacter
        /// Starts or ends with whitespace.
        case edgeWhitespace
        /// Starts with `#` (the line would be a comment).
        case startsWithCommentMark

        /// `is empty`, `contains a comma`, …
        public var description: String {
            switch self {
            case .empty: "is empty"
            case .tooLong(let limit): "is longer than \(limit) bytes"
            case .invalidUTF8: "is not valid UTF-8"
            case .comma: "contains a comma"
            case .controlCharacter: "contains a control character"
            case .edgeWhitespace: "has leading or trailing whitespace"
            case .startsWithCommentMark: "starts with '#'"
            }
        }
    }

    /// Checks a new username.
    /// - Throws: ``CredFileError/Code/usage`` with ``CredFileError/refusal`` naming the
    ///   rule it breaks (never echoing the name).
    public static func validate(_ username: String) throws {
        if let problem = problem(Array(username.utf8)) { throw CredFileError(refusing: .username(problem)) }
    }

    /// Checks a new username given as bytes (as typed, before any decoding).
    /// - Throws: as ``validate(_:)``; bytes that are not UTF-8 are refused, never replaced.
    public static func validate(bytes: some Collection<UInt8>) throws {
        if let problem = problem(bytes) { throw CredFileError(refusing: .username(problem)) }
    }

    /// The rule `raw` breaks as a username, or nil.
    public static func problem(_ raw: some Collection<UInt8>) -> Problem? {
        if let answer = raw.withContiguousStorageIfAvailable({ problem(UnsafeRawBufferPointer($0)) }) { return answer }
        return Array(raw).withUnsafeBytes { problem($0) }
    }

    /// The rule `bytes` break as a username, or nil; no allocation for a printable ASCII name.
    static func problem(_ bytes: UnsafeRawBufferPointer) -> Problem? {
        // The common case: printable ASCII, where the rules are byte tests.
        if Bytes.isPrintableASCII(bytes) { return problem(ofPrintableASCII: bytes) }
        guard !bytes.isEmpty else { return .empty }
        guard bytes.count <= maximumCount else { return .tooLong(limit: maximumCount) }
        guard let name = String(validating: bytes, as: UTF8.self) else { return .invalidUTF8 }
        let scalars = name.unicodeScalars
        if scalars.contains(",") { return .comma }
        if scalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return .controlCharacter
        }
        // Non-empty (checked above), so `first` and `last` exist.
        if let first = scalars.first, let last = scalars.last,
            first.properties.isWhitespace || last.properties.isWhitespace
        {
            return .edgeWhitespace
        }
        // The byte, not the Character: "#\u{301}" is one Character that is not "#", yet
        // a line starting with it is a comment.
        if FileSyntax.isComment(bytes) { return .startsWithCommentMark }
        return nil
    }

    /// ``problem(_:)`` of bytes known to be printable ASCII (a line that is, checked
    /// once for the whole line).
    static func problem(ofPrintableASCII bytes: UnsafeRawBufferPointer) -> Problem? {
        guard !bytes.isEmpty else { return .empty }
        guard bytes.count <= maximumCount else { return .tooLong(limit: maximumCount) }
        if bytes.contains(FileSyntax.comma) { return .comma }
        if bytes.first == FileSyntax.space || bytes.last == FileSyntax.space { return .edgeWhitespace }
        return FileSyntax.isComment(bytes) ? .startsWithCommentMark : nil
    }
}

/// The rules for a new password (SPEC §2): 1–4096 bytes, no NUL, CR or LF.
public enum PasswordRules {
    /// The longest password, in UTF-8 bytes after NFC.
    public static let maximumCount = 4096

    /// The rule a password breaks, as a value; ``description`` says it in English.
    public enum Problem: Equatable, Hashable, Sendable, CustomStringConvertible {
        /// No bytes at all.
        case empty
        /// More than `limit` bytes.
        case tooLong(limit: Int)
        /// Holds a NUL, CR or LF.
        case forbiddenByte
        /// Stored as plaintext, it would read as a hash.
        case plaintextLooksLikeHash
        /// Stored as plaintext, it would make the line malformed (a control byte or invalid UTF-8).
        case plaintextNotText

        /// `password is empty`, …
        public var description: String {
            switch self {
            case .empty: "password is empty"
            case .tooLong(let limit): "password is longer than \(limit) bytes"
            case .forbiddenByte: "password contains a NUL, CR or LF"
            case .plaintextLooksLikeHash:
                "a plaintext password must not start with '$' or '{SCHEME}', or be '!' before such a hash (it would read as a hash or a locked entry)"
            case .plaintextNotText: "a plaintext password must be valid UTF-8 without control characters"
            }
        }
    }

    /// Checks a new password; with `plaintext`, it must also not look like a hash.
    /// - Throws: ``CredFileError/Code/usage`` with ``CredFileError/refusal`` naming the
    ///   rule it breaks (never echoing the password).
    public static func validate(_ password: Password, plaintext: Bool = false) throws {
        if let problem = password.bytes.withUnsafeBytes({ problem($0, plaintext: plaintext) }) {
            throw CredFileError(refusing: .password(problem))
        }
    }

    /// The rule a secret's bytes break as a new password, or nil.
    static func problem(_ bytes: UnsafeRawBufferPointer, plaintext: Bool) -> Problem? {
        guard !bytes.isEmpty else { return .empty }
        guard bytes.count <= maximumCount else { return .tooLong(limit: maximumCount) }
        guard !bytes.contains(where: { $0 == 0 || $0 == FileSyntax.lf || $0 == FileSyntax.cr }) else {
            return .forbiddenByte
        }
        if plaintext {
            if SecretSyntax.hasHashSyntax(bytes) { return .plaintextLooksLikeHash }
            if FileSyntax.lineProblem(ArraySlice(bytes)) != nil { return .plaintextNotText }
        }
        return nil
    }
}
