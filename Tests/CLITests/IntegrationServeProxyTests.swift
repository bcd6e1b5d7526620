import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The web servers in front of `credfile serve` (SPEC §10), each run from the recipe the
/// repository ships (`Examples/nginx/`, `Examples/caddy/`) with only its paths and port
/// changed: nginx with `auth_request`, its workers as www-data reaching a unix socket of
/// group www-data, and Caddy 2.6 with `forward_auth`, run as the caddy user.
@Suite(.serialized) struct IntegrationServeProxyTests {
    typealias Serve = IntegrationServeTests

    /// A web root with a public page and a private one, readable by the servers' users.
    static func webRoot(_ session: CLISession) throws -> String {
        for folder in ["html", "html/private"] { mkdir(session.path(folder), 0o755) }
        try session.write("html/index.html", "public page\n")
        try session.write("html/private/index.html", "private page\n")
        for page in ["html/index.html", "html/private/index.html"] { chmod(session.path(page), 0o644) }
        return session.path("html")
    }

    /// nginx from `Examples/nginx/credfile-serve.conf` (or another `recipe` of the same
    /// shape), workers as www-data, on `port`.
    static func startNginx(
        _ session: CLISession, port: Int, socket: String, recipe: String = "nginx/credfile-serve.conf"
    ) throws -> Daemon {
        let nginx = try ExternalTool.path("nginx")
        let root = try webRoot(session)
        let prefix = session.path("nginx")
        for folder in ["", "/logs", "/tmp"] { mkdir(prefix + folder, 0o755) }
        // Plain http on loopback (the TLS of the recipe: RecipeTests).
        let site = try Recipe.nginxSite(
            recipe, port: port, httpPort: try Integration.freePort(), tls: false, root: root,
            certificates: try Recipe.certificates(in: session),
            more: [("unix:/run/credfile/web.sock", "unix:\(socket)")])
        try session.write("nginx/site.conf", site)
        try session.write(
            "nginx/nginx.conf",
            """
            user www-data www-data;
            worker_processes 2;
            daemon off;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/logs/error.log;
            events { worker_connections 512; }
            http {
                access_log off;
                client_body_temp_path \(prefix)/tmp/body;
                proxy_temp_path \(prefix)/tmp/proxy;
                fastcgi_temp_path \(prefix)/tmp/fastcgi;
                uwsgi_temp_path \(prefix)/tmp/uwsgi;
                scgi_temp_path \(prefix)/tmp/scgi;
                include \(prefix)/site.conf;
            }

            """)
        let daemon = try Daemon(nginx, ["-p", prefix, "-c", prefix + "/nginx.conf"], logIn: session)
        try Integration.waitForPort(port, of: daemon)
        return daemon
    }

    /// The unix socket `serve` answers nginx on: group www-data, mode 0660 (the default).
    static func startServe(_ session: CLISession, file: String, _ extra: [String] = []) throws -> (
        Serve.Service, String
    ) {
        let socket = session.path("web.sock")
        return (
            try Serve.Service(session, file: file, listen: "unix:" + socket, ["--socket-group", "www-data"] + extra),
            socket
        )
    }

    @Test(
        "nginx auth_request (workers as www-data) → serve on a www-data unix socket: 200 and the user, 401 with the challenge",
        .enabled(if: ExternalTool.runnable("nginx", "curl"), Comment(rawValue: ExternalTool.skipNote("nginx", "curl"))))
    func nginx() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let (service, socket) = try Self.startServe(session, file: file, ["--log", "stderr"])
            var info = stat()
            #expect(lstat(socket, &info) == 0 && info.st_mode & 0o7777 == 0o660, "the default mode is not 0660")
            #expect(info.st_gid == getgrnam("www-data")?.pointee.gr_gid)
            let port = try Integration.freePort()
            let nginx = try Self.startNginx(session, port: port, socket: socket)
            defer { nginx.stop() }
            let url = "http://127.0.0.1:\(port)/private/"
            let good = try Serve.ask(session, url, user: Serve.alice)
            #expect(good.status == "200", "\(good.headers)\n\(service.log)\n\(session.text("nginx/logs/error.log"))")
            #expect(
                good.header("X-Credfile-User") == "alice", "auth_request_set did not carry the user: \(good.headers)")
            let jose = try Serve.ask(session, url, user: Serve.jose)
            #expect(jose.status == "200", "\(jose.headers)")
            for (name, answer) in [
                ("wrong password", try Serve.ask(session, url, user: (Serve.alice.0, "Naranjo-en-flor-2027"))),
                ("unknown user", try Serve.ask(session, url, user: ("mallory", Serve.alice.1))),
                ("no credentials", try Serve.ask(session, url)),
            ] {
                #expect(answer.status == "401", "\(name): \(answer.headers)")
                #expect(
                    answer.header("WWW-Authenticate") == #"Basic realm="credfile", charset="UTF-8""#,
                    "\(name): \(answer.headers)")
            }
            #expect(
                try Serve.ask(session, "http://127.0.0.1:\(port)/").status == "200", "the public page needs no login")
            try Self.expectForgedAddressIgnored(session, url: url, service: service)
        }
    }

    /// A login from curl (127.0.0.1) that names another client in the headers a proxy
    /// adds: the service's log (§9's rhost, what fail2ban bans) has the proxy's view of
    /// the client, never the forged address.
    static func expectForgedAddressIgnored(_ session: CLISession, url: String, service: Serve.Service) throws {
        let denied = try Serve.ask(
            session, url, user: ("forger", "Forged-Pass-2026"),
            extraHeaders: ["X-Real-IP: 192.0.2.66", "X-Forwarded-For: 192.0.2.66"])
        #expect(denied.status == "401", "\(denied.headers)")
        service.waitForLog("user=forger")
        let lines = service.log.split(separator: "\n").filter { $0.contains("user=forger") }
        #expect(lines.count == 1 && lines.allSatisfy { $0.contains(" rhost=127.0.0.1 ") }, "\(service.log)")
        #expect(
            !service.log.contains("192.0.2.66"), "a header the client sent chose the logged address: \(service.log)")
    }

    @Test(
        "Caddy 2.6 forward_auth (as the caddy user) → serve: 200 with X-Credfile-User copied, 401 with the challenge",
        .enabled(
            if: ExternalTool.runnable("caddy", "curl", "setpriv"),
            Comment(rawValue: ExternalTool.skipNote("caddy", "curl", "setpriv"))))
    func caddy() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let (service, socket) = try Self.startServe(session, file: file, ["--log", "stderr"])
            let root = try Self.webRoot(session)
            let port = try Integration.freePort()
            let home = Integration.caddyHome(session)
            let site = try Integration.example(
                "caddy/Caddyfile",
                replacing: [
                    // Plain http on loopback (the recipe's https: RecipeTests.caddy).
                    "\(Recipe.siteName) {": "http://127.0.0.1:\(port) {",
                    "root * /var/www/\(Recipe.siteName)": "root * \(root)",
                    "unix//run/credfile/web.sock": "unix/\(socket)",
                    // Not a change of the recipe, a probe: shows the test what forward_auth
                    // copied onto the request (applied as the answer is written).
                    "\tfile_server\n":
                        "\theader /private/* {\n\t\tX-Seen-User {http.request.header.X-Credfile-User}\n\t\tdefer\n\t}\n\tfile_server\n",
                ])
            let config = try session.write("Caddyfile", "{\n\tadmin off\n}\n\n" + site)
            chmod(config, 0o644)
            let daemon = try Integration.startCaddy(session, config: config, home: home)
            defer { daemon.stop() }
            try Integration.waitForPort(port, of: daemon)
            let url = "http://127.0.0.1:\(port)/private/"
            let good = try Serve.ask(session, url, user: Serve.alice)
            #expect(good.status == "200", "\(good.headers)\n\(service.log)\n\(daemon.output)")
            #expect(good.header("X-Seen-User") == "alice", "copy_headers did not carry the user: \(good.headers)")
            let jose = try Serve.ask(session, url, user: Serve.jose)
            #expect(jose.status == "200", "\(jose.headers)")
            let wrong = try Serve.ask(session, url, user: (Serve.alice.0, "Naranjo-en-flor-2027"))
            #expect(wrong.status == "401", "\(wrong.headers)")
            #expect(wrong.header("WWW-Authenticate") == #"Basic realm="credfile", charset="UTF-8""#, "\(wrong.headers)")
            #expect(try Serve.ask(session, url).status == "401")
            #expect(try Serve.ask(session, "http://127.0.0.1:\(port)/").status == "200")
            try Self.expectForgedAddressIgnored(session, url: url, service: service)
        }
    }

    @Test(
        "while 50 clients send bad logins through nginx, the public page and a cached good login keep answering, and nothing hangs",
        .enabled(if: ExternalTool.runnable("nginx", "curl"), Comment(rawValue: ExternalTool.skipNote("nginx", "curl"))))
    func floodOfBadLogins() throws {
        try withSession { session in
            let file = try Serve.users(session)
            // Every bad login costs a PBKDF2 at the policy's rounds (600,000: OWASP's floor).
            let (service, socket) = try Self.startServe(session, file: file, ["--iterations", "600000"])
            let port = try Integration.freePort()
            let nginx = try Self.startNginx(session, port: port, socket: socket)
            defer { nginx.stop() }
            let url = "http://127.0.0.1:\(port)/private/"
            #expect(try Serve.ask(session, url, user: Serve.alice).status == "200", "\(service.log)")  // now cached
            let curl = try ExternalTool.path("curl")
            var flood = "user = \"mallory:not-the-password\"\nmax-time = 30\nwrite-out = \"%{http_code}\\n\"\n"
            for _ in 0..<300 { flood += "url = \"\(url)\"\noutput = \"/dev/null\"\n" }
            let floodConfig = try session.write("flood.cfg", flood)
            let attackers = try ChildProcess.start(
                curl, ["-s", "--parallel", "--parallel-max", "50", "-K", floodConfig])
            usleep(500_000)  // the flood is under way
            var slowest = 0.0
            var publicStatuses: [String] = []
            var cachedStatuses: [String] = []
            while attackers.isRunning && publicStatuses.count < 40 {
                let start = ContinuousClock.now
                publicStatuses.append(try Serve.ask(session, "http://127.0.0.1:\(port)/").status)
                slowest = max(slowest, (ContinuousClock.now - start) / .seconds(1))
                cachedStatuses.append(try Serve.ask(session, url, user: Serve.alice).status)
            }
            let result = try attackers.wait(timeout: .seconds(120))
            let codes = result.stdout.split(separator: "\n").map(String.init)
            #expect(codes.count == 300, "some flood requests never ended: \(codes.count)")
            // A denial (401) or, past the queue's bound, a temporary failure (503 → nginx's 500): never a hang (000).
            #expect(
                codes.allSatisfy { $0 == "401" || $0 == "500" },
                "\(Dictionary(grouping: codes, by: { $0 }).mapValues(\.count))")
            #expect(!publicStatuses.isEmpty, "the flood ended before the public page was asked")
            #expect(publicStatuses.allSatisfy { $0 == "200" }, "\(publicStatuses)")
            #expect(
                cachedStatuses.allSatisfy { $0 == "200" },
                "a cached good login was refused during the flood: \(cachedStatuses)")
            // Liveness, not a benchmark (Benchmarks/ measures the p99): no answer waited for the hashing.
            #expect(slowest < 2, "the public page took \(slowest) s during the flood")
        }
    }

    // MARK: Traefik

    /// The items of the YAML list under `key:` in `text` (`- "X"` lines, quotes removed).
    static func yamlList(_ key: String, in text: String) -> [String] {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let start = lines.firstIndex(of: key + ":") else { return [] }
        return lines[(start + 1)...].prefix { $0.hasPrefix("- ") }.map {
            $0.dropFirst(2).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
    }

    /// Traefik is not in Debian 12, so no test runs it; its forwardAuth middleware speaks
    /// the protocol Caddy's forward_auth speaks (a GET carrying the request's headers, 2xx
    /// lets it through with the named response headers copied, anything else goes back to
    /// the client). This holds the shipped recipe (`Examples/traefik/`) to what serve
    /// answers: the middleware's `address` is where the socket drop-in listens, serve
    /// there, asked with only the `authRequestHeaders` and the X-Forwarded-* headers Traefik
    /// adds, answers 200 with every `authResponseHeaders` header and the user's name, a
    /// wrong password 401 with the Basic challenge, and logs Traefik's X-Forwarded-For.
    @Test(
        "Traefik's recipe: the middleware asks where the drop-in listens, with the headers serve reads, and copies the one it answers",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func traefikRecipe() throws {
        try withSession { session in
            let dropIn = try Integration.example("traefik/credfile-serve-tcp.conf")
            let middleware = try Integration.example("traefik/credfile.yml")
            let listen = try #require(
                dropIn.split(separator: "\n").last { $0.hasPrefix("ListenStream=") && $0 != "ListenStream=" }?
                    .dropFirst("ListenStream=".count))
            let address = try #require(middleware.firstMatch(of: /address: "http:\/\/([^\/"]+)\/"/)?.1)
            #expect(address == listen, "the middleware asks \(address), the socket listens on \(listen)")
            #expect(listen.hasPrefix("127.0.0.1:"), "the service must listen on loopback: \(listen)")
            #expect(Self.yamlList("authRequestHeaders", in: middleware) == ["Authorization"])
            let copied = Self.yamlList("authResponseHeaders", in: middleware)
            #expect(copied == ["X-Credfile-User"])

            // Loopback is trusted only when named (SPEC v4 §10): the page names it.
            let page = try String(
                contentsOf: BuiltProduct.packageRoot.appendingPathComponent("Documentation/traefik.md"), encoding: .utf8
            )
            #expect(page.contains("trusted-proxy = 127.0.0.1"), "traefik.md does not name loopback as trusted")
            let file = try Serve.users(session)
            let port = try Integration.freePort()  // the drop-in's port, on a port free here
            let service = try Serve.Service(
                session, file: file, listen: "127.0.0.1:\(port)", ["--log", "stderr", "--trusted-proxy", "127.0.0.1"])
            let url = "http://127.0.0.1:\(port)/"
            let forwarded = [
                "X-Forwarded-Method: GET", "X-Forwarded-Proto: https", "X-Forwarded-Host: example.org",
                "X-Forwarded-Uri: /private/report", "X-Forwarded-For: 198.51.100.7",
            ]
            let good = try Serve.ask(session, url, user: Serve.alice, extraHeaders: forwarded)
            #expect(good.status == "200", "\(good.headers) \(service.log)")
            for header in copied { #expect(good.header(header) != nil, "\(header) missing: \(good.headers)") }
            #expect(good.header("X-Credfile-User") == "alice")
            let wrong = try Serve.ask(
                session, url, user: (Serve.alice.0, "Naranjo-en-flor-2027"), extraHeaders: forwarded)
            #expect(
                wrong.status == "401" && wrong.header("WWW-Authenticate")?.hasPrefix("Basic realm=") == true,
                "\(wrong.headers)")
            service.waitForLog("authentication failure")
            #expect(service.log.contains("user=alice rhost=198.51.100.7 "), "\(service.log)")
            // Without the setting, Traefik's X-Forwarded-For is not believed from loopback.
            let port2 = try Integration.freePort()
            let untrusting = try Serve.Service(session, file: file, listen: "127.0.0.1:\(port2)", ["--log", "stderr"])
            _ = try Serve.ask(
                session, "http://127.0.0.1:\(port2)/", user: ("nobody", "Naranjo-en-flor-2027"), extraHeaders: forwarded
            )
            untrusting.waitForLog("user=nobody")
            #expect(untrusting.log.contains("user=nobody rhost=127.0.0.1 "), "\(untrusting.log)")
        }
    }
}
