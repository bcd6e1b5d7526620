import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The recipes as a stranger runs them on Debian 12 (#33 item 7): nginx's next to Debian's
/// own default site, on https with a certificate of a test authority; Caddy's on https with
/// its own authority (`tls internal`). Plain http is only for the loopback tests of the
/// login path (IntegrationServeProxyTests).
@Suite(.serialized) struct RecipeTests {
    typealias Serve = IntegrationServeTests

    /// nginx's main configuration for a private prefix, including `sites` (as Debian's
    /// `nginx.conf` includes `sites-enabled/*`), workers as www-data.
    static func nginxConfiguration(prefix: String, sites: [String], modules: [String] = []) -> String {
        (modules.map { "load_module \($0);\n" }.joined())
            + """
            user www-data www-data;
            worker_processes 1;
            daemon off;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/logs/error.log;
            events { worker_connections 64; }
            http {
                include /etc/nginx/mime.types;
                access_log off;
                client_body_temp_path \(prefix)/tmp/body;
                proxy_temp_path \(prefix)/tmp/proxy;
                fastcgi_temp_path \(prefix)/tmp/fastcgi;
                uwsgi_temp_path \(prefix)/tmp/uwsgi;
                scgi_temp_path \(prefix)/tmp/scgi;
            \(sites.map { "    include \($0);\n" }.joined())}

            """
    }

    /// A folder of `session` holding `index.html` ("public page") and, when `privatePage`,
    /// `private/index.html` ("private page"), readable by the servers' users.
    static func webRoot(_ session: CLISession, _ name: String, privatePage: Bool) throws -> String {
        mkdir(session.path(name), 0o755)
        try session.write(name + "/index.html", "public page\n")
        chmod(session.path(name + "/index.html"), 0o644)
        if privatePage {
            mkdir(session.path(name + "/private"), 0o755)
            try session.write(name + "/private/index.html", "private page\n")
            chmod(session.path(name + "/private/index.html"), 0o644)
        }
        return session.path(name)
    }

    /// The stranger's setup: Debian's default site left enabled (listen 80
    /// default_server, root /var/www/html), the recipe beside it on the same http port
    /// and on https. The old recipe (`listen 80`, no name, root /var/www/html) never
    /// answered there: the default site did, and served /private/ without a login.
    @Test(
        "nginx's serve recipe next to Debian's default site: https only, /private/ 401 without a login and 200 with, never served by the default site",
        .enabled(
            if: ExternalTool.runnable("nginx", "curl", "openssl")
                && (access("/etc/nginx/sites-available/default", R_OK) == 0 || ExternalTool.isCI),
            Comment(rawValue: ExternalTool.skipNote("nginx", "curl", "openssl"))))
    func nginxNextToTheDefaultSite() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let (service, socket) = try IntegrationServeProxyTests.startServe(session, file: file)
            let certificates = try Recipe.certificates(in: session)
            let (daemon, port, httpPort) = try Recipe.startNginxBesideDebianDefault(
                session, recipe: "nginx/credfile-serve.conf",
                root: try Self.webRoot(session, "var-www-example.org", privatePage: true),
                debianRoot: try Self.webRoot(session, "var-www-html", privatePage: false), certificates: certificates,
                socket: socket)
            defer { daemon.stop() }
            let site = "https://\(Recipe.siteName):\(port)"
            let ask = { (url: String, user: (String, String)?) in
                try Recipe.ask(session, url, port: port, authority: certificates.authority, user: user)
            }
            let anonymous = try ask(site + "/private/", nil)
            #expect(anonymous.status == "401", "\(anonymous.headers)\(session.text("nginx/logs/error.log"))")
            #expect(!anonymous.body.contains("private page"))
            #expect(anonymous.header("WWW-Authenticate") == #"Basic realm="credfile", charset="UTF-8""#)
            let good = try ask(site + "/private/", Serve.alice)
            #expect(good.status == "200" && good.body == "private page\n", "\(good.headers)\(service.log)")
            #expect(good.header("X-Credfile-User") == "alice")
            let wrong = try ask(site + "/private/", (Serve.alice.0, "Naranjo-en-flor-2027"))
            #expect(wrong.status == "401" && !wrong.body.contains("private page"))
            #expect(try ask(site + "/", nil).status == "200", "the public page needs no login")
            // Only the test's authority is trusted: without it curl refuses the certificate.
            let untrusted = try Recipe.ask(session, site + "/private/", port: port, authority: nil)
            #expect(untrusted.status.hasPrefix("none"), "\(untrusted.headers)")

            // Plain http to the site's name only sends the browser to https, before any login.
            let redirect = try Recipe.ask(
                session, "http://\(Recipe.siteName):\(httpPort)/private/", port: httpPort, authority: nil,
                user: Serve.alice)
            #expect(redirect.status == "301", "\(redirect.headers)")
            #expect(redirect.header("Location") == "\(site)/private/", "\(redirect.headers)")
            #expect(!redirect.body.contains("private page"))
            // Any other name reaches Debian's default site, which has no way to the site's files.
            for host in ["127.0.0.1", "localhost", "other.example"] {
                let other = try Recipe.ask(
                    session, "http://127.0.0.1:\(httpPort)/private/index.html", port: httpPort, authority: nil,
                    user: nil, host: host)
                #expect(other.status != "200" || !other.body.contains("private page"), "\(host): \(other.headers)")
            }
            let debianPage = try Recipe.ask(
                session, "http://127.0.0.1:\(httpPort)/", port: httpPort, authority: nil, host: "127.0.0.1")
            #expect(debianPage.status == "200", "Debian's default site did not answer: \(debianPage.headers)")
        }
    }

    /// Caddy's recipe with `tls internal` uncommented (a name no public authority can check
    /// here): https with a certificate of Caddy's own authority, whose root curl trusts.
    @Test(
        "Caddy's recipe on https (tls internal, as the caddy user): /private/ 401 without a login, 200 with",
        .enabled(
            if: ExternalTool.runnable("caddy", "curl", "setpriv"),
            Comment(rawValue: ExternalTool.skipNote("caddy", "curl", "setpriv"))))
    func caddy() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let (service, socket) = try IntegrationServeProxyTests.startServe(session, file: file)
            let root = try Self.webRoot(session, "var-www-example.org", privatePage: true)
            let port = try Integration.freePort()
            let home = Integration.caddyHome(session)
            let site = try Recipe.example(
                "caddy/Caddyfile",
                replacing: [
                    ("\(Recipe.siteName) {", "https://\(Recipe.siteName):\(port) {"),
                    ("\t# tls internal\n", "\ttls internal\n"),
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
            let authority = home + "/caddy/pki/authorities/local/root.crt"
            try Integration.waitForFile(authority)
            let url = "https://\(Recipe.siteName):\(port)/private/"
            var anonymous = try Recipe.ask(session, url, port: port, authority: authority)
            // The certificate is issued just after the port opens: ask again for a moment.
            let deadline = ContinuousClock.now + .seconds(20)
            while anonymous.status.hasPrefix("none") && ContinuousClock.now < deadline {
                usleep(200_000)
                anonymous = try Recipe.ask(session, url, port: port, authority: authority)
            }
            #expect(
                anonymous.status == "401" && !anonymous.body.contains("private page"), "\(anonymous) \(daemon.output)")
            let good = try Recipe.ask(session, url, port: port, authority: authority, user: Serve.alice)
            #expect(good.status == "200" && good.body == "private page\n", "\(good.headers) \(service.log)")
            let wrong = try Recipe.ask(
                session, url, port: port, authority: authority, user: (Serve.alice.0, "Naranjo-en-flor-2027"))
            #expect(wrong.status == "401")
        }
    }

    // MARK: systemd

    /// systemd.md's source install renders the units for `PREFIX`; under a `PREFIX` no
    /// `man` searches (a scratch folder here, `/opt/credfile` for real), the rendered
    /// units pass `systemd-analyze verify` with its man page check on. The units as
    /// shipped named `man:credfile(1)`, which verify could not find there.
    @Test(
        "systemd.md's source install renders units that pass systemd-analyze verify (man pages checked) under another PREFIX",
        .enabled(
            if: ExternalTool.runnable("systemd-analyze", "bash", "man"),
            Comment(rawValue: ExternalTool.skipNote("systemd-analyze", "bash", "man"))))
    func unitsVerifyUnderAnotherPrefix() throws {
        try withSession { session in
            let page = try DocumentationPagesTests.text("Documentation/systemd.md")
            let block = try #require(
                DocumentationPagesTests.blocks(in: page).first { $0.info == "sh" && $0.text.contains("for unit in") },
                "systemd.md has no source-install block")
            let lines = block.text.split(separator: "\n", omittingEmptySubsequences: false)
            let start = try #require(lines.firstIndex { $0.hasPrefix("for unit in") })
            let end = try #require(lines[start...].firstIndex { $0 == "done" })
            let units = session.path("etc-systemd-system")
            mkdir(units, 0o755)
            let render = lines[start...end].joined(separator: "\n")
                .replacingOccurrences(of: "/etc/systemd/system/", with: units + "/")
            // The README's install under PREFIX (the binary and the man page; the rest is tested there).
            let prefix = session.path("opt-credfile")
            for folder in ["", "/bin", "/share", "/share/man", "/share/man/man1"] { mkdir(prefix + folder, 0o755) }
            try BuiltProduct.copy(to: prefix + "/bin/credfile")
            let man = try DocumentationTests.run(prefix + "/bin/credfile", ["--generate-man"])
            try session.write("opt-credfile/share/man/man1/credfile.1", man.stdout)
            var environment = ProcessInfo.processInfo.environment
            environment["PREFIX"] = prefix
            let rendered = try ChildProcess.run(
                try ExternalTool.path("bash"), ["-euo", "pipefail", "-c", render], environment: environment,
                directory: BuiltProduct.packageRoot.path)
            try #require(rendered.status == 0, "\(rendered)")
            let service = session.text("etc-systemd-system/credfile-serve@.service")
            #expect(service.contains("ExecStart=\(prefix)/bin/credfile serve "), "\(service)")
            #expect(!service.contains("/usr/bin/credfile") && !service.contains("man:credfile"))
            for unit in ["credfile-serve@.socket", "credfile-serve@.service"] {
                let instance = unit.replacingOccurrences(of: "@.", with: "@web.")
                try session.write(instance, session.text("etc-systemd-system/" + unit))
            }
            let result = try Integration.run(
                try ExternalTool.path("systemd-analyze"),
                ["verify", session.path("credfile-serve@web.socket"), session.path("credfile-serve@web.service")],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "MANPATH": "", "LANG": "C"], in: session)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        }
    }

    /// The system calls a group of `systemd-analyze syscall-filter` names, groups expanded.
    static func systemCalls(in group: String, analyze: String, seen: inout Set<String>) throws -> Set<String> {
        guard seen.insert(group).inserted else { return [] }
        let listing = try ChildProcess.run(analyze, ["syscall-filter", group])
        try #require(listing.status == 0, "\(listing)")
        var calls = Set<String>()
        for line in listing.stdout.split(separator: "\n").dropFirst() {
            let name = line.trimmingCharacters(in: .whitespaces)
            if name.isEmpty || name.hasPrefix("#") { continue }
            if name.hasPrefix("@") {
                calls.formUnion(try systemCalls(in: name, analyze: analyze, seen: &seen))
            } else {
                calls.insert(name)
            }
        }
        return calls
    }

    /// The service's `SystemCallFilter=` lines as systemd applies them (systemd.exec(5)):
    /// the first, an allow list, sets what is allowed; each later one adds to it, or with
    /// `~` takes away. serve lowers its hashing threads to nice 10 with `setpriority`,
    /// which `~@resources` took away (EPERM: the threads ran at nice 0).
    @Test(
        "the service's system call filter allows setpriority (hashing at nice 10) and still denies the rest of @privileged and @resources",
        .enabled(
            if: ExternalTool.runnable("systemd-analyze"), Comment(rawValue: ExternalTool.skipNote("systemd-analyze"))))
    func filterAllowsSetpriority() throws {
        let analyze = try ExternalTool.path("systemd-analyze")
        let unit = try Integration.example("systemd/credfile-serve@.service")
        let filters = unit.split(separator: "\n").filter { $0.hasPrefix("SystemCallFilter=") }
            .map { $0.dropFirst("SystemCallFilter=".count) }
        try #require(filters.first.map { !$0.hasPrefix("~") } == true, "the first filter is not an allow list")
        var allowed = Set<String>()
        for filter in filters {
            let deny = filter.hasPrefix("~")
            var names = Set<String>()
            for word in filter.drop { $0 == "~" }.split(separator: " ") {
                var seen = Set<String>()
                if word.hasPrefix("@") {
                    names.formUnion(try Self.systemCalls(in: String(word), analyze: analyze, seen: &seen))
                } else {
                    names.insert(String(word))
                }
            }
            if deny { allowed.subtract(names) } else { allowed.formUnion(names) }
        }
        let lowersPriority = allowed.contains("setpriority")
        #expect(lowersPriority, "serve cannot lower its hashing threads' priority (~@resources took setpriority away)")
        #expect(allowed.contains("read") && allowed.contains("accept4"))
        for denied in ["sched_setscheduler", "setrlimit", "nice", "mount", "setuid", "reboot", "chroot"] {
            #expect(!allowed.contains(denied), "\(denied) is allowed")
        }
    }

    // MARK: fail2ban, rsyslog, logrotate

    /// The shipped rotation of credfile's own log, read by the real `logrotate -d` (which
    /// only says what it would do): a log past `maxsize` is rotated before its day is up,
    /// a small one is not; beside Debian's own rules (rsyslog's, auth.log's) it parses with
    /// no error and no duplicate entry. Before #33 there was no rotation: a flood of bad
    /// logins wrote 42 MB in 6 minutes into an auth.log rotated once a week.
    @Test(
        "logrotate -d: the shipped /etc/logrotate.d/credfile rotates credfile.log past 50 MB and sits beside Debian's rsyslog rules",
        .enabled(if: ExternalTool.runnable("logrotate"), Comment(rawValue: ExternalTool.skipNote("logrotate"))))
    func logrotate() throws {
        try withSession { session in
            let logrotate = try ExternalTool.path("logrotate")
            let log = session.path("credfile.log")
            let config = try session.write(
                "logrotate.conf",
                try Integration.example("logrotate/credfile", replacing: ["/var/log/credfile.log": log]))
            chmod(config, 0o644)
            func dryRun(size: Int) throws -> CLIResult {
                try writeBytes(log, [], mode: 0o640)
                #expect(truncate(log, off_t(size)) == 0)
                return try Integration.run(
                    logrotate, ["-d", "-s", session.path("state-\(size)"), config], in: session)
            }
            let flooded = try dryRun(size: 60 << 20)
            #expect(flooded.status == 0, "\(flooded)")
            #expect(flooded.stderr.contains("log needs rotating"), "\(flooded.stderr)")
            let quiet = try dryRun(size: 4096)
            #expect(quiet.status == 0 && quiet.stderr.contains("log does not need rotating"), "\(quiet.stderr)")
            // As installed, next to Debian's own rules.
            let shipped = BuiltProduct.packageRoot.appendingPathComponent("Examples/logrotate/credfile").path
            var together = [shipped]
            if access("/etc/logrotate.d/rsyslog", R_OK) == 0 { together.insert("/etc/logrotate.d/rsyslog", at: 0) }
            let beside = try Integration.run(
                logrotate, ["-d", "-s", session.path("state-beside")] + together, in: session)
            #expect(beside.status == 0 && !beside.stderr.contains("error"), "\(beside.stderr)")
        }
    }

    /// The shipped rsyslog rule in a real `rsyslogd`, before the usual `authpriv` rule:
    /// credfile's lines go to credfile.log (what the jail and the rotation read) and not to
    /// auth.log; another program's authpriv lines still go to auth.log.
    @Test(
        "rsyslog: the shipped rule puts credfile's lines in credfile.log, and only there",
        .enabled(
            if: ExternalTool.runnable("rsyslogd", "logger"),
            Comment(rawValue: ExternalTool.skipNote("rsyslogd", "logger"))
        ))
    func rsyslogRule() throws {
        try withSession { session in
            let rsyslogd = try ExternalTool.path("rsyslogd")
            let logger = try ExternalTool.path("logger")
            let directory = session.path("rsyslog")
            mkdir(directory, 0o755)
            let rule = try Integration.example(
                "rsyslog/credfile.conf", replacing: ["/var/log/credfile.log": directory + "/credfile.log"])
            let configuration =
                """
                global(workDirectory="\(directory)")
                module(load="imuxsock" SysSock.Use="off")
                input(type="imuxsock" Socket="\(directory)/log.sock" RateLimit.Interval="0")
                $FileCreateMode 0640

                """ + rule + "\nauthpriv.* \(directory)/auth.log\n"
            try session.write("rsyslog/rsyslog.conf", configuration)
            let daemon = try Daemon(
                rsyslogd, ["-n", "-f", directory + "/rsyslog.conf", "-i", directory + "/rsyslogd.pid"], logIn: session)
            defer { daemon.stop() }
            try Integration.waitForFile(directory + "/log.sock")
            let failure =
                "authentication failure; service=serve user=bob rhost=203.0.113.9 file=/etc/credfile/web.cred reason=wrong-password"
            for (tag, priority, message) in [
                ("credfile", "authpriv.notice", failure), ("sshd", "authpriv.info", "Accepted password for alice"),
            ] {
                let sent = try Integration.run(
                    logger, ["-u", directory + "/log.sock", "-t", tag, "-p", priority, message], in: session)
                #expect(sent.status == 0, "\(sent)")
            }
            try Integration.waitForFile(directory + "/auth.log")
            try Integration.waitForFile(directory + "/credfile.log")
            usleep(300_000)
            daemon.stop()  // flushes its files
            let ours = session.text("rsyslog/credfile.log")
            let auth = session.text("rsyslog/auth.log")
            #expect(ours.contains("credfile: " + failure) && !ours.contains("sshd"), "\(ours)")
            #expect(auth.contains("Accepted password for alice") && !auth.contains("credfile"), "\(auth)")
        }
    }

    /// The shipped filter and jail in a private fail2ban (a copy of Debian's /etc/fail2ban)
    /// in a network namespace of its own: ten failures from one address in credfile's log
    /// ban it, `fail2ban-client status credfile` lists it, and nftables' set holds it. The
    /// jail used to ban with iptables, which Debian 12 does not install: no ban happened.
    @Test(
        "fail2ban with the shipped jail bans through nftables (Debian 12 has no iptables), in a private network namespace",
        .enabled(
            if: ExternalTool.runnable("fail2ban-client", "nft", "unshare") && isRoot,
            Comment(rawValue: ExternalTool.skipNote("fail2ban-client", "nft", "unshare") + " (and root)")))
    func fail2banBansWithNftables() throws {
        try withSession { session in
            let configuration = session.path("fail2ban")
            let copy = try Integration.run("/bin/cp", ["-R", "/etc/fail2ban", configuration], in: session)
            try #require(copy.status == 0, "\(copy)")
            let run = session.path("f2b-run")
            mkdir(run, 0o700)
            let log = session.path("credfile.log")
            try writeBytes(log, [], mode: 0o640)
            let examples = BuiltProduct.packageRoot.appendingPathComponent("Examples/fail2ban").path
            try writeBytes(
                configuration + "/filter.d/credfile.conf", try readBytes(examples + "/filter.d/credfile.conf"),
                mode: 0o644)
            try session.write(
                "fail2ban/jail.d/credfile.local",
                try Integration.example("fail2ban/jail.d/credfile.local", replacing: ["/var/log/credfile.log": log]))
            // Only this jail (Debian enables sshd), this server's own socket, log and database.
            try session.write("fail2ban/jail.d/defaults-debian.conf", "[sshd]\nenabled = false\n")
            try session.write(
                "fail2ban/fail2ban.local",
                "[Definition]\nlogtarget = \(run)/fail2ban.log\nsocket = \(run)/f2b.sock\npidfile = \(run)/f2b.pid\n"
                    + "dbfile = :memory:\n")
            let script = """
                set -u
                conf="$1"; run="$2"; log="$3"
                client() { fail2ban-client -c "$conf" -s "$run/f2b.sock" -p "$run/f2b.pid" "$@"; }
                trap 'client stop >/dev/null 2>&1' EXIT
                ip link set lo up 2>/dev/null || true
                client -x start || { cat "$run/fail2ban.log"; exit 1; }
                for i in $(seq 100); do client status credfile >/dev/null 2>&1 && break; sleep 0.1; done
                for i in $(seq 10); do
                  printf '%s host credfile[%d]: authentication failure; service=serve user=user%d rhost=203.0.113.9 file=/etc/credfile/web.cred reason=unknown-user\n' \
                    "$(LC_ALL=C date '+%b %e %H:%M:%S')" "$$" "$i" >> "$log"
                done
                for i in $(seq 200); do client status credfile | grep -q '203.0.113.9' && break; sleep 0.1; done
                echo "== status"; client status credfile
                echo "== nft"; nft list set inet f2b-table addr-set-credfile
                echo "== log"; cat "$run/fail2ban.log"
                """
            let result = try Integration.run(
                try ExternalTool.path("unshare"), ["--net", "/bin/sh", "-c", script, "sh", configuration, run, log],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C"], in: session, timeout: .seconds(120)
            )
            let parts = result.stdout.components(separatedBy: "== ")
            let status = parts.first { $0.hasPrefix("status") } ?? ""
            let firewall = parts.first { $0.hasPrefix("nft") } ?? ""
            #expect(status.contains("Banned IP list:\t203.0.113.9"), "\(result)")
            #expect(firewall.contains("203.0.113.9"), "nftables holds no ban: \(result)")
            #expect(!result.stdout.contains("iptables"), "\(result)")
        }
    }

    /// Traefik is not in Debian 12 (nothing here can run it); its router must at least name
    /// only the https entry point, a TLS certificate resolver and the site's name.
    @Test("Traefik's router answers only on https (websecure, a certificate resolver) for the site's name")
    func traefikRouterIsHTTPS() throws {
        let text = try Integration.example("traefik/credfile.yml")
        let router = try #require(text.range(of: "    private:\n").map { String(text[$0.upperBound...]) })
        #expect(router.contains("rule: \"Host(`\(Recipe.siteName)`) && PathPrefix(`/private/`)\""), "\(router)")
        #expect(IntegrationServeProxyTests.yamlList("entryPoints", in: router) == ["websecure"], "\(router)")
        #expect(router.contains("tls:\n        certResolver: \"letsencrypt\""), "\(router)")
    }
}
