/// A PBKDF2 hash in passlib's format (SPEC §3):
///
///     $pbkdf2-sha256$<rounds>$<salt>$<checksum>
///     $pbkdf2-sha512$<rounds>$<salt>$<checksum>
///
/// `rounds` is decimal without leading zeros, 1…2,147,483,647 (what one login may cost is
/// the cost limits' to judge, ``CostLimits``); `salt` (0…1,024 bytes) and
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
    public static let maximumSaltCount = PeerLimits.maximumSaltCount

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
        try Self.checkRanges(algorithm: algorithm, rounds: rounds, saltCount: salt.count, checksumCount: checksum.count)
        self.algorithm = algorithm
        self.rounds = rounds
        self.salt = salt
        self.checksum = checksum
    }

    /// What a hash says besides its salt and checksum: the PRF and the rounds, all that
    /// `check` and `list` judge it by.
    struct Header: Equatable, Sendable, CustomStringConvertible {
        /// The PRF.
        let algorithm: HashAlgorithm
        /// The PBKDF2 iteration count.
        let rounds: Int
        /// `pbkdf2-sha256 1200000`.
        var description: String { "\(algorithm.identifier) \(rounds)" }
    }

    /// The rounds and PRF of this hash.
    var header: Header { Header(algorithm: algorithm, rounds: rounds) }

    /// Checks every rule of the one accepted spelling without decoding anything, and
    /// returns the header with the ranges of the salt and checksum text: the one
    /// statement of the format, for ``init(parsing:)`` and for readers that need only
    /// the header (a file of a million hashes is judged without a million decodes).
    /// - Throws: ``ParseError`` saying which part is wrong, the same as
    ///   ``init(parsing:)`` would.
    static func validate(_ text: UnsafeRawBufferPointer) throws(ParseError) -> (
        header: Header, salt: Range<Int>, checksum: Range<Int>
    ) {
        if let valid = wellFormed(text) { return valid }
        return try validateStepByStep(text)
    }

    /// ``validate(_:)`` one rule at a time, in the order of the error messages.
    static func validateStepByStep(_ text: UnsafeRawBufferPointer) throws(ParseError) -> (
        header: Header, salt: Range<Int>, checksum: Range<Int>
    ) {
        let dollar = UInt8(ascii: "$")
        // `$id$rounds$salt$checksum`: exactly four dollars (found by memchr), the first
        // at the start.
        var positions = (0, 0, 0, 0)
        var found = 0
        var from = 0
        while let index = Bytes.index(of: dollar, in: text, from: from, to: text.count) {
            switch found {
            case 0: positions.0 = index
            case 1: positions.1 = index
            case 2: positions.2 = index
            case 3: positions.3 = index
            default: throw ParseError(reason: "a pbkdf2 hash has the form $pbkdf2-sha256$rounds$salt$checksum")
            }
            found += 1
            from = index + 1
        }
        guard found == 4, positions.0 == 0 else {
            throw ParseError(reason: "a pbkdf2 hash has the form $pbkdf2-sha256$rounds$salt$checksum")
        }
        let dollars = positions
        let identifier = UnsafeRawBufferPointer(rebasing: text[1..<dollars.1])
        let algorithm: HashAlgorithm
        if Bytes.equals(identifier, "pbkdf2-sha256") {  // HashAlgorithm.identifier, as StaticStrings
            algorithm = .sha256
        } else if Bytes.equals(identifier, "pbkdf2-sha512") {
            algorithm = .sha512
        } else {
            throw ParseError(reason: "unsupported pbkdf2 variant (expected pbkdf2-sha256 or pbkdf2-sha512)")
        }
        let digits = UnsafeRawBufferPointer(rebasing: text[(dollars.1 + 1)..<dollars.2])
        guard PeerText.isCanonicalDecimal(digits) else {
            throw ParseError(reason: "rounds must be a decimal number without leading zeros")
        }
        guard let rounds = PeerText.decimal(digits, maximum: PeerLimits.maximumRounds) else {
            throw ParseError(reason: "rounds must be between 1 and 2147483647")
        }
        let salt = (dollars.2 + 1)..<dollars.3
        let checksum = (dollars.3 + 1)..<text.count
        guard let saltCount = AdaptedBase64.canonicalCount(UnsafeRawBufferPointer(rebasing: text[salt])) else {
            throw ParseError(reason: "salt is not canonical adapted base64")
        }
        guard let checksumCount = AdaptedBase64.canonicalCount(UnsafeRawBufferPointer(rebasing: text[checksum])) else {
            throw ParseError(reason: "checksum is not canonical adapted base64")
        }
        try checkRanges(algorithm: algorithm, rounds: rounds, saltCount: saltCount, checksumCount: checksumCount)
        return (Header(algorithm: algorithm, rounds: rounds), salt, checksum)
    }

    /// The common case of ``validate(_:)`` in one pass, for the per-line loops over a
    /// million hashes: the dollars are found while the rounds, salt and checksum are
    /// read, instead of five `memchr` calls and then a pass per part. Nil for anything
    /// it does not accept whole; `validate` then reads the text step by step, accepts
    /// exactly what this accepts, and says what is wrong with the rest.
    static func wellFormed(_ text: UnsafeRawBufferPointer) -> (
        header: Header, salt: Range<Int>, checksum: Range<Int>
    )? {
        let dollar = UInt8(ascii: "$")
        let start = "$pbkdf2-sha256$".utf8.count  // where the rounds start
        guard text.count > start, Bytes.hasPrefix(text, "$pbkdf2-sha"), text[start - 1] == dollar else {
            return nil
        }
        let variant = UnsafeRawBufferPointer(rebasing: text[("$pbkdf2-sha".utf8.count)..<(start - 1)])
        let algorithm: HashAlgorithm
        if Bytes.equals(variant, "256") {
            algorithm = .sha256
        } else if Bytes.equals(variant, "512") {
            algorithm = .sha512
        } else {
            return nil
        }
        var index = start
        var rounds = 0
        while index < text.count, index - start < 11, text[index] &- 0x30 < 10 {
            rounds = rounds * 10 + Int(text[index] &- 0x30)
            index += 1
        }
        let digits = index - start
        guard (1...10).contains(digits), digits == 1 || text[start] != UInt8(ascii: "0"), index < text.count,
            text[index] == dollar
        else { return nil }
        return AdaptedBase64.withValues { values in
            // No `$` is in the alphabet: the salt ends at the fourth dollar, the checksum
            // at the end of the text.
            let salt = (index + 1)..<AdaptedBase64.alphabetEnd(of: text, from: index + 1)
            guard salt.upperBound < text.count, text[salt.upperBound] == dollar else { return nil }
            let checksum = (salt.upperBound + 1)..<text.count
            guard AdaptedBase64.alphabetEnd(of: text, from: checksum.lowerBound) == text.count,
                let saltCount = Base64Core.canonicalCount(
                    ofAlphabetText: UnsafeRawBufferPointer(rebasing: text[salt]), values: values),
                let checksumCount = Base64Core.canonicalCount(
                    ofAlphabetText: UnsafeRawBufferPointer(rebasing: text[checksum]), values: values),
                (try? checkRanges(
                    algorithm: algorithm, rounds: rounds, saltCount: saltCount, checksumCount: checksumCount)) != nil
            else { return nil }
            return (Header(algorithm: algorithm, rounds: rounds), salt, checksum)
        }
    }

    /// The ranges every hash keeps: rounds, salt length, checksum length.
    private static func checkRanges(algorithm: HashAlgorithm, rounds: Int, saltCount: Int, checksumCount: Int)
        throws(ParseError)
    {
        guard PeerLimits.rounds.contains(rounds) else {
            throw ParseError(reason: "rounds must be between 1 and 2147483647")
        }
        guard saltCount <= Self.maximumSaltCount else {
            throw ParseError(reason: "salt is longer than 1024 bytes")
        }
        guard checksumCount == algorithm.digestCount else {
            throw ParseError(reason: "checksum is \(checksumCount) bytes, expected \(algorithm.digestCount)")
        }
    }

    /// Parses the one accepted spelling of a hash.
    /// - Throws: ``ParseError`` saying which part is wrong.
    public init(parsing text: some Collection<UInt8>) throws(ParseError) {
        let bytes = Array(text)
        let checked = bytes.withUnsafeBytes { raw in Result { () throws(ParseError) in try Self.validate(raw) } }
        let (header, salt, checksum) = try checked.get()
        // Valid, so both decode (the force-unwraps cannot fail).
        let parsed = (header, AdaptedBase64.decode(bytes[salt])!, AdaptedBase64.decode(bytes[checksum])!)
        self.algorithm = parsed.0.algorithm
        self.rounds = parsed.0.rounds
        self.salt = parsed.1
        self.checksum = parsed.2
    }

    /// Parses a hash string, or returns nil.
    public init?(_ string: String) {
        guard let hash = try? PasswordHash(parsing: string.utf8) else { return nil }
        self = hash
    }

    /// Hashes `password` with a fresh 16-byte salt from `RAND_bytes`, at the policy's
    /// PRF and rounds (``HashPolicy/hash(_:)`` makes the hash of any policy).
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails; ``CredFileError/Code/usage``
    ///   when the policy's algorithm is argon2id, which is not PBKDF2.
    public init(hashing password: Password, policy: HashPolicy) throws {
        guard let digest = policy.algorithm.pbkdf2Digest else {
            throw CredFileError.usage("the policy's algorithm is argon2id, not PBKDF2")
        }
        let salt = try OpenSSL.randomBytes(count: HashPolicy.saltCount)
        let key = try PBKDF2.deriveKey(
            digest, password: password.bytes, salt: salt, rounds: policy.rounds, count: digest.digestCount)
        try self.init(algorithm: digest, rounds: policy.rounds, salt: salt, checksum: key.withUnsafeBytes { Array($0) })
    }

    /// Hashes two passwords, each with a fresh 16-byte salt: what two
    /// ``init(hashing:policy:)`` calls give, at once
    /// (``PBKDF2/deriveKeys(_:_:_:rounds:count:using:)`` interleaves them where it can).
    /// For batches.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    static func hashing(
        _ first: Password, _ second: Password, policy: HashPolicy
    ) throws -> (PasswordHash, PasswordHash) {
        guard let digest = policy.algorithm.pbkdf2Digest else {
            throw CredFileError.usage("the policy's algorithm is argon2id, not PBKDF2")
        }
        let salts = (
            try OpenSSL.randomBytes(count: HashPolicy.saltCount), try OpenSSL.randomBytes(count: HashPolicy.saltCount)
        )
        let keys = try PBKDF2.deriveKeys(
            digest, (first.bytes, salts.0), (second.bytes, salts.1), rounds: policy.rounds, count: digest.digestCount)
        return (
            try PasswordHash(
                algorithm: digest, rounds: policy.rounds, salt: salts.0, checksum: keys.0.withUnsafeBytes { Array($0) }),
            try PasswordHash(
                algorithm: digest, rounds: policy.rounds, salt: salts.1, checksum: keys.1.withUnsafeBytes { Array($0) })
        )
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
    public var description: String { header.description }
}
