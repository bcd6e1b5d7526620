#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address, parsed and printed by the C library (`inet_pton`,
/// `inet_ntop`), so its text is the one canonical spelling (`2001:db8::1`, not
/// `2001:0DB8:0:0::1`): what §9's log writes as `rhost` and fail2ban bans.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public let bytes: [UInt8]

    /// Parses the text form of an address (no port, no brackets, no zone); nil otherwise.
    public init?(parsing text: some Collection<UInt8>) {
        // INET6_ADDRSTRLEN is 46: longer text is no address.
        guard !text.isEmpty, text.count < 46, !text.contains(0) else { return nil }
        let string = String(decoding: text, as: UTF8.self)
        guard string.utf8.count == text.count else { return nil }  // not ASCII: no address
        var four = in_addr()
        var six = in6_addr()
        if inet_pton(AF_INET, string, &four) == 1 {
            bytes = withUnsafeBytes(of: &four) { Array($0) }
        } else if inet_pton(AF_INET6, string, &six) == 1 {
            bytes = withUnsafeBytes(of: &six) { Array($0) }
        } else {
            return nil
        }
    }

    /// The address from its 4 or 16 bytes in network order.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Whether this is IPv4 (else IPv6).
    public var isIPv4: Bool { bytes.count == 4 }

    /// `127.0.0.0/8` or `::1`, or an IPv4-mapped `::ffff:127.x.y.z`.
    public var isLoopback: Bool {
        if isIPv4 { return bytes[0] == 127 }
        if bytes[..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        return mappedIPv4?.isLoopback ?? false
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`).
    var mappedIPv4: IPAddress? {
        guard !isIPv4, bytes[..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// The canonical text form.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 64)
        let family = isIPv4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) != nil }
        precondition(ok, "inet_ntop of 4 or 16 bytes into 64 cannot fail")
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address):
/// the proxies `--trusted-proxy` names.
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the block (host bits cleared).
    public let network: IPAddress
    /// How many leading bits every address of the block shares with ``network``.
    public let prefixLength: Int

    /// Parses `ADDRESS` or `ADDRESS/BITS`; nil for anything else (bits beyond the
    /// family's 32 or 128, host bits set below the prefix, a sign, leading zeros).
    public init?(parsing text: some Collection<UInt8>) {
        let parts = Array(text).split(separator: UInt8(ascii: "/"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parsing: parts[0]) else { return nil }
        let width = address.bytes.count * 8
        var length = width
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
                digits.count == 1 || digits.first != 0x30,
                let bits = Int(String(decoding: digits, as: UTF8.self)), bits <= width
            else { return nil }
            length = bits
        }
        guard Self.masked(address.bytes, to: length) == address.bytes else { return nil }
        network = address
        prefixLength = length
    }

    /// Whether `address` is in the block (an IPv4-mapped IPv6 address counts as its IPv4).
    public func contains(_ address: IPAddress) -> Bool {
        let candidate = address.isIPv4 == network.isIPv4 ? address : (address.mappedIPv4 ?? address)
        guard candidate.bytes.count == network.bytes.count else { return false }
        return Self.masked(candidate.bytes, to: prefixLength) == network.bytes
    }

    /// `network/prefixLength`.
    public var description: String { "\(network)/\(prefixLength)" }

    /// `bytes` with every bit after the first `length` cleared.
    private static func masked(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(0xFF >> UInt8(kept))
        }
    }
}

/// The client's address for §9's log (`rhost`), as `credfile serve` works it out (SPEC
/// §10): the headers a proxy adds are believed only from a **trusted** peer — a unix
/// socket (its file mode and group are the gate) or an address in a `--trusted-proxy`
/// block — since anyone else can write them. Loopback is trusted only when a block names
/// it (SPEC version 4): otherwise any local user could choose the address fail2ban bans.
///
/// From a trusted peer: `X-Real-IP` when it holds one address (nginx's
/// `proxy_set_header X-Real-IP $remote_addr` replaces whatever the client sent); else
/// `X-Forwarded-For`, read from the right (each proxy appends the address it saw): the
/// rightmost entry that is an address and not a trusted proxy is the client's, as nginx's
/// `real_ip_recursive on` reads it (the leftmost address when all are trusted). Entries
/// that are not addresses (`unknown`, an obfuscated `_node`, garbage) are skipped, not
/// fatal; `addr:port`, `[v6]` and `[v6]:port`, as load balancers write them, read as the
/// address. A header longer than ``maximumHeaderCount`` bytes or with more than
/// ``maximumHops`` entries is not used. Otherwise: the peer's own address (nil for a unix
/// socket).
public enum ForwardedClient {
    /// The longest forwarding header read.
    public static let maximumHeaderCount = 4096
    /// The most `X-Forwarded-For` entries read.
    public static let maximumHops = 64

    /// Who is at the other end of the connection.
    public enum Peer: Sendable, Equatable {
        /// A unix socket: a process on this host, trusted (file permissions chose it).
        case unixSocket
        /// A TCP peer.
        case address(IPAddress)
    }

    /// Whether the peer may tell the client's address: a unix socket, or an address in
    /// one of `trustedProxies` (loopback too only when a block names it).
    public static func isTrusted(_ peer: Peer, trustedProxies: [AddressRange]) -> Bool {
        switch peer {
        case .unixSocket: true
        case .address(let address): isTrustedHop(address, trustedProxies)
        }
    }

    /// The client's address (see the type's comment); nil when the peer is a unix socket
    /// and no usable header came with the request.
    public static func address(
        peer: Peer, realIP: (some Collection<UInt8>)?, forwardedFor: (some Collection<UInt8>)?,
        trustedProxies: [AddressRange]
    ) -> IPAddress? {
        let own: IPAddress? = if case .address(let address) = peer { address } else { nil }
        guard isTrusted(peer, trustedProxies: trustedProxies) else { return own }
        if let realIP, realIP.count <= maximumHeaderCount, let address = entryAddress(trimmed(realIP)) {
            return address
        }
        if let forwardedFor, forwardedFor.count <= maximumHeaderCount,
            let address = client(inForwardedFor: Array(forwardedFor), trustedProxies)
        {
            return address
        }
        return own
    }

    /// The client in an `X-Forwarded-For` list: the rightmost address that is not a
    /// trusted proxy, skipping entries that are not addresses; the leftmost address when
    /// every one is trusted; nil when none is an address or there are too many entries.
    private static func client(inForwardedFor list: [UInt8], _ trustedProxies: [AddressRange]) -> IPAddress? {
        let entries = list.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard entries.count <= maximumHops else { return nil }
        var leftmost: IPAddress?
        for entry in entries.reversed() {
            guard let address = entryAddress(trimmed(entry)) else { continue }
            if !isTrustedHop(address, trustedProxies) { return address }
            leftmost = address
        }
        return leftmost
    }

    /// The address of one forwarding entry: `ADDRESS`, `IPv4:PORT`, `[IPv6]` or
    /// `[IPv6]:PORT` (PORT one to five digits, at most 65535); nil for anything else.
    static func entryAddress(_ entry: ArraySlice<UInt8>) -> IPAddress? {
        if let address = IPAddress(parsing: entry) { return address }
        let colon = UInt8(ascii: ":")
        var host = entry
        var port: ArraySlice<UInt8>?
        if entry.first == UInt8(ascii: "[") {
            guard let close = entry.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = entry[entry.index(after: entry.startIndex)..<close]
            let rest = entry[entry.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == colon else { return nil }
                port = rest.dropFirst()
            }
            guard let address = IPAddress(parsing: host), !address.isIPv4 else { return nil }
            guard port.map(isPort) ?? true else { return nil }
            return address
        }
        // IPv4:PORT (a bare IPv6 address has more than one colon and was read above).
        guard let split = entry.firstIndex(of: colon), entry[entry.index(after: split)...].firstIndex(of: colon) == nil
        else { return nil }
        guard isPort(entry[entry.index(after: split)...]), let address = IPAddress(parsing: entry[..<split]),
            address.isIPv4
        else { return nil }
        return address
    }

    /// One to five ASCII digits, at most 65535.
    private static func isPort(_ digits: ArraySlice<UInt8>) -> Bool {
        guard (1...5).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) } <= 65_535
    }

    private static func isTrustedHop(_ address: IPAddress, _ trustedProxies: [AddressRange]) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    private static func trimmed(_ bytes: some Collection<UInt8>) -> ArraySlice<UInt8> {
        var slice = ArraySlice(bytes)
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return slice
    }
}
