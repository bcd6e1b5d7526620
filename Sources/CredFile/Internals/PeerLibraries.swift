// The peer hash families' C calls, in Internals/ with every file that imports a C module
// (Scripts/layers.sh checks that): libxcrypt (`crypt_rn`),
// libargon2 (`argon2_ctx`) and credfile's OpenSSL wrappers for digests and scrypt
// (Sources/CCredFile/digests.c). Parameters are checked by each family's parser
// before they get here (SPEC §3.2 limits); no C type leaves this file.
internal import CArgon2
internal import CCredFile
internal import CLibcrypt

#if canImport(Glibc)
import Glibc
#endif

/// crypt(3) through libxcrypt: every method it computes (bcrypt, sha-crypt, yescrypt and
/// gost-yescrypt, `$7$` scrypt, md5crypt, DES, bigcrypt, BSDi, SunMD5, sha1-crypt, NT).
enum Libxcrypt {
    /// Whether libxcrypt on this system computes the method of `setting` (its prefix):
    /// `crypt_checksalt` answers that it does (strong, legacy or too cheap), not that it
    /// is invalid or disabled at build time.
    ///
    /// The corresponding C function is `crypt_checksalt`.
    static func computes(_ setting: ArraySlice<UInt8>) -> Bool {
        let text = Array(setting) + [0]
        let answer = text.withUnsafeBufferPointer {
            crypt_checksalt(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self))  // count >= 1
        }
        return answer == CRYPT_SALT_OK || answer == CRYPT_SALT_METHOD_LEGACY || answer == CRYPT_SALT_TOO_CHEAP
    }

    /// Whether crypt(`password`, `stored`) gives back exactly `stored`, compared in
    /// constant time over the whole string. The `struct crypt_data` (32 KiB, holding
    /// the password's derived state) is zeroed before and after.
    ///
    /// False, never an error, when libxcrypt refuses the string (its `crypt_rn` fails):
    /// the parsers refuse such strings first (``CryptSetting``), and one that slipped
    /// past them is denied like a wrong password, so no login answers differently for
    /// it than for an unknown name (SPEC §3.2; the verifier's padding keeps the time).
    /// A password holding a NUL byte cannot be passed to crypt(3) and never matches.
    ///
    /// The corresponding C function is `crypt_rn`.
    static func matches(_ password: SecretBytes, stored: ArraySlice<UInt8>) -> Bool {
        crypt(password, setting: stored) { computed in
            computed.map { output in stored.withUnsafeBytes { OpenSSL.constantTimeEqual(output, $0) } } ?? false
        }
    }

    /// crypt(`password`, `setting`) handed to `body` (nil when libxcrypt refuses the
    /// setting or the password holds a NUL byte) in the zeroed-before-and-after `struct
    /// crypt_data`, which it must not escape: the one call of `crypt_rn`.
    ///
    /// The corresponding C function is `crypt_rn`.
    static func crypt<R>(
        _ password: SecretBytes, setting stored: ArraySlice<UInt8>, _ body: (UnsafeRawBufferPointer?) -> R
    ) -> R {
        if password.withUnsafeBytes({ $0.contains(0) }) { return body(nil) }
        let phrase = SecretBytes(count: password.count + 1) { buffer in
            password.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }
        let setting = Array(stored) + [0]
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        let region = UnsafeMutableRawBufferPointer(start: data, count: size)
        region.initializeMemory(as: UInt8.self, repeating: 0)
        defer {
            OpenSSL.cleanse(region)
            data.deallocate()
        }
        let output = phrase.withUnsafeBytes { phraseBytes in
            setting.withUnsafeBufferPointer { settingBytes in
                crypt_rn(
                    phraseBytes.baseAddress!.assumingMemoryBound(to: CChar.self),  // count >= 1: never nil
                    UnsafeRawPointer(settingBytes.baseAddress!).assumingMemoryBound(to: CChar.self),  // idem
                    data, Int32(size))
            }
        }
        return body(output.map { UnsafeRawBufferPointer(start: $0, count: strlen($0)) })
    }
}

/// Argon2 through the reference library.
enum Argon2Library {
    /// The Argon2 variants of PHC strings.
    enum Variant: String, Sendable {
        case argon2d, argon2i, argon2id
    }

    /// The raw Argon2 tag of `password` (no secret, no associated data), `count` bytes.
    /// Runs on the calling thread whatever the lanes (the result depends only on the
    /// lanes, not on the threads): a login's timing padding measures the calling
    /// thread's CPU time (``Verifier``), and a server's logins already run on every core.
    /// - Throws: ``CredFileError/Code/crypto`` when libargon2 reports an error.
    ///
    /// The corresponding C function is `argon2_ctx`.
    static func hash(
        _ variant: Variant, version: UInt32, password: SecretBytes, salt: [UInt8],
        memoryKiB: UInt32, iterations: UInt32, lanes: UInt32, count: Int
    ) throws -> SecretBytes {
        // argon2_ctx wants mutable pointers; it writes to the password only with
        // ARGON2_FLAG_CLEAR_PASSWORD, which is not set. A copy keeps that promise ours.
        let passwordCopy = SecretBytes(password.withUnsafeBytes { Array($0) })
        var saltCopy = salt
        var status: Int32 = 0
        let tag = SecretBytes(count: count) { out in
            passwordCopy.withUnsafeBytes { pwd in
                saltCopy.withUnsafeMutableBytes { saltBytes in
                    var context = argon2_context()
                    context.out = out.baseAddress!.assumingMemoryBound(to: UInt8.self)  // count >= 4
                    context.outlen = UInt32(count)
                    context.pwd = UnsafeMutablePointer(mutating: pwd.baseAddress?.assumingMemoryBound(to: UInt8.self))
                    context.pwdlen = UInt32(pwd.count)
                    context.salt = saltBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    context.saltlen = UInt32(saltBytes.count)
                    context.t_cost = iterations
                    context.m_cost = memoryKiB
                    context.lanes = lanes
                    context.threads = 1
                    context.version = version
                    context.flags = 0  // ARGON2_DEFAULT_FLAGS: keep the password, no secret or data to clear
                    let type: argon2_type =
                        switch variant {
                        case .argon2d: Argon2_d
                        case .argon2i: Argon2_i
                        case .argon2id: Argon2_id
                        }
                    status = argon2_ctx(&context, type)
                }
            }
        }
        guard status == ARGON2_OK.rawValue else {
            throw CredFileError(.crypto, "libargon2 failed: \(String(cString: argon2_error_message(status)))")
        }
        return tag
    }
}

/// OpenSSL digests and scrypt (through `Sources/CCredFile/digests.c`).
enum PeerDigest: Sendable {
    case md5, sha1, sha256, sha512

    /// The digest's length in bytes.
    var count: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha256: 32
        case .sha512: 64
        }
    }

    private var code: Int32 {
        switch self {
        case .md5: Int32(CREDFILE_DIGEST_MD5.rawValue)
        case .sha1: Int32(CREDFILE_DIGEST_SHA1.rawValue)
        case .sha256: Int32(CREDFILE_DIGEST_SHA256.rawValue)
        case .sha512: Int32(CREDFILE_DIGEST_SHA512.rawValue)
        }
    }

    /// The digest of `data`, as secret bytes (it is derived from a password).
    ///
    /// The corresponding C function is `EVP_Digest`.
    func digest(_ data: UnsafeRawBufferPointer) throws -> SecretBytes {
        try SecretBytes(count: count) { out in
            let written = credfile_digest(code, data.baseAddress, data.count, out.baseAddress, out.count)
            guard written == count else { throw CredFileError(.crypto, "OpenSSL's EVP_Digest failed") }
        }
    }

    /// scrypt of `password` with `salt`, `count` bytes, through OpenSSL's `EVP_KDF`
    /// "SCRYPT". Its memory cap is set to what N, r and p need (plus OpenSSL's own
    /// overhead), so a hash the parser accepted is never refused for memory.
    ///
    /// The corresponding C function is `EVP_KDF_derive`.
    static func scrypt(
        password: SecretBytes, salt: some Collection<UInt8>, n: UInt64, r: UInt32, p: UInt32, count: Int
    ) throws -> SecretBytes {
        let salt = Array(salt)
        // OpenSSL needs 128·r·(N + p + 2) bytes and some more; the parser bounded N·r and p·r.
        let (need, overflow) = UInt64(128 * r).multipliedReportingOverflow(by: n + UInt64(p) + 16)
        let maxMemory = overflow ? UInt64.max : need
        return try SecretBytes(count: count) { out in
            let ok = password.withUnsafeBytes { pwd in
                salt.withUnsafeBytes { s in
                    credfile_scrypt(
                        pwd.baseAddress, pwd.count, s.baseAddress, s.count, n, r, p, maxMemory,
                        out.baseAddress, out.count)
                }
            }
            guard ok == 1 else { throw CredFileError(.crypto, "OpenSSL's scrypt (EVP_KDF) failed") }
        }
    }
}
