import CredFile

extension FuzzChecks {
    /// FuzzServeRequests: what `credfile serve` itself parses of a request (SPEC §10).
    /// The first byte chooses: even → the rest is an `Authorization` header's value;
    /// odd → the second byte picks the peer and the trusted proxies, and the rest is
    /// `X-Real-IP` LF `X-Forwarded-For` (an empty part is a missing header). When bit 1
    /// of the first byte is set, headers built from the input right at each limit (and
    /// one over) are checked too: kilobytes each, so not on every input.
    public static func serveRequests(_ input: [UInt8]) throws(FuzzFailure) {
        guard let selector = input.first else { return }
        let atLimits = selector & 2 != 0
        if selector % 2 == 0 {
            try basicCredentials(Array(input.dropFirst()), atLimits: atLimits)
        } else {
            try forwardedClient(Array(input.dropFirst()), atLimits: atLimits)
        }
    }

    // MARK: Authorization: Basic

    /// The parser agrees with a naive reading of RFC 7617 and the limits, field for field;
    /// a login re-encoded canonically parses to the same login; and headers built from
    /// the input right at each limit are accepted, one byte over refused.
    static func basicCredentials(_ value: [UInt8], atLimits: Bool) throws(FuzzFailure) {
        try compareBasic(value)
        guard atLimits else { return }
        // At the limits: the input's bytes (as name and password material) stretched to the
        // longest decoded length and the longest password, then one byte more.
        let material =
            value.isEmpty ? [UInt8(ascii: "x")] : value.map { $0 == UInt8(ascii: ":") || $0 == 0 ? 0x78 : $0 }
        func stretched(_ count: Int) -> [UInt8] { (0..<count).map { material[$0 % material.count] } }
        let longestPassword = PasswordRules.maximumCount
        let name = BasicCredentials.maximumDecodedCount - 1 - longestPassword
        for (nameCount, passwordCount, accepted) in [
            (name, longestPassword, true), (name + 1, longestPassword, false), (1, longestPassword, true),
            (1, longestPassword + 1, false),
        ] {
            let header =
                Array("Basic ".utf8)
                + Reference.base64(stretched(nameCount) + [UInt8(ascii: ":")] + stretched(passwordCount))
            let parsed = BasicCredentials.parse(header)
            if case .login = parsed {
                try expect(accepted, "accepted \(nameCount) + 1 + \(passwordCount) decoded bytes, over a limit")
            } else {
                try expect(!accepted, "refused \(nameCount) + 1 + \(passwordCount) decoded bytes, within the limits")
            }
            try compareBasic(header)
        }
    }

    private static func compareBasic(_ value: [UInt8]) throws(FuzzFailure) {
        let expected = Reference.basicLogin(value)
        switch BasicCredentials.parse(value) {
        case .missing:
            throw FuzzFailure(description: "a header that is present parsed as missing")
        case .malformed(let reason):
            try expect(expected == nil, "refused a well-formed Basic header (\(reason))")
            try expect(!reason.isEmpty && !reason.contains("\n"), "the reason is not one line")
        case .login(let login):
            guard let expected else { throw FuzzFailure(description: "accepted a header a naive reading refuses") }
            let password = login.password.withUnsafeBytes { Array($0) }
            try expect(login.username == expected.user, "the user-id is not the bytes before the first colon")
            try expect(password == expected.password, "the password is not the bytes after the first colon")
            try expect("\(login)" == "Login(redacted)", "the description shows more than 'redacted'")
            let again = Array("bAsIc  ".utf8) + Reference.base64(login.username + [UInt8(ascii: ":")] + password)
            guard case .login(let second) = BasicCredentials.parse(again) else {
                throw FuzzFailure(description: "a login re-encoded canonically does not parse")
            }
            try expect(
                second.username == login.username && second.password == login.password, "re-encoding changed the login")
        }
    }

    // MARK: X-Real-IP, X-Forwarded-For

    /// The peers: a unix socket, loopback, an outside address, and one inside the
    /// trusted block (trusted only when bit 2 of the flags gives the blocks; loopback only
    /// when bit 3 adds `127.0.0.0/8`).
    private static let peers: [ForwardedClient.Peer] = [
        .unixSocket, .address(IPAddress(parsing: Array("127.0.0.1".utf8))!),
        .address(IPAddress(parsing: Array("198.51.100.7".utf8))!),
        .address(IPAddress(parsing: Array("10.1.2.3".utf8))!),
    ]

    /// The chosen address agrees with a naive reading of the rules (trust, loopback only
    /// when named, X-Real-IP before X-Forwarded-For, right to left past trusted hops and
    /// past entries that are not addresses, `addr:port` and `[v6]:port` read as the
    /// address, the size and hop limits);
    /// an untrusted peer's own address always wins; addresses print canonically.
    static func forwardedClient(_ input: [UInt8], atLimits: Bool) throws(FuzzFailure) {
        guard let flags = input.first else { return }
        let peer = peers[Int(flags & 3)]
        let trusted =
            flags & 4 != 0
            ? [AddressRange(parsing: Array("10.0.0.0/8".utf8))!, AddressRange(parsing: Array("2001:db8::/32".utf8))!]
            : []
        let loopback = flags & 8 != 0 ? [AddressRange(parsing: Array("127.0.0.0/8".utf8))!] : []
        let rest = input.dropFirst()
        let newline = rest.firstIndex(of: 0x0A)
        let realIP = newline.map { Array(rest[..<$0]) } ?? Array(rest)
        let forwardedFor = newline.map { Array(rest[($0 + 1)...]) } ?? []
        try compareForwarded(
            peer, trusted + loopback, realIP.isEmpty ? nil : realIP, forwardedFor.isEmpty ? nil : forwardedFor)
        // Each entry read alone agrees with the naive reading too.
        for entry in forwardedFor.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).prefix(64)
        where entry.count <= ForwardedClient.maximumHeaderCount {
            let alone = Array(entry)
            try expect(
                ForwardedClient.address(
                    peer: .unixSocket, realIP: nil as [UInt8]?, forwardedFor: alone, trustedProxies: [])
                    == Reference.forwardedEntry(Reference.trimmedOWS(alone)),
                "one X-Forwarded-For entry read differently")
        }
        // IPv4 text: glibc's inet_pton and a naive dotted-quad reading agree (no leading zeros, ≤ 255).
        for field in [realIP, forwardedFor]
        where !field.isEmpty && field.allSatisfy({ $0 == 0x2E || (0x30...0x39).contains($0) }) {
            try expect(
                (IPAddress(parsing: field)?.bytes) == Reference.dottedQuad(field),
                "inet_pton and the naive IPv4 reading disagree")
        }
        guard atLimits else { return }
        // At the limits: the list stretched to exactly the hop and size limits, then one over.
        let hop = Array("203.0.113.9".utf8)
        for hops in [ForwardedClient.maximumHops, ForwardedClient.maximumHops + 1] {
            let list = Array((0..<hops).map { _ in hop }.joined(separator: [UInt8(ascii: ",")]))
            try compareForwarded(.unixSocket, trusted, nil, list)
        }
        for count in [ForwardedClient.maximumHeaderCount, ForwardedClient.maximumHeaderCount + 1] {
            let padded = [UInt8](repeating: 0x20, count: count - hop.count) + hop
            try compareForwarded(.unixSocket, trusted, padded, nil)
            try compareForwarded(.unixSocket, trusted, nil, padded)
        }
    }

    private static func compareForwarded(
        _ peer: ForwardedClient.Peer, _ trusted: [AddressRange], _ realIP: [UInt8]?, _ forwardedFor: [UInt8]?
    ) throws(FuzzFailure) {
        let chosen = ForwardedClient.address(
            peer: peer, realIP: realIP, forwardedFor: forwardedFor, trustedProxies: trusted)
        let expected = Reference.forwardedClient(
            peer: peer, trusted: trusted, realIP: realIP, forwardedFor: forwardedFor)
        try expect(
            chosen == expected,
            "chose \(chosen.map(String.init(describing:)) ?? "none"), expected \(expected.map(String.init(describing:)) ?? "none")"
        )
        if case .address(let own) = peer, !ForwardedClient.isTrusted(peer, trustedProxies: trusted) {
            try expect(chosen == own, "an untrusted peer's headers were believed")
        }
        if let chosen {
            try expect(
                IPAddress(parsing: Array(chosen.description.utf8)) == chosen, "the address does not print canonically")
        }
    }
}

extension Reference {
    /// The user-id and password of a Basic `Authorization` value by a naive reading of
    /// RFC 7617 and credfile's limits, or nil when it holds none.
    static func basicLogin(_ value: [UInt8]) -> (user: [UInt8], password: [UInt8])? {
        var start = 0
        var end = value.count
        while start < end, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
        while end > start, value[end - 1] == 0x20 || value[end - 1] == 0x09 { end -= 1 }
        let text = Array(value[start..<end])
        guard text.count >= 6 else { return nil }
        let scheme = text[0..<5].map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        guard scheme == Array("basic".utf8), text[5] == 0x20 else { return nil }
        var tokenStart = 5
        while tokenStart < text.count, text[tokenStart] == 0x20 { tokenStart += 1 }
        let token = Array(text[tokenStart...])
        guard !token.isEmpty, token.count <= BasicCredentials.maximumEncodedCount, let decoded = base64Decode(token)
        else { return nil }
        guard decoded.count <= BasicCredentials.maximumDecodedCount,
            let colon = decoded.firstIndex(of: UInt8(ascii: ":")), colon > 0
        else { return nil }
        let password = Array(decoded[(colon + 1)...])
        guard password.count <= PasswordRules.maximumCount else { return nil }
        return (Array(decoded[..<colon]), password)
    }

    /// Standard base64 decoded four characters at a time; the last group may have 2 or 3
    /// characters with no padding, or be padded to 4 with `=` (one or two).
    static func base64Decode(_ text: [UInt8]) -> [UInt8]? {
        var groups: [[UInt8]] = stride(from: 0, to: text.count, by: 4).map { Array(text[$0..<min($0 + 4, text.count)]) }
        guard var last = groups.popLast() else { return nil }
        if last.count == 4, last[3] == UInt8(ascii: "=") {
            last.removeLast()
            if last[2] == UInt8(ascii: "=") { last.removeLast() }
        }
        guard last.count >= 2 else { return nil }
        var out: [UInt8] = []
        for group in groups + [last] {
            var values: [Int] = []
            for character in group {
                let value = base64Values[Int(character)]
                guard value >= 0 else { return nil }
                values.append(value)
            }
            let bits = values.reduce(0) { $0 << 6 | $1 } << (6 * (4 - values.count))
            for index in 0..<(values.count - 1) { out.append(UInt8((bits >> (16 - 8 * index)) & 0xFF)) }
        }
        return out
    }

    /// The standard base64 alphabet.
    static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    /// Each byte's value in ``base64Alphabet``, or -1.
    static let base64Values: [Int] = (0..<256).map { byte in base64Alphabet.firstIndex(of: UInt8(byte)) ?? -1 }

    /// Padded standard base64.
    static func base64(_ bytes: [UInt8]) -> [UInt8] {
        let alphabet = base64Alphabet
        var out: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let chunk = Array(bytes[start..<min(start + 3, bytes.count)])
            let bits = chunk.reduce(0) { $0 << 8 | Int($1) } << (8 * (3 - chunk.count))
            for index in 0...chunk.count { out.append(alphabet[(bits >> (18 - 6 * index)) & 63]) }
            out += [UInt8](repeating: UInt8(ascii: "="), count: 3 - chunk.count)
        }
        return out
    }

    /// The four bytes of a dotted-quad IPv4 address (each part 0–255, no leading zero),
    /// or nil.
    static func dottedQuad(_ text: [UInt8]) -> [UInt8]? {
        let parts = text.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.count == 1 || part.first != 0x30 else { return nil }
            let value = part.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmedOWS(_ bytes: [UInt8]) -> [UInt8] {
        var slice = bytes[...]
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return Array(slice)
    }

    /// The client address by a naive reading of `ForwardedClient`'s rules.
    static func forwardedClient(
        peer: ForwardedClient.Peer, trusted: [AddressRange], realIP: [UInt8]?, forwardedFor: [UInt8]?
    ) -> IPAddress? {
        func trimmed(_ bytes: [UInt8]) -> [UInt8] {
            var slice = bytes[...]
            while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
            while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
            return Array(slice)
        }
        // SPEC v4 §10: loopback is trusted only when a block names it.
        func trustedHop(_ address: IPAddress) -> Bool { trusted.contains { $0.contains(address) } }
        var own: IPAddress?
        switch peer {
        case .unixSocket: break
        case .address(let address):
            own = address
            guard trustedHop(address) else { return address }
        }
        if let realIP, realIP.count <= 4096, let address = forwardedEntry(trimmed(realIP)) { return address }
        if let forwardedFor, forwardedFor.count <= 4096 {
            let entries = forwardedFor.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
                trimmed(Array($0))
            }
            // Entries that are not addresses are skipped; the rightmost untrusted address wins.
            let addresses = entries.compactMap { forwardedEntry($0) }
            if entries.count <= 64, !addresses.isEmpty {
                for address in addresses.reversed() where !trustedHop(address) { return address }
                return addresses[0]
            }
        }
        return own
    }

    /// One forwarding entry by a naive reading of SPEC v4 §10: an address, `IPv4:PORT`,
    /// `[IPv6]` or `[IPv6]:PORT` (PORT: one to five digits, at most 65535); nil otherwise.
    static func forwardedEntry(_ entry: [UInt8]) -> IPAddress? {
        if let address = IPAddress(parsing: entry) { return address }
        let text = String(decoding: entry, as: UTF8.self)
        func port(_ digits: Substring) -> Bool {
            let bytes = Array(digits.utf8)
            guard (1...5).contains(bytes.count), bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            return bytes.reduce(0) { $0 * 10 + Int($1) - 0x30 } <= 65_535
        }
        if text.hasPrefix("[") {
            let parts = text.dropFirst().split(separator: "]", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let address = IPAddress(parsing: Array(parts[0].utf8)), !address.isIPv4 else {
                return nil
            }
            if parts[1].isEmpty { return address }
            return parts[1].hasPrefix(":") && port(parts[1].dropFirst()) ? address : nil
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, port(parts[1]), let address = IPAddress(parsing: Array(parts[0].utf8)), address.isIPv4
        else { return nil }
        return address
    }
}
