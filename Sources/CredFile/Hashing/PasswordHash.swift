/// A PBKDF2 hash in passlib's format (SPEC §3):
///
///     $pbkdf2-sha256$<rounds>$<salt>$<checksum>
///     $pbkdf2-sha512$<rounds>$<salt>$<checksum>
///
/// `rounds` is decimal without leading zeros, 1…50,000,000; `salt` (0…1,024 bytes) and
/// `checksum` (exactly the digest size) are in adapted base64. Parsing is strict, so
/// every hash has one spelling and `PasswordHash(parsing: s)?.string == s`.
public struct PasswordHash: Equatable, Sendable, CustomStringConvertible {
    /// The PRF.
    public let algorithm: HashAlgorithm
    /// The PBKDF2 iteration count.
    public let rounds: Int
    /// The salt bytes.
    public let salt: [UInt8]
    /// The derived key: 32 bytes for SHA-256, 64 for SHA-512.
    public let checksum: [UInt8]

    /// The largest salt passlib accepts, in bytes.
    public static let maximumSaltCount = 1024

    /// Why a string that starts with `$pbkdf2` is not a hash.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A sentence naming the broken part; it never quotes the string.
        public let reason: String
        /// The reason.
        public var description: String { reason }
    }

    /// Creates a hash from its parts.
    /// - Throws: ``ParseError`` when rounds, salt or checksum are out of range.
    public init(algorithm: HashAlgorithm, rounds: Int, salt: [UInt8], checksum: [UInt8]) throws(ParseError) {
        guard HashPolicy.roundsRange.contains(rounds) else {
            throw ParseError(reason: "rounds must be between 1 and 50000000")
        }
        guard salt.count <= Self.maximumSaltCount else {
            throw ParseError(reason: "salt is longer than 1024 bytes")
        }
        guard checksum.count == algorithm.digestCount else {
            throw ParseError(reason: "checksum is \(checksum.count) bytes, expected \(algorithm.digestCount)")
        }
        self.algorithm = algorithm
        self.rounds = rounds
        self.salt = salt
        self.checksum = checksum
    }

    /// Parses the one accepted spelling of a hash.
    /// - Throws: ``ParseError`` saying which part is wrong.
    public init(parsing text: some Collection<UInt8>) throws(ParseError) {
        let fields = text.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty else {
            throw ParseError(reason: "a pbkdf2 hash has the form $pbkdf2-sha256$rounds$salt$checksum")
        }
        let algorithm: HashAlgorithm
        switch String(decoding: fields[1], as: UTF8.self) {
        case HashAlgorithm.sha256.identifier: algorithm = .sha256
        case HashAlgorithm.sha512.identifier: algorithm = .sha512
        default: throw ParseError(reason: "unsupported pbkdf2 variant (expected pbkdf2-sha256 or pbkdf2-sha512)")
        }
        let digits = fields[2]
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { throw ParseError(reason: "rounds must be a decimal number without leading zeros") }
        // More than 8 digits is above the limit; never parse what could overflow.
        guard digits.count <= 8 else { throw ParseError(reason: "rounds must be between 1 and 50000000") }
        let rounds = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard let salt = AdaptedBase64.decode(fields[3]) else {
            throw ParseError(reason: "salt is not canonical adapted base64")
        }
        guard let checksum = AdaptedBase64.decode(fields[4]) else {
            throw ParseError(reason: "checksum is not canonical adapted base64")
        }
        try self.init(algorithm: algorithm, rounds: rounds, salt: salt, checksum: checksum)
    }

    /// Parses a hash string, or returns nil.
    public init?(_ string: String) {
        guard let hash = try? PasswordHash(parsing: string.utf8) else { return nil }
        self = hash
    }

    /// Hashes `password` with a fresh 16-byte salt from `RAND_bytes`.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    public init(hashing password: Password, policy: HashPolicy) throws {
        let salt = try OpenSSL.randomBytes(count: HashPolicy.saltCount)
        let key = try PBKDF2.deriveKey(
            policy.algorithm, password: password.bytes, salt: salt, rounds: policy.rounds,
            count: policy.algorithm.digestCount)
        try self.init(
            algorithm: policy.algorithm, rounds: policy.rounds, salt: salt,
            checksum: key.withUnsafeBytes { Array($0) })
    }

    /// True when `password` derives this checksum (constant-time comparison).
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    public func verify(_ password: Password) throws -> Bool { try verify(bytes: password.bytes) }

    /// True when these exact password bytes derive this checksum (constant-time comparison).
    func verify(bytes password: SecretBytes) throws -> Bool {
        let key = try PBKDF2.deriveKey(
            algorithm, password: password, salt: salt, rounds: rounds, count: checksum.count)
        return key.withUnsafeBytes { k in checksum.withUnsafeBytes { OpenSSL.constantTimeEqual(k, $0) } }
    }

    /// The hash string, e.g. `$pbkdf2-sha256$1200000$…$…`.
    public var string: String {
        "$\(algorithm.identifier)$\(rounds)$\(AdaptedBase64.encode(salt))$\(AdaptedBase64.encode(checksum))"
    }

    /// The storage kind without secrets: `pbkdf2-sha256 1200000`.
    public var description: String { "\(algorithm.identifier) \(rounds)" }
}
