import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// What `credfile serve` parses of a request (SPEC §10), and its cache of good logins.
@Suite struct ServeRequestTests {
    static func header(_ text: String) -> [UInt8] { Array(text.utf8) }
    static func basic(_ bytes: [UInt8]) -> [UInt8] { header("Basic " + Data(bytes).base64EncodedString()) }

    /// The login a header holds, as (user, password) text, or nil.
    static func login(_ value: [UInt8]?) -> (String, String)? {
        guard case .login(let login) = BasicCredentials.parse(value) else { return nil }
        return (
            String(decoding: login.username, as: UTF8.self),
            login.password.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        )
    }

    @Test(
        "Basic credentials: RFC 7617's examples, any case of the scheme, the first colon, padding optional",
        arguments: [
            ("RFC 7617 §2", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "Aladdin", "open sesame"),
            ("RFC 7617 §2.1 UTF-8", "Basic dGVzdDoxMjPCow==", "test", "123£"),
            ("lowercase, spaces around", "  basic   Ym9iOnB3\t", "bob", "pw"),
            ("colon in the password", "Basic am9zw6k6cEBzczp3IHJk", "josé", "p@ss:w rd"),
            ("unpadded", "Basic Ym9iOnB3MQ", "bob", "pw1"),
            ("empty password", "Basic Ym9iOg==", "bob", ""),
        ])
    func goodHeaders(_ name: String, _ value: String, _ user: String, _ password: String) {
        let parsed = Self.login(Self.header(value))
        #expect(parsed?.0 == user && parsed?.1 == password, "\(name)")
    }

    @Test(
        "Basic credentials: what is no login",
        arguments: [
            ("another scheme", "Bearer abc"), ("scheme alone", "Basic"), ("empty", ""), ("not base64", "Basic !!!!"),
            ("padding in the middle", "Basic Ym9i=OnB3"), ("one character over a group", "Basic Ym9iO"),
            ("three padding characters", "Basic Ym9===="), ("no colon", "Basic YWxpY2U="),
            ("empty user-id", "Basic OnNlY3JldA=="),
            ("a tab instead of the space", "Basic\tYm9iOnB3"), ("Basicx", "Basicx Ym9iOnB3"),
        ])
    func badHeaders(_ name: String, _ value: String) {
        guard case .malformed(let reason) = BasicCredentials.parse(Self.header(value)) else {
            Issue.record("\(name) was read as a login")
            return
        }
        #expect(!reason.contains(value.dropFirst(6)) || value.count < 8, "the reason quotes the header")
    }

    @Test("Basic credentials: no header is missing, not malformed")
    func missing() {
        guard case .missing = BasicCredentials.parse(nil as [UInt8]?) else {
            Issue.record("nil is not missing"); return
        }
    }

    @Test("Basic credentials at the limits: a 4,096-byte password and 8,193 decoded bytes pass, one byte more does not")
    func limits() {
        let password = [UInt8](repeating: 0x70, count: PasswordRules.maximumCount)
        let name = [UInt8](repeating: 0x6E, count: BasicCredentials.maximumDecodedCount - 1 - password.count)
        #expect(Self.login(Self.basic(name + [0x3A] + password)) != nil)
        #expect(Self.login(Self.basic(name + [0x6E, 0x3A] + password)) == nil)
        #expect(Self.login(Self.basic([0x6E, 0x3A] + password + [0x70])) == nil)
        let longest = Self.basic(name + [0x3A] + password)
        #expect(longest.count - 6 == BasicCredentials.maximumEncodedCount)
    }

    static func ip(_ text: String) -> IPAddress { IPAddress(parsing: Array(text.utf8))! }

    @Test(
        "the client's address: headers only from trusted peers, X-Real-IP first, X-Forwarded-For from the right past trusted hops"
    )
    func forwardedAddress() {
        let trusted = [AddressRange(parsing: Array("10.0.0.0/8".utf8))!, AddressRange(parsing: Array("::1".utf8))!]
        func client(_ peer: ForwardedClient.Peer, _ real: String?, _ forwarded: String?) -> String? {
            ForwardedClient.address(
                peer: peer, realIP: real.map { Array($0.utf8) }, forwardedFor: forwarded.map { Array($0.utf8) },
                trustedProxies: trusted)?.description
        }
        let outsider = ForwardedClient.Peer.address(Self.ip("198.51.100.7"))
        #expect(client(outsider, "203.0.113.9", "203.0.113.9") == "198.51.100.7", "an outsider's headers were believed")
        #expect(client(.unixSocket, nil, nil) == nil)
        #expect(client(.unixSocket, " 203.0.113.9 ", nil) == "203.0.113.9")
        #expect(client(.address(Self.ip("::1")), nil, "192.0.2.1, 203.0.113.9") == "203.0.113.9", "named loopback")
        #expect(client(.address(Self.ip("10.1.2.3")), nil, "192.0.2.1, 203.0.113.9, 10.9.9.9") == "203.0.113.9")
        #expect(client(.unixSocket, nil, "10.1.1.1, ::1") == "10.1.1.1", "all trusted: the leftmost")
        #expect(client(.unixSocket, "2001:0DB8:0:0::1", nil) == "2001:db8::1", "not canonical")
        let hops = Array(repeating: "203.0.113.9", count: ForwardedClient.maximumHops)
        #expect(client(.unixSocket, nil, hops.joined(separator: ",")) == "203.0.113.9")
        #expect(client(.unixSocket, nil, (hops + ["203.0.113.9"]).joined(separator: ",")) == nil)
        let padded = String(repeating: " ", count: ForwardedClient.maximumHeaderCount - 11) + "203.0.113.9"
        #expect(client(.unixSocket, padded, nil) == "203.0.113.9")
        #expect(client(.unixSocket, " " + padded, nil) == nil)
    }

    @Test(
        "SPEC v4 §10: loopback is trusted only when --trusted-proxy names it, so a local user cannot choose the rhost",
        arguments: ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"])
    func loopbackTrustedOnlyWhenNamed(_ peer: String) {
        let local = ForwardedClient.Peer.address(Self.ip(peer))
        let forged = Array("192.0.2.66".utf8)
        let unnamed = ForwardedClient.address(peer: local, realIP: forged, forwardedFor: forged, trustedProxies: [])
        #expect(unnamed == Self.ip(peer), "loopback's headers were believed without --trusted-proxy")
        #expect(!ForwardedClient.isTrusted(local, trustedProxies: []))
        let named = [AddressRange(parsing: Array("127.0.0.0/8".utf8))!, AddressRange(parsing: Array("::1".utf8))!]
        #expect(
            ForwardedClient.address(peer: local, realIP: forged, forwardedFor: nil as [UInt8]?, trustedProxies: named)
                == Self.ip("192.0.2.66"))
        let fromSocket = ForwardedClient.address(
            peer: .unixSocket, realIP: forged, forwardedFor: nil as [UInt8]?, trustedProxies: [])
        #expect(fromSocket == Self.ip("192.0.2.66"), "a unix socket's headers are believed")
    }

    @Test(
        "X-Forwarded-For from a trusted proxy: the rightmost entry that is an address and not a trusted proxy; junk skipped, ports read",
        arguments: [
            ("junk at the right (issue #33: the whole header was thrown away)", "203.0.113.9, unknown", "203.0.113.9"),
            ("junk in the middle", "198.51.100.2, garbage!, 203.0.113.9", "203.0.113.9"),
            ("an obfuscated node (RFC 7239)", "203.0.113.9, _hidden", "203.0.113.9"),
            ("an empty entry", "203.0.113.9,,", "203.0.113.9"),
            ("IPv4 with a port", "198.51.100.2, 203.0.113.9:51234", "203.0.113.9"),
            ("bracketed IPv6 with a port", "[2001:db8::7]:443", "2001:db8::7"),
            ("bracketed IPv6 without a port", "[2001:db8::7]", "2001:db8::7"),
            ("bare IPv6", "2001:db8::7", "2001:db8::7"),
            ("a trusted proxy with a port is skipped", "203.0.113.9, 10.0.0.5:8080", "203.0.113.9"),
            ("port 65535", "203.0.113.9:65535", "203.0.113.9"),
            ("port 65536 is no address", "198.51.100.2, 203.0.113.9:65536", "198.51.100.2"),
            ("six digits of port", "198.51.100.2, 203.0.113.9:000080", "198.51.100.2"),
            ("an empty port", "198.51.100.2, 203.0.113.9:", "198.51.100.2"),
            ("IPv4 in brackets", "198.51.100.2, [203.0.113.9]:80", "198.51.100.2"),
            ("an IPv6 text that is no address", "198.51.100.2, 2001:db8::7:80:1:2:3:4", "198.51.100.2"),
            ("a zone is no address", "198.51.100.2, [fe80::1%eth0]:80", "198.51.100.2"),
            ("unbalanced bracket", "198.51.100.2, [2001:db8::7:80", "198.51.100.2"),
            ("a trailing bracket", "198.51.100.2, [2001:db8::7]x", "198.51.100.2"),
            ("only junk: the peer's own", "unknown, garbage", "10.0.0.1"),
            ("all trusted: the leftmost address", "junk, 10.0.0.7:1, 10.0.0.8", "10.0.0.7"),
        ])
    func forwardedForShapes(_ name: String, _ header: String, _ expected: String) {
        let trusted = [AddressRange(parsing: Array("10.0.0.0/8".utf8))!]
        let chosen = ForwardedClient.address(
            peer: .address(Self.ip("10.0.0.1")), realIP: nil as [UInt8]?, forwardedFor: Array(header.utf8),
            trustedProxies: trusted)
        #expect(chosen?.description == expected, "\(name)")
    }

    @Test("--trusted-proxy blocks: CIDR with host bits clear, within the family's width; IPv4-mapped addresses count")
    func addressRanges() {
        func range(_ text: String) -> AddressRange? { AddressRange(parsing: Array(text.utf8)) }
        #expect(range("10.0.0.0/8")?.contains(Self.ip("10.255.0.1")) == true)
        #expect(range("10.0.0.0/8")?.contains(Self.ip("11.0.0.1")) == false)
        #expect(range("10.0.0.0/8")?.contains(Self.ip("::ffff:10.1.2.3")) == true)
        #expect(range("2001:db8::/32")?.contains(Self.ip("2001:db8:ffff::1")) == true)
        #expect(range("192.0.2.1")?.prefixLength == 32)
        #expect(range("0.0.0.0/0")?.contains(Self.ip("203.0.113.9")) == true)
        for bad in [
            "10.0.0.1/8", "10.0.0.0/33", "::/129", "10.0.0.0/08", "10.0.0.0/", "10.0.0.0/-1", "example.org",
            "10.0.0.0/8/8",
        ] {
            #expect(range(bad) == nil, "\(bad) was accepted")
        }
    }

    // MARK: The cache of good logins

    static func withFile(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory.make(prefix: "credfile-cache")
        defer { directory.remove() }
        let path = directory.file("users.txt")
        try writeBytes(path, Array("alice,secret\n".utf8))
        try body(path)
    }

    @Test("the cache answers a remembered login, not another password or name, and forgets all when FILE changes")
    func cacheRemembersAndForgets() throws {
        try Self.withFile { path in
            let cache = try GoodLoginCache(path: path, lifetime: .seconds(300))
            let password = SecretBytes(Array("secret".utf8))
            #expect(!cache.contains(username: Array("alice".utf8), password: password))
            cache.remember(
                username: Array("alice".utf8), password: password, checkedAgainst: try #require(cache.currentVersion()))
            #expect(cache.contains(username: Array("alice".utf8), password: password))
            #expect(!cache.contains(username: Array("alice".utf8), password: SecretBytes(Array("secreT".utf8))))
            #expect(
                !cache.contains(username: Array("alicesecret".utf8), password: SecretBytes([])),
                "name and password run together")
            #expect(!cache.contains(username: Array("alic".utf8), password: SecretBytes(Array("esecret".utf8))))
            let before = try #require(cache.currentVersion())
            try writeBytes(path + ".new", Array("alice,other\n".utf8))
            rename(path + ".new", path)
            #expect(!cache.contains(username: Array("alice".utf8), password: password), "a changed FILE kept the cache")
            cache.remember(username: Array("alice".utf8), password: password, checkedAgainst: before)
            #expect(
                !cache.contains(username: Array("alice".utf8), password: password),
                "a login checked against the old FILE was kept")
            cache.remember(
                username: Array("alice".utf8), password: password, checkedAgainst: try #require(cache.currentVersion()))
            #expect(cache.count == 1)
            cache.removeAll()
            #expect(cache.count == 0 && !cache.contains(username: Array("alice".utf8), password: password))
            cache.remember(
                username: Array("alice".utf8), password: password, checkedAgainst: try #require(cache.currentVersion()))
            cache.erase()
            #expect(
                cache.count == 0 && !cache.contains(username: Array("alice".utf8), password: password),
                "erase kept an entry")
            cache.remember(
                username: Array("alice".utf8), password: password, checkedAgainst: try #require(cache.currentVersion()))
            #expect(cache.count == 0, "an erased cache took a new entry")
        }
    }

    @Test("the cache is bounded (a full set gives up its oldest entry) and entries expire")
    func cacheBoundsAndExpiry() throws {
        try Self.withFile { path in
            let cache = try GoodLoginCache(path: path, lifetime: .seconds(300), capacity: 8)
            let version = try #require(cache.currentVersion())
            _ = cache.contains(username: [], password: SecretBytes([]))  // takes FILE's version
            for index in 0..<200 {
                cache.remember(
                    username: Array("user\(index)".utf8), password: SecretBytes([1]), checkedAgainst: version)
            }
            #expect(cache.count <= 8 && cache.count > 0)
            #expect(
                cache.contains(username: Array("user199".utf8), password: SecretBytes([1])),
                "the newest entry was dropped")
            let brief = try GoodLoginCache(path: path, lifetime: .milliseconds(50))
            brief.remember(username: Array("alice".utf8), password: SecretBytes([1]), checkedAgainst: version)
            #expect(brief.contains(username: Array("alice".utf8), password: SecretBytes([1])))
            usleep(120_000)
            #expect(
                !brief.contains(username: Array("alice".utf8), password: SecretBytes([1])),
                "an expired login was answered")
        }
    }
}
