// liboath's TOTP (RFC 6238) for the second factor of SPEC §14, in Internals/ with every
// file that imports a C module (Scripts/layers.sh). No hand-written HOTP: the codes are
// liboath's. No C type leaves this file.
internal import CCredFile
internal import COath

#if canImport(Glibc)
import Glibc
#endif

/// RFC 6238 TOTP through liboath: 30-second steps from the Unix epoch, 6 digits, HMAC-SHA-1
/// unless asked otherwise (what authenticator apps use).
enum OATH {
    /// The HMAC of a code (liboath's `oath_totp_flags`).
    enum Digest: Sendable {
        case sha1, sha256, sha512

        var flags: Int32 {
            switch self {
            case .sha1: 0
            case .sha256: Int32(OATH_TOTP_HMAC_SHA256.rawValue)
            case .sha512: Int32(OATH_TOTP_HMAC_SHA512.rawValue)
            }
        }
    }

    /// The step of a code, in seconds (RFC 6238's X).
    static let stepSeconds: UInt32 = 30

    /// `oath_init`, run once per process before any other call (liboath asks for it).
    private static let initialized: Bool = oath_init() == OATH_OK.rawValue

    /// The `digits`-digit code of `secret` at `time` (seconds since 1970), or nil when
    /// liboath refuses (an empty secret, digits outside 6...8).
    ///
    /// The corresponding C function is `oath_totp_generate2`.
    static func code(
        secret: UnsafeRawBufferPointer, time: Int64, digits: Int = 6, digest: Digest = .sha1
    ) -> String? {
        guard initialized, (6...8).contains(digits), let base = secret.baseAddress, secret.count > 0 else {
            return nil
        }
        var output = [CChar](repeating: 0, count: 16)
        let answer = oath_totp_generate2(
            base.assumingMemoryBound(to: CChar.self), secret.count, time_t(time), stepSeconds, 0, UInt32(digits),
            digest.flags, &output)
        guard answer == OATH_OK.rawValue else { return nil }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The time step (RFC 6238's T: seconds since 1970 divided by 30) whose 6-digit SHA-1
    /// code is `typed`, among the steps within `window` of `time`'s, or nil when none
    /// is. Each candidate is compared with `typed` in constant time.
    ///
    /// The corresponding C function is `oath_totp_validate3_callback`.
    static func step(
        of typed: [UInt8], secret: UnsafeRawBufferPointer, time: Int64, window: Int = 1
    ) -> Int64? {
        guard initialized, typed.count == 6, let base = secret.baseAddress, secret.count > 0 else { return nil }
        var counter: UInt64 = 0
        var position: Int32 = 0
        var code = typed + [0]
        let answer = code.withUnsafeMutableBytes { handle in
            oath_totp_validate3_callback(
                base.assumingMemoryBound(to: CChar.self), secret.count, time_t(time), stepSeconds, 0, 6,
                window, &position, &counter,
                { handle, candidate in
                    // 0 when equal, as strcmp; both are 6 digits and a NUL.
                    guard let handle, let candidate else { return 1 }
                    let a = UnsafeRawBufferPointer(start: handle, count: 6)
                    let b = UnsafeRawBufferPointer(start: candidate, count: 6)
                    return OpenSSL.constantTimeEqual(a, b) ? 0 : 1
                }, handle.baseAddress)
        }
        for index in code.indices { code[index] = 0 }
        guard answer >= 0 else { return nil }
        return Int64(counter)
    }

    /// The bytes of `hex` (the users file's secret column), or nil when it is not an even
    /// number of hex digits.
    static func bytes(hex: ArraySlice<UInt8>) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension OATH {
    /// RFC 4648 base32 of `bytes` without its `=` padding (what `otpauth://` URIs carry).
    ///
    /// The corresponding C function is `oath_base32_encode`.
    static func base32(_ bytes: [UInt8]) -> String? {
        var output: UnsafeMutablePointer<CChar>?
        var length = 0
        let answer = bytes.withUnsafeBytes { raw in
            oath_base32_encode(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count, &output, &length)
        }
        guard answer == OATH_OK.rawValue, let output else { return nil }
        defer {
            memset(output, 0, length)
            free(output)
        }
        let text = UnsafeRawBufferPointer(start: output, count: length)
        return String(decoding: text.prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self)
    }
}
