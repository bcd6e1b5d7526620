/// An absolute `http` or `https` URL taken apart only as far as the portal's rules need:
/// its scheme, host and port (RFC 3986 §3.2). Read strictly, so that no shape a browser
/// would read differently passes: any byte that is not printable ASCII, a backslash (which
/// browsers treat as `/`), userinfo (`user@host`), an empty or malformed host, or a port
/// that is not 1–65535 make it no URL. `%`-escapes are kept as they are in the path.
struct PortalURL: Equatable, Sendable {
    /// `http` or `https`, in lowercase.
    let scheme: String
    /// The host in lowercase: a name of letters, digits, `-` and `.`, or `[v6]`.
    let host: String
    /// The port when the URL gives one.
    let port: Int?
    /// Everything from the first `/`, `?` or `#` after the authority (may be empty).
    let rest: String

    /// The longest URL read.
    static let maximumCount = 4096

    /// `host` or `host:port`, as a `Host` header would give it.
    var authority: String { port.map { "\(host):\($0)" } ?? host }

    /// The whole URL as text.
    var text: String { "\(scheme)://\(authority)\(rest)" }

    init?(_ bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count <= Self.maximumCount, Self.isSafe(bytes) else { return nil }
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        let scheme: String
        if lower.starts(with: Array("https://".utf8)) {
            scheme = "https"
        } else if lower.starts(with: Array("http://".utf8)) {
            scheme = "http"
        } else {
            return nil
        }
        let start = scheme.utf8.count + 3
        let end =
            bytes[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? bytes.endIndex
        guard let (host, port) = Self.hostAndPort(lower[start..<end]) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
        rest = String(decoding: bytes[end...], as: UTF8.self)
    }

    /// Reads `host[:port]` (already lowercase); nil for userinfo, an empty or malformed
    /// host, or a bad port.
    static func hostAndPort(_ authority: ArraySlice<UInt8>) -> (String, Int?)? {
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return nil }
        var hostPart = authority
        var port: Int?
        let colon: ArraySlice<UInt8>.Index?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let inside = authority[(authority.startIndex + 1)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == 0x2E })
            else { return nil }
            hostPart = authority[...close]
            colon = close + 1 < authority.endIndex ? close + 1 : nil
            if let colon, authority[colon] != UInt8(ascii: ":") { return nil }
        } else {
            colon = authority.firstIndex(of: UInt8(ascii: ":"))
            hostPart = authority[..<(colon ?? authority.endIndex)]
            guard isHostName(hostPart) else { return nil }
        }
        if let colon {
            let digits = authority[(colon + 1)...]
            guard (1...5).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
                let number = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(number)
            else { return nil }
            port = number
        }
        return (String(decoding: hostPart, as: UTF8.self), port)
    }

    /// A DNS name (or IPv4 address): labels of letters, digits and `-`, joined by single
    /// dots, 1–253 bytes; lowercase expected.
    static func isHostName(_ name: some Collection<UInt8>) -> Bool {
        guard (1...253).contains(name.count), name.first != 0x2E, name.first != 0x2D else { return false }
        var previous: UInt8 = 0
        for byte in name {
            let allowed = (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x2E
            guard allowed, !(byte == 0x2E && previous == 0x2E) else { return false }
            previous = byte
        }
        return true
    }

    /// Printable ASCII without a backslash: no control byte, space, DEL or byte over 0x7E.
    static func isSafe(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// A `Host` header's value (`host` or `host:port`) in lowercase; nil when it is not one.
    static func host(_ header: some Collection<UInt8>) -> String? {
        let bytes = Array(header)
        guard bytes.count <= 260, isSafe(bytes) else { return nil }
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        guard let (host, port) = hostAndPort(lower[...]) else { return nil }
        return port.map { "\(host):\($0)" } ?? host
    }
}
