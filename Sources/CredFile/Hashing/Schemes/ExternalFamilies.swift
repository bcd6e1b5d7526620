/// The peer hash families verified through libxcrypt, libargon2 and OpenSSL's scrypt and
/// digests (SPEC §3.2), as the registry (``SecretSyntax``) tries them.
enum ExternalFamilies {
    /// Every parser, in the order they must be tried. Each answers `.notThisFamily` for
    /// any other syntax, so their order among themselves matters only where prefixes
    /// overlap: none do here (`$6$`/`$7$` are left to mosquitto's parser by syntax, see
    /// ``CryptFamily/parse(_:)``; `$apr1$` before the bare crypt parser is not needed,
    /// since that one does not claim `$apr1$`, but it is kept first for clarity).
    static let parsers: [@Sendable (ArraySlice<UInt8>) -> HashParse] = [
        DigestFamilies.parseApr1,  // $apr1$
        Argon2Family.parse,  // $argon2id$, $argon2i$, $argon2d$
        CryptFamily.parse,  // $2a$ $2b$ $2y$ $5$ $6$ $y$ $7$ $1$
        CryptFamily.parseLDAPCrypt,  // {CRYPT}
        CryptFamily.parseDovecotCrypt,  // {SHA512-CRYPT} {SHA256-CRYPT} {MD5-CRYPT} {BLF-CRYPT}
        Argon2Family.parseDovecot,  // {ARGON2ID} {ARGON2I}
        DigestFamilies.parseLDAPDigest,  // {SHA} {SSHA} {SSHA256} {SSHA512}
        Argon2Family.parseDjango,  // argon2$argon2id$…
        DjangoFamilies.parseBcrypt,  // bcrypt$… bcrypt_sha256$…
        DjangoFamilies.parseDjangoScrypt,  // scrypt$…
        DigestFamilies.parseDjangoDigest,  // md5$… sha1$…
        DjangoFamilies.parseWerkzeugScrypt,  // scrypt:N:r:p$…
    ]

    /// The first answer other than `.notThisFamily`, or `.notThisFamily`.
    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        for parser in parsers {
            let answer = parser(secret)
            if case .notThisFamily = answer { continue }
            return answer
        }
        return .notThisFamily
    }
}

/// The work of one verification of each peer scheme in PBKDF2-HMAC-SHA256 rounds, for
/// ``KnownHash/estimatedWork`` (`check`'s warning about entries costlier than the policy).
/// Measured once by Benchmarks/peer-work.sh (see its output in that folder) against
/// credfile's own PBKDF2-HMAC-SHA256 loop on the development machine (Debian 12, 2 cores,
/// SHA-NI, under load from other builds: ±20 %).
enum PeerWork {
    /// One fast digest (MD5, SHA-1, SHA-256, SHA-512) of a short input: about two
    /// compression calls, like one PBKDF2 round.
    static let oneDigest = 1.0
    /// bcrypt, per unit of 2^cost.
    static let bcryptPerCostUnit = 1.0
    /// sha256-crypt, per round.
    static let sha256CryptPerRound = 1.0
    /// sha512-crypt, per round.
    static let sha512CryptPerRound = 1.0
    /// yescrypt, per N·r.
    static let yescryptPerNr = 1.0
    /// scrypt (OpenSSL's and libxcrypt's), per N·r·p.
    static let scryptPerNrp = 1.0
    /// argon2, per KiB of memory and pass.
    static let argon2PerKiBPass = 1.0
    /// md5crypt and apr1 (1,000 fixed rounds of MD5).
    static let md5Crypt = 1.0
    /// DES crypt (25 DES encryptions).
    static let desCrypt = 1.0
}
