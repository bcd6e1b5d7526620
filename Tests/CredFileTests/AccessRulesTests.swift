import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// SPEC §13's rules, decided as Authelia and tinyauth document their own examples. Each
/// case names the peer's page and example it comes from; the peers' rules are rewritten
/// in credfile's syntax (Authelia's `one_factor` is `allow`, `two_factor` is
/// `two-factor`, `default_policy: deny` is the rules' own end; an OR of subjects is one
/// rule per AND list; tinyauth's per-app labels are rules on the app's host).
@Suite struct AccessRulesTests {
    /// One request and what the peer documents for it.
    struct Case: CustomTestStringConvertible, Sendable {
        let source: String
        let rules: String
        let url: String
        var method = "GET"
        var user: String? = nil
        var groups: [String] = []
        var address: String? = nil
        let action: AccessAction
        /// The deciding line; nil: no rule decided.
        let line: Int?
        var reason: AccessDecision.Reason = .rule
        var testDescription: String { "\(source): \(method) \(url) \(user ?? "anonymous")" }
    }

    // Authelia, https://www.authelia.com/configuration/security/access-control/ ("Rules"
    // section and the full example at the end of the page, default_policy: deny).
    static let authelia = """
        bypass     host=public.example.com
        bypass     host=*.example.com method=OPTIONS
        allow      host=secure.example.com network=10.10.0.0/16 network=192.168.2.0/24 network=192.168.1.0/24 network=10.0.0.1/32
        two-factor host=secure.example.com host=private.example.com
        allow      host=singlefactor.example.com
        deny       host=mx2.mail.example.com group=admins
        two-factor host=*.example.com group=admins group=moderators
        two-factor host=dev.example.com path=~^/groups/dev/.*$ group=dev
        two-factor host=dev.example.com path=~^/users/john/.*$ group=dev user=john
        two-factor host=dev.example.com path=~^/users/john/.*$ group=admins
        """
    static let autheliaPage = "Authelia access-control page, full example"

    // Authelia, https://www.authelia.com/overview/authorization/access-control/: the one
    // rule of the overview (dev.example.com, ^/groups/dev/.*$, group:dev, GET/POST,
    // 192.168.1.0/24, two_factor).
    static let autheliaOverview = """
        two-factor host=dev.example.com path=~^/groups/dev/.*$ group=dev method=GET method=POST network=192.168.1.0/24
        """

    // Authelia rules as users publish them (docs.ibracorp.io/authelia/authelia/rules):
    // the API bypass ^/api([/?].*)?$ on *.domain.com, then one_factor for the rest.
    static let autheliaAPI = """
        bypass host=auth.domain.com
        bypass host=*.domain.com path=~^/api([/?].*)?$
        allow  host=*.domain.com
        """

    // tinyauth, https://tinyauth.app/docs/guides/access-controls and
    // https://tinyauth.app/docs/reference/labels: per-app labels, the app being
    // myapp.example.com.
    static let tinyauthUsersAllow = "allow host=myapp.example.com user=user1\n"
    static let tinyauthUsersAllowList = "allow host=myapp.example.com user=user1 user=user2\n"
    static let tinyauthUsersBlock = "deny host=myapp.example.com user=user2\nallow host=myapp.example.com\n"
    static let tinyauthPathAllow = "bypass host=myapp.example.com path=~^/api\nallow host=myapp.example.com\n"
    static let tinyauthPathBlock = "allow host=myapp.example.com path=~^/admin\nbypass host=myapp.example.com\n"
    static let tinyauthIPAllow = "deny host=myapp.example.com network=!10.10.10.0/24\nallow host=myapp.example.com\n"
    static let tinyauthIPBlock = "deny host=myapp.example.com network=10.10.10.5/32\nallow host=myapp.example.com\n"
    static let tinyauthIPBypass = "bypass host=myapp.example.com network=10.10.10.0/24\nallow host=myapp.example.com\n"
    static let tinyauthGroups = "allow host=myapp.example.com group=admins\n"

    // SPEC §13's own example.
    static let spec = """
        # action   matchers: all must match; a matcher given twice matches either value
        bypass     host=status.example.com
        deny       path=/admin network=!10.0.0.0/8
        allow      host=*.example.com path=/admin/ group=admins
        two-factor host=vault.example.com
        allow      host=*.example.com
        """

    static let cases: [Case] = [
        // Authelia's full example.
        Case(
            source: autheliaPage + ", rule 1 (bypass public)", rules: authelia, url: "https://public.example.com/",
            action: .bypass, line: 1),
        Case(
            source: autheliaPage + ", rule 2 (OPTIONS bypass)", rules: authelia, url: "https://app.example.com/x",
            method: "OPTIONS", action: .bypass, line: 2),
        Case(
            source: autheliaPage + ", rule 3 (networks)", rules: authelia, url: "https://secure.example.com/",
            user: "john", address: "10.10.1.1", action: .allow, line: 3),
        Case(
            source: autheliaPage + ", rule 3 (10.0.0.1)", rules: authelia, url: "https://secure.example.com/",
            user: "john", address: "10.0.0.1", action: .allow, line: 3),
        Case(
            source: autheliaPage + ", rule 4 (outside the networks)", rules: authelia,
            url: "https://secure.example.com/", user: "john", address: "203.0.113.9", action: .twoFactor, line: 4),
        Case(
            source: autheliaPage + ", rule 4 (second domain)", rules: authelia, url: "https://private.example.com/",
            user: "john", address: "10.10.1.1", action: .twoFactor, line: 4),
        Case(
            source: autheliaPage + ", rule 5", rules: authelia, url: "https://singlefactor.example.com/", user: "john",
            action: .allow, line: 5),
        Case(
            source: autheliaPage + ", rule 6 (admins denied)", rules: authelia, url: "https://mx2.mail.example.com/",
            user: "harry", groups: ["admins"], action: .deny, line: 6),
        Case(
            source: autheliaPage + ", rule 6 (anonymous: a potential match, sign in)", rules: authelia,
            url: "https://mx2.mail.example.com/", action: .allow, line: 6, reason: .signInFirst),
        Case(
            source: autheliaPage + ", rule 7 (no group: default deny)", rules: authelia,
            url: "https://mx2.mail.example.com/", user: "bob", action: .deny, line: nil, reason: .noRule),
        Case(
            source: autheliaPage + ", rule 7 (moderators)", rules: authelia, url: "https://app.example.com/",
            user: "bob", groups: ["moderators"], action: .twoFactor, line: 7),
        Case(
            source: autheliaPage + ", rule 7 (wildcard is not the apex)", rules: authelia, url: "https://example.com/",
            user: "bob", groups: ["admins"], action: .deny, line: nil, reason: .noRule),
        Case(
            source: autheliaPage + ", rule 8 (group dev)", rules: authelia, url: "https://dev.example.com/groups/dev/a",
            user: "bob", groups: ["dev"], action: .twoFactor, line: 8),
        Case(
            source: autheliaPage + ", rule 8 (not in dev)", rules: authelia,
            url: "https://dev.example.com/groups/dev/a", user: "bob", action: .deny, line: nil, reason: .noRule),
        Case(
            source: autheliaPage + ", rule 9 (dev AND john)", rules: authelia,
            url: "https://dev.example.com/users/john/a", user: "john", groups: ["dev"], action: .twoFactor, line: 9),
        Case(
            source: autheliaPage + ", rule 9 (john without dev)", rules: authelia,
            url: "https://dev.example.com/users/john/a", user: "john", action: .deny, line: nil, reason: .noRule),
        Case(
            source: autheliaPage + ", rule 9 (dev without john)", rules: authelia,
            url: "https://dev.example.com/users/john/a", user: "fred", groups: ["dev"], action: .deny, line: nil,
            reason: .noRule),
        Case(
            source: autheliaPage + ", rules 7 before 10 (admins)", rules: authelia,
            url: "https://dev.example.com/users/john/a", user: "harry", groups: ["admins"], action: .twoFactor, line: 7),
        Case(
            source: autheliaPage + ", default_policy deny", rules: authelia, url: "https://other.org/", user: "john",
            action: .deny, line: nil, reason: .noRule),
        // Authelia's overview rule.
        Case(
            source: "Authelia access-control overview (GET from 192.168.1.0/24, dev)", rules: autheliaOverview,
            url: "https://dev.example.com/groups/dev/x", user: "john", groups: ["dev"], address: "192.168.1.20",
            action: .twoFactor, line: 1),
        Case(
            source: "Authelia access-control overview (POST)", rules: autheliaOverview,
            url: "https://dev.example.com/groups/dev/x", method: "POST", user: "john", groups: ["dev"],
            address: "192.168.1.20", action: .twoFactor, line: 1),
        Case(
            source: "Authelia access-control overview (DELETE: no match)", rules: autheliaOverview,
            url: "https://dev.example.com/groups/dev/x", method: "DELETE", user: "john", groups: ["dev"],
            address: "192.168.1.20", action: .deny, line: nil, reason: .noRule),
        Case(
            source: "Authelia access-control overview (other subnet)", rules: autheliaOverview,
            url: "https://dev.example.com/groups/dev/x", user: "john", groups: ["dev"], address: "192.168.2.20",
            action: .deny, line: nil, reason: .noRule),
        Case(
            source: "Authelia access-control overview (path outside the regex)", rules: autheliaOverview,
            url: "https://dev.example.com/groups/ops/x", user: "john", groups: ["dev"], address: "192.168.1.20",
            action: .deny, line: nil, reason: .noRule),
        // Authelia rules as published for an API bypass.
        Case(
            source: "Authelia API bypass ^/api([/?].*)?$ (/api)", rules: autheliaAPI, url: "https://app.domain.com/api",
            action: .bypass, line: 2),
        Case(
            source: "Authelia API bypass (/api/v1)", rules: autheliaAPI, url: "https://app.domain.com/api/v1",
            action: .bypass, line: 2),
        Case(
            source: "Authelia API bypass (/api?key=1, the query is matched)", rules: autheliaAPI,
            url: "https://app.domain.com/api?key=1", action: .bypass, line: 2),
        Case(
            source: "Authelia API bypass (/apix is not /api)", rules: autheliaAPI, url: "https://app.domain.com/apix",
            action: .allow, line: 3),
        Case(
            source: "Authelia API bypass (the portal itself)", rules: autheliaAPI, url: "https://auth.domain.com/",
            action: .bypass, line: 1),
        // tinyauth's app labels.
        Case(
            source: "tinyauth users.allow: user1", rules: tinyauthUsersAllow, url: "https://myapp.example.com/",
            user: "user1", action: .allow, line: 1),
        Case(
            source: "tinyauth users.allow: user1 (user2 refused)", rules: tinyauthUsersAllow,
            url: "https://myapp.example.com/", user: "user2", action: .deny, line: nil, reason: .noRule),
        Case(
            source: "tinyauth users.allow comma-separated list", rules: tinyauthUsersAllowList,
            url: "https://myapp.example.com/", user: "user2", action: .allow, line: 1),
        Case(
            source: "tinyauth users.block: user2", rules: tinyauthUsersBlock, url: "https://myapp.example.com/",
            user: "user2", action: .deny, line: 1),
        Case(
            source: "tinyauth users.block: user2 (user3 passes)", rules: tinyauthUsersBlock,
            url: "https://myapp.example.com/", user: "user3", action: .allow, line: 2),
        Case(
            source: "tinyauth path.allow ^\\/api (no login)", rules: tinyauthPathAllow,
            url: "https://myapp.example.com/api/v1", action: .bypass, line: 1),
        Case(
            source: "tinyauth path.allow (other paths need the login)", rules: tinyauthPathAllow,
            url: "https://myapp.example.com/", action: .allow, line: 2),
        Case(
            source: "tinyauth path.block ^\\/admin (login)", rules: tinyauthPathBlock,
            url: "https://myapp.example.com/admin", action: .allow, line: 1),
        Case(
            source: "tinyauth path.block (other paths open)", rules: tinyauthPathBlock,
            url: "https://myapp.example.com/", action: .bypass, line: 2),
        Case(
            source: "tinyauth ip.allow 10.10.10.0/24 (inside)", rules: tinyauthIPAllow,
            url: "https://myapp.example.com/", user: "user1", address: "10.10.10.7", action: .allow, line: 2),
        Case(
            source: "tinyauth ip.allow (outside refused)", rules: tinyauthIPAllow, url: "https://myapp.example.com/",
            user: "user1", address: "198.51.100.1", action: .deny, line: 1),
        Case(
            source: "tinyauth ip.block 10.10.10.5", rules: tinyauthIPBlock, url: "https://myapp.example.com/",
            user: "user1", address: "10.10.10.5", action: .deny, line: 1),
        Case(
            source: "tinyauth ip.block (neighbour passes)", rules: tinyauthIPBlock, url: "https://myapp.example.com/",
            user: "user1", address: "10.10.10.6", action: .allow, line: 2),
        Case(
            source: "tinyauth ip.bypass 10.10.10.0/24", rules: tinyauthIPBypass, url: "https://myapp.example.com/",
            address: "10.10.10.9", action: .bypass, line: 1),
        Case(
            source: "tinyauth ip.bypass (outside: login)", rules: tinyauthIPBypass, url: "https://myapp.example.com/",
            address: "8.8.8.8", action: .allow, line: 2),
        Case(
            source: "tinyauth oauth.groups admins (member)", rules: tinyauthGroups, url: "https://myapp.example.com/",
            user: "user1", groups: ["admins"], action: .allow, line: 1),
        Case(
            source: "tinyauth oauth.groups admins (not a member)", rules: tinyauthGroups,
            url: "https://myapp.example.com/", user: "user1", groups: ["users"], action: .deny, line: nil,
            reason: .noRule),
        // SPEC §13's example.
        Case(
            source: "SPEC §13 example (status bypass)", rules: spec, url: "https://status.example.com/",
            action: .bypass, line: 2),
        Case(
            source: "SPEC §13 example (/admin from outside 10/8)", rules: spec, url: "https://app.example.com/admin/x",
            user: "alice", groups: ["admins"], address: "192.0.2.1", action: .deny, line: 3),
        Case(
            source: "SPEC §13 example (/admin/ from 10/8, admins)", rules: spec, url: "https://app.example.com/admin/x",
            user: "alice", groups: ["admins"], address: "10.2.3.4", action: .allow, line: 4),
        Case(
            source: "SPEC §13 example (IPv4-mapped 10/8)", rules: spec, url: "https://app.example.com/admin/x",
            user: "alice", groups: ["admins"], address: "::ffff:10.2.3.4", action: .allow, line: 4),
        Case(
            source: "SPEC §13 example (vault)", rules: spec, url: "https://vault.example.com/", user: "bob",
            action: .twoFactor, line: 5),
        Case(
            source: "SPEC §13 example (host case and port)", rules: spec, url: "https://WWW.Example.COM:8443/",
            user: "bob", action: .allow, line: 6),
    ]

    @Test("Authelia's and tinyauth's documented examples decide the same", arguments: cases)
    func peers(_ c: Case) throws {
        let rules = try AccessRules(parsing: Array(c.rules.utf8), source: "rules")
        let request = try AccessRequest(
            url: c.url, method: c.method, user: c.user, groups: c.groups,
            address: c.address.flatMap { IPAddress(parsing: Array($0.utf8)) })
        let decision = rules.decide(request)
        #expect(decision == AccessDecision(action: c.action, line: c.line, reason: c.reason))
    }

    @Test("At least 30 cases from the peers' pages") func enoughCases() {
        #expect(Self.cases.filter { $0.source.hasPrefix("Authelia") || $0.source.hasPrefix("tinyauth") }.count >= 30)
    }

    @Test(
        "A forwarded path that would be guessed is denied",
        arguments: [
            "/a/../admin", "/..", "/./admin", "//admin", "/a//b", "/%2fadmin", "/%2Fadmin", "/a%5cb", "/a\\b", "/a%00",
            "/%2e%2e/admin", "/%2E/x", "/bad%zz", "/bad%4", "admin", "/a\u{0}b",
        ])
    func unsafePaths(_ path: String) {
        let rules = try! AccessRules(parsing: Array("bypass\n".utf8), source: "rules")
        let decision = rules.decide(AccessRequest(host: "app.example.com", target: Array(path.utf8)))
        #expect(decision == AccessDecision(action: .deny, line: nil, reason: .unsafePath))
    }

    @Test("A percent-encoded letter is compared decoded: /%61dmin is /admin")
    func decodedPrefix() throws {
        let rules = try AccessRules(parsing: Array("deny path=/admin\nbypass\n".utf8), source: "rules")
        #expect(rules.decide(AccessRequest(host: "a", target: Array("/%61dmin/x".utf8))).action == .deny)
        #expect(rules.decide(AccessRequest(host: "a", target: Array("/public?x=/admin".utf8))).action == .bypass)
    }

    @Test("Negated networks are all excluded; an unknown address is in no block")
    func negations() throws {
        let rules = try AccessRules(
            parsing: Array("allow network=!10.0.0.0/8 network=!2001:db8::/32\n".utf8), source: "rules")
        func decide(_ address: String?) -> AccessAction {
            rules.decide(
                AccessRequest(
                    host: "a", target: Array("/".utf8), user: "u",
                    address: address.flatMap { IPAddress(parsing: Array($0.utf8)) })
            ).action
        }
        #expect(decide("10.1.1.1") == .deny)
        #expect(decide("2001:db8::5") == .deny)
        #expect(decide("192.0.2.1") == .allow)
        #expect(decide(nil) == .allow)
        let positive = try AccessRules(parsing: Array("allow network=10.0.0.0/8\n".utf8), source: "rules")
        #expect(positive.decide(AccessRequest(host: "a", target: Array("/".utf8), user: "u")).action == .deny)
    }

    @Test(
        "A bad rule is an error naming RULESFILE:LINE",
        arguments: [
            ("allow\nallw host=a\n", 2, "unknown action"),
            ("# c\n\nallow colour=red\n", 3, "unknown matcher"),
            ("allow host\n", 1, "not NAME=VALUE"),
            ("allow host=\n", 1, "has no value"),
            ("deny network=10.0.0.0/33\n", 1, "CIDR"),
            ("deny network=10.0.0.1/8\n", 1, "CIDR"),
            ("deny network=!nope\n", 1, "CIDR"),
            ("allow\nallow\ndeny path=~a(\n", 3, "regular expression"),
            ("allow path=admin\n", 1, "/PREFIX"),
            ("allow host=*.\n", 1, "*."),
            ("allow host=a/b\n", 1, "host="),
            ("allow method=G3T\n", 1, "method="),
            ("allow\r\nallow user=\u{1}\n", 2, "control"),
        ])
    func errors(_ text: String, _ line: Int, _ fragment: String) {
        #expect {
            try AccessRules(parsing: Array(text.utf8), source: "/etc/credfile.rules")
        } throws: { error in
            guard let error = error as? CredFileError else { return false }
            return error.code == .usage && error.message.hasPrefix("/etc/credfile.rules:\(line): ")
                && error.message.contains(fragment)
        }
    }

    @Test("Comments, CR LF, tabs and a trailing comment after the matchers")
    func syntax() throws {
        let rules = try AccessRules(
            parsing: Array("# top\r\n\t bypass\thost=a.example.com  # the status page\r\n\n".utf8), source: "r")
        #expect(
            rules.rules.count == 1 && rules.rules[0].line == 2 && rules.rules[0].text == "bypass host=a.example.com")
    }

    @Test("A URL that is not http(s) with a host is a usage error")
    func urls() throws {
        for url in ["ftp://a/", "https://", "https://user@a/", "a.example.com/x"] {
            #expect(throws: CredFileError.self) { try AccessRequest(url: url) }
        }
        #expect(try AccessRequest(url: "https://[2001:db8::1]:8443/x").host == "[2001:db8::1]")
        #expect(try AccessRequest(url: "http://a.example.com.").target == Array("/".utf8))
    }
}
