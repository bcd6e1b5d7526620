import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the web recipes' tests share (#33 item 7): a private certificate authority and a
/// server certificate for the recipes' name, the nginx recipes with their ports, root and
/// certificate changed, and curl asking over https with that authority.
enum Recipe {
    /// The name the web recipes serve (`server_name`, Caddy's site address).
    static let siteName = "example.org"

    /// A test certificate authority and a certificate for ``siteName`` (and 127.0.0.1)
    /// that it signed, made with `openssl` in `session` (PEM files; the key mode 0600).
    struct Certificates {
        var authority: String
        var certificate: String
        var key: String
    }

    /// Makes ``Certificates`` in `session`'s folder `tls` (ECDSA P-256, valid two days)
    /// for `names` (the first is the subject's CN) and 127.0.0.1.
    static func certificates(in session: CLISession, names: [String] = [siteName]) throws -> Certificates {
        let openssl = try ExternalTool.path("openssl")
        let folder = session.path("tls")
        mkdir(folder, 0o755)
        let ca = folder + "/ca.pem"
        let caKey = folder + "/ca.key"
        let certificate = folder + "/server.pem"
        let key = folder + "/server.key"
        let request = folder + "/server.csr"
        let extensions = try session.write(
            "tls/server.ext",
            "basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\n"
                + "extendedKeyUsage = serverAuth\nsubjectAltName = "
                + names.map { "DNS:\($0), " }.joined() + "IP:127.0.0.1\n")
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for arguments in [
            ["req", "-x509"] + ec + [
                "-keyout", caKey, "-out", ca, "-days", "2", "-subj", "/CN=credfile test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ],
            ["req"] + ec + ["-keyout", key, "-out", request, "-subj", "/CN=\(names.first ?? siteName)"],
            [
                "x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", certificate,
                "-days", "2", "-extfile", extensions,
            ],
        ] {
            let result = try Integration.run(openssl, arguments, in: session)
            try #require(result.status == 0, "openssl \(arguments.prefix(2)): \(result)")
        }
        chmod(key, 0o600)
        return Certificates(authority: ca, certificate: certificate, key: key)
    }

    /// `Examples/PATH` with each text of `replacing` changed, in order; fails when the
    /// recipe no longer holds one (as ``Integration/example(_:replacing:)``).
    static func example(_ path: String, replacing: [(String, String)]) throws -> String {
        var text = try Integration.example(path)
        for (original, replacement) in replacing {
            try #require(text.contains(original), "Examples/\(path) no longer holds \(original.debugDescription)")
            text = text.replacingOccurrences(of: original, with: replacement)
        }
        return text
    }

    /// An nginx recipe of `Examples/nginx/` with only its addresses, paths and ports
    /// changed: the https server on 127.0.0.1:`port` (with TLS when `tls`, plain http
    /// only for the loopback tests of the login path), the http server that redirects
    /// on 127.0.0.1:`httpPort`, the root, the test's certificate, and `more`.
    static func nginxSite(
        _ path: String, port: Int, httpPort: Int, tls: Bool, root: String, certificates: Certificates,
        more: [(String, String)] = []
    ) throws -> String {
        try example(
            path,
            replacing: [
                ("    listen [::]:443 ssl;\n", ""), ("    listen [::]:80;\n", ""),
                ("listen 443 ssl;", tls ? "listen 127.0.0.1:\(port) ssl;" : "listen 127.0.0.1:\(port);"),
                ("listen 80;", "listen 127.0.0.1:\(httpPort);"),
                ("https://\(siteName)$request_uri", "https://\(siteName):\(port)$request_uri"),
                ("/etc/letsencrypt/live/\(siteName)/fullchain.pem", certificates.certificate),
                ("/etc/letsencrypt/live/\(siteName)/privkey.pem", certificates.key),
                ("root /var/www/\(siteName);", "root \(root);"),
            ] + more)
    }

    /// nginx as a stranger runs it: Debian's default site (on 127.0.0.1:`httpPort`, root
    /// `debianRoot`) and the recipe `recipe` of `Examples/` beside it (``nginxSite``, https
    /// on 127.0.0.1:`port`, root `root`, `socket` for serve's), workers as www-data, in the
    /// session's `nginx/` folder; started, and answering on `port`.
    /// - Returns: the daemon (the caller stops it) and the two ports.
    static func startNginxBesideDebianDefault(
        _ session: CLISession, recipe: String, root: String, debianRoot: String, certificates: Certificates,
        socket: String, more: [(String, String)] = []
    ) throws -> (daemon: Daemon, port: Int, httpPort: Int) {
        let nginx = try ExternalTool.path("nginx")
        let prefix = session.path("nginx")
        for folder in ["", "/logs", "/tmp"] { mkdir(prefix + folder, 0o755) }
        let port = try Integration.freePort()
        let httpPort = try Integration.freePort()
        try session.write("nginx/default", try debianDefaultSite(httpPort: httpPort, root: debianRoot))
        try session.write(
            "nginx/recipe.conf",
            try nginxSite(
                recipe, port: port, httpPort: httpPort, tls: true, root: root, certificates: certificates,
                more: [("unix:/run/credfile/web.sock", "unix:\(socket)")] + more))
        try session.write(
            "nginx/nginx.conf",
            RecipeTests.nginxConfiguration(prefix: prefix, sites: [prefix + "/default", prefix + "/recipe.conf"]))
        let daemon = try Daemon(nginx, ["-p", prefix, "-c", prefix + "/nginx.conf"], logIn: session)
        do {
            try Integration.waitForPort(port, of: daemon)
        } catch {
            daemon.stop()
            throw error
        }
        return (daemon, port, httpPort)
    }

    /// Debian's own default site (`/etc/nginx/sites-available/default`, as the nginx
    /// package installs and enables it), on 127.0.0.1:`httpPort` with its root `root`.
    static func debianDefaultSite(httpPort: Int, root: String) throws -> String {
        var text = try String(contentsOfFile: "/etc/nginx/sites-available/default", encoding: .utf8)
        for (original, replacement) in [
            ("\tlisten [::]:80 default_server;\n", ""),
            ("listen 80 default_server;", "listen 127.0.0.1:\(httpPort) default_server;"),
            ("root /var/www/html;", "root \(root);"),
        ] {
            try #require(text.contains(original), "Debian's default site no longer holds \(original.debugDescription)")
            text = text.replacingOccurrences(of: original, with: replacement)
        }
        return text
    }

    /// An HTTP(S) answer: the status, the headers and the body.
    struct Answer {
        var status: String
        var headers: String
        var body: String
        func header(_ name: String) -> String? {
            IntegrationServeTests.Answer(status: status, headers: headers).header(name)
        }
    }

    /// Asks `url` with curl, trusting only `authority` (`--cacert`) and reaching `name`
    /// (``siteName`` unless given) at 127.0.0.1 (`--resolve`), sending `host` as the Host
    /// header when given, and `headers`; with `form`, a POST of those fields
    /// (`application/x-www-form-urlencoded`); `options` are more lines of curl's config
    /// (`path-as-is`). Credentials and form fields go in a curl config file, never on
    /// curl's command line.
    static func ask(
        _ session: CLISession, _ url: String, port: Int, authority: String?, user: (String, String)? = nil,
        host: String? = nil, name: String = siteName, headers: [String] = [], form: [(String, String)] = [],
        options: [String] = []
    ) throws -> Answer {
        let curl = try ExternalTool.path("curl")
        var config = "resolve = \"\(name):\(port):127.0.0.1\"\n"
        if let authority { config += "cacert = \"\(authority)\"\n" }
        if let user { config += "user = \"\(user.0):\(user.1)\"\n" }
        if let host { config += "header = \"Host: \(host)\"\n" }
        config += headers.map { "header = \"\($0)\"\n" }.joined()
        config += form.map { "data-urlencode = \"\($0.0)=\($0.1)\"\n" }.joined()
        config += options.map { $0 + "\n" }.joined()
        let configPath = try session.write("curl-\(UInt32.random(in: 0...UInt32.max)).cfg", config)
        defer { unlink(configPath) }
        let body = session.path("body-\(UInt32.random(in: 0...UInt32.max))")
        defer { unlink(body) }
        let result = try Integration.run(
            curl, ["-s", "-S", "-D", "-", "-o", body, "--max-time", "30", "-K", configPath, url], in: session)
        let status =
            result.stdout.split(separator: " ").dropFirst().first.map(String.init) ?? "none: \(result)"
        return Answer(status: status, headers: result.stdout, body: session.text((body as NSString).lastPathComponent))
    }
}
