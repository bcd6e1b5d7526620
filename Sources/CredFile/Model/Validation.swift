/// The rules for a new username (SPEC §2): 1–255 bytes, no comma, no control
/// characters (C0, DEL, U+0080–U+009F), no leading or trailing whitespace, not
/// starting with `#`. A name that passes can never inject a second line.
public enum Username {
    /// The longest username, in UTF-8 bytes.
    public static let maximumCount = 255

    /// Checks a new username.
    /// - Throws: ``CredFileError/Code/usage`` naming the rule it breaks (never echoing it).
    public static func validate(_ username: String) throws {
        if let problem = problem(Array(username.utf8)) {
            throw CredFileError.usage("username \(problem)")
        }
    }

    /// The rule `raw` breaks as a username, or nil.
    static func problem(_ raw: some Collection<UInt8>) -> String? {
        guard !raw.isEmpty else { return "is empty" }
        guard raw.count <= maximumCount else { return "is longer than \(maximumCount) bytes" }
        if let name = raw as? ArraySlice<UInt8>, LineClassifier.isPrintableASCII(name),  // the common case
            name.first != 0x20, name.last != 0x20, !name.contains(UInt8(ascii: ","))
        {
            return name.first == UInt8(ascii: "#") ? "starts with '#'" : nil
        }
        guard let name = String(validating: Array(raw), as: UTF8.self) else { return "is not valid UTF-8" }
        let scalars = name.unicodeScalars
        if scalars.contains(",") { return "contains a comma" }
        if scalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "contains a control character"
        }
        if scalars.first!.properties.isWhitespace || scalars.last!.properties.isWhitespace {  // non-empty
            return "has leading or trailing whitespace"
        }
        // The byte, not the Character: "#\u{301}" is one Character that is not "#", yet
        // a line starting with it is a comment.
        if raw.first == UInt8(ascii: "#") { return "starts with '#'" }
        return nil
    }
}

/// The rules for a new password (SPEC §2): 1–4096 bytes, no NUL, CR or LF.
public enum PasswordRules {
    /// The longest password, in UTF-8 bytes after NFC.
    public static let maximumCount = 4096

    /// Checks a new password; with `plaintext`, it must also not look like a hash.
    /// - Throws: ``CredFileError/Code/usage`` naming the rule it breaks (never echoing it).
    public static func validate(_ password: Password, plaintext: Bool = false) throws {
        try password.bytes.withUnsafeBytes { bytes in
            guard !bytes.isEmpty else { throw CredFileError.usage("password is empty") }
            guard bytes.count <= maximumCount else {
                throw CredFileError.usage("password is longer than \(maximumCount) bytes")
            }
            guard !bytes.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) else {
                throw CredFileError.usage("password contains a NUL, CR or LF")
            }
            if plaintext {
                guard !SecretSyntax.hasHashSyntax(bytes) else {
                    throw CredFileError.usage(
                        "a plaintext password must not start with '$' or '{SCHEME}' (it would read as a hash)")
                }
                guard LineClassifier.lineProblem(ArraySlice(bytes)) == nil else {
                    throw CredFileError.usage("a plaintext password must be valid UTF-8 without control characters")
                }
            }
        }
    }
}
