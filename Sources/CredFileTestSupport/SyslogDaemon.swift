import _CredFileFuzzChecks

#if canImport(Glibc)
import Glibc
#endif

/// A real `rsyslogd` of one test: a private configuration, a private unix socket, its
/// own log files, started in the foreground and stopped by its PID (``stop()``, also in
/// `deinit`). Nothing of the host's syslog is touched.
///
/// glibc's syslog(3) always writes to `/dev/log`; ``namespaced(_:_:)`` runs a program
/// (and everything it starts: pamtester's pam_exec children, Dovecot's auth processes,
/// Squid's helpers) in a private mount namespace (`unshare --mount`) whose `/dev` is a
/// fresh tmpfs holding the usual devices, bound from the real `/dev`, and `/dev/log`, bound
/// to this daemon's socket. So the lines are the program's own syslog(3) calls, received by
/// a real syslog daemon and written in its traditional file format, the one
/// `/var/log/auth.log` has — what fail2ban reads.
///
/// Needs root (mount namespaces), `rsyslogd` and `unshare` (util-linux).
public final class SyslogDaemon {
    /// The private directory of the daemon (its socket, configuration and logs).
    public let directory: String
    /// The socket the daemon listens on (bound on `/dev/log` inside ``namespaced(_:_:)``).
    public var socket: String { directory + "/log.sock" }
    /// Every `authpriv` line, in rsyslog's traditional format (`Dec  2 05:20:00 host credfile[42]: …`).
    public var authLog: String { directory + "/auth.log" }
    /// Every line as `facility.severity tag message`, to check facility and level.
    public var levelLog: String { directory + "/levels.log" }

    private let daemon: ChildProcess
    private let unshare: String

    /// Starts `rsyslogd -n` with a configuration in `directory` (created), and waits
    /// until its socket is there.
    /// - Throws: ``HarnessError`` when a program is missing or the daemon does not start.
    public init(in directory: String) throws {
        let rsyslogd = try ExternalTool.path("rsyslogd")
        unshare = try ExternalTool.path("unshare")
        self.directory = directory
        mkdir(directory, 0o755)
        let configuration = """
            global(workDirectory="\(directory)")
            module(load="imuxsock" SysSock.Use="off")
            input(type="imuxsock" Socket="\(directory)/log.sock" RateLimit.Interval="0")
            template(name="levels" type="string" string="%syslogfacility-text%.%syslogseverity-text% %syslogtag%%msg%\\n")
            authpriv.* action(type="omfile" file="\(directory)/auth.log" template="RSYSLOG_TraditionalFileFormat")
            *.* action(type="omfile" file="\(directory)/levels.log" template="levels")

            """
        try writeBytes(directory + "/rsyslog.conf", Array(configuration.utf8), mode: 0o644)
        daemon = try ChildProcess.start(
            rsyslogd, ["-n", "-f", directory + "/rsyslog.conf", "-i", directory + "/rsyslogd.pid"])
        let deadline = ContinuousClock.now + .seconds(30)
        while access(directory + "/log.sock", F_OK) != 0 {
            guard daemon.isRunning, ContinuousClock.now < deadline else {
                let output = daemon.output
                daemon.stop()
                throw HarnessError(
                    "rsyslogd did not start: " + String(decoding: output.stdout + output.stderr, as: UTF8.self))
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// Stops the daemon by its PID (SIGTERM, then SIGKILL); it flushes its files first.
    public func stop() { daemon.stop() }

    /// The program and arguments that run `program arguments` with `/dev/log` bound to
    /// this daemon's socket (see the type's comment). The real `/dev` is reached through a
    /// bind mount in this daemon's directory while the namespace lives.
    public func namespaced(_ program: String, _ arguments: [String]) -> (program: String, arguments: [String]) {
        let script = """
            set -e
            socket="$1"; real="$2"; shift 2
            mkdir -p "$real"
            mount --rbind /dev "$real"
            mount -t tmpfs -o mode=755,nosuid credfile-test-dev /dev
            for name in null zero full random urandom tty; do
              if [ -e "$real/$name" ]; then : > "/dev/$name"; mount --bind "$real/$name" "/dev/$name"; fi
            done
            for name in pts shm mqueue; do
              if [ -d "$real/$name" ]; then mkdir "/dev/$name"; mount --rbind "$real/$name" "/dev/$name"; fi
            done
            ln -s /proc/self/fd /dev/fd
            ln -s /proc/self/fd/0 /dev/stdin; ln -s /proc/self/fd/1 /dev/stdout; ln -s /proc/self/fd/2 /dev/stderr
            : > /dev/log
            mount --bind "$socket" /dev/log
            exec "$@"
            """
        let real = directory + "/real-dev-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        return (
            unshare,
            ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", socket, real, program] + arguments
        )
    }

    /// The lines of `file` so far (rsyslog writes each line at once).
    public func lines(of file: String) -> [String] {
        guard let bytes = try? readBytes(file) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Waits until `file` holds at least `count` lines that contain `text`, and returns
    /// all its lines; after `timeout`, returns what is there.
    @discardableResult
    public func waitForLines(
        in file: String, containing text: String, count: Int = 1, timeout: Duration = .seconds(15)
    ) -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let all = lines(of: file)
            if all.filter({ $0.contains(text) }).count >= count || ContinuousClock.now >= deadline { return all }
            usleep(20_000)
        }
    }
}
