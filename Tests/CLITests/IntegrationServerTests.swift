import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The servers of SPEC §7, each started by the test on 127.0.0.1 in a private directory
/// and stopped by PID, each configured by the recipe the repository ships (`Examples/`,
/// only its paths and ports replaced): nginx with the PAM module and curl, Dovecot 2.3
/// with `doveadm auth test`, and Squid with curl through it.
@Suite(.serialized) struct IntegrationServerTests {
    static let alice = ("alice", "Alice-Pass-2026!")
    static let jose = ("josé", "p@ss:w rd ñandú 2026")

    // MARK: nginx + libnginx-mod-http-auth-pam + pam_exec

    static let nginxPAMModule = "/usr/lib/nginx/modules/ngx_http_auth_pam_module.so"

    @Test(
        "nginx auth_pam (workers as www-data) → pam_exec → credfile pam: 200 for a good login, 401 otherwise",
        .enabled(
            if: ExternalTool.runnable("nginx", "curl") && (access(nginxPAMModule, R_OK) == 0 || ExternalTool.isCI)
                && (canWriteSystemPAM || ExternalTool.isCI),
            Comment(
                rawValue: ExternalTool.skipNote("nginx", "curl", "libnginx-mod-http-auth-pam")
                    + " (and root, to write /etc/pam.d)")))
    func nginx() throws {
        try withSession { session in
            let nginx = try ExternalTool.path("nginx")
            let curl = try ExternalTool.path("curl")
            try #require(
                access(Self.nginxPAMModule, R_OK) == 0,
                "\(Self.nginxPAMModule) is missing: install libnginx-mod-http-auth-pam (Scripts/setup.sh)")
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.jose])
            // As the recipe says: FILE readable by the workers' group, in a directory only
            // root can write, and a guard database in a directory of www-data's own.
            let wwwData = try #require(getgrnam("www-data"), "no group www-data").pointee.gr_gid
            chown(file, 0, wwwData)
            chmod(file, 0o640)
            let service = try SystemPAMService(
                text: try IntegrationPAMTests.service(session, file: file, guardUser: "www-data"))
            defer { service.remove() }
            let prefix = session.path("nginx")
            for folder in ["", "/logs", "/html", "/html/private", "/tmp"] { mkdir(prefix + folder, 0o755) }
            try session.write("nginx/html/private/index.html", "private page\n")
            chmod(session.path("nginx/html/private/index.html"), 0o644)
            let port = try Integration.freePort()
            // The recipe on https, trusted through the test's own authority.
            let certificates = try Recipe.certificates(in: session)
            try session.write(
                "nginx/site.conf",
                try Recipe.nginxSite(
                    "nginx/credfile-pam.conf", port: port, httpPort: try Integration.freePort(), tls: true,
                    root: prefix + "/html", certificates: certificates,
                    more: [("\"credfile-app\"", "\"\(service.name)\"")]))
            let config = """
                load_module \(Self.nginxPAMModule);
                user www-data www-data;
                worker_processes 1;
                daemon off;
                pid \(prefix)/nginx.pid;
                error_log \(prefix)/logs/error.log;
                events { worker_connections 16; }
                http {
                    access_log \(prefix)/logs/access.log;
                    client_body_temp_path \(prefix)/tmp/body;
                    proxy_temp_path \(prefix)/tmp/proxy;
                    fastcgi_temp_path \(prefix)/tmp/fastcgi;
                    uwsgi_temp_path \(prefix)/tmp/uwsgi;
                    scgi_temp_path \(prefix)/tmp/scgi;
                    include \(prefix)/site.conf;
                }

                """
            try session.write("nginx/nginx.conf", config)
            let daemon = try Daemon(nginx, ["-p", prefix, "-c", prefix + "/nginx.conf"], logIn: session)
            defer { daemon.stop() }
            try Integration.waitForPort(port, of: daemon)
            /// The HTTP status curl got, the password given in a netrc file, not on argv.
            func status(_ user: String?, _ password: String) throws -> String {
                var arguments = [
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", certificates.authority, "--resolve",
                    "\(Recipe.siteName):\(port):127.0.0.1", "https://\(Recipe.siteName):\(port)/private/",
                ]
                if let user {
                    try session.write("netrc", "machine \(Recipe.siteName) login \(user) password \(password)\n")
                    arguments += ["--netrc-file", session.path("netrc")]
                }
                return try Integration.run(curl, arguments, in: session).stdout
            }
            #expect(try status(Self.alice.0, Self.alice.1) == "200", "\(daemon.output)")
            #expect(try status(Self.alice.0, "Alice-Pass-2027!") == "401")
            #expect(try status("mallory", Self.alice.1) == "401")
            #expect(try status(nil, "") == "401")
        }
    }

    // MARK: Dovecot 2.3 passdb checkpassword

    /// The configuration of a private Dovecot in `base` (its own directories, no
    /// protocol, no TLS) with the shipped `Examples/dovecot/conf.d/auth-credfile.conf.ext`
    /// for `file`, calling `credfile`.
    static func dovecotConfiguration(base: String, credfile: String, file: String) throws -> String {
        """
        base_dir = \(base)/run
        state_dir = \(base)/state
        log_path = \(base)/dovecot.log
        protocols =
        ssl = no

        """
            + (try Integration.example(
                "dovecot/conf.d/auth-credfile.conf.ext",
                replacing: ["/usr/bin/credfile": credfile, "/etc/credfile/mail.cred": file]))
    }

    /// A private Dovecot configured by ``dovecotConfiguration(base:credfile:file:)``,
    /// started in the foreground (`-F`) and stopped by PID.
    static func withDovecot(
        _ session: CLISession, credfile: String, file: String,
        _ body: (_ authTest: (String, String) throws -> CLIResult) throws -> Void
    ) throws {
        let dovecot = try ExternalTool.path("dovecot")
        let doveadm = try ExternalTool.path("doveadm")
        let base = session.path("dovecot")
        mkdir(base, 0o755)
        try session.write("dovecot/dovecot.conf", try dovecotConfiguration(base: base, credfile: credfile, file: file))
        let daemon = try Daemon(dovecot, ["-F", "-c", base + "/dovecot.conf"], logIn: session)
        defer { daemon.stop() }
        try Integration.waitForFile(base + "/run/auth-client")
        try body { user, password in
            try Integration.run(doveadm, ["-c", base + "/dovecot.conf", "auth", "test", user, password], in: session)
        }
    }

    @Test(
        "Dovecot passdb checkpassword (run as the dovecot user): succeeded, failed, temporary failure",
        .enabled(
            if: ExternalTool.runnable("dovecot", "doveadm"),
            Comment(rawValue: ExternalTool.skipNote("dovecot", "doveadm"))))
    func dovecot() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(
                in: session, users: [Self.alice, Self.jose], plaintext: [("legacy", "Legacy-Pass-9")])
            let before = session.bytes("users.txt")
            let state = try Integration.guardState(in: session, for: "dovecot")
            let configuration = try Integration.configuration(
                in: session, recipe: "dovecot/credfile.conf",
                replacing: ["/etc/credfile/mail.cred": file, "/var/lib/credfile/dovecot/mail.guard.db": state])
            let credfile = try Integration.credfile(in: session, configuration: configuration)
            try Self.withDovecot(session, credfile: credfile, file: file) { authTest in
                for (user, password) in [Self.alice, Self.jose, ("legacy", "Legacy-Pass-9")] {
                    let good = try authTest(user, password)
                    #expect(good.status == 0 && good.stdout.contains("passdb: \(user) auth succeeded"), "\(good)")
                }
                let wrong = try authTest(Self.alice.0, "Alice-Pass-2027!")
                #expect(
                    wrong.status != 0 && wrong.stdout.contains("auth failed") && !wrong.stdout.contains("temp_fail"),
                    "\(wrong)")
                let unknown = try authTest("mallory", Self.alice.1)
                #expect(
                    unknown.status != 0 && unknown.stdout.contains("auth failed")
                        && !unknown.stdout.contains("temp_fail"), "\(unknown)")
            }
            #expect(session.bytes("users.txt") == before)
            // A FILE that cannot be read is a temporary failure (111), not a wrong password.
            try Self.withDovecot(session, credfile: credfile, file: session.path("missing.txt")) { authTest in
                let result = try authTest(Self.alice.0, Self.alice.1)
                #expect(result.status != 0 && result.stdout.contains("temp_fail"), "\(result)")
            }
        }
    }

    @Test(
        "Dovecot checkpassword --group (as the dovecot user): a member succeeds, a non-member with the right password fails",
        .enabled(
            if: ExternalTool.runnable("dovecot", "doveadm"),
            Comment(rawValue: ExternalTool.skipNote("dovecot", "doveadm"))))
    func dovecotGroup() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.jose])
            let groups = try session.write("mail.htgroup", "mail: alice\n")
            chmod(groups, 0o644)
            let configuration = try Integration.configuration(
                in: session, preamble: "iterations = \(Integration.rounds)\ngroups = \(groups)\n",
                recipe: "dovecot/credfile.conf",
                replacing: [
                    "/etc/credfile/mail.cred": file,
                    "/var/lib/credfile/dovecot/mail.guard.db": try Integration.guardState(in: session, for: "dovecot"),
                ])
            let credfile = try Integration.credfile(in: session, configuration: configuration)
            // credfile's options stand before FILE (after it, everything is Dovecot's PROG).
            try Self.withDovecot(session, credfile: credfile, file: "--group mail " + file) { authTest in
                let member = try authTest(Self.alice.0, Self.alice.1)
                #expect(member.status == 0 && member.stdout.contains("auth succeeded"), "\(member)")
                let outsider = try authTest(Self.jose.0, Self.jose.1)
                #expect(
                    outsider.status != 0 && outsider.stdout.contains("auth failed")
                        && !outsider.stdout.contains("temp_fail"), "\(outsider)")
            }
        }
    }

    // MARK: Squid auth_param basic, concurrency

    @Test(
        "Squid auth_param basic (helpers as proxy, concurrency=4): 200 through the proxy for a good login, 407 otherwise; a new user is seen",
        .enabled(
            if: ExternalTool.runnable("squid", "curl", ExternalTool.peerPython),
            Comment(rawValue: ExternalTool.skipNote("squid", "curl", ExternalTool.peerPython))))
    func squid() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.jose])
            let configuration = try Integration.configuration(
                in: session, recipe: "squid/credfile.conf",
                replacing: [
                    "/etc/credfile/proxy.cred": file,
                    "/var/lib/credfile/proxy/proxy.guard.db": try Integration.guardState(in: session, for: "proxy"),
                ])
            let recipe = try squidRecipe(
                credfile: try Integration.credfile(in: session, configuration: configuration), file: file)
            try withSquid(session, recipe: recipe) { status, proxy in
                #expect(try status(Self.alice.0, Self.alice.1) == "200", "\(proxy.output)")
                #expect(try status(Self.jose.0, Self.jose.1) == "200")
                #expect(try status(Self.alice.0, "Alice-Pass-2027!") == "407")
                #expect(try status("mallory", Self.alice.1) == "407")
                #expect(try status("bob", "B0b-Pass-2026!~") == "407")
                try CredentialStore(path: file, policy: HashPolicy(rounds: Integration.rounds))
                    .register(
                        username: "bob", password: Password(session.password("B0b-Pass-2026!~")), storage: .hashed)
                #expect(try status("bob", "B0b-Pass-2026!~") == "200", "a user added to FILE was not seen")
            }
        }
    }

    @Test(
        "Squid helper --group (helpers as proxy): a member gets 200 through the proxy, a non-member with the right password 407",
        .enabled(
            if: ExternalTool.runnable("squid", "curl", ExternalTool.peerPython),
            Comment(rawValue: ExternalTool.skipNote("squid", "curl", ExternalTool.peerPython))))
    func squidGroup() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice, Self.jose])
            let groups = try session.write("proxy.htgroup", "web: alice\n")
            chmod(groups, 0o644)
            let configuration = try Integration.configuration(
                in: session, preamble: "iterations = \(Integration.rounds)\ngroups = \(groups)\n",
                recipe: "squid/credfile.conf",
                replacing: [
                    "/etc/credfile/proxy.cred": file,
                    "/var/lib/credfile/proxy/proxy.guard.db": try Integration.guardState(in: session, for: "proxy"),
                ])
            let recipe = try squidRecipe(
                credfile: try Integration.credfile(in: session, configuration: configuration),
                file: "--group web " + file)
            try withSquid(session, recipe: recipe) { status, proxy in
                let member = try status(Self.alice.0, Self.alice.1)
                let outsider = try status(Self.jose.0, Self.jose.1)
                #expect(member == "200" && outsider == "407", "\(member) \(outsider) \(proxy.output)")
            }
        }
    }
}
