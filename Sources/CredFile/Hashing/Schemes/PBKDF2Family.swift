/// credfile's own format, `$pbkdf2-sha256$` and `$pbkdf2-sha512$` (passlib's spelling,
/// ``PasswordHash``): a family like the others, first in the registry. Its fast paths stay
/// as hooks beside it: ``wellFormedHeader(_:)`` judges a million lines for `check` and
/// `list` without decoding a salt, and ``StoredSecret/pbkdf2(_:)`` keeps the parsed hash
/// in its own type, which creates hashes too.
enum PBKDF2Family: HashFamily {
    static let name = "pbkdf2 (credfile's own)"
    static let prefixes: [HashPrefix] = [.exact("$pbkdf2-sha256$"), .exact("$pbkdf2-sha512$")]
    static let malformedLabel = "malformed pbkdf2 hash"

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        do {
            return .hash(try PasswordHash(parsing: secret))
        } catch {
            return .malformed(reason: error.reason)
        }
    }

    /// The header of a well-formed hash of this family, validated fully and decoded not
    /// at all (``PasswordHash/validate(_:)``); nil for anything else, which
    /// ``SecretSyntax/classify(_:)`` then reads. Reads raw bytes only: the per-line loops
    /// call it on several threads.
    static func wellFormedHeader(_ raw: UnsafeRawBufferPointer) -> PasswordHash.Header? {
        guard Bytes.hasPrefix(raw, "$pbkdf2-sha") else { return nil }
        return (try? PasswordHash.validate(raw))?.header
    }
}

extension PasswordHash: KnownHash {
    /// `pbkdf2-sha256` or `pbkdf2-sha512`.
    public var scheme: String { algorithm.identifier }
    /// The rounds.
    public var cost: Int? { rounds }
    /// PBKDF2 still resists offline attack; too few rounds is the policy's question
    /// (``HashPolicy/isWeak(_:)-(StoredSecret)``).
    public var isWeak: Bool { false }
    /// The rounds, in SHA-256 rounds (`PRF.workPerRound`).
    public var estimatedWork: Double { Double(rounds) * algorithm.workPerRound }
    /// PBKDF2 needs no memory to speak of.
    public var estimatedMemory: Int { 0 }

    /// True when these exact password bytes derive this checksum (constant-time comparison).
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    public func verify(_ password: SecretBytes) throws -> Bool { try verify(bytes: password) }
}
