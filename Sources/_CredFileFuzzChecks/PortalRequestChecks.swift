import CredFile

extension FuzzChecks {
    /// FuzzPortalRequests: what the portal of `credfile serve` parses itself (SPEC §11).
    /// The first byte chooses, by its value modulo 4: the rest is a `Cookie` header (0), a
    /// form body (1), an `rd` (2), or `X-Original-URL` LF `X-Forwarded-Proto` LF
    /// `X-Forwarded-Host` LF `X-Forwarded-Uri` (3; an empty part is a missing header). With
    /// bit 2 of the first byte set, inputs built from the rest right at each limit (and one
    /// byte over) are checked too.
    public static func portalRequests(_ input: [UInt8]) throws(FuzzFailure) {
        guard let selector = input.first else { return }
        let rest = Array(input.dropFirst())
        let atLimits = selector & 4 != 0
        switch selector % 4 {
        case 0: try cookieHeader(rest, atLimits: atLimits)
        case 1: try formBody(rest, atLimits: atLimits)
        case 2: try redirect(rest, atLimits: atLimits)
        default: try forwardedURL(rest)
        }
    }

    // MARK: Cookie

    static let sessionCookie = "__Host-credfile"
    static let deviceCookies = DeviceCookies(key: SecretBytes(Array(repeating: 0x5A, count: 32)))

    /// The values found for a name are those of a naive reading: pairs split at `;`,
    /// spaces and tabs trimmed, a pair over 4,096 bytes skipped, the name before the first
    /// `=` (its trailing blanks trimmed) equal byte for byte, one pair of quotes taken off,
    /// at most four, within the first 16 KiB.
    static func cookieHeader(_ header: [UInt8], atLimits: Bool) throws(FuzzFailure) {
        for name in [sessionCookie, "a", firstCookieName(header)].compactMap({ $0 }) {
            let found = CookieHeader.values(named: name, in: header).map { Array($0) }
            try expect(found == naiveCookies(name, header), "Cookie: values of a \(name.utf8.count)-byte name differ")
            try expect(found.count <= CookieHeader.maximumValues, "Cookie: more than four values")
        }
        // A device cookie's value (SPEC §11) from the header, or the header itself: no trap,
        // and only a value of the right length, signed under the key, is a device.
        for value in CookieHeader.values(named: DeviceCookies.cookieName, in: header).map({ Array($0) }) + [header] {
            let device = deviceCookies.device(cookieValue: value, username: "bob".utf8, now: 1_800_000_000)
            try expect(device == nil || value.count == DeviceCookies.textCount, "Cookie: a device of the wrong length")
        }
        guard atLimits else { return }
        let material = header.filter { $0 > 0x20 && $0 != UInt8(ascii: ";") && $0 != 0x22 && $0 < 0x7F }
        let fill = material.isEmpty ? [UInt8(ascii: "v")] : material
        let room = CookieHeader.maximumPairCount - sessionCookie.utf8.count - 1
        for (count, kept) in [(room, true), (room + 1, false)] {
            let value = (0..<count).map { fill[$0 % fill.count] }
            let built = Array("x=1; \(sessionCookie)=".utf8) + value
            let found = CookieHeader.values(named: sessionCookie, in: built).map { Array($0) }
            try expect(found == (kept ? [value] : []), "Cookie: a \(count + sessionCookie.utf8.count + 1)-byte pair")
        }
    }

    private static func firstCookieName(_ header: [UInt8]) -> String? {
        guard let equals = header.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let name = header[..<equals].filter { $0 != 0x20 && $0 != 0x09 && $0 != UInt8(ascii: ";") }
        return String(validating: name, as: UTF8.self)
    }

    private static func naiveCookies(_ name: String, _ header: [UInt8]) -> [[UInt8]] {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        var found: [[UInt8]] = []
        var pair: [UInt8] = []
        for byte in header.prefix(16_384) + [UInt8(ascii: ";")] {
            guard byte == UInt8(ascii: ";") else {
                pair.append(byte)
                continue
            }
            defer { pair = [] }
            while let first = pair.first, blank(first) { pair.removeFirst() }
            while let last = pair.last, blank(last) { pair.removeLast() }
            guard !pair.isEmpty, pair.count <= 4096, let equals = pair.firstIndex(of: UInt8(ascii: "=")) else {
                continue
            }
            var key = Array(pair[..<equals])
            while let last = key.last, blank(last) { key.removeLast() }
            guard key == Array(name.utf8) else { continue }
            var value = Array(pair[(equals + 1)...])
            while let first = value.first, blank(first) { value.removeFirst() }
            if value.count >= 2 && value.first == 0x22 && value.last == 0x22 {
                value = Array(value.dropFirst().dropLast())
            }
            if found.count < 4 { found.append(value) }
        }
        return found
    }

    // MARK: Form body

    /// A body is accepted exactly when a naive reading accepts it (size, fields, `%XX`,
    /// UTF-8 names, no name twice); an accepted one, every byte re-encoded as `%XX`, parses
    /// to the same fields; and bodies right at the size limit parse, one byte over do not.
    static func formBody(_ body: [UInt8], atLimits: Bool) throws(FuzzFailure) {
        let parsed = FormFields(parsing: body)
        let naive = naiveForm(body)
        try expect((parsed == nil) == (naive == nil), parsed == nil ? "form: a valid body refused" : "form: accepted")
        if let parsed, let naive {
            try expect(parsed.names == naive.map(\.0), "form: names differ from the naive reading")
            for (name, value) in naive {
                let got = parsed.secret(name)?.withUnsafeBytes { Array($0) }
                try expect(got == value, "form: a value differs from the naive reading")
            }
            let encoded = naive.map { percent(Array($0.0.utf8)) + [UInt8(ascii: "=")] + percent($0.1) }
            let again = FormFields(parsing: Array(encoded.joined(separator: [UInt8(ascii: "&")])))
            // Re-encoded, a body may grow past the limit; within it, it reads the same.
            if encoded.reduce(0, { $0 + $1.count + 1 }) - 1 <= FormFields.maximumCount {
                try expect(again?.names == parsed.names, "form: re-encoded, the names differ")
            }
        }
        guard atLimits else { return }
        let fill = body.filter { $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "=") }
        let material = fill.isEmpty ? [UInt8(ascii: "p")] : fill
        let head = Array("username=u&password=".utf8)
        for (count, accepted) in [
            (FormFields.maximumCount - head.count, true), (FormFields.maximumCount - head.count + 1, false),
        ] {
            let built = head + (0..<count).map { material[$0 % material.count] }
            try expect((FormFields(parsing: built) != nil) == accepted, "form: a body of \(built.count) bytes")
        }
    }

    private static func naiveForm(_ body: [UInt8]) -> [(String, [UInt8])]? {
        guard body.count <= FormFields.maximumCount else { return nil }
        var fields: [(String, [UInt8])] = []
        var pairs: [[UInt8]] = [[]]
        for byte in body {
            if byte == UInt8(ascii: "&") { pairs.append([]) } else { pairs[pairs.count - 1].append(byte) }
        }
        for pair in pairs where !pair.isEmpty {
            if fields.count == FormFields.maximumFields { return nil }
            var name: [UInt8] = []
            var value: [UInt8] = []
            var seenEquals = false
            for byte in pair {
                if byte == UInt8(ascii: "="), !seenEquals {
                    seenEquals = true
                } else if seenEquals {
                    value.append(byte)
                } else {
                    name.append(byte)
                }
            }
            guard let n = unpercent(name), let v = unpercent(value), let text = String(validating: n, as: UTF8.self),
                !fields.contains(where: { $0.0 == text })
            else { return nil }
            fields.append((text, v))
        }
        return fields
    }

    private static func unpercent(_ bytes: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var index = 0
        let digits = Array("0123456789abcdef".utf8)
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count,
                    let high = digits.firstIndex(of: bytes[index + 1] | (bytes[index + 1] >= 0x41 ? 0x20 : 0)),
                    let low = digits.firstIndex(of: bytes[index + 2] | (bytes[index + 2] >= 0x41 ? 0x20 : 0))
                else { return nil }
                out.append(UInt8(high * 16 + low))
                index += 3
            } else {
                out.append(bytes[index] == UInt8(ascii: "+") ? 0x20 : bytes[index])
                index += 1
            }
        }
        return out
    }

    private static func percent(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return bytes.flatMap { [UInt8(ascii: "%"), digits[Int($0 >> 4)], digits[Int($0 & 15)]] }
    }

    // MARK: rd and the forwarded URL

    static let ownHost = "app.example.com"
    static let cookieDomain = "example.org"
    static let fallback = "/.credfile/"

    /// `rd` resolves to `{prefix}/` or to a safe target (naive check below), with and
    /// without `cookie-domain`; a target kept is kept again (idempotent); and `rd`s right at
    /// 4,096 bytes are followed, at 4,097 not.
    static func redirect(_ rd: [UInt8], atLimits: Bool) throws(FuzzFailure) {
        for domain in [cookieDomain, nil] {
            let target = RedirectTarget.resolve(rd, requestHost: ownHost, cookieDomain: domain, fallback: fallback)
            try expect(isSafeTarget(target, domain: domain), "rd: an unsafe target was followed")
            if target != fallback {
                let again = RedirectTarget.resolve(
                    Array(target.utf8), requestHost: ownHost, cookieDomain: domain, fallback: fallback)
                try expect(again == target, "rd: a followed target is not followed again")
            }
        }
        guard atLimits else { return }
        let fill = rd.filter { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }
        let material = fill.isEmpty ? [UInt8(ascii: "a")] : fill
        let head = Array("https://\(ownHost)/".utf8)
        for (count, followed) in [(4096, true), (4097, false)] {
            let built = head + (0..<(count - head.count)).map { material[$0 % material.count] }
            let target = RedirectTarget.resolve(built, requestHost: ownHost, cookieDomain: nil, fallback: fallback)
            try expect((target != fallback) == followed, "rd: a \(count)-byte own-host URL")
        }
    }

    /// A naive reading of SPEC §11's rule on a target: printable ASCII without backslash;
    /// a path with one leading `/`; or `https://` + a host that is the own one or under the
    /// domain, with no `@` before the path.
    static func isSafeTarget(_ target: String, domain: String?) -> Bool {
        if target == fallback { return true }
        let bytes = Array(target.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else {
            return false
        }
        if bytes[0] == UInt8(ascii: "/") { return bytes.count == 1 || bytes[1] != UInt8(ascii: "/") }
        guard target.hasPrefix("https://") else { return false }
        let authority = target.dropFirst(8).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { return false }
        var host = String(authority)
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") { host = String(host[..<colon]) }
        if host == ownHost { return true }
        guard let domain else { return false }
        return host == domain || host.hasSuffix("." + domain)
    }

    /// From an untrusted peer nothing; from a trusted one nil or an http(s) URL of safe
    /// bytes that, when https, `rd` follows on its own host.
    static func forwardedURL(_ input: [UInt8]) throws(FuzzFailure) {
        var parts = input.split(separator: 0x0A, maxSplits: 3, omittingEmptySubsequences: false).map { Array($0) }
        while parts.count < 4 { parts.append([]) }
        let headers = OriginalURL.Headers(
            originalURL: parts[0].isEmpty ? nil : parts[0], forwardedProto: parts[1].isEmpty ? nil : parts[1],
            forwardedHost: parts[2].isEmpty ? nil : parts[2], forwardedURI: parts[3].isEmpty ? nil : parts[3])
        try expect(OriginalURL.url(headers, peerIsTrusted: false) == nil, "forwarded URL read from an untrusted peer")
        guard let url = OriginalURL.url(headers, peerIsTrusted: true) else { return }
        let bytes = Array(url.utf8)
        try expect(bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }, "forwarded URL: a bad byte")
        try expect(url.hasPrefix("https://") || url.hasPrefix("http://"), "forwarded URL: not http(s)")
        guard url.hasPrefix("https://") else { return }
        let authority = String(url.dropFirst(8).prefix { $0 != "/" && $0 != "?" && $0 != "#" })
        try expect(!authority.contains("@"), "forwarded URL: userinfo")
        let target = RedirectTarget.resolve(bytes, requestHost: authority, cookieDomain: nil, fallback: fallback)
        try expect(target == url, "forwarded URL: rd does not follow it on its own host")
    }
}
