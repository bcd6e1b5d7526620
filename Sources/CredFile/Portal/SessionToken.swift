/// A session's token (SPEC §11): 32 bytes from OpenSSL's `RAND_bytes`, sent to the browser
/// as 43 characters of unpadded base64url in the session cookie. The store keeps only its
/// SHA-256 (``digest``), so a copy of the state database opens no session.
public struct SessionToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Random bytes in a token: 256 bits, twice ASVS 7.2.3's 128.
    public static let byteCount = 32
    /// Characters of a token in a cookie: unpadded base64url of ``byteCount`` bytes.
    public static let textCount = 43

    /// The cookie value: what only the browser keeps.
    public let cookieValue: String
    /// SHA-256 of the 32 random bytes: what the state database keeps.
    public let digest: [UInt8]

    private init(bytes: [UInt8]) {
        cookieValue = Base64URL.encode(bytes)
        digest = bytes.withUnsafeBytes { OpenSSL.sha256($0) }
    }

    /// A new token from OpenSSL's CSPRNG.
    /// - Throws: ``CredFileError/Code/crypto`` when `RAND_bytes` fails.
    public static func generate() throws -> SessionToken {
        var bytes = try OpenSSL.randomBytes(count: byteCount)
        defer { bytes.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        return SessionToken(bytes: bytes)
    }

    /// The token a cookie value holds; nil for anything but 43 base64url characters that
    /// decode to 32 bytes (so a malformed cookie costs no lookup).
    public init?(cookieValue text: some Collection<UInt8>) {
        guard text.count == Self.textCount, var bytes = Base64URL.decode(text), bytes.count == Self.byteCount else {
            return nil
        }
        defer { bytes.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        self.init(bytes: bytes)
    }

    /// `SessionToken(redacted)`: a token is never printed or logged.
    public var description: String { "SessionToken(redacted)" }
    /// `SessionToken(redacted)`.
    public var debugDescription: String { description }
}
