/// Django's `bcrypt$`, `bcrypt_sha256$` and `scrypt$` hashers and Werkzeug's
/// `scrypt:N:r:p$` (SPEC §3.2). Django's `argon2$` is in Argon2Family.swift, its
/// `md5$`/`sha1$` in DigestFamilies.swift.
struct DjangoBcryptHash: KnownHash {
    /// The bcrypt string after `bcrypt$` or `bcrypt_sha256$`.
    let inner: CryptHash
    /// True for `bcrypt_sha256$`: bcrypt of the hex SHA-256 of the password (Django 5.2's
    /// BCryptSHA256PasswordHasher: `hexlify(sha256(password).digest())`).
    let prehashed: Bool

    var scheme: String { prehashed ? "django bcrypt_sha256" : "django bcrypt" }
    var cost: Int? { inner.cost }
    var isWeak: Bool { false }
    var estimatedWork: Double { inner.estimatedWork + (prehashed ? PeerWork.oneDigest : 0) }
    var estimatedMemory: Int { inner.estimatedMemory }

    func verify(_ password: SecretBytes) throws -> Bool {
        guard prehashed else { return try inner.verify(password) }
        let digest = try password.withUnsafeBytes { try PeerDigest.sha256.digest($0) }
        let hex = SecretBytes(digest.withUnsafeBytes { PeerText.lowercaseHexText($0) })
        return try inner.verify(hex)
    }
}

/// scrypt through OpenSSL's `EVP_KDF` "SCRYPT": Django's `scrypt$N$salt$r$p$base64`
/// and Werkzeug's `scrypt:N:r:p$salt$hex`, both with the salt's text as its bytes.
struct ScryptHash: KnownHash {
    let n: UInt64
    let r: Int
    let p: Int
    let salt: [UInt8]
    let key: [UInt8]
    /// `django scrypt` or `werkzeug scrypt`.
    let scheme: String

    var cost: Int? { nil }
    var isWeak: Bool { false }
    var estimatedWork: Double { PeerWork.scryptPerNrp * Double(n) * Double(r) * Double(p) }
    /// OpenSSL's B (128·r·p) and V (128·r·(N + 2)).
    var estimatedMemory: Int { Int(min(Double(Int.max), 128 * Double(r) * (Double(n) + Double(p) + 2))) }

    func verify(_ password: SecretBytes) throws -> Bool {
        let computed = try PeerDigest.scrypt(
            password: password, salt: salt, n: n, r: UInt32(r), p: UInt32(p), count: key.count)
        return computed.withUnsafeBytes { c in key.withUnsafeBytes { OpenSSL.constantTimeEqual(c, $0) } }
    }
}

/// Django `bcrypt$$2b$12$…` and `bcrypt_sha256$$2b$12$…`: the algorithm name and `$`,
/// then a bcrypt string (with its own leading `$`).
enum DjangoBcryptFamily: HashFamily {
    static let name = "django bcrypt"
    static let prefixes: [HashPrefix] = [.exact("bcrypt_sha256$"), .exact("bcrypt$")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let prehashed: Bool
        let inner: ArraySlice<UInt8>
        if secret.starts(with: "bcrypt_sha256$".utf8) {
            prehashed = true
            inner = secret.dropFirst("bcrypt_sha256$".utf8.count)
        } else if secret.starts(with: "bcrypt$".utf8) {
            prehashed = false
            inner = secret.dropFirst("bcrypt$".utf8.count)
        } else {
            return .notThisFamily
        }
        let name = prehashed ? "bcrypt_sha256" : "bcrypt"
        guard inner.starts(with: "$2a$".utf8) || inner.starts(with: "$2b$".utf8) || inner.starts(with: "$2y$".utf8)
        else {
            return .malformed(reason: "django \(name) hash does not hold a bcrypt string")
        }
        switch CryptFamily.parseCrypt(inner) {
        case .hash(let hash as CryptHash): return .hash(DjangoBcryptHash(inner: hash, prehashed: prehashed))
        case .malformed(let reason): return .malformed(reason: "django \(name): \(reason)")
        default: return .malformed(reason: "django \(name) hash does not hold a bcrypt string")
        }
    }

}

/// Django `scrypt$N$salt$r$p$hash` (ScryptPasswordHasher.encode's order): hash the padded
/// base64 of a 64-byte key.
enum DjangoScryptFamily: HashFamily {
    static let name = "django scrypt"
    static let prefixes: [HashPrefix] = [.exact("scrypt$")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let fields = PeerText.dollarFields(secret)
        guard fields.count == 6 else { return .malformed(reason: "django scrypt hash does not have 6 fields") }
        guard DjangoText.isSalt(fields[2]) else {
            return .malformed(reason: "django scrypt salt is not 1 to 1024 printable characters")
        }
        let parameters: (n: UInt64, r: Int, p: Int)
        switch DjangoText.scryptParameters(fields[1], fields[3], fields[4]) {
        case .success(let value): parameters = value
        case .failure(let error): return .malformed(reason: "django scrypt \(error.reason)")
        }
        guard let key = PeerText.base64(fields[5], padded: true), key.count == 64 else {
            return .malformed(reason: "django scrypt hash is not the base64 of 64 bytes")
        }
        return .hash(
            ScryptHash(
                n: parameters.n, r: parameters.r, p: parameters.p, salt: Array(fields[2]), key: key,
                scheme: "django scrypt"))
    }

}

/// Werkzeug `scrypt:N:r:p$salt$hex` (generate_password_hash(method="scrypt")): a 64-byte
/// key in lower-case hex. Hash syntax only with a `$` (SPEC §2).
enum WerkzeugScryptFamily: HashFamily {
    static let name = "werkzeug scrypt"
    static let prefixes: [HashPrefix] = [.exact("scrypt:")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        guard secret.contains(UInt8(ascii: "$")) else { return .notThisFamily }
        let fields = PeerText.dollarFields(secret)
        guard fields.count == 3 else { return .malformed(reason: "werkzeug scrypt hash does not have 3 fields") }
        let method = fields[0].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard method.count == 4 else { return .malformed(reason: "werkzeug scrypt method is not scrypt:N:r:p") }
        let parameters: (n: UInt64, r: Int, p: Int)
        switch DjangoText.scryptParameters(method[1], method[2], method[3]) {
        case .success(let value): parameters = value
        case .failure(let error): return .malformed(reason: "werkzeug scrypt \(error.reason)")
        }
        guard DjangoText.isSalt(fields[1]) else {
            return .malformed(reason: "werkzeug scrypt salt is not 1 to 1024 printable characters")
        }
        guard let key = PeerText.lowercaseHex(fields[2]), key.count == 64 else {
            return .malformed(reason: "werkzeug scrypt hash is not 128 lower-case hex digits")
        }
        return .hash(
            ScryptHash(
                n: parameters.n, r: parameters.r, p: parameters.p, salt: Array(fields[1]), key: key,
                scheme: "werkzeug scrypt"))
    }

}

/// The fields Django's and Werkzeug's scrypt and digest hashers share.
enum DjangoText {
    struct ParameterError: Error {
        let reason: String
    }

    /// N (a power of two from 2), r and p (from 1), decimal, within OpenSSL's own bounds
    /// for scrypt (`kdf_scrypt.c`): p·r below 2^30, N below 2^(16·r), and 128·r·(N + 2)
    /// representable; what N·r·p costs is the cost limits' to judge (SPEC §3.1).
    static func scryptParameters(
        _ nText: ArraySlice<UInt8>, _ rText: ArraySlice<UInt8>, _ pText: ArraySlice<UInt8>
    ) -> Result<(n: UInt64, r: Int, p: Int), ParameterError> {
        let bound = (1 << 30) - 1
        guard let n = PeerText.decimal(nText, maximum: Int.max / 2), let r = PeerText.decimal(rText, maximum: bound),
            let p = PeerText.decimal(pText, maximum: bound)
        else { return .failure(.init(reason: "parameters are not decimal numbers within scrypt's bounds")) }
        guard n >= 2, n & (n - 1) == 0, r >= 1, p >= 1 else {
            return .failure(.init(reason: "N is not a power of two or r, p below 1"))
        }
        guard p <= bound / r, 16 * r > 63 || n < 1 << (16 * r), n + 2 <= Int.max / 128 / r else {
            return .failure(.init(reason: "N, r and p are outside scrypt's bounds"))
        }
        return .success((UInt64(n), r, p))
    }

    /// A Django or Werkzeug salt: 1–1,024 printable ASCII characters other than `$`
    /// (Django refuses `$` in a salt; both write letters and digits).
    static func isSalt(_ salt: ArraySlice<UInt8>) -> Bool {
        !salt.isEmpty && salt.count <= PeerLimits.maximumSaltCount
            && salt.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "$") }
    }
}
