// libcrypto through CCredFile's checked wrappers (Sources/CCredFile/openssl.c). Like
// every file that imports a C module, it lives in Internals/ (Scripts/layers.sh checks
// that). Every call checks its return code; no C type leaves this file.
internal import CCredFile

/// A hash behind PBKDF2's HMAC or a plain digest: SHA-1 only for peers' hashes
/// (passlib `$pbkdf2$`, LDAP `{PBKDF2}`, Django `pbkdf2_sha1`, Dovecot), never for new ones.
enum PRF: Sendable, CustomStringConvertible {
    case sha1, sha256, sha512

    /// Bytes of the digest: 20, 32 or 64.
    var digestCount: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha512: 64
        }
    }

    /// `sha1`, `sha256`, `sha512`.
    var description: String {
        switch self {
        case .sha1: "sha1"
        case .sha256: "sha256"
        case .sha512: "sha512"
        }
    }

    /// The C side's `enum credfile_digest` value.
    var cDigest: Int32 {
        switch self {
        case .sha1: Int32(CREDFILE_DIGEST_SHA1.rawValue)
        case .sha256: Int32(CREDFILE_DIGEST_SHA256.rawValue)
        case .sha512: Int32(CREDFILE_DIGEST_SHA512.rawValue)
        }
    }
}

/// Thin, checked Swift wrappers over the few libcrypto functions credfile uses.
enum OpenSSL {
    /// `PKCS5_PBKDF2_HMAC` into `out`. Lengths and rounds are checked by the caller.
    ///
    /// The corresponding C function is `PKCS5_PBKDF2_HMAC`.
    static func pbkdf2HMAC(
        _ prf: PRF, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        rounds: Int, into out: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(rounds >= 1 && rounds <= Int(UInt32.max) && out.count > 0)
        let ok = credfile_pbkdf2_hmac(
            prf.cDigest, password.baseAddress, password.count, salt.baseAddress, salt.count,
            UInt32(rounds), out.baseAddress, out.count)
        guard ok == 1 else { throw CredFileError(.crypto, "OpenSSL's PKCS5_PBKDF2_HMAC failed") }
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    ///
    /// The corresponding C function is `RAND_bytes`.
    static func randomBytes(count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBytes { credfile_random_bytes($0.baseAddress, $0.count) }
        guard ok == 1 else { throw CredFileError(.crypto, "OpenSSL's RAND_bytes failed") }
        return bytes
    }

    /// True when `a` and `b` hold the same bytes; the time depends only on the lengths.
    ///
    /// The corresponding C function is `CRYPTO_memcmp`.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        return credfile_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
    }

    /// Zeroes the bytes so the compiler cannot skip it.
    ///
    /// The corresponding C function is `OPENSSL_cleanse`.
    static func cleanse(_ bytes: UnsafeMutableRawBufferPointer) {
        credfile_cleanse(bytes.baseAddress, bytes.count)
    }

    /// HMAC-SHA-256 of `data` under `key` into the 32 bytes of `out`.
    ///
    /// The corresponding C function is `HMAC`.
    static func hmacSHA256(
        key: UnsafeRawBufferPointer, _ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) {
        let written = credfile_hmac_sha256(
            key.baseAddress, key.count, data.baseAddress, data.count, out.baseAddress, out.count)
        precondition(written == 32, "HMAC-SHA-256 into 32 bytes cannot fail on valid memory")
    }

    /// The 32-byte SHA-256 digest of `data`.
    static func sha256(_ data: UnsafeRawBufferPointer) -> [UInt8] { digest(.sha256, data) }

    /// The digest of `data` (20, 32 or 64 bytes).
    ///
    /// The corresponding C function is `EVP_Digest`.
    static func digest(_ prf: PRF, _ data: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: prf.digestCount)
        let written = digest.withUnsafeMutableBytes {
            credfile_digest(prf.cDigest, data.baseAddress, data.count, $0.baseAddress, $0.count)
        }
        precondition(written == prf.digestCount, "EVP_Digest of a built-in SHA cannot fail on valid memory")
        return digest
    }

    /// The version of the libcrypto credfile runs with.
    static var version: String { String(cString: credfile_openssl_version()) }
}
