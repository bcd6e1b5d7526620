/// PBKDF2-HMAC, the one entry point every hash goes through.
///
/// Uses the fast path (precomputed HMAC states, two compression calls per round) when it
/// was built in, and OpenSSL's `PKCS5_PBKDF2_HMAC` otherwise; both give identical bytes.
enum PBKDF2 {
    /// Derives `count` bytes from a password and salt.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    static func deriveKey(
        _ algorithm: HashAlgorithm, password: SecretBytes, salt: [UInt8], rounds: Int, count: Int
    ) throws -> SecretBytes {
        try password.withUnsafeBytes { p in
            try salt.withUnsafeBytes { s in
                try deriveKey(algorithm, password: p, salt: s, rounds: rounds, count: count)
            }
        }
    }

    /// Derives `count` bytes from raw password and salt bytes.
    static func deriveKey(
        _ algorithm: HashAlgorithm, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        rounds: Int, count: Int
    ) throws -> SecretBytes {
        try SecretBytes(count: count) { out in
            try OpenSSL.pbkdf2HMAC(algorithm, password: password, salt: salt, rounds: rounds, into: out)
        }
    }
}
