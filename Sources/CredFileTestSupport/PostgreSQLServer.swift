import CredFile
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL 15 (Debian `postgresql-15`) for the state-store tests (SPEC §15):
/// `initdb` in a private directory, the server listening on a unix socket there only
/// (no TCP), run as the unprivileged `postgres` user through `setpriv` when the tests run
/// as root (PostgreSQL refuses root), stopped by its PID. Trust authentication on that
/// socket: the directory is the gate, and no password is involved.
///
///     let server = try PostgreSQLServer.shared()   // one per test process
///     let state = try server.freshDatabase()       // "postgresql:///t3?host=/tmp/…&user=credfile"
public final class PostgreSQLServer: Sendable {
    /// The programs of Debian's `postgresql-15`.
    public static let binaries = "/usr/lib/postgresql/15/bin"
    /// Whether PostgreSQL 15 is installed (for `.enabled(if:)`; under `CI=true` tests run
    /// anyway and fail when it is missing).
    public static var isInstalled: Bool { access(binaries + "/pg_ctl", X_OK) == 0 || ExternalTool.isCI }
    /// The note of a test skipped because PostgreSQL is missing.
    public static let skipNote = "PostgreSQL 15 (Debian postgresql-15) is not installed"

    /// The private directory: the cluster (`data/`) and the socket.
    public let directory: String
    /// The postmaster's PID.
    public let pid: pid_t
    private let databases = Atomic<Int>(0)

    private static let sharedServer = Mutex<PostgreSQLServer?>(nil)

    /// The server shared by every test of this process, started at the first call and
    /// stopped when the process exits.
    public static func shared() throws -> PostgreSQLServer {
        try sharedServer.withLock { server in
            if let server { return server }
            let started = try PostgreSQLServer()
            server = started
            atexit { PostgreSQLServer.sharedServer.withLock { $0?.stop() } }
            return started
        }
    }

    /// Starts a server of its own (a test that stops and restarts it).
    public init() throws {
        guard access(Self.binaries + "/pg_ctl", X_OK) == 0 else { throw HarnessError(Self.skipNote) }
        var template = Array("/tmp/credfile-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError.system("mkdtemp") }
        directory = String(cString: made)
        if geteuid() == 0 {
            guard let user = getpwnam("postgres") else { throw HarnessError("no postgres user") }
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        chmod(directory, 0o700)
        let initdb = try Self.run(
            "initdb", ["-D", directory + "/data", "-A", "trust", "-U", "credfile", "--no-sync", "-E", "UTF8"])
        guard initdb.status == 0 else { throw HarnessError("initdb failed: \(initdb.stderr)") }
        pid = try Self.start(directory)
    }

    /// Starts the postmaster of `directory`'s cluster; its PID.
    private static func start(_ directory: String) throws -> pid_t {
        let options = "-k \(directory) -c listen_addresses= -c fsync=off -c max_connections=200"
        let started = try run(
            "pg_ctl", ["-D", directory + "/data", "-o", options, "-l", directory + "/log", "-w", "-t", "60", "start"])
        guard started.status == 0 else {
            let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
            throw HarnessError("pg_ctl start failed: \(started.stderr) \(log)")
        }
        let pidFile = (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        guard let pid = pid_t(pidFile.split(separator: "\n").first ?? "") else {
            throw HarnessError("no postmaster.pid")
        }
        return pid
    }

    /// A libpq connection string for database `name` on this server's socket.
    public func connectionString(_ name: String) -> String {
        "postgresql:///\(name)?host=\(directory)&user=credfile"
    }

    /// A new, empty database; its connection string.
    public func freshDatabase() throws -> String {
        let name = "t\(databases.add(1, ordering: .relaxed).newValue)_\(getpid())"
        try psql("CREATE DATABASE \(name)")
        return connectionString(name)
    }

    /// Runs `sql` with psql on the `postgres` database (or `database`); its output.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        let result = try ChildProcess.run(
            Self.binaries + "/psql",
            ["-h", directory, "-U", "credfile", "-d", database, "-tAX", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard result.status == 0 else { throw HarnessError("psql failed: \(result.stderr)") }
        return result.stdout
    }

    /// Stops the server (fast shutdown: SIGINT to its PID) and waits until it has exited.
    public func stopServer() {
        kill(pid, SIGINT)
        for _ in 0..<600 where kill(pid, 0) == 0 { usleep(50_000) }
    }

    /// Starts the stopped server again (same directory, same databases).
    /// - Returns: the new server's PID.
    @discardableResult
    public func restart() throws -> pid_t { try Self.start(directory) }

    /// Stops the server and removes its directory.
    public func stop() {
        // The current postmaster (a restart changed it).
        let pidFile = (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        if let current = pid_t(pidFile.split(separator: "\n").first ?? "") { kill(current, SIGINT) }
        stopServer()
        for _ in 0..<600 where access(directory + "/data/postmaster.pid", F_OK) == 0 { usleep(50_000) }
        _ = try? ChildProcess.run("/bin/rm", ["-rf", directory])
    }

    /// Runs one of PostgreSQL's programs, as `postgres` when this is root.
    private static func run(_ program: String, _ arguments: [String]) throws -> ProcessResult {
        let path = binaries + "/" + program
        if geteuid() == 0 {
            return try ChildProcess.run(
                "/usr/bin/setpriv",
                ["--reuid", "postgres", "--regid", "postgres", "--init-groups", "--", path] + arguments,
                environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], directory: "/")
        }
        return try ChildProcess.run(path, arguments, environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
    }
}
