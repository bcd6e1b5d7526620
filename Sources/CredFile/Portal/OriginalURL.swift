/// The URL the browser asked for, which the web server forwards with its subrequest
/// (SPEC §11): nginx's `X-Original-URL` (set by `proxy_set_header X-Original-URL
/// $scheme://$http_host$request_uri`), or Caddy's and Traefik's `X-Forwarded-Proto`,
/// `X-Forwarded-Host` and `X-Forwarded-Uri`. These headers are read only from a trusted
/// peer (§10: a unix socket or a `--trusted-proxy` address); from anyone else they are
/// ignored, since a client could name any URL.
public enum OriginalURL {
    /// The headers that can name the original URL, as the request gave them.
    public struct Headers: Sendable {
        /// `X-Original-URL`.
        public var originalURL: [UInt8]?
        /// `X-Forwarded-Proto`.
        public var forwardedProto: [UInt8]?
        /// `X-Forwarded-Host`.
        public var forwardedHost: [UInt8]?
        /// `X-Forwarded-Uri`.
        public var forwardedURI: [UInt8]?

        /// Headers as given; each nil when the request had none.
        public init(
            originalURL: [UInt8]? = nil, forwardedProto: [UInt8]? = nil, forwardedHost: [UInt8]? = nil,
            forwardedURI: [UInt8]? = nil
        ) {
            self.originalURL = originalURL
            self.forwardedProto = forwardedProto
            self.forwardedHost = forwardedHost
            self.forwardedURI = forwardedURI
        }
    }

    /// The original URL (`https://host/path?query`), or nil when the peer is not trusted or
    /// the headers name no well-formed http(s) URL. `X-Original-URL` wins when both kinds
    /// are present. A forwarded URI must start with `/`, and not with `//`.
    public static func url(_ headers: Headers, peerIsTrusted: Bool) -> String? {
        guard peerIsTrusted else { return nil }
        if let original = headers.originalURL {
            return PortalURL(original)?.text
        }
        guard let proto = headers.forwardedProto, let host = headers.forwardedHost else { return nil }
        let scheme = String(decoding: proto, as: UTF8.self).lowercased()
        guard scheme == "https" || scheme == "http", let authority = PortalURL.host(host) else { return nil }
        let uri = headers.forwardedURI ?? Array("/".utf8)
        guard uri.first == UInt8(ascii: "/"), uri.count < 2 || uri[1] != UInt8(ascii: "/"),
            uri.count <= PortalURL.maximumCount, PortalURL.isSafe(uri)
        else { return nil }
        return PortalURL(Array("\(scheme)://\(authority)".utf8) + uri)?.text
    }

    /// The request's own host: `X-Forwarded-Host` from a trusted peer, else `Host`, in
    /// lowercase; nil when neither is a well-formed `host[:port]`.
    public static func host(host: [UInt8]?, forwardedHost: [UInt8]?, peerIsTrusted: Bool) -> String? {
        if peerIsTrusted, let forwardedHost { return PortalURL.host(forwardedHost) }
        return host.flatMap { PortalURL.host($0) }
    }
}
