/// Where the portal sends a browser after signing in (SPEC §11's `rd`): no open redirect.
///
/// `rd` is followed only to the request's own host or, with `cookie-domain`, a host under
/// that domain (the domain itself or any name ending in `.domain`), and only over https; a
/// path on the own host (`/app?x=1`, one leading `/`) is followed too, since it stays on the
/// origin that served the form. Anything else — another host, `//evil`, `/\evil`,
/// `javascript:`, `http:`, userinfo (`https://own@evil`), a backslash, a space or control
/// byte, a byte over 0x7E, more than 4,096 bytes — is replaced by
/// `{prefix}/`.
public enum RedirectTarget {
    /// The place to redirect to: `rd` when it passes the rules above, else `fallback`.
    /// - Parameters:
    ///   - rd: the `rd` parameter as decoded bytes; nil when there is none.
    ///   - requestHost: the request's own `Host` (`host` or `host:port`).
    ///   - cookieDomain: the `cookie-domain` setting, or nil.
    ///   - fallback: `{prefix}/`.
    public static func resolve(
        _ rd: (some Collection<UInt8>)?, requestHost: String, cookieDomain: String?, fallback: String
    ) -> String {
        guard let rd, !rd.isEmpty, rd.count <= PortalURL.maximumCount, PortalURL.isSafe(rd) else { return fallback }
        let bytes = Array(rd)
        if bytes[0] == UInt8(ascii: "/") {
            // A path of the own origin; `//host` and `/\host` would be another host.
            guard bytes.count == 1 || (bytes[1] != UInt8(ascii: "/")) else { return fallback }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let url = PortalURL(bytes), url.scheme == "https",
            isAllowed(url, requestHost: requestHost, cookieDomain: cookieDomain)
        else { return fallback }
        return url.text
    }

    /// Whether `url`'s host is the request's own (with its port, if the `Host` names one)
    /// or lies under `cookieDomain` (any port).
    static func isAllowed(_ url: PortalURL, requestHost: String, cookieDomain: String?) -> Bool {
        if let own = PortalURL.host(Array(requestHost.utf8)) {
            if url.authority == own || (url.port == 443 && url.host == own)
                || (url.port == nil && "\(url.host):443" == own)
            {
                return true
            }
        }
        guard let domain = cookieDomain?.lowercased(), !domain.isEmpty else { return false }
        let trimmed = domain.hasPrefix(".") ? String(domain.dropFirst()) : domain
        return url.host == trimmed || url.host.hasSuffix("." + trimmed)
    }
}
