/// The one home of secret syntax (SPEC §2, §3.2): what the bytes after the first comma
/// are — plaintext, a hash of a known scheme, an unsupported hash, or malformed. Every
/// other place (the line classifier, password rules, the CLI) asks here.
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

/// Classifies secrets. New hash schemes plug in here, not into the line classifier.
enum SecretSyntax {
    /// Plaintext unless it has hash syntax (`$…` or `{SCHEME}…`).
    static func classify(_ secret: ArraySlice<UInt8>) -> StoredSecret {
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
        if case .plaintext = classify(ArraySlice(secret)) { return false }
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

}
