import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real browser for the tests (SPEC §11, #35): Debian's `chromium`, headless, driven by
/// Selenium through Debian's `chromedriver`, with axe-core for accessibility, from the
/// peers' venv (`Scripts/setup.sh test`). A scenario is a Python file of
/// `Tests/CLITests/Browser/` built on its module `credfile_browser` (see its docstring);
/// the test gives it parameters and reads back its JSON result:
///
///     let profile = try BrowserHarness.profile(in: session)   // test CA, certificate, NSS db
///     … start an https server with profile.certificates …
///     let result = try BrowserHarness.run("my_scenario", ["url": url], profile: profile, in: session)
///     #expect(result["text"] as? String == …)
///
/// The browser trusts the test's own certificate authority (an NSS database in the run's
/// HOME, where Chromium on Linux looks), so TLS is checked as for a real site and
/// `Secure`, `__Host-` cookies are kept as on one; nothing is added to the system's trust.
enum BrowserHarness {
    /// The programs a browser test needs, for `.enabled(if:)` and its note.
    static var runnable: Bool {
        ExternalTool.runnable("chromium", "chromedriver", "certutil", "openssl", ExternalTool.peerPython)
    }
    static var skipNote: String {
        ExternalTool.skipNote("chromium", "chromedriver", "certutil", "openssl", ExternalTool.peerPython)
    }

    /// The names the certificate holds and the browser resolves to 127.0.0.1 (with
    /// 127.0.0.1 itself): the recipes' site name and `localhost`.
    static let names = [Recipe.siteName, "localhost"]

    /// Where a run's browser lives: its HOME (the NSS database that trusts the test CA,
    /// the profiles), the certificates of ``names`` for the test's servers, and the folder
    /// its screenshots are written to.
    struct Profile {
        var home: String
        var certificates: Recipe.Certificates
        var screenshots: String
    }

    /// Makes a ``Profile`` in `session`: a throwaway certificate authority and a server
    /// certificate for ``names`` and 127.0.0.1 (`openssl`, `Recipe.certificates`), and an NSS
    /// database in the profile's HOME that trusts that authority for TLS servers only.
    static func profile(in session: CLISession) throws -> Profile {
        let certutil = try ExternalTool.path("certutil")
        let certificates = try Recipe.certificates(in: session, names: names)
        let home = session.path("browser-home")
        let database = home + "/.pki/nssdb"
        for folder in [home, home + "/.pki", database] { mkdir(folder, 0o700) }
        let screenshots = session.path("screenshots")
        mkdir(screenshots, 0o755)
        for arguments in [
            ["-N", "-d", "sql:" + database, "--empty-password"],
            ["-A", "-d", "sql:" + database, "-n", "credfile test CA", "-t", "C,,", "-i", certificates.authority],
        ] {
            let result = try Integration.run(certutil, arguments, in: session)
            try #require(result.status == 0, "certutil \(arguments[0]): \(result)")
        }
        return Profile(home: home, certificates: certificates, screenshots: screenshots)
    }

    /// The folder of the scenarios and of `credfile_browser.py`.
    static var scenarios: String {
        BuiltProduct.packageRoot.appendingPathComponent("Tests/CLITests/Browser").path
    }

    /// Runs the scenario `Tests/CLITests/Browser/<name>.py` with `parameters` (JSON on its
    /// standard input, never on argv: they may hold passwords) and the profile's, and
    /// gives its result (a JSON object). Fails the test with the scenario's traceback when
    /// it raised, and with its output when it wrote nothing.
    static func run(
        _ name: String, _ parameters: [String: Any], profile: Profile, in session: CLISession,
        timeout: Duration = .seconds(300)
    ) throws -> [String: Any] {
        let python = try ExternalTool.path(ExternalTool.peerPython)
        let resultPath = session.path("browser-result-\(UInt32.random(in: 0...UInt32.max)).json")
        var all = parameters
        all["chromium"] = try ExternalTool.path("chromium")
        all["chromedriver"] = try ExternalTool.path("chromedriver")
        all["home"] = profile.home
        all["screenshots"] = profile.screenshots
        all["names"] = names
        all["certificate"] = profile.certificates.certificate
        all["key"] = profile.certificates.key
        all["result"] = resultPath
        let input = try JSONSerialization.data(withJSONObject: all)
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = scenarios
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  // no __pycache__ in the checkout
        let result = try Integration.run(
            python, [scenarios + "/\(name).py"], stdin: Array(input), environment: environment, in: session,
            timeout: timeout)
        guard let data = FileManager.default.contents(atPath: resultPath),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            throw HarnessError("browser scenario \(name) wrote no result: \(result)")
        }
        if let error = object["error"] as? String {
            throw HarnessError(
                "browser scenario \(name) failed:\n\(error)\n--- chromedriver's log (end)\n"
                    + String(session.text("browser-home/chromedriver.log").suffix(2000)))
        }
        return object
    }

    /// Copies the run's screenshots to the folder named by `CREDFILE_SCREENSHOTS` (when set),
    /// as `Scripts/screenshots.sh` does for `Documentation/screenshots/`: a test never
    /// writes into the checkout otherwise.
    static func keepScreenshots(_ profile: Profile) throws {
        guard let target = ProcessInfo.processInfo.environment["CREDFILE_SCREENSHOTS"], !target.isEmpty else { return }
        let manager = FileManager.default
        try manager.createDirectory(atPath: target, withIntermediateDirectories: true)
        for file in try manager.contentsOfDirectory(atPath: profile.screenshots) where file.hasSuffix(".png") {
            let destination = target + "/" + file
            try? manager.removeItem(atPath: destination)
            try manager.copyItem(atPath: profile.screenshots + "/" + file, toPath: destination)
            chmod(destination, 0o644)
        }
    }

    /// The findings of a result's axe check of `page` (serious or critical), as text.
    static func axeFindings(_ result: [String: Any], _ key: String = "axe") -> [String] {
        ((result[key] as? [[String: Any]]) ?? []).map {
            "\($0["id"] ?? "?") (\($0["impact"] ?? "?")): \($0["help"] ?? "") \($0["nodes"] ?? "")"
        }
    }
}

/// The sign-in page behind the shipped recipes, for browser scenarios: `serve --portal`
/// on a www-data unix socket (users alice and josé, IntegrationServeTests' passwords) and
/// nginx or Caddy on https with the profile's certificate, as `Examples/portal/` has them
/// (ports, paths and certificate changed only), in front of a static site whose
/// `/private/` holds "private page". Everything stops when `body` returns.
extension BrowserHarness {
    /// A running site: its https address, `serve`, and the servers' logs for messages.
    struct PortalSite {
        var url: String
        var service: IntegrationServeTests.Service
        var logs: () -> String
    }

    /// `Examples/portal/nginx.conf` (workers as www-data) in front of `serve --portal
    /// serveArguments`, on https with `certificates` (a ``Profile``'s, for a browser);
    /// with `passkeys`, serve's `webauthn-origin` is the site's https origin (SPEC §14).
    static func withPortalBehindNginx(
        _ session: CLISession, certificates: Recipe.Certificates, serveArguments: [String] = [],
        passkeys: Bool = false, _ body: (PortalSite) throws -> Void
    ) throws {
        let nginx = try ExternalTool.path("nginx")
        let file = try IntegrationServeTests.users(session)
        let port = try Integration.freePort()
        let origin = passkeys ? ["--webauthn-origin", "https://\(Recipe.siteName):\(port)"] : []
        let (service, socket) = try IntegrationServeProxyTests.startServe(
            session, file: file, ["--portal", "--log", "stderr"] + origin + serveArguments)
        let prefix = session.path("nginx")
        for folder in ["", "/logs", "/tmp"] { mkdir(prefix + folder, 0o755) }
        let root = try RecipeTests.webRoot(session, "var-www-example.org", privatePage: true)
        let httpPort = try Integration.freePort()
        try session.write(
            "nginx/credfile-portal.conf",
            try Recipe.nginxSite(
                "portal/nginx.conf", port: port, httpPort: httpPort, tls: true, root: root,
                certificates: certificates, more: [("unix:/run/credfile/web.sock", "unix:\(socket)")]))
        try session.write(
            "nginx/nginx.conf",
            RecipeTests.nginxConfiguration(prefix: prefix, sites: [prefix + "/credfile-portal.conf"]))
        let daemon = try Daemon(nginx, ["-p", prefix, "-c", prefix + "/nginx.conf"], logIn: session)
        defer { daemon.stop() }
        try Integration.waitForPort(port, of: daemon)
        try body(
            PortalSite(url: "https://\(Recipe.siteName):\(port)", service: service) {
                "serve: \(service.log)\nnginx: \(session.text("nginx/logs/error.log"))"
            })
    }

    /// `Examples/portal/Caddyfile` (as the caddy user, `certificates` in place of
    /// `# tls internal`) in front of `serve --portal serveArguments`.
    static func withPortalBehindCaddy(
        _ session: CLISession, certificates: Recipe.Certificates, serveArguments: [String] = [],
        _ body: (PortalSite) throws -> Void
    ) throws {
        chmod(session.directory, 0o755)
        let file = try IntegrationServeTests.users(session)
        let (service, socket) = try IntegrationServeProxyTests.startServe(
            session, file: file, ["--portal", "--log", "stderr"] + serveArguments)
        let root = try RecipeTests.webRoot(session, "var-www-example.org", privatePage: true)
        let port = try Integration.freePort()
        let home = Integration.caddyHome(session)
        // The test CA's certificate where the caddy user can read it (the key 0600, its own).
        let certificate = home + "/server.pem"
        let key = home + "/server.key"
        try FileManager.default.copyItem(atPath: certificates.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: certificates.key, toPath: key)
        let caddy = try #require(getpwnam("caddy"), "no caddy user").pointee
        for path in [certificate, key] { chown(path, caddy.pw_uid, caddy.pw_gid) }
        chmod(key, 0o600)
        let site = try Recipe.example(
            "portal/Caddyfile",
            replacing: [
                ("\(Recipe.siteName) {", "https://\(Recipe.siteName):\(port) {"),
                ("\t# tls internal\n", "\ttls \(certificate) \(key)\n"),
                ("root * /var/www/\(Recipe.siteName)", "root * \(root)"),
                ("unix//run/credfile/web.sock", "unix/\(socket)"),
            ])
        // The test's own global options: no admin endpoint, no change to the system's
        // trust store, no http redirect server on port 80.
        let config = try session.write(
            "Caddyfile", "{\n\tadmin off\n\tskip_install_trust\n\tauto_https disable_redirects\n}\n\n" + site)
        chmod(config, 0o644)
        let daemon = try Integration.startCaddy(session, config: config, home: home)
        defer { daemon.stop() }
        try Integration.waitForPort(port, of: daemon)
        try body(
            PortalSite(url: "https://\(Recipe.siteName):\(port)", service: service) {
                "serve: \(service.log)\ncaddy: \(daemon.output)"
            })
    }
}

/// The harness's own check: that a page of the test CA is trusted, a `__Host-` cookie is
/// kept with its attributes, and axe and screenshots work.
@Suite(.serialized) struct BrowserHarnessTests {
    @Test(
        "the browser trusts the test CA (no flag that skips TLS checks): a secure context, the __Host- cookie kept Secure, HttpOnly, SameSite=Lax; axe runs",
        .enabled(if: BrowserHarness.runnable, Comment(rawValue: BrowserHarness.skipNote)))
    func probe() throws {
        try withSession { session in
            let profile = try BrowserHarness.profile(in: session)
            let result = try BrowserHarness.run("harness_probe", [:], profile: profile, in: session)
            let pages = try #require(result["pages"] as? [String: [String: Any]], "\(result)")
            for name in BrowserHarness.names {
                let page = try #require(pages[name], "\(name): \(result)")
                #expect((page["text"] as? String)?.contains("probe page") == true, "\(name): \(page)")
                #expect(page["secure_context"] as? Bool == true, "\(name): \(page)")
                let cookie = try #require(page["cookie"] as? [String: Any], "\(name): no __Host-probe cookie: \(page)")
                #expect(cookie["secure"] as? Bool == true && cookie["httpOnly"] as? Bool == true)
                #expect(cookie["sameSite"] as? String == "Lax" && cookie["path"] as? String == "/")
                #expect(cookie["domain"] as? String == name, "a __Host- cookie is host-only")
            }
            #expect(BrowserHarness.axeFindings(result).isEmpty, "\(BrowserHarness.axeFindings(result))")
            #expect((result["axe-passes"] as? [String: Int])?["probe"] ?? 0 > 0, "axe checked nothing: \(result)")
            #expect((result["axe-version"] as? String)?.hasPrefix("4.") == true, "\(result)")
            #expect(access(profile.screenshots + "/probe.png", R_OK) == 0)
        }
    }
}
