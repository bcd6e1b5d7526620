import Foundation

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// Starts a program with `posix_spawn`, with an empty signal mask and every signal at its
/// default action. Foundation's `Process` hands its children the test runner's mask,
/// where almost every signal is blocked: Dovecot then never sees SIGCHLD (its
/// checkpassword child stays a zombie and `doveadm auth test` hangs) and Squid never
/// starts. Servers need a clean slate, as a shell would give them.
enum Spawn {
    /// Starts `program`; standard input from `stdin` (a descriptor; -1 for /dev/null),
    /// standard output to `output`, standard error to `separateError`. Returns the PID.
    static func start(_ program: String, _ arguments: [String], environment: [String: String]?, stdin: Int32, output: Int32, separateError: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if stdin >= 0 {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, separateError, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?]
        if let environment {
            envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        } else {
            var inherited: [UnsafeMutablePointer<CChar>?] = []
            var pointer = environ
            while let entry = pointer.pointee {
                inherited.append(strdup(entry))
                pointer += 1
            }
            envp = inherited + [nil]
        }
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard code == 0 else { throw CredFileError(.io, "posix_spawn \(program): \(String(cString: strerror(code)))") }
        return pid
    }

    /// The exit status of `pid` if it has ended (128 + signal for a signal), else nil.
    static func poll(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// Waits for `pid` at most `timeout`; nil when it is still running.
    static func wait(_ pid: pid_t, timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = poll(pid) { return status }
            if ContinuousClock.now > deadline { return nil }
            usleep(5_000)
        }
    }
}
