/// The work of one verification of each peer scheme in rounds of credfile's own
/// PBKDF2-HMAC-SHA256 loop, for ``KnownHash/estimatedWork``: what the cost limits judge
/// (SPEC §3.1, ``CostLimits``, turned into seconds by ``MachineRate``) and `check`'s
/// warning about entries costlier than the policy (the login's timing padding measures
/// instead of trusting these).
///
/// Measured by `Benchmarks/peer-work.sh` against one round of that loop (the #29 SHA-NI
/// loop; OpenSSL's PKCS5_PBKDF2_HMAC round is 2.7 of them), each scheme timed back to
/// back with it, median of 7 pairs, two runs of 2026-12-02 averaged: Debian 12, 2 shared
/// cores with SHA-NI, load average 10–12 from other builds, so ±30 %.
enum PeerWork {
    /// One round of OpenSSL's PKCS5_PBKDF2_HMAC-SHA256 (measured 2.65–2.75).
    static let openSSLRound = 2.7
    /// One EVP_Digest (MD5, SHA-1, SHA-256, SHA-512) of a short input, with its context
    /// set-up: {SHA}, {SSHA*}, Django md5/sha1, NT (measured 5.0–5.1; NT 2.6–3.2).
    static let oneDigest = 5.0
    /// bcrypt, per unit of 2^cost (measured 615–635 at cost 6).
    static let bcryptPerCostUnit = 625.0
    /// sha256-crypt, per round (measured 2.6–3.0).
    static let sha256CryptPerRound = 2.8
    /// sha512-crypt, per round (measured 2.0).
    static let sha512CryptPerRound = 2.0
    /// yescrypt and gost-yescrypt, per N·r of the default flavor (j, t = 0: N·4/3 blocks
    /// mixed; measured 1.24–1.29, gost 1.28–1.55 at N 1024, r 32).
    static let yescryptPerNr = 1.3
    /// libxcrypt's `$7$` scrypt, per N·r·p (measured 4.7–4.8 at N 4096, r 32).
    static let scryptCryptPerNrp = 4.8
    /// OpenSSL's EVP_KDF scrypt (Django, Werkzeug), per N·r·p (measured 3.0–3.4 at N 16384, r 8).
    static let scryptPerNrp = 3.2
    /// argon2, per KiB of memory and pass (measured 6.1–7.9 at m 16384, t 1, one thread).
    static let argon2PerKiBPass = 7.0
    /// md5crypt through libxcrypt (1,000 fixed rounds of MD5; measured 986–1,060).
    static let md5Crypt = 1020.0
    /// apr1 through credfile's Swift code over EVP_Digest: 1,002 digests (estimated from
    /// ``oneDigest``, not measured on its own).
    static let apr1 = 1002 * oneDigest
    /// DES crypt (25 DES encryptions; measured 26–38); bigcrypt is one per 8-byte block,
    /// BSDi one per 25 of its iterations (measured 0.9–1.3 per iteration).
    static let desCrypt = 30.0
    /// SunMD5, per MD5 round (half of them hash Hamlet's soliloquy too; measured 14.2).
    static let sunMD5PerRound = 14.2
    /// sha1-crypt, per HMAC-SHA1 iteration (measured 5.3–6.0).
    static let sha1CryptPerIteration = 5.6
}
