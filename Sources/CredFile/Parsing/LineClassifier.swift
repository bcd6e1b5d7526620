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

/// What an entry's secret is (SPEC §2).
public enum StoredSecret: Sendable, Equatable {
    /// A legacy plaintext password.
    case plaintext
    /// A supported, well-formed PBKDF2 hash.
    case pbkdf2(PasswordHash)
    /// A hash credfile does not verify (`$2y$`, `$6$`, `{SSHA}`, …): never authenticates.
    /// `scheme` names a known format as written; any other reads `$?$` or `{?}`, since
    /// it could be the start of a legacy password.
    case unsupportedHash(scheme: String)
    /// A broken entry: never authenticates, kept byte for byte.
    case malformed(reason: String)

    /// How the secret is stored, without the secret: `plaintext`, `pbkdf2-sha256 1200000`,
    /// `unsupported $2y$`, `malformed`.
    public var storageDescription: String {
        switch self {
        case .plaintext: "plaintext"
        case .pbkdf2(let hash): hash.description
        case .unsupportedHash(let scheme): "unsupported \(scheme)"
        case .malformed: "malformed"
        }
    }
}

/// A `username,secret` line, split at the first comma.
public struct Entry: Sendable {
    /// The raw bytes before the first comma (empty when the line has no comma).
    public let username: ArraySlice<UInt8>
    /// The raw bytes after the first comma. Internal: a secret never leaves the library.
    let secretBytes: ArraySlice<UInt8>
    /// What the secret is.
    public let secret: StoredSecret

    /// The username as text when it is valid UTF-8, for messages.
    public var name: String? { String(validating: username, as: UTF8.self) }
    /// Whether the entry can never authenticate because it is broken.
    public var isMalformed: Bool { if case .malformed = secret { true } else { false } }
    /// Whether the entry has a name, and so shadows later entries of that name.
    public var hasName: Bool { !username.isEmpty }
    /// The NFC bytes the name is compared by.
    var key: [UInt8] { Unicode.nfcBytes(ofField: username) }
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

/// Classifies the bytes of one line (without its ending) exactly as SPEC §2 says.
enum LineClassifier {
    /// The longest line, in bytes without its ending, that can be an entry.
    static let maximumLineCount = 65_536

    static func classify(_ line: ArraySlice<UInt8>) -> LineKind {
        if line.first.map({ $0 == 0x20 || $0 == 0x09 }) ?? true, line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            return .blank
        }
        if line.first == UInt8(ascii: "#") { return .comment }
        let comma = line.firstIndex(of: UInt8(ascii: ","))
        let username = line[line.startIndex..<(comma ?? line.startIndex)]
        let secretBytes = comma.map { line[($0 + 1)...] } ?? line[line.endIndex...]
        func entry(_ secret: StoredSecret) -> LineKind {
            .entry(Entry(username: username, secretBytes: secretBytes, secret: secret))
        }
        if let reason = lineProblem(line) { return entry(.malformed(reason: reason)) }
        if comma == nil { return entry(.malformed(reason: "no comma between username and secret")) }
        if username.isEmpty { return entry(.malformed(reason: "empty username")) }
        if secretBytes.isEmpty { return entry(.malformed(reason: "empty secret")) }
        return entry(classifySecret(secretBytes))
    }

    /// Length, control bytes and UTF-8, in that order; nil when the line is fine.
    static func lineProblem(_ line: ArraySlice<UInt8>) -> String? {
        if line.count > maximumLineCount {
            return "line is longer than \(maximumLineCount) bytes"
        }
        if isPrintableASCII(line) { return nil }  // the common case, eight bytes at a time
        var ascii = true
        for (column, byte) in zip(1..., line) {
            if (byte < 0x20 && byte != 0x09) || byte == 0x7F {
                return "control byte \(hex(byte)) at column \(column)"
            }
            if byte >= 0x80 { ascii = false }
        }
        if !ascii && !isValidUTF8(line) { return "not valid UTF-8" }
        return nil
    }

    /// Whether every byte is in 0x20…0x7E, tested eight bytes at a time.
    static func isPrintableASCII(_ line: ArraySlice<UInt8>) -> Bool {
        line.withUnsafeBytes { isPrintableASCII($0) }
    }

    /// Whether every byte is in 0x20…0x7E, tested eight bytes at a time.
    static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        do {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            var index = 0
            var flags: UInt64 = 0
            while index + 8 <= bytes.count {
                let x = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let del = x ^ (0x7F &* ones)
                // Some byte is >= 0x80, < 0x20 ("hasless"), or 0x7F ("haszero" of x ^ 0x7F…):
                // exact for "is there any such byte", which is all we ask.
                flags |= (x & highs) | ((x &- 0x20 &* ones) & ~x & highs) | ((del &- ones) & ~del & highs)
                index += 8
            }
            while index < bytes.count {
                let b = bytes[index]
                if b < 0x20 || b >= 0x7F { return false }
                index += 1
            }
            return flags == 0
        }
    }

    /// Plaintext unless it has hash syntax (`$…` or `{SCHEME}…`).
    static func classifySecret(_ secret: ArraySlice<UInt8>) -> StoredSecret {
        let dollar = UInt8(ascii: "$")
        if secret.first == dollar {
            if secret.starts(with: "$pbkdf2".utf8) {
                do {
                    return .pbkdf2(try PasswordHash(parsing: secret))
                } catch {
                    return .malformed(reason: "malformed pbkdf2 hash: \(error.reason)")
                }
            }
            let id = secret.dropFirst().prefix(while: isSchemeByte)
            guard !id.isEmpty, id.endIndex < secret.endIndex, secret[id.endIndex] == dollar else {
                return .malformed(reason: "secret starts with '$' but is not a $id$ hash")
            }
            let name = String(decoding: id, as: UTF8.self)
            return .unsupportedHash(scheme: knownCryptIDs.contains(name) ? "$" + name + "$" : "$?$")
        }
        if secret.first == UInt8(ascii: "{") {
            let scheme = secret.dropFirst().prefix(while: isSchemeByte)
            if !scheme.isEmpty, scheme.endIndex < secret.endIndex,
                secret[scheme.endIndex] == UInt8(ascii: "}")
            {
                let name = String(decoding: scheme, as: UTF8.self)
                return .unsupportedHash(scheme: knownLDAPSchemes.contains(name.uppercased()) ? "{" + name + "}" : "{?}")
            }
        }
        return .plaintext
    }

    /// The crypt ids of real hash formats (passlib, libxcrypt, phpass). Only these are
    /// named in a finding or a listing: the text between the `$`s of any other secret
    /// may be the start of a legacy password, and a secret is never shown.
    static let knownCryptIDs: Set<String> = [
        "1", "2", "2a", "2b", "2x", "2y", "3", "5", "6", "7", "y", "gy", "sm3", "md5", "sha1", "apr1", "P", "H",
        "argon2i", "argon2d", "argon2id", "scrypt", "bcrypt-sha256",
    ]

    /// The LDAP and Dovecot `{SCHEME}`s of real hash formats, uppercased (the schemes
    /// are case-insensitive). Any other `{…}` is not named, for the same reason.
    static let knownLDAPSchemes: Set<String> = [
        "SSHA", "SHA", "MD5", "SMD5", "CRYPT", "SHA256", "SSHA256", "SHA384", "SSHA384", "SHA512", "SSHA512",
        "PBKDF2", "PBKDF2-SHA1", "PBKDF2-SHA256", "PBKDF2-SHA512", "ARGON2", "ARGON2I", "ARGON2ID", "BCRYPT",
        "BLF-CRYPT", "MD5-CRYPT", "SHA256-CRYPT", "SHA512-CRYPT", "CLEAR", "CLEARTEXT", "PLAIN", "PLAIN-MD5",
        "LDAP-MD5", "CRAM-MD5", "DIGEST-MD5", "SCRAM-SHA-1", "SCRAM-SHA-256", "NTLM", "LANMAN",
    ]

    /// Whether a secret has hash syntax, and so can never be stored as plaintext.
    static func hasHashSyntax(_ secret: some Collection<UInt8>) -> Bool {
        if case .plaintext = classifySecret(ArraySlice(secret)) { return false }
        return true
    }

    /// Letters, digits, `.`, `_`, `-`: the bytes of a crypt id or an LDAP scheme.
    static func isSchemeByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    static func isValidUTF8(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
    }
}
