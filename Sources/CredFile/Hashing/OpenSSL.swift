// The only file besides FastPBKDF2_OpenSSL.swift that imports the C boundary
// (COpenSSL: libcrypto; CCredFile: the C boundary of credfile's own code).
// Every call checks its return code; no C type leaves this file.
internal import COpenSSL
internal import CCredFile

/// Thin, checked Swift wrappers over the few libcrypto functions credfile uses.
enum OpenSSL {
    /// `PKCS5_PBKDF2_HMAC` into `out`. Lengths and rounds are checked by the caller.
    ///
    /// The corresponding C function is `PKCS5_PBKDF2_HMAC`.
    static func pbkdf2HMAC(
        _ algorithm: HashAlgorithm, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        rounds: Int, into out: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(rounds >= 1 && rounds <= Int(UInt32.max) && out.count > 0)
        let ok = credfile_pbkdf2_hmac(
            password.baseAddress, password.count, salt.baseAddress, salt.count,
            UInt32(rounds), algorithm == .sha512 ? 1 : 0, out.baseAddress, out.count)
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

    /// The 32-byte SHA-256 digest of `data`.
    static func sha256(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = digest.withUnsafeMutableBytes { credfile_sha256(data.baseAddress, data.count, $0.baseAddress) }
        precondition(ok == 1, "SHA256 cannot fail on valid memory")
        return digest
    }

    /// The version of the libcrypto credfile runs with.
    static var version: String { String(cString: credfile_openssl_version()) }
}
