/// The sign-in page's enrolment of a one-time-code app (SPEC §14), kept in the form and not
/// on the server: the offered secret travels in a hidden field between the page that shows
/// its QR code and the post that confirms it with a code, sealed by an HMAC under a key of
/// the state database and bound to the session, the name and an expiry, so that a form
/// from another session, another name or an hour ago saves nothing.
///
/// The secret is in the page anyway (its QR code and key, shown once); the seal only makes
/// sure the secret saved is the one this session was offered.
public struct EnrolmentSeal: Sendable {
    /// The name of the seal's key in the state database (``SessionStorage/key(named:)``).
    public static let keyName = "otp-enrolment"
    /// How long an offered secret can be confirmed: 10 minutes.
    public static let lifetime: Int64 = 600
    private let key: SecretBytes

    /// A seal under `key` (at least 32 bytes, from the state database).
    public init(key: SecretBytes) {
        precondition(key.count >= 32, "an enrolment key has at least 32 bytes")
        self.key = key
    }

    /// The hidden field's value for `enrolment`, offered at `now` in the session whose
    /// token has SHA-256 `session`: `EXPIRES.HEXSECRET.MAC`.
    public func seal(_ enrolment: SecondFactor.Enrolment, session: [UInt8], now: Int64) -> String {
        let expires = now + Self.lifetime
        let hex = enrolment.secret.withUnsafeBytes { Self.hex(Array($0)) }
        return "\(expires).\(hex).\(Base64URL.encode(mac(session, enrolment.username, expires, hex)))"
    }

    /// The enrolment a sealed field holds, when it was sealed for this session and name and
    /// has not expired; nil otherwise (compared in constant time).
    /// - Parameters:
    ///   - sealed: the hidden field's bytes.
    ///   - usernameBytes: the session's user.
    ///   - issuer: the issuer to give the enrolment (not sealed: it names the site).
    ///   - session: SHA-256 of the session's token.
    ///   - now: seconds since 1970.
    public func open(
        _ sealed: some Collection<UInt8>, usernameBytes: some Collection<UInt8>, issuer: String, session: [UInt8],
        now: Int64
    ) -> SecondFactor.Enrolment? {
        let parts = Array(sealed).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count <= 19, parts[0].allSatisfy({ (0x30...0x39).contains($0) }),
            let expires = Int64(String(decoding: parts[0], as: UTF8.self)), expires > now,
            parts[1].count == 40, let secret = OATH.bytes(hex: parts[1]), let given = Base64URL.decode(parts[2]),
            given.count == 32
        else { return nil }
        let user = Array(usernameBytes)
        let expected = mac(session, user, expires, String(decoding: parts[1], as: UTF8.self))
        guard given.withUnsafeBytes({ a in expected.withUnsafeBytes { OpenSSL.constantTimeEqual(a, $0) } }) else {
            return nil
        }
        var bytes = secret
        defer { for index in bytes.indices { bytes[index] = 0 } }
        return SecondFactor.Enrolment(username: user, secret: SecretBytes(bytes), issuer: issuer)
    }

    private func mac(_ session: [UInt8], _ user: [UInt8], _ expires: Int64, _ hex: String) -> [UInt8] {
        let message =
            Array("credfile otp-enrolment\u{0}".utf8) + session + [0] + user + [0] + Array("\(expires)\u{0}\(hex)".utf8)
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                out.withUnsafeMutableBytes { OpenSSL.hmacSHA256(key: key, data, into: $0) }
            }
        }
        return out
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var out = ""
        for byte in bytes {
            out.unicodeScalars.append(digits[Int(byte >> 4)])
            out.unicodeScalars.append(digits[Int(byte & 15)])
        }
        return out
    }
}
