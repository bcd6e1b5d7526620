/// The credentials of an HTTP `Authorization` header of the Basic scheme (RFC 7617), as
/// nginx `auth_request`, Caddy `forward_auth` and Traefik `ForwardAuth` pass the
/// browser's header on to `credfile serve` (SPEC §10):
///
///     credentials = auth-scheme 1*SP token68      ; RFC 9110 §11.4, auth-scheme "Basic" (any case)
///     token68     = base64 of ( user-id ":" password )
///
/// split at the **first** colon (RFC 7617 §2: a user-id cannot hold one, a password can).
/// The base64 is the standard alphabet with its `=` padding, or without it (as nginx's own
/// `auth_basic` also accepts); leading and trailing spaces and tabs around the whole
/// value are ignored. The user-id is returned as bytes: RFC 7617's `charset="UTF-8"` asks
/// browsers for UTF-8, and what is not UTF-8 is the caller's to deny.
public enum BasicCredentials {
    /// The longest user-id and password together, decoded, with their colon: a name of up
    /// to 4,096 bytes (longer than any name `add` writes, for legacy files) and a password
    /// of ``PasswordRules/maximumCount`` bytes.
    public static let maximumDecodedCount = 4096 + 1 + PasswordRules.maximumCount
    /// The longest token68 read: the padded base64 of ``maximumDecodedCount`` bytes.
    public static let maximumEncodedCount = (maximumDecodedCount + 2) / 3 * 4

    /// A login taken from the header.
    public struct Login: Sendable, CustomStringConvertible {
        /// The user-id, as sent (browsers send UTF-8; any other bytes are kept as they are).
        public let username: [UInt8]
        /// The password, as sent; at most ``PasswordRules/maximumCount`` bytes.
        public let password: SecretBytes

        /// `Login(redacted)`: neither field is printed.
        public var description: String { "Login(redacted)" }
    }

    /// What the header held.
    public enum Parsed: Sendable {
        /// No `Authorization` header: the browser has not asked the user yet.
        case missing
        /// A header that holds no Basic login; `reason` never quotes it.
        case malformed(reason: String)
        /// A login to check.
        case login(Login)
    }

    /// Reads the value of the `Authorization` header (nil when the request had none).
    public static func parse(_ value: (some Collection<UInt8>)?) -> Parsed {
        guard let value else { return .missing }
        var text = ArraySlice(value)
        while let first = text.first, first == 0x20 || first == 0x09 { text = text.dropFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text = text.dropLast() }
        guard let space = text.firstIndex(of: 0x20) else {
            return .malformed(
                reason: text.isEmpty ? "an empty Authorization header" : "no credentials after the scheme")
        }
        guard isBasic(text[..<space]) else { return .malformed(reason: "the scheme is not Basic") }
        var token = text[(space + 1)...]
        while token.first == 0x20 { token = token.dropFirst() }
        guard !token.isEmpty else { return .malformed(reason: "no credentials after the scheme") }
        guard token.count <= maximumEncodedCount else {
            return .malformed(reason: "the credentials are longer than \(maximumEncodedCount) characters")
        }
        guard var decoded = decodeBase64(token) else { return .malformed(reason: "the credentials are not base64") }
        defer { decoded.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        guard decoded.count <= maximumDecodedCount else {
            return .malformed(reason: "the credentials are longer than \(maximumDecodedCount) bytes")
        }
        guard let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else {
            return .malformed(reason: "the credentials have no colon between user-id and password")
        }
        guard colon > 0 else { return .malformed(reason: "the user-id is empty") }
        guard decoded.count - colon - 1 <= PasswordRules.maximumCount else {
            return .malformed(reason: "the password is longer than \(PasswordRules.maximumCount) bytes")
        }
        return .login(Login(username: Array(decoded[..<colon]), password: SecretBytes(decoded[(colon + 1)...])))
    }

    /// Whether `scheme` is `Basic` in any case (RFC 9110 §11.1: schemes are case-insensitive).
    private static func isBasic(_ scheme: ArraySlice<UInt8>) -> Bool {
        scheme.count == 5 && zip(scheme, "basic".utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    /// Standard base64 (RFC 4648 §4), with its padding or without; nil for any other
    /// character, padding anywhere but at the end, or a length no encoding has.
    static func decodeBase64(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var body = text
        var padding = 0
        while body.last == UInt8(ascii: "=") {
            body = body.dropLast()
            padding += 1
        }
        // Padded: the whole is a multiple of four and the padding fills the last group.
        // Unpadded: the last group has 2 or 3 characters (one character is never a group).
        let rest = body.count % 4
        guard rest != 1, padding == 0 || (text.count % 4 == 0 && padding == (4 - rest) % 4 && padding <= 2) else {
            return nil
        }
        // The one decoder (it checks every character before it decodes one), without the
        // canonical last-bits rule: a client's encoder is not held to one spelling.
        return Base64Core.decode(body, values: Base64Core.standardValues, anyLastBits: true)
    }
}
