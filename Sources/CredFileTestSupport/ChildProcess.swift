import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a finished child process did.
public struct ProcessResult: Sendable, CustomStringConvertible {
    /// The exit status, or nil when a signal ended it.
    public let status: Int32?
    /// The signal that ended it, if one did.
    public let signal: Int32?
    /// Everything it wrote to standard output.
    public let stdoutBytes: [UInt8]
    /// Everything it wrote to standard error.
    public let stderrBytes: [UInt8]

    /// Standard output as UTF-8 text (invalid bytes replaced).
    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    /// Standard error as UTF-8 text (invalid bytes replaced).
    public var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }
    /// The status as a shell reports it: the exit status, or 128 + the signal.
    public var shellStatus: Int32 { status ?? 128 + (signal ?? 0) }

    /// The status, the signal and both outputs, for a failure message.
    public var description: String {
        "status \(status.map(String.init) ?? "-") signal \(signal.map(String.init) ?? "-")\nstdout: \(stdout)\nstderr: \(stderr)"
    }
}

/// A child process of a test: the one process runner of the tests.
///
/// Started with `posix_spawn`, with an empty signal mask and every signal at its default
/// action: Foundation's `Process` hands its children the test runner's mask, where almost
/// every signal is blocked, and then Dovecot never sees SIGCHLD (its checkpassword child
/// stays a zombie) and Squid never starts. Standard input comes from a file holding the
/// given bytes (or `/dev/null`) and output goes to files, so no pipe can fill up and block
/// either side, and no test is ended by SIGPIPE. Every descriptor it opens is close-on-exec,
/// so children started meanwhile by parallel tests inherit none of them.
///
///     let result = try ChildProcess.run("/usr/bin/htpasswd", ["-v", "-i", file, "u"], stdin: password)
///
/// A child that outlives its ``ChildProcess`` is killed (SIGKILL) and reaped in `deinit`.
public final class ChildProcess: Sendable {
    /// The process id; it stays this child's until it is reaped by ``isRunning``,
    /// ``waitForExit(timeout:)`` or ``wait(timeout:)``.
    public let pid: pid_t
    /// When it was started.
    public let startedAt: ContinuousClock.Instant
    /// The program, for messages.
    public let program: String
    private let scratch: TemporaryDirectory
    /// The `waitpid` status and the instant the end was noticed, once reaped.
    private let ended = Mutex<(status: Int32, at: ContinuousClock.Instant)?>(nil)

    /// How long any child may run before it counts as hung, unless a test says otherwise:
    /// far more than any command here needs, even on a loaded machine.
    public static let defaultTimeout: Duration = .seconds(120)

    private init(pid: pid_t, program: String, scratch: TemporaryDirectory, startedAt: ContinuousClock.Instant) {
        self.pid = pid
        self.program = program
        self.scratch = scratch
        self.startedAt = startedAt
    }

    /// Starts `program arguments` without waiting.
    ///
    /// - Parameters:
    ///   - program: an absolute path (no `PATH` search; see `ExternalTool.path(_:)`).
    ///   - stdin: the bytes of its standard input; nil gives it `/dev/null`.
    ///   - environment: exactly its environment; nil inherits the test process's.
    ///   - directory: its working directory; nil keeps the test process's.
    /// - Throws: ``HarnessError`` when it cannot be started.
    public static func start(
        _ program: String, _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String]? = nil,
        directory: String? = nil
    ) throws -> ChildProcess {
        let scratch = try TemporaryDirectory.make(prefix: "credfile-child")
        do {
            let input = stdin == nil ? "/dev/null" : scratch.file("stdin")
            if let stdin { try writeBytes(input, stdin) }
            let output = try openForWriting(scratch.file("stdout"))
            defer { close(output) }
            let error = try openForWriting(scratch.file("stderr"))
            defer { close(error) }
            let inputDescriptor = open(input, O_RDONLY | O_CLOEXEC)
            guard inputDescriptor >= 0 else { throw HarnessError.system("open", input) }
            defer { close(inputDescriptor) }
            let startedAt = ContinuousClock.now
            let pid = try spawn(program, arguments, environment: environment, newSession: false) { actions in
                if let directory { try addChangeDirectory(&actions, directory) }
                posix_spawn_file_actions_adddup2(&actions, inputDescriptor, 0)
                posix_spawn_file_actions_adddup2(&actions, output, 1)
                posix_spawn_file_actions_adddup2(&actions, error, 2)
            }
            return ChildProcess(pid: pid, program: program, scratch: scratch, startedAt: startedAt)
        } catch {
            scratch.remove()
            throw error
        }
    }

    /// Starts `program arguments` and waits for it: ``start(_:_:stdin:environment:directory:)``
    /// then ``wait(timeout:)``.
    public static func run(
        _ program: String, _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String]? = nil,
        directory: String? = nil, timeout: Duration = defaultTimeout
    ) throws -> ProcessResult {
        try start(program, arguments, stdin: stdin, environment: environment, directory: directory).wait(
            timeout: timeout)
    }

    deinit {
        if !hasEnded {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        scratch.remove()
    }

    // MARK: Waiting

    private var hasEnded: Bool { ended.withLock { $0 != nil } }

    /// Whether the child is still running (reaps it when it has ended).
    public var isRunning: Bool { !reap(blocking: false) }

    /// Reaps the child if it has ended; true once it has been reaped.
    private func reap(blocking: Bool) -> Bool {
        ended.withLock { ended in
            if ended != nil { return true }
            var status: Int32 = 0
            while true {
                let reaped = waitpid(pid, &status, blocking ? 0 : WNOHANG)
                if reaped == pid {
                    ended = (status, ContinuousClock.now)
                    return true
                }
                if reaped < 0 && errno == EINTR { continue }
                return false
            }
        }
    }

    /// Waits at most `timeout` for the child to end; false when it is still running.
    public func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var pause: UInt32 = 100  // microseconds, doubling up to 5 ms: short commands are noticed at once
        while !reap(blocking: false) {
            if ContinuousClock.now > deadline { return false }
            usleep(pause)
            pause = min(pause * 2, 5_000)
        }
        return true
    }

    /// Waits for the child to end and returns what it did. After `timeout` it is killed
    /// and ``HarnessError`` is thrown: a hung command fails the test.
    public func wait(timeout: Duration = defaultTimeout) throws -> ProcessResult {
        guard waitForExit(timeout: timeout) else {
            killNow()
            _ = reap(blocking: true)
            throw HarnessError("\((program as NSString).lastPathComponent) hung for \(timeout) and was killed")
        }
        let status = ended.withLock { $0?.status } ?? 0
        let (exitStatus, signal) = Self.decode(waitStatus: status)
        return ProcessResult(status: exitStatus, signal: signal, stdoutBytes: output.stdout, stderrBytes: output.stderr)
    }

    /// What the child wrote so far (for the failure message of a daemon that never answered).
    public var output: (stdout: [UInt8], stderr: [UInt8]) {
        ((try? readBytes(scratch.file("stdout"))) ?? [], (try? readBytes(scratch.file("stderr"))) ?? [])
    }

    /// Seconds from start until its end was noticed; 0 while it runs.
    public var runningTime: Double { ended.withLock { $0.map { seconds($0.at - startedAt) } } ?? 0 }

    /// Sends `signal` if the child has not been reaped (so its pid cannot have been
    /// reused); true when it was sent.
    @discardableResult
    public func kill(_ signal: Int32) -> Bool {
        ended.withLock { ended in ended == nil && Glibc.kill(pid, signal) == 0 }
    }

    /// Sends SIGKILL if the child is still running; true when it was sent.
    @discardableResult
    public func killNow() -> Bool { kill(SIGKILL) }

    /// Stops a server: SIGTERM, then SIGKILL when it has not ended after `grace`.
    public func stop(grace: Duration = .seconds(10)) {
        kill(SIGTERM)
        if !waitForExit(timeout: grace) {
            killNow()
            _ = reap(blocking: true)
        }
    }

    // MARK: Spawning

    /// The exit status and the signal of a `waitpid` status (`WIFEXITED`, `WEXITSTATUS`
    /// and `WTERMSIG` are C macros that Swift does not import).
    public static func decode(waitStatus status: Int32) -> (status: Int32?, signal: Int32?) {
        status & 0x7F == 0 ? ((status >> 8) & 0xFF, nil) : (nil, status & 0x7F)
    }

    /// glibc's `POSIX_SPAWN_SETSID` (glibc ≥ 2.26). `<spawn.h>` defines it only under
    /// `_GNU_SOURCE`, which Swift's Glibc module does not set, so it is spelled here.
    private static let spawnSetSID: Int32 = 0x80

    /// `posix_spawn` with an empty signal mask and every signal at its default action, and
    /// `fileActions` to set up the descriptors. `newSession`: the child calls `setsid()`
    /// before the file actions, so the first terminal it opens becomes its controlling
    /// terminal (``PseudoTerminal``-style tests). Returns the pid.
    public static func spawn(
        _ program: String, _ arguments: [String], environment: [String: String]?, newSession: Bool,
        fileActions: (inout posix_spawn_file_actions_t) throws -> Void
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        try fileActions(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        let flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | (newSession ? spawnSetSID : 0)
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var envp: [UnsafeMutablePointer<CChar>?] = []
        if let environment {
            envp = environment.map { strdup("\($0.key)=\($0.value)") }
        } else {
            var pointer = environ
            while let entry = pointer.pointee {
                envp.append(strdup(entry))
                pointer += 1
            }
        }
        envp.append(nil)
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard code == 0 else { throw HarnessError("posix_spawn \(program): \(String(cString: strerror(code)))") }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+), declared only under
    /// `_GNU_SOURCE`, so looked up by name once.
    private typealias AddChangeDirectory =
        @convention(c) (
            UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
        ) -> Int32
    private static let addChangeDirectoryFunction: AddChangeDirectory? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(symbol, to: AddChangeDirectory.self)
    }()

    private static func addChangeDirectory(_ actions: inout posix_spawn_file_actions_t, _ directory: String) throws {
        guard let add = addChangeDirectoryFunction else {
            throw HarnessError("this glibc has no posix_spawn_file_actions_addchdir_np")
        }
        let code = add(&actions, directory)
        guard code == 0 else { throw HarnessError("addchdir \(directory): \(String(cString: strerror(code)))") }
    }

    private static func openForWriting(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HarnessError.system("open", path) }
        return fd
    }
}
