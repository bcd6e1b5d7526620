/// PBKDF2-HMAC, the one entry point every hash goes through.
///
/// Uses the fast path (precomputed HMAC states, two compression calls per round) when it
/// was built in, and OpenSSL's `PKCS5_PBKDF2_HMAC` otherwise; both give identical bytes.
enum PBKDF2 {
    /// Which code computes PBKDF2. Both give identical bytes; tests and benchmarks pick
    /// one with the `using:` parameter of `deriveKey`.
    enum Implementation: Sendable, CaseIterable {
        /// ``FastPBKDF2``: precomputed HMAC states, two compression-function calls per
        /// round. Calls `PKCS5_PBKDF2_HMAC` itself when it was not built in.
        case fast
        /// OpenSSL's `PKCS5_PBKDF2_HMAC`, through ``OpenSSL/pbkdf2HMAC(_:password:salt:rounds:into:)``.
        case openSSL

        /// `.fast` when ``FastPBKDF2/isAvailable``, `.openSSL` otherwise.
        static var preferred: Implementation { FastPBKDF2.isAvailable ? .fast : .openSSL }
    }

    /// Derives `count` bytes from a password and salt.
    /// - Parameters:
    ///   - algorithm: The hash behind the HMAC.
    ///   - password: The password bytes.
    ///   - salt: The salt bytes.
    ///   - rounds: The iteration count, at least 1.
    ///   - count: The number of bytes to derive, at least 1.
    ///   - implementation: Which code computes it; ``Implementation/preferred`` unless a
    ///     test or benchmark needs one path.
    /// - Returns: The derived key, zeroed when released.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    static func deriveKey(
        _ algorithm: HashAlgorithm, password: SecretBytes, salt: [UInt8], rounds: Int, count: Int,
        using implementation: Implementation = .preferred
    ) throws -> SecretBytes {
        try deriveKey(
            prf: algorithm.prf, password: password, salt: salt, rounds: rounds, count: count, using: implementation)
    }

    /// Derives `count` bytes from a password and salt with any ``PRF`` (SHA-1 for peers).
    static func deriveKey(
        prf algorithm: PRF, password: SecretBytes, salt: [UInt8], rounds: Int, count: Int,
        using implementation: Implementation = .preferred
    ) throws -> SecretBytes {
        try password.withUnsafeBytes { p in
            try salt.withUnsafeBytes { s in
                try deriveKey(
                    prf: algorithm, password: p, salt: s, rounds: rounds, count: count,
                    using: implementation)
            }
        }
    }

    /// Derives `count` bytes from raw password and salt bytes.
    /// - Parameters:
    ///   - algorithm: The hash behind the HMAC.
    ///   - password: The password bytes.
    ///   - salt: The salt bytes.
    ///   - rounds: The iteration count, at least 1.
    ///   - count: The number of bytes to derive, at least 1.
    ///   - implementation: Which code computes it; ``Implementation/preferred`` unless a
    ///     test or benchmark needs one path.
    /// - Returns: The derived key, zeroed when released.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    static func deriveKey(
        _ algorithm: HashAlgorithm, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        rounds: Int, count: Int, using implementation: Implementation = .preferred
    ) throws -> SecretBytes {
        try deriveKey(
            prf: algorithm.prf, password: password, salt: salt, rounds: rounds, count: count, using: implementation)
    }

    /// Derives `count` bytes from raw password and salt bytes with any ``PRF``.
    static func deriveKey(
        prf algorithm: PRF, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        rounds: Int, count: Int, using implementation: Implementation = .preferred
    ) throws -> SecretBytes {
        try SecretBytes(count: count) { out in
            switch implementation {
            case .fast:
                try FastPBKDF2.deriveKey(algorithm, password: password, salt: salt, rounds: rounds, into: out)
            case .openSSL:
                try OpenSSL.pbkdf2HMAC(algorithm, password: password, salt: salt, rounds: rounds, into: out)
            }
        }
    }

    /// True when ``deriveKeys(_:_:_:rounds:count:using:)`` runs two derivations with
    /// `algorithm` interleaved on this CPU (SHA-256 on the SHA-NI loop), and so takes less
    /// time than two ``deriveKey(_:password:salt:rounds:count:using:)`` calls.
    static func interleaves(_ algorithm: HashAlgorithm) -> Bool {
        FastPBKDF2.Loop.shaExtensions.isAvailable(for: algorithm.prf)
    }

    /// Derives `count` bytes for each of two passwords with the same algorithm and rounds:
    /// the keys two ``deriveKey(_:password:salt:rounds:count:using:)`` calls give, at
    /// once. On the fast path with SHA-NI the two derivations' rounds run interleaved, so
    /// the pair takes about 1.25 single derivations' time, not 2 (README, Performance): for
    /// batches (``ParallelHasher``), never for one login.
    /// - Returns: The two derived keys, in order, zeroed when released.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    static func deriveKeys(
        _ algorithm: HashAlgorithm, _ first: (password: SecretBytes, salt: [UInt8]),
        _ second: (password: SecretBytes, salt: [UInt8]), rounds: Int, count: Int,
        using implementation: Implementation = .preferred
    ) throws -> (SecretBytes, SecretBytes) {
        guard implementation == .fast, Self.interleaves(algorithm) else {
            return (
                try deriveKey(
                    algorithm, password: first.password, salt: first.salt, rounds: rounds, count: count,
                    using: implementation),
                try deriveKey(
                    algorithm, password: second.password, salt: second.salt, rounds: rounds, count: count,
                    using: implementation)
            )
        }
        var secondKey: SecretBytes?
        let firstKey = try SecretBytes(count: count) { out1 in
            secondKey = try SecretBytes(count: count) { out2 in
                try first.password.withUnsafeBytes { p1 in
                    try first.salt.withUnsafeBytes { s1 in
                        try second.password.withUnsafeBytes { p2 in
                            try second.salt.withUnsafeBytes { s2 in
                                try FastPBKDF2.deriveKeys(algorithm.prf, rounds: rounds, (p1, s1, out1), (p2, s2, out2))
                            }
                        }
                    }
                }
            }
        }
        return (firstKey, secondKey!)  // set by the inner fill, which ran or threw
    }
}
