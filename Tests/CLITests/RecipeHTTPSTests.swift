import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The web recipes of SPEC §11 and §13 as a stranger runs them on Debian 12 (#35, #37), on
/// https with only their names, ports, paths and certificates changed: nginx's portal
/// recipe next to Debian's own default site (as RecipeTests does for the Basic recipe),
/// and the access-rule recipes of `Examples/access/` with their own rules and group file
/// (IntegrationAccessServeTests runs them on plain http with rules of its own).
@Suite(.serialized) struct RecipeHTTPSTests {
    typealias Serve = IntegrationServeTests

    /// A web root like `/var/www/html` after `apt install nginx`: its `index.html` only
    /// (with words no recipe page holds), readable by nginx's workers.
    static func debianRoot(_ session: CLISession) throws -> String {
        mkdir(session.path("var-www-html"), 0o755)
        try session.write("var-www-html/index.html", "Debian's default page\n")
        chmod(session.path("var-www-html/index.html"), 0o644)
        return session.path("var-www-html")
    }

    /// The first value `Set-Cookie` gives the cookie `name` in `answer`, or nil.
    static func cookie(_ name: String, in answer: Recipe.Answer) -> String? {
        for line in answer.headers.split(separator: "\r\n") where line.lowercased().hasPrefix("set-cookie:") {
            let value = line.dropFirst("set-cookie:".count).trimmingCharacters(in: .whitespaces)
            if value.hasPrefix(name + "=") {
                return String(value.dropFirst(name.count + 1).prefix { $0 != ";" })
            }
        }
        return nil
    }

    // MARK: the portal recipe next to Debian's default site

    /// The stranger's setup of portal.md: Debian's default site left enabled (`listen 80
    /// default_server`, root /var/www/html), `Examples/portal/nginx.conf` beside it on the
    /// same http port and on https, nginx's workers as www-data, serve on its www-data
    /// socket. curl plays the browser: the sign-in form's own cookie and token, posted
    /// from the site's origin.
    @Test(
        "nginx's portal recipe next to Debian's default site: https only, a protected page 302 to the sign-in page without a session and 200 after signing in through the form; other names reach only the default site",
        .enabled(
            if: ExternalTool.runnable("nginx", "curl", "openssl")
                && (access("/etc/nginx/sites-available/default", R_OK) == 0 || ExternalTool.isCI),
            Comment(rawValue: ExternalTool.skipNote("nginx", "curl", "openssl"))))
    func portalNginxNextToTheDefaultSite() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let (service, socket) = try IntegrationServeProxyTests.startServe(
                session, file: file, ["--portal", "--log", "stderr"])
            let certificates = try Recipe.certificates(in: session)
            let (daemon, port, httpPort) = try Recipe.startNginxBesideDebianDefault(
                session, recipe: "portal/nginx.conf",
                root: try RecipeTests.webRoot(session, "var-www-site", privatePage: true),
                debianRoot: try Self.debianRoot(session), certificates: certificates, socket: socket)
            defer { daemon.stop() }
            let site = "https://\(Recipe.siteName):\(port)"
            let logs = { "serve: \(service.log)\nnginx: \(session.text("nginx/logs/error.log"))" }
            func ask(_ path: String, cookie: String? = nil, headers: [String] = [], form: [(String, String)] = [])
                throws -> Recipe.Answer
            {
                try Recipe.ask(
                    session, site + path, port: port, authority: certificates.authority,
                    headers: (cookie.map { ["Cookie: \($0)"] } ?? []) + headers, form: form)
            }
            let pages = ["private page", "public page", "Debian's default page"]

            // Without a session: the recipe's redirect to the sign-in page, the page asked for as rd.
            let signInPath = "/.credfile/login?rd=https%3A%2F%2F\(Recipe.siteName)%3A\(port)%2Fprivate%2F"
            for accept in ["text/html,application/xhtml+xml", "*/*"] {
                let anonymous = try ask("/private/", headers: ["Accept: \(accept)"])
                #expect(anonymous.status == "302", "\(accept): \(anonymous.headers)\n\(logs())")
                #expect(anonymous.header("Location") == site + signInPath, "\(anonymous.headers)")
                #expect(!pages.contains { anonymous.body.contains($0) }, "\(anonymous.body)")
            }
            let index = try ask("/", headers: ["Accept: text/html"])
            #expect(index.status == "302" && !pages.contains { index.body.contains($0) }, "\(index.headers)")

            // The sign-in page it names is reachable, and carries rd in its form.
            let form = try ask(signInPath, headers: ["Accept: text/html"])
            #expect(form.status == "200", "\(form.headers)\n\(logs())")
            #expect(form.body.contains("name=\"rd\" value=\"\(site)/private/\""), "\(form.body)")
            let preSession = try #require(Self.cookie("__Host-credfile-form", in: form), "\(form.headers)")
            let csrf = try #require(form.body.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1, "\(form.body)")
            let posted = { (password: String) in
                try ask(
                    "/.credfile/login", cookie: "__Host-credfile-form=\(preSession)", headers: ["Origin: \(site)"],
                    form: [
                        ("csrf", String(csrf)), ("username", Serve.alice.0), ("password", password),
                        ("rd", "\(site)/private/"),
                    ])
            }
            let wrong = try posted(session.password("Naranjo-en-flor-2027"))
            #expect(wrong.status == "200" && Self.cookie("__Host-credfile", in: wrong) == nil, "\(wrong.headers)")

            // Signed in through the form: back to the page, which is now the site's.
            let signedIn = try posted(session.password(Serve.alice.1))
            #expect(signedIn.status == "303", "\(signedIn.headers)\n\(logs())")
            #expect(signedIn.header("Location") == "\(site)/private/", "\(signedIn.headers)")
            let token = try #require(Self.cookie("__Host-credfile", in: signedIn), "\(signedIn.headers)")
            let page = try ask("/private/", cookie: "__Host-credfile=\(token)", headers: ["Accept: text/html"])
            #expect(page.status == "200" && page.body == "private page\n", "\(page.headers)\n\(logs())")
            #expect(page.header("Cache-Control") == "no-store", "\(page.headers)")
            let home = try ask("/.credfile/", cookie: "__Host-credfile=\(token)")
            #expect(home.status == "200" && home.body.contains("alice"), "\(home.headers)")

            // Any other name on the http port reaches Debian's default site, which has no way
            // to the recipe's files nor to the sign-in page, with a session or without.
            for host in ["127.0.0.1", "localhost", "other.example"] {
                for path in ["/private/index.html", "/private/", "/.credfile/login", "/.credfile/"] {
                    let other = try Recipe.ask(
                        session, "http://127.0.0.1:\(httpPort)\(path)", port: httpPort, authority: nil, host: host,
                        headers: ["Cookie: __Host-credfile=\(token)"])
                    #expect(other.status == "404", "\(host)\(path): \(other.headers)")
                    #expect(!other.body.contains("private page") && !other.body.contains("Iniciar sesión"))
                }
                let debianPage = try Recipe.ask(
                    session, "http://127.0.0.1:\(httpPort)/", port: httpPort, authority: nil, host: host)
                #expect(debianPage.status == "200" && debianPage.body == "Debian's default page\n", "\(host)")
            }

            // Plain http to the site's name only sends the browser to https, before any login.
            for path in ["/private/", "/.credfile/login", "/"] {
                let redirect = try Recipe.ask(
                    session, "http://\(Recipe.siteName):\(httpPort)\(path)", port: httpPort, authority: nil,
                    headers: ["Cookie: __Host-credfile=\(token)"])
                #expect(redirect.status == "301", "\(path): \(redirect.headers)")
                #expect(redirect.header("Location") == site + path, "\(redirect.headers)")
                #expect(!pages.contains { redirect.body.contains($0) } && !redirect.body.contains("Iniciar sesión"))
            }
            // Only the test's authority is trusted: without it curl refuses the certificate.
            let untrusted = try Recipe.ask(session, site + "/private/", port: port, authority: nil)
            #expect(untrusted.status.hasPrefix("none"), "\(untrusted.headers)")
        }
    }

    // MARK: the access-rule recipes on https

    /// The name the access recipes serve here: one that `Examples/access/credfile.rules`
    /// names (`*.example.com`), put where the recipes say example.org.
    static let accessName = "app.example.com"

    /// serve on its www-data socket with `Examples/access/credfile.rules` and `htgroup` as
    /// written (alice in admins and staff, bob in neither), and a web root with `/`,
    /// `/api/` and `/admin/`.
    static func accessSite(_ session: CLISession) throws -> (Serve.Service, socket: String, root: String) {
        let users = try Integration.makeUserFile(
            in: session, users: [IntegrationAccessServeTests.alice, IntegrationAccessServeTests.bob])
        let rules = try session.write("credfile.rules", try Integration.example("access/credfile.rules"))
        let groups = try session.write("credfile.htgroup", try Integration.example("access/htgroup"))
        for path in [rules, groups] { chmod(path, 0o644) }
        let (service, socket) = try IntegrationServeProxyTests.startServe(
            session, file: users, ["--rules", rules, "--groups", groups, "--log", "stderr"])
        let root = try RecipeTests.webRoot(session, "var-www-app", privatePage: false)
        for folder in ["api", "admin"] {
            mkdir(root + "/" + folder, 0o755)
            try session.write("var-www-app/\(folder)/index.html", "\(folder) page\n")
            chmod(root + "/\(folder)/index.html", 0o644)
        }
        return (service, socket, root)
    }

    /// What the recipe's rules decide at `base` (https, trusted through `authority`) for
    /// a client on loopback: the `/api` bypass 200 without a login, the site 401 without
    /// one and 200 with it, `/admin` 403 outside the admins' networks even for an admin,
    /// and a client's own `..` 403.
    static func expectAccessAnswers(
        _ session: CLISession, base: String, port: Int, authority: String, logs: () -> String
    ) throws {
        let alice = IntegrationAccessServeTests.alice
        let bob = IntegrationAccessServeTests.bob
        let cases: [(String, String, (String, String)?, String, String?)] = [
            ("bypass without a login", "/api/", nil, "200", "api page\n"),
            ("allowed, no login yet", "/", nil, "401", nil),
            ("allowed", "/", bob, "200", "public page\n"),
            ("wrong password", "/", (bob.0, "Limonero-en-flor-2027"), "401", nil),
            ("denied outside 10.0.0.0/8, even to an admin", "/admin/", alice, "403", nil),
            ("denied without a login", "/admin/", nil, "403", nil),
        ]
        for (name, path, user, status, body) in cases {
            let answer = try Recipe.ask(
                session, base + path, port: port, authority: authority, user: user, name: accessName)
            #expect(answer.status == status, "\(name): \(answer.headers)\n\(logs())")
            if let body { #expect(answer.body == body, "\(name)") }
            if status != "200" { #expect(!answer.body.contains("page\n"), "\(name): \(answer.body)") }
            if status == "401" {
                #expect(answer.header("WWW-Authenticate")?.hasPrefix("Basic realm=") == true, "\(answer.headers)")
            }
        }
        // The client's own `..`: the server would read /admin/, the rules see the path as sent
        // (/api/… would be a bypass) and refuse it.
        for path in ["/api/../admin/", "/api/%2e%2e/admin/"] {
            let raw = try Recipe.ask(
                session, base + path, port: port, authority: authority, name: accessName, options: ["path-as-is"])
            #expect(raw.status == "403" && !raw.body.contains("admin page"), "\(path): \(raw.headers)\n\(logs())")
        }
    }

    @Test(
        "nginx's access recipe on https with Examples/access's rules and groups: the /api bypass 200 without a login, the site 401 then 200, /admin 403, a client's .. 403; plain http only redirects",
        .enabled(
            if: ExternalTool.runnable("nginx", "curl", "openssl")
                && (access("/etc/nginx/sites-available/default", R_OK) == 0 || ExternalTool.isCI),
            Comment(rawValue: ExternalTool.skipNote("nginx", "curl", "openssl"))))
    func accessNginxOverHTTPS() throws {
        try withSession { session in
            let (service, socket, root) = try Self.accessSite(session)
            let certificates = try Recipe.certificates(in: session, names: [Self.accessName])
            let (daemon, port, httpPort) = try Recipe.startNginxBesideDebianDefault(
                session, recipe: "access/nginx.conf", root: root, debianRoot: try Self.debianRoot(session),
                certificates: certificates, socket: socket, more: [(Recipe.siteName, Self.accessName)])
            defer { daemon.stop() }
            let base = "https://\(Self.accessName):\(port)"
            try Self.expectAccessAnswers(session, base: base, port: port, authority: certificates.authority) {
                "serve: \(service.log)\nnginx: \(session.text("nginx/logs/error.log"))"
            }
            // Plain http to the site's name only sends the client to https, before the rules.
            for path in ["/admin/", "/api/"] {
                let redirect = try Recipe.ask(
                    session, "http://\(Self.accessName):\(httpPort)\(path)", port: httpPort, authority: nil,
                    name: Self.accessName)
                #expect(redirect.status == "301" && redirect.header("Location") == base + path, "\(redirect.headers)")
            }
        }
    }

    /// `Examples/access/Caddyfile` on https with a certificate of Caddy's own authority
    /// (the test's global `local_certs`, as `tls internal` would), as the caddy user.
    @Test(
        "Caddy's access recipe on https (Caddy's internal CA) with Examples/access's rules and groups: the /api bypass 200 without a login, the site 401 then 200, /admin 403, a client's .. 403",
        .enabled(
            if: ExternalTool.runnable("caddy", "curl", "setpriv"),
            Comment(rawValue: ExternalTool.skipNote("caddy", "curl", "setpriv"))))
    func accessCaddyOverHTTPS() throws {
        try withSession { session in
            let (service, socket, root) = try Self.accessSite(session)
            let port = try Integration.freePort()
            let home = Integration.caddyHome(session)
            let site = try Recipe.example(
                "access/Caddyfile",
                replacing: [
                    ("\(Recipe.siteName) {", "https://\(Self.accessName):\(port) {"),
                    ("root * /var/www/\(Recipe.siteName)", "root * \(root)"),
                    ("unix//run/credfile/web.sock", "unix/\(socket)"),
                ])
            // The test's own global options: no admin endpoint, certificates from Caddy's
            // internal authority, no change to the system's trust store, no http redirects.
            let config = try session.write(
                "Caddyfile",
                "{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\tauto_https disable_redirects\n}\n\n" + site)
            chmod(config, 0o644)
            let daemon = try Integration.startCaddy(session, config: config, home: home)
            defer { daemon.stop() }
            try Integration.waitForPort(port, of: daemon)
            let authority = home + "/caddy/pki/authorities/local/root.crt"
            try Integration.waitForFile(authority)
            let base = "https://\(Self.accessName):\(port)"
            // The certificate is issued just after the port opens: ask again for a moment.
            var first = try Recipe.ask(session, base + "/api/", port: port, authority: authority, name: Self.accessName)
            let deadline = ContinuousClock.now + .seconds(20)
            while first.status.hasPrefix("none") && ContinuousClock.now < deadline {
                usleep(200_000)
                first = try Recipe.ask(session, base + "/api/", port: port, authority: authority, name: Self.accessName)
            }
            #expect(!first.status.hasPrefix("none"), "\(first.status)\n\(daemon.output)")
            try Self.expectAccessAnswers(session, base: base, port: port, authority: authority) {
                "serve: \(service.log)\ncaddy: \(daemon.output)"
            }
        }
    }
}
