/// The portal's device cookies (SPEC §11's known devices, OWASP "Slow Down Online Guessing
/// Attacks with Device Cookies"): after a good sign-in the browser gets one, naming the
/// user by a MAC, never holding a session; a later sign-in under that name that carries it
/// is counted by §9's guard on the device's own count (``KnownDevice``).
///
/// A cookie's value is base64url of 57 bytes: a version (1), the time it was issued (8
/// bytes, big-endian seconds since 1970), 16 random bytes naming the device, and an
/// HMAC-SHA-256 of those and the user's name key under a key kept in the state database
/// (``keyName``), so every host of §15 accepts it and nobody else can make one. It is
/// valid for ``lifetime`` (one year) after it was issued, for the name it was issued for.
/// The user's name is in the MAC, not in the clear: a copied cookie does not tell whose it is.
public struct DeviceCookies: Sendable {
    /// The name of the device-cookie key in the state database (``SessionStorage/key(named:)``).
    public static let keyName = "device-cookie"
    /// The cookie's name (SPEC §11).
    public static let cookieName = "__Host-credfile-device"
    /// How long a device cookie is valid after it was issued: one year, in seconds.
    public static let lifetime: Int64 = 365 * 86_400
    /// The length of a cookie's value: base64url of 57 bytes.
    public static let textCount = 76

    private static let version: UInt8 = 1
    private static let idCount = 16
    private let key: SecretBytes

    /// Device cookies signed with `key` (at least 32 bytes, from the state database).
    public init(key: SecretBytes) {
        precondition(key.count >= 32, "a device-cookie key has at least 32 bytes")
        self.key = key
    }

    /// A new device cookie's value for `username`, issued at `now`.
    /// - Parameters:
    ///   - username: the name that signed in (as typed; its NFC bytes are signed).
    ///   - now: seconds since 1970.
    /// - Returns: the value for `Set-Cookie` (76 characters of base64url).
    /// - Throws: ``CredFileError/Code/crypto`` when `RAND_bytes` fails.
    public func issue(username: some Collection<UInt8>, now: Int64) throws -> String {
        var body: [UInt8] = [Self.version]
        for shift in stride(from: 56, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: now >> shift)) }
        body += try OpenSSL.randomBytes(count: Self.idCount)
        return Base64URL.encode(body + mac(body, nameKey: FileSyntax.nameKey(username)))
    }

    /// The known device a cookie's value shows for `username` at `now`, or nil: a value
    /// that is malformed, signed with another key, issued for another name, issued more
    /// than ``lifetime`` ago or in the future (beyond a minute's clock skew) is no device,
    /// and the sign-in is counted on the name as any other.
    /// - Parameters:
    ///   - cookieValue: the cookie's value as the browser sent it.
    ///   - username: the name the sign-in is for, as typed.
    ///   - now: seconds since 1970.
    public func device(cookieValue: some Collection<UInt8>, username: some Collection<UInt8>, now: Int64)
        -> KnownDevice?
    {
        guard cookieValue.count == Self.textCount, let bytes = Base64URL.decode(cookieValue),
            bytes.count == 1 + 8 + Self.idCount + 32, bytes[0] == Self.version
        else { return nil }
        let body = Array(bytes.prefix(1 + 8 + Self.idCount))
        let nameKey = FileSyntax.nameKey(username)
        let expected = mac(body, nameKey: nameKey)
        let given = bytes.suffix(32)
        guard expected.withUnsafeBytes({ a in given.withUnsafeBytes { OpenSSL.constantTimeEqual(a, $0) } }) else {
            return nil
        }
        let issued = body[1...8].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard issued <= now + 60, now - issued < Self.lifetime else { return nil }
        let row = Array(digest(Array("credfile device row\u{0}".utf8) + body.suffix(Self.idCount)).prefix(16))
        return KnownDevice(nameKey: nameKey, row: row)
    }

    private func mac(_ body: [UInt8], nameKey: [UInt8]) -> [UInt8] {
        digest(Array("credfile device\u{0}".utf8) + body + nameKey)
    }

    private func digest(_ message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                out.withUnsafeMutableBytes { OpenSSL.hmacSHA256(key: key, data, into: $0) }
            }
        }
        return out
    }
}
