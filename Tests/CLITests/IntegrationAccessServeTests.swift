import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// SPEC §13 in `credfile serve`: the built binary on a loopback port (a trusted proxy, so
/// that the original URL is read), asked by curl and by this suite's own HTTP client, and
/// behind a real nginx (`auth_request`) and Caddy (`forward_auth`) run from
/// `Examples/access/`: `bypass` 200 without a login, allowed 200 with `Remote-Groups`,
/// not allowed 403, a path that cannot be judged 403, the files re-read with the last
/// good copy kept.
@Suite(.serialized) struct IntegrationAccessServeTests {
    typealias Serve = IntegrationServeTests
    typealias Portal = IntegrationPortalTests
    static let alice = ("alice", "Naranjo-en-flor-2026")
    static let bob = ("bob", "Limonero-en-flor-2026")

    static let rules = """
        bypass     host=pub.example.test
        deny       path=/secret
        allow      host=app.example.test path=/admin/ group=admins
        deny       host=app.example.test path=/admin/
        allow      host=app.example.test path=/write method=POST
        deny       host=app.example.test path=/write
        two-factor host=vault.example.test
        allow      host=app.example.test

        """

    static let groups = "admins: alice\nstaff:\talice bob\n"

    /// The user file, the rules and the group file in `session`.
    static func files(_ session: CLISession) throws -> (users: String, rules: String, groups: String) {
        let users = try Integration.makeUserFile(in: session, users: [alice, bob])
        let rules = try session.write("credfile.rules", Self.rules)
        let groups = try session.write("credfile.htgroup", Self.groups)
        for path in [rules, groups] { chmod(path, 0o644) }
        return (users, rules, groups)
    }

    /// Asks serve's `/auth` for `url` (as nginx's `X-Original-URL`) with `user`'s Basic login.
    static func ask(
        _ session: CLISession, _ port: Int, _ url: String?, user: (String, String)? = nil, headers: [String] = []
    ) throws -> Serve.Answer {
        try Serve.ask(
            session, "http://127.0.0.1:\(port)/auth", user: user,
            extraHeaders: (url.map { ["X-Original-URL: \($0)"] } ?? []) + headers)
    }

    @Test(
        "serve with rules (Basic): bypass 200 without a login, allowed 200 with Remote-Groups, not allowed 403, unjudgeable paths 403",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func basic() throws {
        try withSession { session in
            let (users, rules, groups) = try Self.files(session)
            let port = try Integration.freePort()
            let service = try Serve.Service(
                session, file: users, listen: "127.0.0.1:\(port)",
                ["--trusted-proxy", "127.0.0.1", "--rules", rules, "--groups", groups, "--log", "stderr"])
            let app = "https://app.example.test"
            let cases: [(String, String?, (String, String)?, [String], String)] = [
                ("bypass, no login", "https://pub.example.test/x", nil, [], "200"),
                (
                    "bypass, a wrong login is not even checked", "https://pub.example.test/", (Self.bob.0, "x"), [],
                    "200"
                ),
                ("allowed after a login: none yet", app + "/", nil, [], "401"),
                ("allowed", app + "/", Self.bob, [], "200"),
                ("wrong password", app + "/", (Self.bob.0, "Limonero-en-flor-2027"), [], "401"),
                ("admins only: a member", app + "/admin/users", Self.alice, [], "200"),
                ("admins only: not a member", app + "/admin/users", Self.bob, [], "403"),
                ("deny for everyone, even anonymous", app + "/secret/x", nil, [], "403"),
                ("deny for a signed-in user", app + "/secret/x", Self.alice, [], "403"),
                ("method from X-Original-Method: POST", app + "/write", Self.bob, ["X-Original-Method: POST"], "200"),
                ("method from X-Original-Method: GET", app + "/write", Self.bob, ["X-Original-Method: GET"], "403"),
                (
                    "two-factor: a Basic login has no second factor", "https://vault.example.test/", Self.alice, [],
                    "403"
                ),
                ("no rule matches", "https://other.example.test/", Self.alice, [], "403"),
                (".. segment", app + "/x/../admin/users", Self.bob, [], "403"),
                ("encoded .. segment", app + "/x/%2e%2e/admin/users", Self.bob, [], "403"),
                ("//", app + "//admin/users", Self.bob, [], "403"),
                ("encoded slash", app + "/%2fadmin/users", Self.bob, [], "403"),
                ("encoded NUL", app + "/a%00b", Self.bob, [], "403"),
                ("no original URL", nil, Self.bob, [], "403"),
            ]
            for (name, url, user, headers, status) in cases {
                let answer = try Self.ask(session, port, url, user: user, headers: headers)
                #expect(answer.status == status, "\(name): \(answer.headers)\n\(service.log)")
                if status != "200" { #expect(answer.header("X-Credfile-User") == nil, "\(name)") }
            }
            let granted = try Self.ask(session, port, app + "/admin/", user: Self.alice)
            #expect(granted.header("Remote-Groups") == "admins,staff", "\(granted.headers)")
            #expect(granted.header("Remote-User") == "alice" && granted.header("X-Credfile-User") == "alice")
            let bypassed = try Self.ask(session, port, "https://pub.example.test/")
            #expect(bypassed.header("Remote-User") == nil && bypassed.header("Cache-Control") == "no-store")
            // Caddy's and Traefik's headers name the URL too.
            let forwarded = try Self.ask(
                session, port, nil, user: Self.alice,
                headers: [
                    "X-Forwarded-Proto: https", "X-Forwarded-Host: app.example.test", "X-Forwarded-Uri: /admin/",
                    "X-Forwarded-Method: GET",
                ])
            #expect(forwarded.status == "200", "\(forwarded.headers)")
            let forwardedBob = try Self.ask(
                session, port, nil, user: Self.bob,
                headers: ["X-Forwarded-Proto: https", "X-Forwarded-Host: app.example.test", "X-Forwarded-Uri: /admin/"])
            #expect(forwardedBob.status == "403", "\(forwardedBob.headers)")

            // The group file changes: bob joins admins at the next request.
            try session.write("credfile.htgroup.new", "admins: alice bob\n")
            #expect(rename(session.path("credfile.htgroup.new"), groups) == 0)
            let joined = try Self.ask(session, port, app + "/admin/users", user: Self.bob)
            #expect(joined.status == "200" && joined.header("Remote-Groups") == "admins", "\(joined.headers)")
            // A bad rules file: the last good copy answers, and the log says why, naming the line.
            try session.write("credfile.rules.new", Self.rules + "permit host=app.example.test\n")
            #expect(rename(session.path("credfile.rules.new"), rules) == 0)
            let kept = try Self.ask(session, port, app + "/secret/", user: Self.alice)
            #expect(kept.status == "403", "\(kept.headers)")
            service.waitForLog("credfile.rules:9: unknown action")
            #expect(
                service.log.contains("the last good copy stays")
                    && service.log.contains("credfile.rules:9: unknown action"),
                "\(service.log)")
            // A good one replaces it.
            try session.write("credfile.rules.new", "allow host=app.example.test\n")
            #expect(rename(session.path("credfile.rules.new"), rules) == 0)
            #expect(try Self.ask(session, port, app + "/secret/", user: Self.alice).status == "200")
        }
    }

    @Test(
        "serve from an untrusted peer: the original URL is not believed, so a rule can never be chosen by the client (403)",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func untrustedPeer() throws {
        try withSession { session in
            let (users, rules, groups) = try Self.files(session)
            let port = try Integration.freePort()
            let service = try Serve.Service(
                session, file: users, listen: "127.0.0.1:\(port)", ["--rules", rules, "--groups", groups])
            let answer = try Self.ask(session, port, "https://pub.example.test/")
            #expect(answer.status == "403", "\(answer.headers)\n\(service.log)")
        }
    }

    @Test("serve refuses to start with a bad rules or group file (exit 2, FILE:LINE), or a missing one")
    func badFilesAtStart() throws {
        try withSession { session in
            let (users, _, groups) = try Self.files(session)
            let credfile = try Integration.credfile(in: session)
            let bad = try session.write("bad.rules", "allow host=app.example.test\nallow colour=blue\n")
            let badGroups = try session.write("bad.htgroup", "admins alice\n")
            let port = try Integration.freePort()
            let listen = ["--listen", "127.0.0.1:\(port)"]
            let rulesResult = try Integration.run(
                credfile, ["serve", users, "--rules", bad, "--groups", groups] + listen, in: session)
            #expect(rulesResult.status == 2 && rulesResult.stderr.contains("bad.rules:2:"), "\(rulesResult)")
            let groupsResult = try Integration.run(
                credfile, ["serve", users, "--groups", badGroups] + listen, in: session)
            #expect(groupsResult.status == 2 && groupsResult.stderr.contains("bad.htgroup:1:"), "\(groupsResult)")
            let missing = try Integration.run(
                credfile, ["serve", users, "--rules", session.path("none.rules")] + listen, in: session)
            #expect(missing.status != 0 && missing.stderr.contains("none.rules"), "\(missing)")
        }
    }

    @Test(
        "serve --portal with rules: a session's /auth decided by the rules (200, 403), bypass without a cookie, forward-auth's 302 only where a login helps"
    )
    func portalSessions() throws {
        try withSession { session in
            let (users, rules, groups) = try Self.files(session)
            let port = try Integration.freePort()
            let service = try Portal.service(
                session, users, port: port, ["--trusted-proxy", "127.0.0.1", "--rules", rules, "--groups", groups])
            var browser = Portal.Browser(port: port)
            _ = try browser.open()
            #expect(try browser.signIn("bob", Self.bob.1).status == 303, "\(service.log)")
            func auth(_ url: String, cookie: Bool = true, path: String = "/.credfile/auth", html: Bool = false) throws
                -> Portal.Answer
            {
                var headers = [("X-Original-URL", url)]
                if cookie { headers.append(("Cookie", browser.cookie)) }
                if html { headers.append(("Accept", "text/html")) }
                return try Portal.send(port, "GET", path, headers: headers)
            }
            let allowed = try auth("https://app.example.test/")
            #expect(allowed.status == 200 && allowed.header("Remote-User") == "bob", "\(allowed.headers)")
            #expect(allowed.header("Remote-Groups") == "staff", "\(allowed.headers)")
            #expect(try auth("https://app.example.test/admin/").status == 403, "signed in, not allowed: 403, not 401")
            #expect(try auth("https://vault.example.test/").status == 403, "no second factor in this session")
            #expect(try auth("https://pub.example.test/", cookie: false).status == 200, "bypass without a cookie")
            #expect(try auth("https://app.example.test/", cookie: false).status == 401)
            let toLogin = try auth(
                "https://app.example.test/", cookie: false, path: "/.credfile/forward-auth", html: true)
            #expect(toLogin.status == 302, "\(toLogin.headers)")
            let denied = try auth(
                "https://app.example.test/secret/", cookie: false, path: "/.credfile/forward-auth", html: true)
            #expect(denied.status == 403, "no sign-in could make it allowed: \(denied.headers)")
            let home = try Portal.send(port, "GET", "/.credfile/", headers: [("Cookie", browser.cookie)])
            #expect(home.body.contains("staff"), "the signed-in page shows the groups")
        }
    }
}

/// The recipes of `Examples/access/` run for real, with only their paths and port changed.
extension IntegrationAccessServeTests {
    typealias Proxy = IntegrationServeProxyTests

    /// Rules for the site on 127.0.0.1, and its pages: `/public/`, `/admin/`, `/`.
    static let siteRules = """
        bypass host=127.0.0.1 path=/public/
        allow  host=127.0.0.1 path=/admin/ group=admins
        deny   host=127.0.0.1 path=/admin/
        allow  host=127.0.0.1

        """

    /// Starts serve on a www-data unix socket with the site's rules, and a web root.
    static func site(_ session: CLISession) throws -> (Serve.Service, socket: String, root: String) {
        let (users, _, groups) = try files(session)
        let rules = try session.write("site.rules", siteRules)
        chmod(rules, 0o644)
        let (service, socket) = try Proxy.startServe(
            session, file: users, ["--rules", rules, "--groups", groups, "--log", "stderr"])
        let root = try Proxy.webRoot(session)
        for folder in ["public", "admin"] {
            mkdir(root + "/" + folder, 0o755)
            try session.write("html/\(folder)/index.html", "\(folder) page\n")
            chmod(root + "/\(folder)/index.html", 0o644)
        }
        return (service, socket, root)
    }

    /// The answers every server must give with the site's rules, `base` its URL.
    static func expectSiteAnswers(_ session: CLISession, base: String, service: Serve.Service, log: () -> String)
        throws
    {
        let cases: [(String, String, (String, String)?, String)] = [
            ("bypass with no login", "/public/", nil, "200"),
            ("allowed, no login yet", "/", nil, "401"),
            ("allowed", "/", Self.bob, "200"),
            ("admins: a member", "/admin/", Self.alice, "200"),
            ("admins: not a member", "/admin/", Self.bob, "403"),
            ("admins: anonymous must sign in first", "/admin/", nil, "401"),
            ("wrong password", "/", (Self.bob.0, "Limonero-en-flor-2027"), "401"),
        ]
        for (name, path, user, status) in cases {
            let answer = try Serve.ask(session, base + path, user: user)
            #expect(answer.status == status, "\(name): \(answer.headers)\n\(service.log)\n\(log())")
        }
        // The client's own `..`: the server normalises it to /admin/, the rules see the path
        // as sent (/public/ would be a bypass) and refuse it.
        let curl = try ExternalTool.path("curl")
        for path in ["/public/../admin/", "/public/%2e%2e/admin/"] {
            let raw = try Integration.run(
                curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", base + path], in: session)
            #expect(raw.stdout == "403", "\(path): \(raw)\n\(service.log)\n\(log())")
        }
    }

    @Test(
        "nginx auth_request from Examples/access/nginx.conf with rules: bypass 200 without a login, allowed 200, denied 403, a client's .. 403",
        .enabled(if: ExternalTool.runnable("nginx", "curl"), Comment(rawValue: ExternalTool.skipNote("nginx", "curl"))))
    func nginx() throws {
        try withSession { session in
            let (service, socket, _) = try Self.site(session)
            let port = try Integration.freePort()
            let nginx = try Proxy.startNginx(session, port: port, socket: socket, recipe: "access/nginx.conf")
            defer { nginx.stop() }
            try Self.expectSiteAnswers(session, base: "http://127.0.0.1:\(port)", service: service) {
                session.text("nginx/logs/error.log")
            }
        }
    }

    @Test(
        "Caddy forward_auth from Examples/access/Caddyfile with rules: bypass 200 without a login, allowed 200 with Remote-Groups, denied 403",
        .enabled(
            if: ExternalTool.runnable("caddy", "curl", "setpriv"),
            Comment(rawValue: ExternalTool.skipNote("caddy", "curl", "setpriv"))))
    func caddy() throws {
        try withSession { session in
            let (service, socket, root) = try Self.site(session)
            let port = try Integration.freePort()
            let home = Integration.caddyHome(session)
            let site = try Integration.example(
                "access/Caddyfile",
                replacing: [
                    "\(Recipe.siteName) {": "http://127.0.0.1:\(port) {",
                    "root * /var/www/\(Recipe.siteName)": "root * \(root)",
                    "unix//run/credfile/web.sock": "unix/\(socket)",
                    // A probe, not a change of the recipe: what forward_auth copied onto the request.
                    "\tfile_server\n":
                        "\theader {\n\t\tX-Seen-Groups {http.request.header.Remote-Groups}\n\t\tdefer\n\t}\n\tfile_server\n",
                ])
            let config = try session.write("Caddyfile", "{\n\tadmin off\n}\n\n" + site)
            chmod(config, 0o644)
            let daemon = try Integration.startCaddy(session, config: config, home: home)
            defer { daemon.stop() }
            try Integration.waitForPort(port, of: daemon)
            let base = "http://127.0.0.1:\(port)"
            try Self.expectSiteAnswers(session, base: base, service: service) { daemon.output }
            let admin = try Serve.ask(session, base + "/admin/", user: Self.alice)
            #expect(admin.header("X-Seen-Groups") == "admins,staff", "\(admin.headers)")
        }
    }
}
