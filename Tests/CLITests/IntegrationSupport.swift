import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// What the integration tests (SPEC §7) share: running real programs, daemons stopped by
/// PID, free loopback ports, and files that the callers' own users can read.
enum Integration {
    /// The rounds of the test files and of the commands' `--iterations`, so a login is fast.
    static let rounds = 1000

    /// A credential file in `session`, readable by everyone (the callers run their
    /// helpers as `dovecot`, `proxy`, `nobody`) in a directory only root can write:
    /// `users` are registered hashed, `plaintext` entries written as legacy lines.
    static func makeUserFile(
        in session: CLISession, users: [(String, String)], plaintext: [(String, String)] = []
    ) throws -> String {
        chmod(session.directory, 0o755)
        let path = session.path("users.txt")
        var store = CredentialStore(path: path, policy: try HashPolicy(rounds: rounds))
        store.passwordPolicy = .permissive  // fixtures, not new passwords: SPEC §8 is tested elsewhere
        for (user, password) in users {
            try store.register(username: user, password: Password(session.password(password)), storage: .hashed)
        }
        for (user, password) in plaintext {
            try store.register(username: user, password: Password(session.password(password)), storage: .plaintext)
        }
        chmod(path, 0o644)
        return path
    }

    /// The credfile executable as the callers run it: a copy in `session`'s directory
    /// (mode 0755), so `dovecot`, `proxy` and `nobody` can run it wherever the checkout
    /// is (a build under /root would be out of their reach). Its runpath names the
    /// toolchain's library directory, so the copy finds the Swift runtime.
    static func credfile(in session: CLISession) throws -> String {
        let copy = session.path("bin/credfile")
        if access(copy, X_OK) == 0 { return copy }
        chmod(session.directory, 0o755)
        mkdir(session.path("bin"), 0o755)
        try BuiltProduct.copy(to: copy)
        return copy
    }

    /// The text of a shipped recipe, `Examples/PATH`, with each host path (or port) of
    /// `replacing` changed to the test's own: the only change a test makes to a recipe,
    /// so the configuration a page shows is the one the test runs (DocumentationTests
    /// holds the pages to these files). Fails when the recipe no longer holds one of the
    /// texts to replace: a test must not quietly run something else.
    static func example(_ path: String, replacing: KeyValuePairs<String, String> = [:]) throws -> String {
        var text = try String(
            contentsOfFile: BuiltProduct.packageRoot.appendingPathComponent("Examples/" + path).path, encoding: .utf8)
        for (original, replacement) in replacing {
            try #require(text.contains(original), "Examples/\(path) no longer holds \(original.debugDescription)")
            text = text.replacingOccurrences(of: original, with: replacement)
        }
        return text
    }

    /// `/usr/bin/credfile` as the recipes call it, on a host whose `/etc/credfile.conf`
    /// is `configuration`: a script beside the copy of ``credfile(in:)`` that execs it
    /// with `CREDFILE_CONFIG` set (the callers' command lines stay the recipes' own; the
    /// callers clear the environment, so the script sets it). Mode 0755, runnable by the
    /// callers' users.
    static func credfile(in session: CLISession, configuration: String) throws -> String {
        let binary = try credfile(in: session)
        let script = session.path("bin/credfile-configured")
        let quoted = { (path: String) in "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        try writeBytes(
            script, Array("#!/bin/sh\nCREDFILE_CONFIG=\(quoted(configuration)) exec \(quoted(binary)) \"$@\"\n".utf8),
            mode: 0o755)
        chmod(script, 0o755)
        return script
    }

    /// Writes the configuration file a recipe's callers read (root's, mode 0644, as
    /// `/etc/credfile.conf` is): the test's own settings (`preamble`: the rounds that keep
    /// a login fast, the guard's limits) and then the recipe's section (`Examples/PATH`,
    /// paths replaced as ``example(_:replacing:)`` does).
    static func configuration(
        in session: CLISession, preamble: String = "iterations = \(rounds)\n", recipe: String,
        replacing: KeyValuePairs<String, String>
    ) throws -> String {
        let path = session.path("credfile.conf")
        try writeBytes(path, Array((preamble + (try example(recipe, replacing: replacing))).utf8), mode: 0o644)
        chmod(path, 0o644)
        return path
    }

    /// The guard database (SPEC §9) of a caller that runs as `user`, in a directory of its
    /// own (as `install -d -o USER -m 0700 /var/lib/credfile/USER` makes it): the caller
    /// may read FILE but not write beside it, so without this every login would be a
    /// temporary failure.
    static func guardState(in session: CLISession, for user: String) throws -> String {
        let directory = session.path("state-\(user)")
        mkdir(directory, 0o700)
        let entry = try #require(getpwnam(user), "no user \(user)").pointee
        chown(directory, entry.pw_uid, entry.pw_gid)
        return directory + "/app.guard.db"
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw HarnessError.system("bind", "127.0.0.1:0") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A HOME for Caddy (its data: the internal CA, certificates) in `session`, owned by
    /// the `caddy` user that ``startCaddy(_:config:home:)`` runs it as.
    static func caddyHome(_ session: CLISession) -> String {
        let home = session.path("caddy-home")
        mkdir(home, 0o755)
        chown(home, getpwnam("caddy")?.pointee.pw_uid ?? 0, getgrnam("caddy")?.pointee.gr_gid ?? 0)
        return home
    }

    /// Caddy running `config` (a Caddyfile) as the `caddy` user, in the `www-data` group as
    /// the recipe makes it, with `home` for its data; stop it with `stop()`.
    static func startCaddy(_ session: CLISession, config: String, home: String) throws -> Daemon {
        try Daemon(
            try ExternalTool.path("setpriv"),
            [
                "--reuid=caddy", "--regid=caddy", "--groups=www-data", "--", try ExternalTool.path("caddy"), "run",
                "--config", config, "--adapter", "caddyfile",
            ],
            logIn: session,
            environment: ["HOME": home, "XDG_DATA_HOME": home, "XDG_CONFIG_HOME": home, "PATH": "/usr/bin:/bin"])
    }

    /// A TCP socket connected to 127.0.0.1:`port` (the caller closes it), or nil when
    /// nothing accepts there.
    static func connectToLoopback(_ port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Waits until something accepts connections on 127.0.0.1:`port`.
    static func waitForPort(_ port: Int, of daemon: Daemon? = nil, timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let fd = connectToLoopback(port) {
                close(fd)
                return
            }
            usleep(100_000)
        }
        throw HarnessError(
            "nothing listens on 127.0.0.1:\(port) after \(timeout); \(daemon?.name ?? "") said: \(daemon?.output ?? "")"
        )
    }

    /// Waits until `path` exists.
    static func waitForFile(_ path: String, timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if access(path, F_OK) == 0 { return }
            usleep(100_000)
        }
        throw HarnessError("\(path) did not appear after \(timeout)")
    }

    /// Runs `program` to its end (at most `timeout`), standard input from `stdin`
    /// (nil: /dev/null), with a clean signal mask (see ``ChildProcess``).
    static func run(
        _ program: String, _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String]? = nil,
        in session: CLISession, timeout: Duration = .seconds(60)
    ) throws -> CLIResult {
        try session.spawn(program, arguments, stdin: stdin, environment: environment, timeout: timeout)
    }
}

/// The shipped `Examples/squid/conf.d/credfile.conf` for `file`, calling `credfile`.
func squidRecipe(credfile: String, file: String) throws -> String {
    try Integration.example(
        "squid/conf.d/credfile.conf", replacing: ["/usr/bin/credfile": credfile, "/etc/credfile/proxy.cred": file])
}

/// A private Squid in front of a private origin server (the peers' python3 -m http.server), its
/// configuration the test's own lines (ports, logs, no cache, credentials re-checked
/// every second) around `recipe` (``squidRecipe(credfile:file:)``) and Debian's final
/// `http_access deny all`; `body` gets the HTTP status curl receives through the proxy
/// for a user and password (given in a curl config file, never on argv) and the proxy
/// daemon (for messages). `namespaced` wraps the daemon's command
/// (``SyslogDaemon/namespaced(_:_:)``). Both servers stop by PID.
func withSquid(
    _ session: CLISession, recipe: String,
    namespaced: ((String, [String]) -> (program: String, arguments: [String]))? = nil,
    _ body: (_ status: (String, String) throws -> String, _ proxy: Daemon) throws -> Void
) throws {
    let squid = try ExternalTool.path("squid")
    let curl = try ExternalTool.path("curl")
    let python = try ExternalTool.path(ExternalTool.peerPython)
    let www = session.path("www")
    mkdir(www, 0o755)
    try session.write("www/index.html", "origin page\n")
    chmod(www + "/index.html", 0o644)
    let originPort = try Integration.freePort()
    let origin = try Daemon(
        python, ["-m", "http.server", "\(originPort)", "--bind", "127.0.0.1", "--directory", www], logIn: session)
    defer { origin.stop() }
    let proxyPort = try Integration.freePort()
    let base = session.path("squid")
    mkdir(base, 0o755)
    chmod(base, 0o777)  // squid drops to the proxy user, which writes its logs here
    let config =
        [
            "http_port 127.0.0.1:\(proxyPort)", "pid_filename \(base)/squid.pid", "cache_log \(base)/cache.log",
            "access_log \(base)/access.log", "cache_store_log none", "coredump_dir \(base)", "cache deny all",
            "cache_mem 8 MB",
            "shutdown_lifetime 1 seconds",
        ].joined(separator: "\n") + "\n" + recipe + "auth_param basic credentialsttl 1 second\nhttp_access deny all\n"
    try session.write("squid/squid.conf", config)
    let command = (squid, ["-N", "-f", base + "/squid.conf"])
    let (program, arguments) = namespaced?(command.0, command.1) ?? command
    let proxy = try Daemon(program, arguments, logIn: session)
    defer { proxy.stop() }
    try Integration.waitForPort(originPort, of: origin)
    try Integration.waitForPort(proxyPort, of: proxy)
    try body(
        { user, password in
            try session.write("curl.cfg", "proxy-user = \"\(user):\(password)\"\n")
            return try Integration.run(
                curl,
                [
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "-K", session.path("curl.cfg"),
                    "-x", "http://127.0.0.1:\(proxyPort)", "http://127.0.0.1:\(originPort)/",
                ], in: session
            ).stdout
        }, proxy)
}

/// A server started in the foreground by a test (a ``ChildProcess``) and stopped by its
/// PID (SIGTERM, then SIGKILL after a grace period), also when the test fails: use
/// `defer { daemon.stop() }`.
final class Daemon {
    let name: String
    private let child: ChildProcess

    init(_ program: String, _ arguments: [String], logIn session: CLISession, environment: [String: String]? = nil)
        throws
    {
        name = (program as NSString).lastPathComponent
        child = try ChildProcess.start(program, arguments, environment: environment)
    }

    /// The process id.
    var pid: pid_t { child.pid }

    /// What the daemon printed (for failure messages).
    var output: String {
        let (stdout, stderr) = child.output
        return (stdout + stderr).text
    }

    /// Sends SIGTERM to the PID and waits; SIGKILL after 10 s.
    func stop() { child.stop() }

    deinit { stop() }
}

/// A PAM service file in `/etc/pam.d` under a name no one else uses (pamtester and
/// nginx's auth_pam find services only there), removed by `remove()` (call it in `defer`).
struct SystemPAMService {
    let name: String
    var path: String { "/etc/pam.d/" + name }

    init(lines: [String]) throws { try self.init(text: lines.joined(separator: "\n") + "\n") }

    /// A service file holding `text`.
    init(text: String) throws {
        name = "credfile-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard
            FileManager.default.createFile(
                atPath: "/etc/pam.d/" + name, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644])
        else {
            throw HarnessError("cannot create /etc/pam.d/\(name) (these tests run as root in CI)")
        }
    }

    func remove() { unlink(path) }
}

/// Whether this process may write `/etc/pam.d` (root); CI runs the tests as root.
var canWriteSystemPAM: Bool { access("/etc/pam.d", W_OK) == 0 }
