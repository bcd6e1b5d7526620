import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// The library half of SPEC §11's portal: tokens, the `Cookie` header, the form body, `rd`,
/// the forwarded URL, the anti-forgery rule, the language, and the session rules.
@Suite struct PortalTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: Tokens

    @Test("A session token: 43 base64url characters of 32 random bytes; only its SHA-256 is kept")
    func tokens() throws {
        let token = try SessionToken.generate()
        #expect(token.cookieValue.utf8.count == 43)
        #expect(token.cookieValue.utf8.allSatisfy { $0 == 0x2D || $0 == 0x5F || isalnum(Int32($0)) != 0 })
        let again = try #require(SessionToken(cookieValue: Self.bytes(token.cookieValue)))
        #expect(again.digest == token.digest && token.digest.count == 32)
        let raw = try #require(Base64URL.decode(Self.bytes(token.cookieValue)))
        #expect(token.digest == raw.withUnsafeBytes { OpenSSL.sha256($0) })
        #expect(try SessionToken.generate().digest != token.digest)
        #expect("\(token)" == "SessionToken(redacted)" && !"\(token)".contains(token.cookieValue))
    }

    @Test(
        "A cookie value that is no token costs no lookup",
        arguments: [
            ("empty", ""), ("42 characters", String(repeating: "A", count: 42)),
            ("44 characters", String(repeating: "A", count: 44)), ("padding", String(repeating: "A", count: 42) + "="),
            ("standard base64", String(repeating: "A", count: 42) + "+"),
            ("stray low bits", String(repeating: "A", count: 42) + "B"),
        ])
    func badTokens(_ name: String, _ value: String) {
        #expect(SessionToken(cookieValue: Self.bytes(value)) == nil, "\(name)")
    }

    @Test("Base64url round-trips every length, and each byte string has one text")
    func base64URL() {
        for count in 0..<70 {
            let data = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(data)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(Self.bytes(text)) == data, "\(count) bytes")
            #expect(
                text
                    == Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
        }
        #expect(Base64URL.decode(Self.bytes("A")) == nil)
    }

    // MARK: The Cookie header

    @Test(
        "Cookie header: the values of one name",
        arguments: [
            ("alone", "__Host-credfile=abc", ["abc"]),
            ("among others", "a=1; __Host-credfile=abc; b=2", ["abc"]),
            ("no space after ;", "a=1;__Host-credfile=abc", ["abc"]),
            ("tabs and spaces", "a=1;\t __Host-credfile = abc ", ["abc"]),
            ("quoted", "__Host-credfile=\"abc\"", ["abc"]),
            ("twice, both kept in order", "__Host-credfile=one; __Host-credfile=two", ["one", "two"]),
            ("case matters", "__host-credfile=abc", []),
            ("a longer name is another", "__Host-credfile-device=abc", []),
            ("a prefix is another", "x__Host-credfile=abc", []),
            ("no =", "__Host-credfile", []),
            ("empty value", "__Host-credfile=", [""]),
            ("= in the value", "__Host-credfile=a=b", ["a=b"]),
            ("empty header", "", []),
            ("only separators", ";;; ;", []),
        ])
    func cookies(_ name: String, _ header: String, _ expected: [String]) {
        let found = CookieHeader.values(named: "__Host-credfile", in: Self.bytes(header)).map {
            String(decoding: $0, as: UTF8.self)
        }
        #expect(found == expected, "\(name)")
    }

    @Test("Cookie header: bounded at 4,096 bytes a pair, 4 values a name, 16 KiB a header")
    func cookieLimits() {
        let name = "__Host-credfile"
        let fits = name + "=" + String(repeating: "v", count: 4096 - name.utf8.count - 1)
        #expect(CookieHeader.values(named: name, in: Self.bytes(fits)).first?.count == 4096 - name.utf8.count - 1)
        #expect(CookieHeader.values(named: name, in: Self.bytes(fits + "v")).isEmpty)
        let many = Array(repeating: name + "=x", count: 9).joined(separator: "; ")
        #expect(CookieHeader.values(named: name, in: Self.bytes(many)).count == 4)
        let padding = "p=" + String(repeating: "x", count: 16 * 1024)
        #expect(CookieHeader.values(named: name, in: Self.bytes(padding + "; " + name + "=late")).isEmpty)
        #expect(CookieHeader.values(named: name, in: nil as [UInt8]?).isEmpty)
    }

    // MARK: The form body

    @Test(
        "Form body: + and %XX decoded, fields by name",
        arguments: [
            ("plain", "username=bob&password=pw", "bob", "pw"),
            ("plus is a space", "username=bob+smith&password=a+b", "bob smith", "a b"),
            ("percent escapes", "username=jos%C3%A9&password=%26%3D%2B%25", "josé", "&=+%"),
            ("lowercase hex", "username=%c3%a9&password=x", "é", "x"),
            ("empty password", "username=bob&password=", "bob", ""),
            ("field without =", "username=bob&password", "bob", ""),
            ("other order, extra fields", "csrf=t&password=p&rd=%2F&username=u", "u", "p"),
            ("empty pairs skipped", "&&username=u&&password=p&", "u", "p"),
        ])
    func forms(_ name: String, _ body: String, _ user: String, _ password: String) throws {
        let form = try #require(FormFields(parsing: Self.bytes(body)), "\(name)")
        #expect(form.text("username") == user, "\(name)")
        #expect(form.secret("password")?.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == password, "\(name)")
    }

    @Test(
        "Form body: what is malformed (answered as a denial)",
        arguments: [
            ("% at the end", "username=bob&password=%"), ("% and one digit", "password=%4"),
            ("% not hex", "password=%zz"), ("a field twice", "password=a&password=b"),
            ("a name twice, one empty", "username=&username=bob"), ("name not UTF-8", "%ff=1"),
        ])
    func badForms(_ name: String, _ body: String) {
        #expect(FormFields(parsing: Self.bytes(body)) == nil, "\(name)")
    }

    @Test("Form body: bounded in bytes and fields, at the limits")
    func formLimits() throws {
        let sixteen = (0..<16).map { "f\($0)=x" }.joined(separator: "&")
        #expect(FormFields(parsing: Self.bytes(sixteen))?.names.count == 16)
        #expect(FormFields(parsing: Self.bytes(sixteen + "&f16=x")) == nil)
        let prefix = "password="
        let full = prefix + String(repeating: "a", count: FormFields.maximumCount - prefix.utf8.count)
        #expect(FormFields(parsing: Self.bytes(full))?.secret("password")?.count == full.utf8.count - prefix.utf8.count)
        #expect(FormFields(parsing: Self.bytes(full + "a")) == nil)
        let password = String(repeating: "%41", count: PasswordRules.maximumCount)
        #expect(FormFields(parsing: Self.bytes("username=u&password=" + password))?.secret("password")?.count == 4096)
        #expect(FormFields(parsing: [UInt8]())?.names == [])
    }

    // MARK: rd

    static let fallback = "/.credfile/"

    @Test(
        "rd: followed to the own host or under cookie-domain, over https",
        arguments: [
            ("own host", "https://app.example.com/x?y=1#z", "https://app.example.com/x?y=1#z"),
            ("own host, uppercase", "HTTPS://APP.Example.COM/x", "https://app.example.com/x"),
            ("own host, no path", "https://app.example.com", "https://app.example.com"),
            ("own host, :443", "https://app.example.com:443/", "https://app.example.com:443/"),
            ("a path", "/dashboard?tab=2", "/dashboard?tab=2"),
            ("the root", "/", "/"),
            ("under cookie-domain", "https://grafana.example.org/d", "https://grafana.example.org/d"),
            ("cookie-domain itself", "https://example.org/", "https://example.org/"),
            ("percent escapes kept", "https://app.example.com/%2F%2Fevil", "https://app.example.com/%2F%2Fevil"),
        ])
    func redirectsFollowed(_ name: String, _ rd: String, _ expected: String) {
        let target = RedirectTarget.resolve(
            Self.bytes(rd), requestHost: "app.example.com", cookieDomain: "example.org", fallback: Self.fallback)
        #expect(target == expected, "\(name)")
    }

    @Test(
        "rd: every open-redirect shape goes to {prefix}/",
        arguments: [
            ("another host", "https://evil.example/"), ("protocol-relative", "//evil.example/"),
            ("protocol-relative with backslash", "/\\evil.example/"), ("backslashes", "\\\\evil.example"),
            ("https with backslash", "https:\\\\evil.example"), ("javascript", "javascript:alert(1)"),
            ("JavaScript mixed case", "JaVaScRiPt:alert(1)"), ("data", "data:text/html,x"),
            ("http to own host", "http://app.example.com/"), ("userinfo", "https://app.example.com@evil.example/"),
            ("userinfo with colon", "https://app.example.com:pw@evil.example/"),
            ("a suffix, not a subdomain", "https://evilexample.org/"),
            ("own host as a prefix", "https://app.example.com.evil/"),
            ("another port", "https://app.example.com:8443/"), ("tab inside", "https://app.exa\tmple.com/"),
            ("newline", "/x\r\nSet-Cookie: a=b"), ("space", "/x y"), ("NUL", "/x\u{0}"),
            ("non-ASCII host", "https://аpp.example.com/"), ("empty", ""), ("relative path", "dashboard"),
            ("three slashes", "https:///evil.example"), ("no host", "https://"),
            ("bad port", "https://app.example.com:99999/"),
            ("dotted host", "https://.example.org/"), ("empty label", "https://a..example.org/"),
            ("scheme only", "https:"), ("ftp", "ftp://app.example.com/"), ("DEL", "/x\u{7F}"),
        ])
    func redirectsRefused(_ name: String, _ rd: String) {
        let target = RedirectTarget.resolve(
            Self.bytes(rd), requestHost: "app.example.com", cookieDomain: "example.org", fallback: Self.fallback)
        #expect(target == Self.fallback, "\(name)")
    }

    @Test("rd: without cookie-domain only the own host; a missing or 4,097-byte rd falls back")
    func redirectLimits() {
        let sub = RedirectTarget.resolve(
            Self.bytes("https://b.example.org/"), requestHost: "a.example.org", cookieDomain: nil, fallback: "/p/")
        #expect(sub == "/p/")
        let path = "/" + String(repeating: "a", count: 4095)
        #expect(RedirectTarget.resolve(Self.bytes(path), requestHost: "h", cookieDomain: nil, fallback: "/p/") == path)
        #expect(
            RedirectTarget.resolve(Self.bytes(path + "a"), requestHost: "h", cookieDomain: nil, fallback: "/p/")
                == "/p/")
        #expect(RedirectTarget.resolve(nil as [UInt8]?, requestHost: "h", cookieDomain: nil, fallback: "/p/") == "/p/")
        let withPort = RedirectTarget.resolve(
            Self.bytes("https://h.example:8443/x"), requestHost: "h.example:8443", cookieDomain: nil, fallback: "/p/")
        #expect(withPort == "https://h.example:8443/x")
    }

    // MARK: The original URL

    @Test(
        "The original URL: X-Original-URL, or X-Forwarded-Proto/-Host/-Uri, from trusted peers only",
        arguments: [
            (
                "nginx", OriginalURL.Headers(originalURL: bytes("https://app.example.com/a?b=1")), true,
                "https://app.example.com/a?b=1"
            ),
            (
                "Caddy",
                OriginalURL.Headers(
                    forwardedProto: bytes("https"), forwardedHost: bytes("App.Example.com"),
                    forwardedURI: bytes("/a?b=1")), true, "https://app.example.com/a?b=1"
            ),
            (
                "no URI is /", OriginalURL.Headers(forwardedProto: bytes("https"), forwardedHost: bytes("h")), true,
                "https://h/"
            ),
            (
                "X-Original-URL wins",
                OriginalURL.Headers(
                    originalURL: bytes("https://a/"), forwardedProto: bytes("https"),
                    forwardedHost: bytes("b")), true, "https://a/"
            ),
            ("untrusted peer", OriginalURL.Headers(originalURL: bytes("https://app.example.com/")), false, nil),
            (
                "untrusted forwarded", OriginalURL.Headers(forwardedProto: bytes("https"), forwardedHost: bytes("h")),
                false, nil
            ),
            (
                "URI not a path",
                OriginalURL.Headers(
                    forwardedProto: bytes("https"), forwardedHost: bytes("h"),
                    forwardedURI: bytes("evil")), true, nil
            ),
            (
                "URI //",
                OriginalURL.Headers(
                    forwardedProto: bytes("https"), forwardedHost: bytes("h"),
                    forwardedURI: bytes("//evil/")), true, nil
            ),
            (
                "another scheme", OriginalURL.Headers(forwardedProto: bytes("gopher"), forwardedHost: bytes("h")), true,
                nil
            ),
            (
                "host with userinfo", OriginalURL.Headers(forwardedProto: bytes("https"), forwardedHost: bytes("a@h")),
                true, nil
            ),
            (
                "CRLF in URI",
                OriginalURL.Headers(
                    forwardedProto: bytes("https"), forwardedHost: bytes("h"),
                    forwardedURI: bytes("/a\r\nX: y")), true, nil
            ),
            ("javascript", OriginalURL.Headers(originalURL: bytes("javascript:alert(1)")), true, nil),
            ("no headers", OriginalURL.Headers(), true, nil),
        ])
    func originalURL(_ name: String, _ headers: OriginalURL.Headers, _ trusted: Bool, _ expected: String?) {
        #expect(OriginalURL.url(headers, peerIsTrusted: trusted) == expected, "\(name)")
    }

    @Test("The own host: X-Forwarded-Host only from a trusted peer")
    func ownHost() {
        #expect(
            OriginalURL.host(host: Self.bytes("a:8080"), forwardedHost: Self.bytes("B"), peerIsTrusted: true) == "b")
        #expect(
            OriginalURL.host(host: Self.bytes("A:8080"), forwardedHost: Self.bytes("b"), peerIsTrusted: false)
                == "a:8080")
        #expect(OriginalURL.host(host: Self.bytes("a b"), forwardedHost: nil, peerIsTrusted: false) == nil)
    }

    // MARK: Forged requests

    @Test(
        "A POST's origin: Origin, else Sec-Fetch-Site, else Referer",
        arguments: [
            ("own Origin", "https://app.example.com", nil, nil, true),
            ("own Origin :443", "https://app.example.com:443", nil, nil, true),
            ("Origin of another host", "https://evil.example", "same-origin", nil, false),
            ("Origin over http", "http://app.example.com", nil, nil, false),
            ("Origin null", "null", "same-origin", nil, false),
            ("Origin with a path", "https://app.example.com/x", nil, nil, false),
            ("Origin of a subdomain", "https://x.app.example.com", nil, nil, false),
            ("Sec-Fetch-Site same-origin", nil, "same-origin", nil, true),
            ("Sec-Fetch-Site same-site", nil, "same-site", "https://app.example.com/", false),
            ("Sec-Fetch-Site cross-site", nil, "cross-site", "https://app.example.com/", false),
            ("Sec-Fetch-Site none", nil, "none", nil, false),
            ("same-host Referer", nil, nil, "https://app.example.com/.credfile/login?rd=x", true),
            ("Referer of another host", nil, nil, "https://evil.example/app.example.com", false),
            ("Referer over http", nil, nil, "http://app.example.com/", false),
            ("nothing", nil, nil, nil, false),
        ] as [(String, String?, String?, String?, Bool)])
    func origins(_ name: String, _ origin: String?, _ site: String?, _ referer: String?, _ expected: Bool) {
        let same = RequestOrigin.isSameOrigin(
            origin: origin.map(Self.bytes), secFetchSite: site.map(Self.bytes), referer: referer.map(Self.bytes),
            ownHost: "app.example.com")
        #expect(same == expected, "\(name)")
    }

    @Test("The anti-forgery token: the HMAC of the pre-session cookie, and only its own")
    func antiForgery() throws {
        let signer = AntiForgery(key: SecretBytes(try OpenSSL.randomBytes(count: 32)))
        let preSession = try AntiForgery.newPreSession()
        let token = signer.token(for: Self.bytes(preSession))
        #expect(signer.accepts(token: Self.bytes(token), preSession: Self.bytes(preSession)))
        let otherCookie = try AntiForgery.newPreSession()
        #expect(!signer.accepts(token: Self.bytes(token), preSession: Self.bytes(otherCookie)))
        let otherKey = AntiForgery(key: SecretBytes(try OpenSSL.randomBytes(count: 32)))
        #expect(!otherKey.accepts(token: Self.bytes(token), preSession: Self.bytes(preSession)))
        #expect(!signer.accepts(token: nil as [UInt8]?, preSession: Self.bytes(preSession)))
        #expect(!signer.accepts(token: Self.bytes(token), preSession: nil as [UInt8]?))
        #expect(!signer.accepts(token: Self.bytes(token + "A"), preSession: Self.bytes(preSession)))
        #expect(!signer.accepts(token: Self.bytes("x"), preSession: Self.bytes("x")))
        var flipped = Self.bytes(token)
        flipped[0] = flipped[0] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(!signer.accepts(token: flipped, preSession: Self.bytes(preSession)))
    }

    // MARK: Language

    @Test(
        "Accept-Language: Spanish or English, Spanish when neither",
        arguments: [
            ("Spanish", "es-ES,es;q=0.9", PortalLanguage.es), ("English", "en-US,en;q=0.9", .en),
            ("English preferred", "fr;q=1, en;q=0.8, es;q=0.5", .en),
            ("Spanish preferred by q", "en;q=0.3, es-AR;q=0.7", .es), ("tie: the first", "en, es", .en),
            ("neither", "fr-FR,de", .es), ("missing", nil, .es), ("empty", "", .es),
            ("q=0 excludes", "en;q=0, es;q=0.1", .es), ("q=0 alone", "en;q=0", .es),
            ("bad q skipped", "en;q=2, es;q=0.1", .es), ("uppercase", "EN-GB", .en), ("wildcard", "*", .es),
            ("q with three decimals", "es;q=0.001, en;q=0.002", .en), ("spaces", " en ; q=1.0 ", .en),
        ] as [(String, String?, PortalLanguage)])
    func languages(_ name: String, _ header: String?, _ expected: PortalLanguage) {
        #expect(PortalLanguage.negotiate(header.map(Self.bytes)) == expected, "\(name)")
    }

    @Test("lang = es|en fixes the language")
    func fixedLanguage() {
        #expect(PortalLanguage.negotiate(Self.bytes("en"), fixed: .es) == .es)
        #expect(PortalLanguage.negotiate(Self.bytes("es"), fixed: .en) == .en)
    }

    // MARK: Session rules

    @Test(
        "Session limits: defaults, and SPEC §11's bounds at their edges",
        arguments: [
            (3600, 86_400, 16, true), (1, 1, 1, true), (1, 30 * 86_400, 1024, true), (0, 86_400, 16, false),
            (3600, 30 * 86_400 + 1, 16, false), (3600, 0, 16, false), (3600, 86_400, 0, false),
            (3600, 86_400, 1025, false),
        ])
    func limits(_ idle: Int, _ maximum: Int, _ perUser: Int, _ valid: Bool) {
        #expect(((try? SessionLimits(idle: idle, maximum: maximum, perUser: perUser)) != nil) == valid)
    }

    static let entry = [UInt8](repeating: 7, count: 32)
    static func record(started: Int64, lastSeen: Int64) -> SessionRecord {
        SessionRecord(
            tokenDigest: [1], user: "bob", entryDigest: entry, started: started, lastSeen: lastSeen, client: nil,
            userAgent: nil)
    }

    @Test(
        "Session rules: absolute, idle, entry changed, and last-seen once a minute",
        arguments: [
            ("fresh", 0, 0, 0, entry, SessionVerdict.active(touch: false)),
            ("59 s after last-seen: not written", 0, 0, 59, entry, .active(touch: false)),
            ("60 s after last-seen: written", 0, 0, 60, entry, .active(touch: true)),
            ("idle one second short", 0, 0, 3599, entry, .active(touch: true)),
            ("idle at 3,600 s", 0, 0, 3600, entry, .idle),
            ("active, at the absolute limit", 0, 86_399 - 10, 86_400, entry, .expired),
            ("one second before the absolute limit", 0, 86_399 - 10, 86_399, entry, .active(touch: false)),
            ("activity never extends it", 0, 86_500, 86_501, entry, .expired),
            ("entry changed", 0, 0, 10, [UInt8](repeating: 8, count: 32), .entryChanged),
            ("entry deleted", 0, 0, 10, nil, .entryChanged),
            ("a clock set back", 100, 100, 50, entry, .expired),
        ] as [(String, Int64, Int64, Int64, [UInt8]?, SessionVerdict)])
    func rules(
        _ name: String, _ started: Int64, _ lastSeen: Int64, _ now: Int64, _ digest: [UInt8]?,
        _ expected: SessionVerdict
    ) throws {
        let limits = try SessionLimits()
        #expect(
            limits.judge(Self.record(started: started, lastSeen: lastSeen), now: now, entryDigest: digest) == expected,
            "\(name)")
    }

    /// The storages the session tests run against.
    enum StorageKind: String, CaseIterable, Sendable { case memory, sqlite, postgresql }

    /// Runs `body` with a fresh storage of `kind` (an SQLite file in a temporary directory,
    /// a new database on the tests' PostgreSQL 15, SPEC §15).
    static func withStorage(_ kind: StorageKind, _ body: (any SessionStorage) throws -> Void) throws {
        switch kind {
        case .memory: try body(MemorySessionStorage())
        case .sqlite:
            try withTemporaryDirectory { directory in
                try body(SQLiteSessionStorage(path: directory.path + "/web.guard.db"))
            }
        case .postgresql:
            let state = try PostgreSQLServer.shared().freshDatabase()
            try body(SQLiteSessionStorage(location: try StateLocation(state: state, credentialFile: "unused")))
        }
    }

    @Test(
        "Sessions: a new token each sign-in, the limit ends the oldest, sign-out and end-all",
        arguments: StorageKind.allCases)
    func sessions(_ kind: StorageKind) throws { try Self.withStorage(kind) { try sessions(in: $0) } }

    func sessions(in storage: any SessionStorage) throws {
        let sessions = try PortalSessions(
            storage: storage, limits: try SessionLimits(idle: 100, maximum: 1000, perUser: 3))
        let line = Self.bytes("bob,$pbkdf2-sha256$…")
        let lines: (String) -> [UInt8]? = { $0 == "bob" ? line : nil }
        var tokens: [SessionToken] = []
        for second in 0..<4 { tokens.append(try sessions.start(user: "bob", line: line, now: Int64(second))) }
        #expect(Set(tokens.map(\.digest)).count == 4)
        #expect(try sessions.check(tokens[0], now: 5, line: lines) == .none(reason: nil), "the oldest ended")
        for token in tokens.dropFirst() {
            #expect(try sessions.check(token, now: 5, line: lines) == .signedIn(user: "bob"))
        }
        #expect(try sessions.list(user: "bob").map(\.started) == [1, 2, 3])
        #expect(
            try sessions.list(user: "bob").allSatisfy { $0.entryDigest != Array(line) && $0.entryDigest.count == 32 })
        #expect(try sessions.end(tokens[1]))
        #expect(try sessions.check(tokens[1], now: 6, line: lines) == .none(reason: nil))
        let alice = try sessions.start(user: "alice", line: Self.bytes("alice,x"), now: 6)
        #expect(try sessions.endAll(user: "bob") == 2)
        #expect(try sessions.list(user: nil).map(\.user) == ["alice"])
        #expect(try sessions.endAll(user: nil) == 1)
        #expect(try sessions.check(alice, now: 7, line: { _ in Self.bytes("alice,x") }) == .none(reason: nil))
    }

    @Test(
        "Sessions: last-seen written once a minute; idle, expired and changed ones end and are removed",
        arguments: StorageKind.allCases)
    func sessionLifecycle(_ kind: StorageKind) throws { try Self.withStorage(kind) { try sessionLifecycle(in: $0) } }

    func sessionLifecycle(in storage: any SessionStorage) throws {
        let sessions = try PortalSessions(
            storage: storage, limits: try SessionLimits(idle: 120, maximum: 300, perUser: 16))
        var line = Self.bytes("bob,hash1")
        let token = try sessions.start(
            user: "bob", line: line, now: 1000, client: "192.0.2.1", userAgent: String(repeating: "é", count: 200))
        #expect(try storage.sessions(user: "bob").first?.userAgent?.utf8.count == 256)
        #expect(try sessions.check(token, now: 1059, line: { _ in line }) == .signedIn(user: "bob"))
        #expect(try storage.session(tokenDigest: token.digest)?.lastSeen == 1000)
        #expect(try sessions.check(token, now: 1060, line: { _ in line }) == .signedIn(user: "bob"))
        #expect(try storage.session(tokenDigest: token.digest)?.lastSeen == 1060)
        #expect(try sessions.check(token, now: 1180, line: { _ in line }) == .none(reason: .idle))
        #expect(try storage.session(tokenDigest: token.digest) == nil)

        let second = try sessions.start(user: "bob", line: line, now: 2000)
        for now in stride(from: Int64(2050), to: 2300, by: 50) {
            #expect(try sessions.check(second, now: now, line: { _ in line }) == .signedIn(user: "bob"))
        }
        #expect(try sessions.check(second, now: 2300, line: { _ in line }) == .none(reason: .expired))

        let third = try sessions.start(user: "bob", line: line, now: 3000)
        line = Self.bytes("bob,hash2")  // passwd
        #expect(try sessions.check(third, now: 3001, line: { _ in line }) == .none(reason: .entryChanged))
        #expect(try storage.sessions(user: nil).isEmpty)
    }

    @Test("The entry digest is keyed: another key, another digest; the same line, the same")
    func entryDigest() throws {
        let key = SecretBytes(try OpenSSL.randomBytes(count: 32))
        let line = Self.bytes("bob,$pbkdf2-sha256$600000$…")
        #expect(EntryDigester(key: key).digest(ofLine: line) == EntryDigester(key: key).digest(ofLine: line))
        #expect(EntryDigester(key: key).digest(ofLine: line) != EntryDigester(key: key).digest(ofLine: line + [0x20]))
        let other = EntryDigester(key: SecretBytes(try OpenSSL.randomBytes(count: 32)))
        #expect(EntryDigester(key: key).digest(ofLine: line) != other.digest(ofLine: line))
        #expect(EntryDigester(key: key).digest(ofLine: line) != line.withUnsafeBytes { OpenSSL.sha256($0) })
    }

    @Test("A storage's keys are made once and kept", arguments: StorageKind.allCases)
    func keys(_ kind: StorageKind) throws {
        try Self.withStorage(kind) { storage in
            let first = try storage.key(named: "a")
            #expect(try storage.key(named: "a") == first && first.count == 32)
            #expect(try storage.key(named: "b") != first)
        }
    }

    @Test(
        "A version-1 state database (the guard's failures only) gains the sessions table by migration 2, keeping its rows"
    )
    func migration() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/web.guard.db"
            #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
            do {
                let old = try SQLiteConnection(path: path, busyTimeout: 1000)
                try old.execute(SQLiteStateStore.migrations[0])
                try old.execute("INSERT INTO failures VALUES (x'626f62', 3, 1000, 0); PRAGMA user_version = 1")
            }
            let sessions = try PortalSessions(storage: SQLiteSessionStorage(path: path), limits: try SessionLimits())
            let token = try sessions.start(user: "bob", line: Self.bytes("bob,x"), now: 10)
            #expect(try sessions.check(token, now: 11, line: { _ in Self.bytes("bob,x") }) == .signedIn(user: "bob"))
            let connection = try SQLiteConnection(path: path, busyTimeout: 1000)
            // The later migrations (SPEC §14's code steps, WebAuthn challenges…) run in the same open.
            #expect(try SQLiteStateStore.userVersion(connection) == SQLiteStateStore.schemaVersion)
            let failures = try connection.prepare("SELECT count FROM failures WHERE name = x'626f62'")
            #expect(try failures.step() && failures.int64(0) == 3, "the guard's rows survive the migration")
            let guardDatabase = GuardDatabase(path: path, owner: nil)
            #expect(try guardDatabase.row(Self.bytes("bob"))?.count == 3, "the guard reads the migrated database")
        }
    }

    @Test("The SQLite storage: a restart keeps sessions and keys; the file is 0600; no token is stored")
    func sqliteRestart() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/web.guard.db"
            let limits = try SessionLimits()
            let line = Self.bytes("bob,hash")
            let token = try PortalSessions(storage: SQLiteSessionStorage(path: path), limits: limits).start(
                user: "bob", line: line, now: 1000, client: "2001:db8::1", userAgent: "Mozilla/5.0")
            let key = try SQLiteSessionStorage(path: path).key(named: PortalSessions.entryKeyName)
            // A new process: a new storage on the same file.
            let storage = SQLiteSessionStorage(path: path)
            #expect(try storage.key(named: PortalSessions.entryKeyName) == key)
            let again = try PortalSessions(storage: storage, limits: limits)
            #expect(try again.check(token, now: 1001, line: { _ in line }) == .signedIn(user: "bob"))
            let record = try #require(try again.list(user: "bob").first)
            #expect(record.client == "2001:db8::1" && record.userAgent == "Mozilla/5.0" && record.started == 1000)
            var status = stat()
            #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
            let file =
                try Data(contentsOf: URL(fileURLWithPath: path))
                + ((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data())
            #expect(file.range(of: Data(token.cookieValue.utf8)) == nil, "the token is in the database")
            #expect(file.range(of: Data(token.digest)) != nil, "the digest is not in the database")
        }
    }
}
