/// The work of one verification of each peer scheme in PBKDF2-HMAC-SHA256 rounds, for
/// ``KnownHash/estimatedWork`` (`check`'s warning about entries costlier than the policy;
/// the login's timing padding measures instead of trusting these).
///
/// Measured by `Benchmarks/peer-work.sh` against one round of credfile's own
/// PBKDF2-HMAC-SHA256 loop (the policy's; OpenSSL's PKCS5_PBKDF2_HMAC round is 4.4 of
/// them), each scheme timed back to back with that loop, median of 7 pairs, two runs
/// averaged: Debian 12, 2 cores with SHA-NI, load average 14 from other builds, so
/// ±20 %.
enum PeerWork {
    /// One EVP_Digest (MD5, SHA-1, SHA-256, SHA-512) of a short input, with its context
    /// set-up: {SHA}, {SSHA*}, Django md5/sha1 (measured 7.6–8.4).
    static let oneDigest = 8.0
    /// bcrypt, per unit of 2^cost (measured 429–473 at cost 6).
    static let bcryptPerCostUnit = 450.0
    /// sha256-crypt, per round (measured 4.6–5.4).
    static let sha256CryptPerRound = 5.0
    /// sha512-crypt, per round (measured 2.4–3.1).
    static let sha512CryptPerRound = 2.8
    /// yescrypt, per N·r (measured 1.6–1.9 at N 1024, r 32).
    static let yescryptPerNr = 1.8
    /// libxcrypt's `$7$` scrypt, per N·r·p (measured 2.7–2.9 at N 4096, r 32).
    static let scryptCryptPerNrp = 2.8
    /// OpenSSL's EVP_KDF scrypt (Django, Werkzeug), per N·r·p (measured 4.2–4.6 at N 16384, r 8).
    static let scryptPerNrp = 4.4
    /// argon2, per KiB of memory and pass (measured 9.9–11.5 at m 16384, t 1, one thread).
    static let argon2PerKiBPass = 10.7
    /// md5crypt through libxcrypt (1,000 fixed rounds of MD5; measured 1,111–1,407).
    static let md5Crypt = 1250.0
    /// apr1 through credfile's Swift code over EVP_Digest: 1,002 digests (estimated from
    /// ``oneDigest``, not measured on its own).
    static let apr1 = 1002 * oneDigest
    /// DES crypt (25 DES encryptions; measured 12–13); bigcrypt is one per 8-byte block,
    /// BSDi one per 25 of its iterations.
    static let desCrypt = 12.0
    /// SunMD5, per MD5 round (half of them hash Hamlet's soliloquy too; measured 11.6).
    static let sunMD5PerRound = 11.6
    /// sha1-crypt, per HMAC-SHA1 iteration (measured 4.4).
    static let sha1CryptPerIteration = 4.4
}
