/// The portal's rule against forged requests (SPEC §11, OWASP ASVS 3.5.1): a `POST` is
/// accepted only from the request's own origin, judged from the headers browsers send:
///
/// * with `Origin`: it must be `https://` and the own host (`null`, another scheme, host or
///   port is refused);
/// * without `Origin`: `Sec-Fetch-Site: same-origin`; any other `Sec-Fetch-Site` value is
///   refused;
/// * without either: a `Referer` on the own host over https; none at all is refused.
///
/// This is half of the rule; the other half is the form's ``AntiForgery`` token.
public enum RequestOrigin {
    /// Whether the headers show a request from `ownHost` (`host` or `host:port`).
    public static func isSameOrigin(
        origin: [UInt8]?, secFetchSite: [UInt8]?, referer: [UInt8]?, ownHost: String
    ) -> Bool {
        guard let own = PortalURL.host(Array(ownHost.utf8)) else { return false }
        if let origin {
            guard let url = PortalURL(origin), url.rest.isEmpty else { return false }
            return url.scheme == "https" && sameAuthority(url, own)
        }
        if let secFetchSite {
            return String(decoding: secFetchSite, as: UTF8.self).lowercased() == "same-origin"
        }
        guard let referer, let url = PortalURL(referer) else { return false }
        return url.scheme == "https" && sameAuthority(url, own)
    }

    /// `url`'s host and port are `own`'s, counting 443 as https's default port.
    private static func sameAuthority(_ url: PortalURL, _ own: String) -> Bool {
        url.authority == own || (url.port == 443 && url.host == own) || (url.port == nil && "\(url.host):443" == own)
    }
}

/// The form's anti-forgery token (SPEC §11): an HMAC-SHA-256 of the browser's pre-session
/// cookie under a key kept in the state database, so that every host sharing that database
/// (§15) accepts the forms of the others, and a form copied to another browser (with
/// another pre-session cookie) is refused.
public struct AntiForgery: Sendable {
    /// Random bytes in a pre-session cookie.
    public static let preSessionByteCount = 32
    /// The name of the anti-forgery key in the state database (``SessionStorage/key(named:)``).
    public static let keyName = "anti-forgery"
    private let key: SecretBytes

    /// A signer under `key` (at least 32 bytes, from the state database).
    public init(key: SecretBytes) {
        precondition(key.count >= 32, "an anti-forgery key has at least 32 bytes")
        self.key = key
    }

    /// A new pre-session cookie value: 32 random bytes, base64url.
    /// - Throws: ``CredFileError/Code/crypto`` when `RAND_bytes` fails.
    public static func newPreSession() throws -> String {
        Base64URL.encode(try OpenSSL.randomBytes(count: preSessionByteCount))
    }

    /// The token to put in the form for the pre-session cookie `preSession`.
    public func token(for preSession: some Collection<UInt8>) -> String {
        Base64URL.encode(mac(Array(preSession)))
    }

    /// Whether `token` (from the form) is the one for `preSession` (from the cookie),
    /// compared in constant time; false when either is missing or malformed.
    public func accepts(token: (some Collection<UInt8>)?, preSession: (some Collection<UInt8>)?) -> Bool {
        guard let token, let preSession, preSession.count == 43, Base64URL.decode(preSession)?.count == 32,
            let given = Base64URL.decode(token), given.count == 32
        else { return false }
        let expected = mac(Array(preSession))
        return given.withUnsafeBytes { a in expected.withUnsafeBytes { b in OpenSSL.constantTimeEqual(a, b) } }
    }

    private func mac(_ message: [UInt8]) -> [UInt8] {
        let labelled = Array("credfile anti-forgery\u{0}".utf8) + message
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { key in
            labelled.withUnsafeBytes { data in
                out.withUnsafeMutableBytes { OpenSSL.hmacSHA256(key: key, data, into: $0) }
            }
        }
        return out
    }
}
