import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The sign-in page (SPEC §11) as a person meets it (#35): the shipped recipes
/// (`Examples/portal/`) with only their ports, paths and certificate changed, nginx (workers
/// as www-data) and Caddy (as the caddy user) on https with a test CA's certificate in front
/// of a static site, `credfile serve --portal` on a www-data unix socket, and a real browser
/// (``BrowserHarness``: headless Chromium, trusting that CA) in Spanish and English. The
/// nginx run writes the documentation's screenshots (`Scripts/screenshots.sh` keeps them).
@Suite(.serialized) struct BrowserPortalTests {
    typealias Serve = IntegrationServeTests

    /// The words each language's pages must show.
    struct Words {
        var signIn: String
        var username: String
        var password: String
        var wrong: String
        var granted: String
    }
    static let words: [String: Words] = [
        "es": Words(
            signIn: "Iniciar sesión", username: "Usuario", password: "Contraseña",
            wrong: "Usuario o contraseña incorrectos.", granted: "✅ Acceso permitido"),
        "en": Words(
            signIn: "Sign in", username: "Username", password: "Password", wrong: "Wrong username or password.",
            granted: "✅ Access granted"),
    ]

    /// The browser's visit (`portal_journey.py`) to `site`'s `protected` page, in both
    /// languages, checked step by step.
    static func visit(
        _ session: CLISession, profile: BrowserHarness.Profile, site: String, protected: String,
        screenshots: Bool, context: () -> String
    ) throws {
        let result = try BrowserHarness.run(
            "portal_journey",
            [
                "site": site, "protected": protected, "prefix": "/.credfile", "user": Serve.alice.0,
                "password": session.password(Serve.alice.1),
                "wrong_password": session.password("Limonero-en-flor-2026"), "languages": ["es", "en"],
                "screenshots_named": screenshots,
            ], profile: profile, in: session)
        let visits = try #require(result["visits"] as? [String: [String: [String: Any]]], "\(result)")
        for (language, words) in Self.words {
            let steps = try #require(visits[language], "\(language): \(result)")
            func text(_ step: String) -> String { steps[step]?["text"] as? String ?? "" }
            func url(_ step: String) -> String { steps[step]?["url"] as? String ?? "" }
            func axe(_ step: String) -> [String] {
                BrowserHarness.axeFindings(steps[step] ?? [:])
            }
            func note(_ step: String) -> Comment {
                Comment(rawValue: "\(language) \(step): \(steps[step] ?? [:])\n\(context())")
            }

            // Not signed in: the protected page sends to the sign-in page, rd the page asked for.
            let encoded = site.replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: "/", with: "%2F")
            #expect(url("first").hasPrefix(site + "/.credfile/login?rd=" + encoded), note("first"))
            #expect(text("first").contains(words.signIn) && !text("first").contains("private page"), note("first"))
            #expect(steps["first"]?["lang"] as? String == language, note("first"))
            #expect(axe("first").isEmpty, "\(language) sign-in page: \(axe("first"))")
            // Where password managers look: one form, a named text field for the name with
            // autocomplete=username and a password field with current-password, each labelled.
            let fields = (steps["first"]?["fields"] as? [[String: Any]]) ?? []
            let name = fields.first { $0["autocomplete"] as? String == "username" }
            let secret = fields.first { $0["autocomplete"] as? String == "current-password" }
            #expect(name?["type"] as? String == "text" && name?["label"] as? String == words.username, note("first"))
            #expect(
                secret?["type"] as? String == "password" && secret?["label"] as? String == words.password,
                note("first"))
            #expect(name?["form"] as? String == "/.credfile/login" && secret?["form"] as? String == "/.credfile/login")
            #expect(name?["required"] as? Bool == true && secret?["required"] as? Bool == true)

            // A wrong password: the message, no session, the name kept.
            #expect(text("wrong").contains(words.wrong), note("wrong"))
            #expect(url("wrong").hasPrefix(site + "/.credfile/login"), note("wrong"))
            #expect(steps["wrong"]?["session_cookie"] is NSNull, note("wrong"))
            #expect(steps["wrong"]?["username_kept"] as? String == Serve.alice.0, note("wrong"))
            #expect(axe("wrong").isEmpty, "\(language) wrong-password page: \(axe("wrong"))")

            // The right one: back to the page asked for, with the session cookie as SPEC §11
            // gives it, as the browser stored it.
            #expect(url("signed_in") == site + protected, note("signed_in"))
            #expect(text("signed_in").contains("private page"), note("signed_in"))
            let cookie = try #require(
                steps["signed_in"]?["session_cookie"] as? [String: Any], "\(language): no __Host-credfile kept")
            #expect(cookie["secure"] as? Bool == true && cookie["httpOnly"] as? Bool == true, "\(cookie)")
            #expect(cookie["sameSite"] as? String == "Lax" && cookie["path"] as? String == "/", "\(cookie)")
            #expect(cookie["domain"] as? String == Recipe.siteName, "host-only (no Domain): \(cookie)")
            #expect(cookie["expiry"] == nil, "a session cookie, gone when the browser closes: \(cookie)")
            #expect((cookie["value"] as? String)?.count == 43)
            #expect(text("reload").contains("private page"), note("reload"))

            // The signed-in page, then sign-out, and the back button shows nothing protected.
            #expect(text("home").contains(words.granted) && text("home").contains(Serve.alice.0), note("home"))
            #expect(axe("home").isEmpty, "\(language) signed-in page: \(axe("home"))")
            #expect(url("signed_out") == site + "/.credfile/login", note("signed_out"))
            #expect(steps["signed_out"]?["session_cookie"] is NSNull, note("signed_out"))
            for step in ["back1", "back2", "again"] {
                #expect(!text(step).contains("private page") && !text(step).contains(words.granted), note(step))
                #expect(text(step).contains(words.signIn), note(step))
            }
        }
        try BrowserHarness.keepScreenshots(profile)
    }

    @Test(
        "nginx's portal recipe over https in a real browser: sign in (a wrong password first), the protected page, reload, sign out, back shows nothing; es and en; axe finds nothing serious",
        .enabled(
            if: BrowserHarness.runnable && ExternalTool.runnable("nginx"),
            Comment(rawValue: BrowserHarness.skipNote + "; " + ExternalTool.skipNote("nginx"))))
    func nginx() throws {
        try withSession { session in
            let profile = try BrowserHarness.profile(in: session)
            try BrowserHarness.withPortalBehindNginx(session, certificates: profile.certificates) { site in
                try Self.visit(
                    session, profile: profile, site: site.url, protected: "/private/?a=1&b=2", screenshots: true,
                    context: site.logs)
            }
        }
    }

    @Test(
        "Caddy's portal recipe over https in a real browser (forward_auth, as the caddy user): the same visit, es and en",
        .enabled(
            if: BrowserHarness.runnable && ExternalTool.runnable("caddy", "setpriv"),
            Comment(rawValue: BrowserHarness.skipNote + "; " + ExternalTool.skipNote("caddy", "setpriv"))))
    func caddy() throws {
        try withSession { session in
            let profile = try BrowserHarness.profile(in: session)
            try BrowserHarness.withPortalBehindCaddy(session, certificates: profile.certificates) { site in
                try Self.visit(
                    session, profile: profile, site: site.url, protected: "/private/?a=1&b=2", screenshots: false,
                    context: site.logs)
            }
        }
    }
}

/// The portal recipes' contract with serve, asked directly (no browser): what nginx's
/// `error_page 401 =302 $credfile_login` follows, and what Traefik's middleware sends and
/// copies (Traefik is not in Debian 12, so no test runs it).
@Suite(.serialized) struct PortalRecipeTests {
    typealias Portal = IntegrationPortalTests

    @Test(
        "auth's 401 names the sign-in page in Location, absolute, rd percent-encoded (a query's & kept), only from a trusted peer's X-Original-URL"
    )
    func authNamesTheSignInPage() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Portal.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(session, file, port: port, ["--trusted-proxy", "127.0.0.1"])
            let original = [("X-Original-URL", "https://\(Portal.host)/private/x?a=1&b=%2F")]
            let denied = try Portal.send(port, "GET", "/.credfile/auth", headers: original)
            #expect(denied.status == 401, "\(service.log)")
            #expect(
                denied.header("Location")
                    == "https://\(Portal.host)/.credfile/login?rd=https%3A%2F%2F\(Portal.host)%2Fprivate%2Fx%3Fa%3D1%26b%3D%252F"
            )
            #expect(denied.header("WWW-Authenticate")?.hasPrefix("Basic realm=") == true)
            // The sign-in page it names carries that rd, whole, in its form.
            let location = try #require(denied.header("Location"))
            let page = try Portal.send(port, "GET", String(location.dropFirst("https://\(Portal.host)".count)))
            #expect(page.body.contains("name=\"rd\" value=\"https://\(Portal.host)/private/x?a=1&amp;b=%2F\""))
            // Without a session or Basic, only; and an untrusted peer's header names nothing.
            let untrustedPort = try Integration.freePort()
            let untrusting = try Portal.service(session, file, port: untrustedPort)
            let stranger = try Portal.send(untrustedPort, "GET", "/.credfile/auth", headers: original)
            #expect(stranger.status == 401 && stranger.header("Location") == nil, "\(untrusting.log)")
        }
    }

    @Test(
        "Traefik's portal recipe: the middleware asks forward-auth with Cookie, Authorization and Accept; a browser gets 302 to the sign-in page, a session 200 with the copied headers"
    )
    func traefik() throws {
        try withSession { session in
            let recipe = try Integration.example("portal/traefik.yml")
            let address = try #require(recipe.firstMatch(of: /address: "http:\/\/127\.0\.0\.1:9091(\/[^"]*)"/)?.1)
            #expect(address == "/.credfile/forward-auth")
            #expect(recipe.contains(#"- url: "http://127.0.0.1:9091/""#), "the sign-in page's service")
            #expect(recipe.contains("PathPrefix(`/.credfile/`)"))
            let sent = IntegrationServeProxyTests.yamlList("authRequestHeaders", in: recipe)
            #expect(sent == ["Cookie", "Authorization", "Accept"])
            let copied = IntegrationServeProxyTests.yamlList("authResponseHeaders", in: recipe)
            #expect(copied == ["Remote-User", "Remote-Groups", "X-Credfile-User"])

            let file = try Integration.makeUserFile(in: session, users: [Portal.alice])
            let port = try Integration.freePort()
            let service = try Portal.service(session, file, port: port, ["--trusted-proxy", "127.0.0.1"])
            // What Traefik adds itself.
            let forwarded = [
                ("X-Forwarded-Method", "GET"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", Portal.host),
                ("X-Forwarded-Uri", "/private/?a=1&b=2"), ("X-Forwarded-For", "198.51.100.7"),
            ]
            let browser = try Portal.send(
                port, "GET", String(address), headers: [("Accept", "text/html,application/xhtml+xml")] + forwarded)
            #expect(browser.status == 302, "\(service.log)")
            #expect(
                browser.header("Location")
                    == "/.credfile/login?rd=https%3A%2F%2F\(Portal.host)%2Fprivate%2F%3Fa%3D1%26b%3D2")
            let script = try Portal.send(port, "GET", String(address), headers: [("Accept", "*/*")] + forwarded)
            #expect(script.status == 401 && script.header("WWW-Authenticate") != nil)

            var person = Portal.Browser(port: port)
            _ = try person.open()
            #expect(try person.signIn(Portal.alice.0, session.password(Portal.alice.1)).status == 303)
            let token = try #require(person.session)
            let signedIn = try Portal.send(
                port, "GET", String(address),
                headers: [("Cookie", "__Host-credfile=\(token)"), ("Accept", "text/html")] + forwarded)
            #expect(signedIn.status == 200)
            #expect(signedIn.header("Remote-User") == "alice" && signedIn.header("X-Credfile-User") == "alice")
        }
    }

    @Test(
        "nginx's portal recipe keeps a client's own forwarding headers from serve: X-Forwarded-Host cannot make another host its own, X-Original-URL cannot choose rd, the check is internal",
        .enabled(
            if: ExternalTool.runnable("nginx", "curl", "openssl"),
            Comment(rawValue: ExternalTool.skipNote("nginx", "curl", "openssl"))))
    func nginxOverridesForwardingHeaders() throws {
        try withSession { session in
            let certificates = try Recipe.certificates(in: session)
            try BrowserHarness.withPortalBehindNginx(session, certificates: certificates) { site in
                try Self.expectForwardingHeadersOverridden(session, site, certificates: certificates, nginx: true)
            }
        }
    }

    @Test(
        "Caddy's portal recipe keeps a client's own forwarding headers from serve: X-Forwarded-Host cannot make another host its own, X-Original-URL cannot choose rd",
        .enabled(
            if: ExternalTool.runnable("caddy", "setpriv", "curl", "openssl"),
            Comment(rawValue: ExternalTool.skipNote("caddy", "setpriv", "curl", "openssl"))))
    func caddyOverridesForwardingHeaders() throws {
        try withSession { session in
            let certificates = try Recipe.certificates(in: session)
            try BrowserHarness.withPortalBehindCaddy(session, certificates: certificates) { site in
                try Self.expectForwardingHeadersOverridden(session, site, certificates: certificates, nginx: false)
            }
        }
    }

    /// Asks `site` with curl, as a client sending its own forwarding headers: they must not
    /// reach serve (the own host stays the site's for `rd` and a posted sign-in; the page
    /// asked for is the web server's to name).
    static func expectForwardingHeadersOverridden(
        _ session: CLISession, _ site: BrowserHarness.PortalSite, certificates: Recipe.Certificates, nginx: Bool
    ) throws {
        let port = try #require(Int(site.url.split(separator: ":").last ?? ""))
        let curl = try ExternalTool.path("curl")
        func ask(_ path: String, _ headers: [String], data: String? = nil) throws -> (
            status: String, head: String, body: String
        ) {
            let config = try session.write(
                "curl-forwarding.cfg",
                "resolve = \"\(Recipe.siteName):\(port):127.0.0.1\"\ncacert = \"\(certificates.authority)\"\n"
                    + headers.map { "header = \"\($0)\"\n" }.joined() + (data.map { "data = \"\($0)\"\n" } ?? ""))
            let result = try Integration.run(
                curl, ["-s", "-S", "-D", "-", "--max-time", "30", "-K", config, site.url + path], in: session)
            let parts = result.stdout.components(separatedBy: "\r\n\r\n")
            let status = parts[0].split(separator: " ").dropFirst().first.map(String.init) ?? "none: \(result)"
            return (status, parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
        // nginx's check is its own (internal): a browser cannot ask it.
        if nginx { #expect(try ask("/.credfile/auth", []).status == "404") }
        // Another host named by the client is not the page's own: rd to it is dropped, and a
        // sign-in posted from it is refused.
        let page = try ask("/.credfile/login?rd=https%3A%2F%2Fevil.example%2F", ["X-Forwarded-Host: evil.example"])
        #expect(page.status == "200" && !page.body.contains("evil.example"), "\(page.body)\n\(site.logs())")
        let form = try ask("/.credfile/login", [])
        let preSession = try #require(form.head.firstMatch(of: /__Host-credfile-form=([A-Za-z0-9_-]{43})/)?.1)
        let csrf = try #require(form.body.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
        let post = { (origin: String, host: String?) in
            try ask(
                "/.credfile/login",
                [
                    "Origin: \(origin)", "Cookie: __Host-credfile-form=\(preSession)",
                    "Content-Type: application/x-www-form-urlencoded",
                ] + (host.map { ["X-Forwarded-Host: \($0)"] } ?? []),
                data: "csrf=\(csrf)&username=alice&password=not-the-password-1")
        }
        #expect(try post(site.url, nil).status == "200", "the own origin's post is answered: \(site.logs())")
        let forged = try post("https://evil.example", "evil.example")
        #expect(forged.status == "403", "\(forged.head)")
        // The page asked for is the web server's to name, whatever the client sends.
        let protected = try ask(
            "/private/", ["X-Original-URL: https://evil.example/", "X-Forwarded-Uri: /evil", "Accept: text/html"])
        #expect(protected.status == "302", "\(protected.head)\n\(site.logs())")
        let login = "/.credfile/login?rd=https%3A%2F%2F\(Recipe.siteName)%3A\(port)%2Fprivate%2F"
        #expect(
            protected.head.lowercased().contains("location: \(nginx ? site.url : "")\(login)\r\n".lowercased()),
            "\(protected.head)")
    }
}
