/// A PBKDF2 hash written by another program (SPEC §3.2): passlib `$pbkdf2$` (SHA-1),
/// LDAP `{PBKDF2*}`, Django `pbkdf2_sha*$`, Werkzeug `pbkdf2:sha*`, mosquitto `$7$` and
/// Dovecot `{PBKDF2}$1$`. They differ only in spelling; verifying is one PBKDF2 through
/// credfile's own code and a constant-time compare.
struct PeerPBKDF2Hash: KnownHash, Equatable {
    /// The family and variant as `list` shows it: `django pbkdf2_sha256`, `ldap pbkdf2-sha256`.
    let scheme: String
    /// The hash behind the HMAC.
    let prf: PRF
    /// The iteration count, 1 to 2^31 − 1 (OpenSSL's and credfile's loop's bound).
    let rounds: Int
    /// The salt bytes exactly as the peer feeds them to PBKDF2.
    let salt: [UInt8]
    /// The derived key.
    let checksum: [UInt8]

    /// The rounds.
    var cost: Int? { rounds }
    /// PBKDF2 with any of these PRFs still resists offline attack; too few rounds is a
    /// policy question `check` answers from ``estimatedWork``.
    var isWeak: Bool { false }
    var estimatedWork: Double { Double(rounds) * prf.workPerRound }
    var estimatedMemory: Int { 0 }

    func verify(_ password: SecretBytes) throws -> Bool {
        let key = try PBKDF2.deriveKey(prf: prf, password: password, salt: salt, rounds: rounds, count: checksum.count)
        return key.withUnsafeBytes { k in checksum.withUnsafeBytes { OpenSSL.constantTimeEqual(k, $0) } }
    }

    /// Checks the peer's own limits (rounds PBKDF2 can run, salts up to 1,024 bytes, the
    /// digest's length) before any work; what the rounds cost is the cost limits' to judge.
    static func make(
        _ scheme: String, _ prf: PRF, rounds: Int?, salt: [UInt8]?, checksum: [UInt8]?,
        checksumCount: Int? = nil
    ) -> HashParse {
        guard let rounds, PeerLimits.rounds.contains(rounds) else {
            return .malformed(
                reason: "\(scheme): rounds must be a decimal number from 1 to 2147483647 without leading zeros")
        }
        guard let salt else { return .malformed(reason: "\(scheme): the salt is not in the peer's encoding") }
        guard salt.count <= PeerLimits.maximumSaltCount else {
            return .malformed(reason: "\(scheme): salt is longer than 1024 bytes")
        }
        guard let checksum, checksum.count == (checksumCount ?? prf.digestCount) else {
            return .malformed(
                reason:
                    "\(scheme): the checksum is not \(checksumCount ?? prf.digestCount) bytes in the peer's encoding")
        }
        return .hash(PeerPBKDF2Hash(scheme: scheme, prf: prf, rounds: rounds, salt: salt, checksum: checksum))
    }
}

extension PRF {
    /// One PBKDF2 round of this PRF in SHA-256 rounds, measured with credfile's fast
    /// loop on the x86-64 machine of the benchmarks (SHA-256 with SHA-NI; SHA-512 without).
    /// Only for `check`'s "costlier than the policy" warning: logins measure, not estimate.
    var workPerRound: Double {
        switch self {
        case .sha1: 1.0
        case .sha256: 1.0
        case .sha512: 3.6
        }
    }
}

extension HashAlgorithm {
    /// One round of this policy algorithm in SHA-256 rounds (see ``PRF/workPerRound``).
    var workPerRound: Double { prf.workPerRound }
}

/// passlib `pbkdf2_sha1`: `$pbkdf2$<rounds>$<ab64 salt>$<ab64 checksum>`.
/// (`$pbkdf2-sha256$`/`$pbkdf2-sha512$` are credfile's own format, ``PBKDF2Family``.)
enum PasslibPBKDF2Family: HashFamily {
    static let name = "passlib pbkdf2_sha1"
    static let prefixes: [HashPrefix] = [.exact("$pbkdf2$")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let f = PeerText.dollarFields(secret)
        guard f.count == 5 else { return .malformed(reason: "a pbkdf2 hash has the form $pbkdf2$rounds$salt$checksum") }
        return PeerPBKDF2Hash.make(
            "pbkdf2-sha1", .sha1, rounds: PeerText.decimal(f[2], maximum: PeerLimits.maximumRounds),
            salt: AdaptedBase64.decode(f[3]), checksum: AdaptedBase64.decode(f[4]))
    }
}

/// LDAP (OpenLDAP `pw-pbkdf2`, passlib `ldap_pbkdf2_*`): `{PBKDF2}`, `{PBKDF2-SHA1}`,
/// `{PBKDF2-SHA256}`, `{PBKDF2-SHA512}` then `<rounds>$<ab64 salt>$<ab64 checksum>`.
/// `{PBKDF2}$…` is Dovecot's (``DovecotPBKDF2Family``); scheme names are case-insensitive.
enum LDAPPBKDF2Family: HashFamily {
    static let name = "ldap pbkdf2"
    static let prefixes: [HashPrefix] = variants.map { .scheme($0.prefix) }
    /// `{PBKDF2}$` is left to Dovecot's family after this one.
    static let yieldsSharedPrefix = true

    private static let variants: [(prefix: String, prf: PRF, scheme: String)] = [
        ("{PBKDF2}", .sha1, "ldap pbkdf2"), ("{PBKDF2-SHA1}", .sha1, "ldap pbkdf2-sha1"),
        ("{PBKDF2-SHA256}", .sha256, "ldap pbkdf2-sha256"), ("{PBKDF2-SHA512}", .sha512, "ldap pbkdf2-sha512"),
    ]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        guard let (prefix, prf, scheme) = variants.first(where: { PeerText.hasPrefixIgnoringCase(secret, $0.prefix) })
        else { return .notThisFamily }
        let rest = secret.dropFirst(prefix.utf8.count)
        if prefix == "{PBKDF2}", rest.first == UInt8(ascii: "$") { return .notThisFamily }  // Dovecot's
        let f = PeerText.dollarFields(rest)
        guard f.count == 3 else {
            return .malformed(
                reason: "\(scheme): expected \(prefix)rounds$salt$checksum (or Dovecot's {PBKDF2}$1$salt$rounds$hex)")
        }
        return PeerPBKDF2Hash.make(
            scheme, prf, rounds: PeerText.decimal(f[0], maximum: PeerLimits.maximumRounds),
            salt: AdaptedBase64.decode(f[1]), checksum: AdaptedBase64.decode(f[2]))
    }
}

/// Dovecot: `{PBKDF2}$1$<salt>$<rounds>$<lowercase hex of 20 bytes>` (PBKDF2-HMAC-SHA1;
/// the salt text itself is the salt).
enum DovecotPBKDF2Family: HashFamily {
    static let name = "dovecot pbkdf2"
    static let prefixes: [HashPrefix] = [.scheme("{PBKDF2}$")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let f = PeerText.dollarFields(secret.dropFirst("{PBKDF2}".utf8.count))
        guard f.count == 5, f[0].isEmpty, f[1].elementsEqual("1".utf8), !f[2].isEmpty else {
            return .malformed(reason: "dovecot pbkdf2: expected {PBKDF2}$1$salt$rounds$hex")
        }
        return PeerPBKDF2Hash.make(
            "dovecot pbkdf2", .sha1, rounds: PeerText.decimal(f[3], maximum: PeerLimits.maximumRounds),
            salt: Array(f[2]), checksum: PeerText.lowercaseHex(f[4]))
    }
}

/// Django: `pbkdf2_sha256$<iterations>$<salt>$<base64 checksum>` and `pbkdf2_sha1$…`
/// (the salt text is the salt, non-empty, without `$`; the checksum padded base64).
enum DjangoPBKDF2Family: HashFamily {
    static let name = "django pbkdf2"
    static let prefixes: [HashPrefix] = variants.map { .exact($0.prefix) }

    private static let variants: [(prefix: String, prf: PRF)] = [("pbkdf2_sha256$", .sha256), ("pbkdf2_sha1$", .sha1)]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        guard let (prefix, prf) = variants.first(where: { secret.starts(with: $0.prefix.utf8) }) else {
            return .notThisFamily
        }
        let scheme = "django " + prefix.dropLast()
        let f = PeerText.dollarFields(secret)
        guard f.count == 4, !f[2].isEmpty else {
            return .malformed(reason: "\(scheme): expected \(prefix)iterations$salt$hash")
        }
        return PeerPBKDF2Hash.make(
            scheme, prf, rounds: PeerText.decimal(f[1], maximum: PeerLimits.maximumRounds),
            salt: Array(f[2]), checksum: PeerText.paddedBase64(f[3]))
    }
}

/// Werkzeug 3.1: `pbkdf2:<sha1|sha256|sha512>[:<iterations>]$<salt>$<lowercase hex>`
/// (the salt text is the salt; without iterations, Werkzeug 3.1's default 1,000,000).
/// Hash syntax only with a `$` (SPEC §2): `pbkdf2:` alone is a legacy password.
enum WerkzeugPBKDF2Family: HashFamily {
    static let name = "werkzeug pbkdf2"
    static let prefixes: [HashPrefix] = [.exact("pbkdf2:")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        guard secret.contains(UInt8(ascii: "$")) else { return .notThisFamily }
        let f = PeerText.dollarFields(secret)
        guard f.count == 3 else {
            return .malformed(reason: "werkzeug pbkdf2: expected pbkdf2:sha256:iterations$salt$hex")
        }
        let method = f[0].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        let prfs: [String: PRF] = ["sha1": .sha1, "sha256": .sha256, "sha512": .sha512]
        guard method.count == 2 || method.count == 3,
            let prf = prfs[String(decoding: method[1], as: UTF8.self)]
        else { return .malformed(reason: "werkzeug pbkdf2: expected pbkdf2:sha256, pbkdf2:sha512 or pbkdf2:sha1") }
        let rounds =
            method.count == 3 ? PeerText.decimal(method[2], maximum: PeerLimits.maximumRounds) : defaultIterations
        return PeerPBKDF2Hash.make(
            "werkzeug pbkdf2:\(prf)", prf, rounds: rounds, salt: Array(f[1]), checksum: PeerText.lowercaseHex(f[2]))
    }

    /// Werkzeug 3.1's `DEFAULT_PBKDF2_ITERATIONS`, for a method that names none.
    static let defaultIterations = 1_000_000
}

/// mosquitto 2.0: `$7$<iterations>$<base64 salt>$<base64 of 64 bytes>`, PBKDF2-HMAC-SHA512.
/// libxcrypt's scrypt also starts `$7$` but has no decimal field: anything that is not
/// exactly this is left to the crypt(3) family after it.
enum MosquittoPBKDF2Family: HashFamily {
    static let name = "mosquitto pbkdf2-sha512"
    static let prefixes: [HashPrefix] = [.exact("$7$")]
    static let yieldsSharedPrefix = true

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let f = PeerText.dollarFields(secret)
        guard f.count == 5, !f[2].isEmpty, f[2].allSatisfy({ (0x30...0x39).contains($0) }) else {
            return .notThisFamily
        }
        return PeerPBKDF2Hash.make(
            "mosquitto pbkdf2-sha512", .sha512, rounds: PeerText.decimal(f[2], maximum: PeerLimits.maximumRounds),
            salt: PeerText.paddedBase64(f[3]), checksum: PeerText.paddedBase64(f[4]))
    }
}

/// mosquitto's old `$6$<base64 salt>$<base64 hash>`: SHA-512 of the password followed by
/// the salt, one fast digest, so weak (SPEC §3.2). sha512-crypt also starts `$6$`; its
/// checksum is 86 characters of crypt's alphabet, never 88 of padded base64 of 64 bytes,
/// so anything that is not exactly this is left to the crypt(3) family after it
/// (``MosquittoSHA512Family``).
struct MosquittoSHA512Hash: KnownHash, Equatable {
    let salt: [UInt8]
    let checksum: [UInt8]

    var scheme: String { "mosquitto sha512" }
    var cost: Int? { nil }
    var isWeak: Bool { true }
    var estimatedWork: Double { 1 }
    var estimatedMemory: Int { 0 }

    func verify(_ password: SecretBytes) throws -> Bool {
        let input = SecretBytes(count: password.count + salt.count) { out in
            password.withUnsafeBytes { out.copyMemory(from: $0) }
            salt.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: out[password.count...]).copyMemory(from: $0)
            }
        }
        let digest = input.withUnsafeBytes { OpenSSL.digest(.sha512, $0) }
        return digest.withUnsafeBytes { d in checksum.withUnsafeBytes { OpenSSL.constantTimeEqual(d, $0) } }
    }

}

/// mosquitto's `$6$<base64 salt>$<base64 of 64 bytes>` (``MosquittoSHA512Hash``).
enum MosquittoSHA512Family: HashFamily {
    static let name = "mosquitto sha512"
    static let prefixes: [HashPrefix] = [.exact("$6$")]
    static let yieldsSharedPrefix = true

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let f = PeerText.dollarFields(secret)
        guard f.count == 4, let salt = PeerText.paddedBase64(f[2]), !salt.isEmpty,
            let checksum = PeerText.paddedBase64(f[3]), checksum.count == 64
        else { return .notThisFamily }
        guard salt.count <= PeerLimits.maximumSaltCount else {
            return .malformed(reason: "mosquitto sha512: salt is longer than 1024 bytes")
        }
        return .hash(MosquittoSHA512Hash(salt: salt, checksum: checksum))
    }
}
