import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// `credfile serve` (SPEC §10) as its callers use it: the built binary started on a
/// loopback port or a unix socket in a private directory and stopped by PID, asked by
/// curl, by nginx `auth_request` (workers as www-data) and by Caddy `forward_auth`, and
/// started by `systemd-socket-activate` as systemd would; the shipped units checked by
/// `systemd-analyze verify`.
@Suite(.serialized) struct IntegrationServeTests {
    static let alice = ("alice", "Naranjo-en-flor-2026")
    static let jose = ("josé", "p@ss:w rd ñandú 2026")

    /// A running `credfile serve`, stopped (SIGTERM, then SIGKILL) at the end.
    final class Service {
        let child: ChildProcess
        /// `127.0.0.1:PORT` or `unix:PATH`: where it answers.
        let address: String

        init(_ session: CLISession, file: String, listen: String? = nil, _ extra: [String] = [], program: String? = nil)
            throws
        {
            let credfile = try Integration.credfile(in: session)
            let arguments =
                [program ?? credfile] + ["serve", file, "--iterations", "\(Integration.rounds)"]
                + (listen.map { ["--listen", $0] } ?? []) + extra
            child = try ChildProcess.start(arguments[0], Array(arguments.dropFirst()))
            address = listen ?? ""
            if let listen { try Self.waitUntilAnswering(listen, child) }
        }

        /// Waits until `listen` (a unix socket or a loopback port) accepts connections.
        static func waitUntilAnswering(_ listen: String, _ child: ChildProcess) throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                guard child.isRunning else {
                    throw HarnessError("credfile serve ended: \(String(decoding: child.output.stderr, as: UTF8.self))")
                }
                if listen.hasPrefix("unix:") {
                    // Connected, not merely present: serve binds the socket 0600 and gives it
                    // its group and mode before listen(2), so a socket that exists may not yet
                    // be the one the tests look at.
                    if Self.connects(toUnixSocket: String(listen.dropFirst(5))) { return }
                } else if let port = Int(listen.split(separator: ":").last ?? ""),
                    (try? Integration.waitForPort(port, timeout: .milliseconds(100))) != nil
                {
                    return
                }
                usleep(20_000)
            }
            throw HarnessError("credfile serve did not answer on \(listen)")
        }

        /// Whether a stream connection to the unix socket at `path` is accepted.
        static func connects(toUnixSocket path: String) -> Bool {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in bytes.enumerated() { buffer[index] = byte }
            }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
                }
            }
        }

        var log: String { String(decoding: child.output.stderr, as: UTF8.self) }

        /// Waits (at most 10 s) until the service's log holds `text`.
        func waitForLog(_ text: String) {
            let deadline = ContinuousClock.now + .seconds(10)
            while !log.contains(text) && ContinuousClock.now < deadline { usleep(20_000) }
        }

        deinit { child.stop() }
    }

    /// An HTTP answer as curl saw it.
    struct Answer {
        var status: String
        var headers: String
        func header(_ name: String) -> String? {
            headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// Asks `url` with curl; credentials (or a raw Authorization header) go in a curl
    /// config file, never on curl's command line.
    static func ask(
        _ session: CLISession, _ url: String, user: (String, String)? = nil, authorization: String? = nil,
        unixSocket: String? = nil, extraHeaders: [String] = []
    ) throws -> Answer {
        let curl = try ExternalTool.path("curl")
        var config = ""
        if let user {
            config +=
                "user = \"\(user.0):\(user.1.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\"\n"
        }
        if let authorization { config += "header = \"Authorization: \(authorization)\"\n" }
        for header in extraHeaders { config += "header = \"\(header)\"\n" }
        let configPath = try session.write("curl-\(UInt32.random(in: 0...UInt32.max)).cfg", config)
        defer { unlink(configPath) }
        var arguments = ["-s", "-D", "-", "-o", "/dev/null", "--max-time", "30", "-K", configPath]
        if let unixSocket { arguments += ["--unix-socket", unixSocket] }
        let result = try Integration.run(curl, arguments + [url], in: session)
        let status = result.stdout.split(separator: " ").dropFirst().first.map(String.init) ?? "none: \(result)"
        return Answer(status: status, headers: result.stdout)
    }

    /// A user file in `session` (readable by all, as callers' users need).
    static func users(_ session: CLISession, _ users: [(String, String)] = [alice, jose]) throws -> String {
        try Integration.makeUserFile(in: session, users: users)
    }

    // MARK: curl

    /// A proxy keeps its connections to serve alive (nginx's `keepalive`, Caddy's pool):
    /// every answer, granted, cached or denied, leaves the connection open for the next
    /// request, or each login would pay a new connection.
    @Test(
        "serve keeps the connection alive across granted, cached and denied answers",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func keepsConnectionsAlive() throws {
        try withSession { session in
            let file = try Self.users(session)
            let port = try Integration.freePort()
            let service = try Service(session, file: file, listen: "127.0.0.1:\(port)")
            let url = "http://127.0.0.1:\(port)/auth"
            let (alice, password) = Self.alice
            // One curl, four requests on what it may keep: a login, the same (cached), a
            // wrong password, no credentials. num_connects is 0 for a reused connection.
            // (Credentials in curl config files, never on its command line.)
            let good = try session.write("good.cfg", "user = \"\(alice):\(password)\"\n")
            let wrong = try session.write("wrong.cfg", "user = \"\(alice):wrong-1\"\n")
            let each = ["-s", "-D", "-", "-w", "status=%{http_code} connects=%{num_connects}\\n"]
            let discard = ["-o", "/dev/null", url]
            let arguments =
                each + ["-K", good] + discard + discard + ["--next"] + each + ["-K", wrong] + discard + ["--next"]
                + each
                + discard
            let result = try Integration.run(try ExternalTool.path("curl"), arguments, in: session)
            // Split on LF alone: "\r\n" is one Character to Swift.
            let lines = result.stdout.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }
            let summary = lines.filter { $0.hasPrefix("status=") }
            #expect(
                summary == [
                    "status=200 connects=1", "status=200 connects=0", "status=401 connects=0", "status=401 connects=0",
                ],
                "\(result) \(service.log)")
            #expect(!result.stdout.lowercased().contains("connection: close"), "\(result)")
        }
    }

    @Test(
        "serve + curl over TCP: 200 with X-Credfile-User, 401 with the Basic challenge for every denial, 503 without FILE",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func answers() throws {
        try withSession { session in
            let file = try Self.users(session)
            let port = try Integration.freePort()
            let port6 = try Integration.freePort()
            let service = try Service(
                session, file: file, listen: "127.0.0.1:\(port)",
                ["--realm", "Zona \"privada\"", "--listen", "[::1]:\(port6)"])
            let url = "http://127.0.0.1:\(port)/auth"
            let good = try Self.ask(session, url, user: Self.alice)
            #expect(good.status == "200", "\(good.headers) \(service.log)")
            let six = try Self.ask(session, "http://[::1]:\(port6)/", user: Self.alice)
            #expect(six.status == "200", "the second listener, on IPv6 loopback: \(six.headers) \(service.log)")
            #expect(good.header("X-Credfile-User") == "alice")
            #expect(good.header("Cache-Control") == "no-store")
            let jose = try Self.ask(session, url, user: Self.jose)
            #expect(jose.status == "200" && jose.header("X-Credfile-User") == "josé", "\(jose.headers)")
            let challenge = #"Basic realm="Zona \"privada\"", charset="UTF-8""#
            let basic = { (bytes: [UInt8]) in "Basic " + Data(bytes).base64EncodedString() }
            let denials: [(String, Answer)] = [
                ("wrong password", try Self.ask(session, url, user: (Self.alice.0, "Naranjo-en-flor-2027"))),
                ("unknown user", try Self.ask(session, url, user: ("mallory", Self.alice.1))),
                ("no header", try Self.ask(session, url)),
                ("another scheme", try Self.ask(session, url, authorization: "Bearer abc")),
                ("not base64", try Self.ask(session, url, authorization: "Basic !!!!")),
                ("no colon", try Self.ask(session, url, authorization: basic(Array("alice".utf8)))),
                (
                    "a name that is not UTF-8",
                    try Self.ask(session, url, authorization: basic([0xE9] + Array(":x".utf8)))
                ),
                (
                    "a password with a NUL",
                    try Self.ask(session, url, authorization: basic(Array("alice:Naranjo-en-flor-2026".utf8) + [0]))
                ),
                (
                    "two Authorization headers",
                    try Self.ask(
                        session, url, authorization: basic(Array("alice:Naranjo-en-flor-2026".utf8)),
                        extraHeaders: ["Authorization: " + basic(Array("alice:Naranjo-en-flor-2026".utf8))])
                ),
            ]
            for (name, answer) in denials {
                #expect(answer.status == "401", "\(name): \(answer.headers)")
                #expect(answer.header("WWW-Authenticate") == challenge, "\(name): \(answer.headers)")
                #expect(answer.header("X-Credfile-User") == nil, "\(name)")
            }
            // A FILE that cannot be read is the admin's problem, not a denial: 503.
            unlink(file)
            let missing = try Self.ask(session, url, user: Self.alice)
            #expect(missing.status == "503", "\(missing.headers)")
            #expect(service.log.contains("answered 503"), "\(service.log)")
        }
    }

    @Test(
        "a good login is cached (no second PBKDF2) until FILE changes; a changed password is seen at once",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func cacheAndFileChanges() throws {
        try withSession { session in
            let file = try Self.users(session)
            let port = try Integration.freePort()
            let service = try Service(session, file: file, listen: "127.0.0.1:\(port)")
            let url = "http://127.0.0.1:\(port)/"
            #expect(try Self.ask(session, url, user: Self.alice).status == "200", "\(service.log)")
            #expect(try Self.ask(session, url, user: Self.alice).status == "200")
            var store = CredentialStore(path: file, policy: try HashPolicy(rounds: Integration.rounds))
            store.passwordPolicy = .permissive
            try store.changePassword(
                username: Self.alice.0, to: Password(session.password("Otra-clave-2026-x")), storage: .hashed)
            #expect(
                try Self.ask(session, url, user: Self.alice).status == "401", "the cached old password still worked")
            #expect(try Self.ask(session, url, user: (Self.alice.0, "Otra-clave-2026-x")).status == "200")
            try store.remove(username: Self.alice.0)
            #expect(
                try Self.ask(session, url, user: (Self.alice.0, "Otra-clave-2026-x")).status == "401",
                "a removed user stayed cached")
        }
    }

    @Test(
        "unix socket: the mode and group asked for; curl --unix-socket; SIGTERM drains a login in flight, exits 0 and removes the socket",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func unixSocketAndDrain() throws {
        try withSession { session in
            // A slow entry (many rounds), so a login is still hashing when SIGTERM comes.
            let file = try Self.users(session)
            var store = CredentialStore(path: file, policy: try HashPolicy(rounds: 3_000_000))
            store.passwordPolicy = .permissive
            try store.register(
                username: "slow", password: Password(session.password("Lento-pero-seguro-26")), storage: .hashed)
            let socketPath = session.path("serve.sock")
            let group = getgrnam("www-data") != nil ? "www-data" : "0"
            let service = try Service(
                session, file: file, listen: "unix:" + socketPath, ["--socket-group", group, "--socket-mode", "0640"])
            var info = stat()
            #expect(lstat(socketPath, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK)
            #expect(info.st_mode & 0o7777 == 0o640, "mode \(String(info.st_mode & 0o7777, radix: 8))")
            #expect(info.st_gid == (getgrnam(group)?.pointee.gr_gid ?? 0))
            let good = try Self.ask(session, "http://localhost/", user: Self.alice, unixSocket: socketPath)
            #expect(good.status == "200" && good.header("X-Credfile-User") == "alice", "\(good.headers) \(service.log)")
            // A login in flight when SIGTERM comes is answered, then the process exits 0.
            let curl = try ExternalTool.path("curl")
            let config = try session.write("slow.cfg", "user = \"slow:Lento-pero-seguro-26\"\n")
            let inFlight = try ChildProcess.start(
                curl,
                [
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "60", "-K", config, "--unix-socket",
                    socketPath, "http://localhost/",
                ])
            usleep(300_000)
            #expect(service.child.kill(SIGTERM))
            let answered = try inFlight.wait(timeout: .seconds(60))
            #expect(answered.stdout == "200", "the login in flight was dropped: \(answered) \(service.log)")
            let ended = try service.child.wait(timeout: .seconds(40))
            #expect(ended.status == 0, "\(ended)")
            #expect(access(socketPath, F_OK) != 0, "the socket file was left behind")
        }
    }

    @Test(
        "usage errors: no --listen and no systemd socket, a public address without --listen-public, a bad address (exit 2)"
    )
    func usageErrors() throws {
        try withSession { session in
            let file = try Self.users(session)
            let credfile = try Integration.credfile(in: session)
            for (name, extra) in [
                ("no listener", [String]()), ("public", ["--listen", "0.0.0.0:1"]),
                ("public v6", ["--listen", "[::]:1"]),
                ("no port", ["--listen", "127.0.0.1"]), ("a host name", ["--listen", "example.org:80"]),
                ("relative unix path", ["--listen", "unix:web.sock"]),
                ("a block with host bits", ["--listen", "127.0.0.1:1", "--trusted-proxy", "10.0.0.1/8"]),
                ("a realm with a line break", ["--listen", "127.0.0.1:1", "--realm", "a\r\nSet-Cookie: x"]),
                (
                    "no such group",
                    ["--listen", "unix:" + session.path("s.sock"), "--socket-group", "no-such-group-here"]
                ),
                ("a mode that is not octal", ["--listen", "unix:" + session.path("s.sock"), "--socket-mode", "0668"]),
            ] {
                let result = try session.spawn(
                    credfile, ["serve", file] + extra, environment: ["PATH": "/usr/bin:/bin"])
                #expect(result.status == 2, "\(name): \(result)")
                #expect(result.stderr.hasPrefix("credfile: "), "\(name): \(result)")
            }
        }
    }

    @Test(
        "SIGHUP re-reads the configuration file (realm, cache-seconds) over the command line, and empties the cache",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func reload() throws {
        try withSession { session in
            let file = try Self.users(session)
            let config = try session.write("credfile.conf", "realm = Primera\n[\(file)]\ncache-seconds = 300\n")
            let port = try Integration.freePort()
            let service = try Service(session, file: file, listen: "127.0.0.1:\(port)", ["--config", config])
            let url = "http://127.0.0.1:\(port)/"
            #expect(try Self.ask(session, url, user: Self.alice).status == "200", "\(service.log)")
            #expect(try Self.ask(session, url).header("WWW-Authenticate") == #"Basic realm="Primera", charset="UTF-8""#)
            try session.write("credfile.conf", "realm = Segunda\n")
            #expect(service.child.kill(SIGHUP))
            service.waitForLog("reloaded")
            #expect(service.log.contains("reloaded the configuration"), "\(service.log)")
            #expect(try Self.ask(session, url).header("WWW-Authenticate") == #"Basic realm="Segunda", charset="UTF-8""#)
            #expect(try Self.ask(session, url, user: Self.alice).status == "200")
            #expect(try Self.ask(session, url, user: (Self.alice.0, "wrong-password-here")).status == "401")
            // A configuration that does not parse keeps the one in force (and says so).
            try session.write("credfile.conf", "realm = Tercera\nno-such-key = 1\n")
            #expect(service.child.kill(SIGHUP))
            service.waitForLog("reload failed")
            #expect(service.log.contains("reload failed"), "\(service.log)")
            #expect(try Self.ask(session, url).header("WWW-Authenticate") == #"Basic realm="Segunda", charset="UTF-8""#)
            #expect(service.child.isRunning)
        }
    }

    @Test(
        "§9 through serve: a name throttled after its free failures is denied even with its password; the log names the client a trusted peer gives, and loopback is no trusted peer unless named",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func guarded() throws {
        try withSession { session in
            let file = try Self.users(session)
            let port = try Integration.freePort()
            let socketPath = session.path("guarded.sock")
            let service = try Service(
                session, file: file, listen: "127.0.0.1:\(port)",
                ["--listen", "unix:" + socketPath, "--log", "stderr", "--free-failures", "1", "--cache-seconds", "0"])
            let url = "http://127.0.0.1:\(port)/"
            let wrong = (Self.alice.0, "Naranjo-en-flor-2027")
            #expect(try Self.ask(session, url, user: wrong, extraHeaders: ["X-Real-IP: 203.0.113.9"]).status == "401")
            #expect(try Self.ask(session, url, user: wrong).status == "401")  // the second: the next waits 1 s
            #expect(
                try Self.ask(session, url, user: Self.alice).status == "401",
                "a throttled name was checked: \(service.log)")
            usleep(1_200_000)
            #expect(try Self.ask(session, url, user: Self.alice).status == "200", "\(service.log)")
            // From the unix socket, X-Forwarded-For is read from the right: an entry that is
            // not an address is skipped, a port is dropped (SPEC v4 §10).
            _ = try Self.ask(
                session, "http://localhost/", user: ("mallory", "x"), unixSocket: socketPath,
                extraHeaders: ["X-Forwarded-For: 198.51.100.2, 203.0.113.7:4711, unknown"])
            service.waitForLog("user=mallory")
            let log = service.log
            // Loopback TCP is not trusted unless --trusted-proxy names it: any local user
            // could otherwise choose the address fail2ban bans.
            #expect(log.contains("service=serve user=alice rhost=127.0.0.1 "), "\(log)")
            #expect(!log.contains("203.0.113.9"), "a loopback peer's X-Real-IP was believed: \(log)")
            #expect(log.contains("reason=throttled"), "\(log)")
            #expect(log.contains("authentication success; service=serve user=alice rhost=127.0.0.1 "), "\(log)")
            #expect(log.contains("user=mallory rhost=203.0.113.7 "), "\(log)")
            // A guard database that cannot be used is a temporary failure, never an unguarded login.
            let port2 = try Integration.freePort()
            let unguardable = try Service(
                session, file: file, listen: "127.0.0.1:\(port2)",
                ["--log", "stderr", "--state", session.path("missing-dir/guard.db")])
            #expect(
                try Self.ask(session, "http://127.0.0.1:\(port2)/", user: Self.alice).status == "503",
                "\(unguardable.log)")
        }
    }

    // MARK: systemd

    @Test(
        "socket activation: systemd-socket-activate passes a TCP and a unix socket, serve answers on both without --listen",
        .enabled(
            if: ExternalTool.runnable("systemd-socket-activate", "curl"),
            Comment(rawValue: ExternalTool.skipNote("systemd-socket-activate", "curl"))))
    func socketActivation() throws {
        try withSession { session in
            let activate = try ExternalTool.path("systemd-socket-activate")
            let file = try Self.users(session)
            let port = try Integration.freePort()
            let socketPath = session.path("activated.sock")
            let credfile = try Integration.credfile(in: session)
            let child = try ChildProcess.start(
                activate,
                [
                    "-l", "127.0.0.1:\(port)", "-l", socketPath, credfile, "serve", file, "--iterations",
                    "\(Integration.rounds)",
                ])
            defer { child.stop() }
            try Integration.waitForPort(port)
            let tcp = try Self.ask(session, "http://127.0.0.1:\(port)/", user: Self.alice)
            #expect(tcp.status == "200", "\(tcp.headers) \(String(decoding: child.output.stderr, as: UTF8.self))")
            let unix = try Self.ask(session, "http://localhost/", user: Self.jose, unixSocket: socketPath)
            #expect(unix.status == "200" && unix.header("X-Credfile-User") == "josé", "\(unix.headers)")
            #expect(String(decoding: child.output.stderr, as: UTF8.self).contains("(from systemd)"))
        }
    }

    @Test(
        "the shipped sysusers.d file makes the system user and group credfile, with no login shell and no home",
        .enabled(
            if: ExternalTool.runnable("systemd-sysusers"), Comment(rawValue: ExternalTool.skipNote("systemd-sysusers")))
    )
    func sysusersMakesTheUser() throws {
        try withSession { session in
            let sysusers = try ExternalTool.path("systemd-sysusers")
            let root = session.path("root")
            mkdir(root, 0o755)
            mkdir(root + "/etc", 0o755)
            let file = BuiltProduct.packageRoot.appendingPathComponent("Examples/systemd/sysusers.d/credfile.conf").path
            let result = try Integration.run(sysusers, ["--root=" + root, file], in: session)
            #expect(result.status == 0, "\(result)")
            let passwd = session.text("root/etc/passwd").split(separator: "\n").filter { $0.hasPrefix("credfile:") }
            #expect(passwd.count == 1, "\(session.text("root/etc/passwd"))")
            let fields = passwd.first.map { $0.split(separator: ":", omittingEmptySubsequences: false) } ?? []
            // A system uid and gid (below 1000), the home /, no login shell.
            #expect(fields.count == 7 && (Int(fields[2]) ?? 1000) < 1000 && fields[2] == fields[3], "\(passwd)")
            #expect(fields.count == 7 && fields[5] == "/" && fields[6].hasSuffix("/nologin"), "\(passwd)")
            #expect(
                session.text("root/etc/group").split(separator: "\n").contains {
                    $0.hasPrefix("credfile:x:\(fields.count == 7 ? fields[3] : ""):")
                })
        }
    }

    @Test(
        "the shipped units pass systemd-analyze verify",
        .enabled(
            if: ExternalTool.runnable("systemd-analyze"), Comment(rawValue: ExternalTool.skipNote("systemd-analyze"))))
    func unitsVerify() throws {
        try withSession { session in
            let analyze = try ExternalTool.path("systemd-analyze")
            let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Examples/systemd").path
            // verify checks that ExecStart's program exists: point it at the built binary.
            // (--man=no: the man page is installed by the .deb, not on a build machine.)
            let credfile = try Integration.credfile(in: session)
            for unit in ["credfile-serve@.socket", "credfile-serve@.service"] {
                let text = try String(contentsOfFile: examples + "/" + unit, encoding: .utf8)
                try session.write(unit, text.replacingOccurrences(of: "/usr/bin/credfile", with: credfile))
            }
            let service = try String(contentsOfFile: examples + "/credfile-serve@.service", encoding: .utf8)
            for directive in [
                "NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "ReadWritePaths=",
                "RestrictAddressFamilies=", "User=credfile", "Type=notify",
            ] {
                #expect(service.contains(directive), "the service lacks \(directive)")
            }
            let result = try Integration.run(
                analyze,
                [
                    "verify", "--man=no", session.path("credfile-serve@web.socket"),
                    session.path("credfile-serve@web.service"),
                ],
                in: session)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        }
    }
}
