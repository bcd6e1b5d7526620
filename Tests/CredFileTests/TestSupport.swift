import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// Shared helpers of the integration tests (StorageTests, ConcurrencyTests, CrashTests,
// UpgradeTests): temporary directories that are always removed, the built `credfile`
// binary run as a real child process, byte-level file helpers, and a leak check that
// every output of every command is free of passwords.

// MARK: - Secrets

/// Every password the integration tests use contains ``marker``, so "no password ever
/// appears in stdout or stderr" is one substring search over every output.
enum Secret {
    static let marker = "Sekr3t"

    /// A password that is easy to find if it ever leaks. The tag's characters are split by
    /// dots, so a tag that is also the username (`nuevo`) is not contained in the password
    /// (SPEC §8 refuses a new password holding the username).
    static func password(_ tag: some CustomStringConvertible) -> String {
        "\(marker)-" + tag.description.map(String.init).joined(separator: ".")
    }

    /// Records an issue when `output` holds a password or a PBKDF2 hash string.
    static func expectNoLeak(
        _ output: String, of what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!output.contains(marker), "a password leaked in the output of \(what)", sourceLocation: sourceLocation)
        #expect(!output.contains("$pbkdf2"), "a hash string leaked in the output of \(what)", sourceLocation: sourceLocation)
    }
}

// MARK: - Errors of the harness

/// A failure of the test harness itself (not of credfile): always fails the test loudly.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Temporary directories

/// A temporary directory for one test; see ``withTemporaryDirectory(onTmpfs:_:)``.
struct TemporaryDirectory {
    /// The absolute, symlink-free path.
    let path: String

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }

    /// The names in the directory (without `.` and `..`).
    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

    /// The stray temporary files of `name` (`.NAME.credfile-XXXXXX`, SPEC §4).
    func temporaryFiles(of name: String) throws -> [String] {
        let prefix = "." + name + ".credfile-"
        return try names().filter { $0.hasPrefix(prefix) }
    }
}

/// Runs `body` with a fresh temporary directory and removes it afterwards, also when
/// `body` throws.
///
/// - Parameter onTmpfs: put it on `/dev/shm` when that is a writable tmpfs. The tests
///   that spawn hundreds of writers use it: on this VM's disk each rewrite costs two
///   `fsync`s of several milliseconds, which measures the disk, not the locking. Killing
///   a process (`kill -9`) loses nothing from the page cache on either file system, so
///   what those tests check is the same.
func withTemporaryDirectory<R>(onTmpfs: Bool = false, _ body: (TemporaryDirectory) throws -> R) throws -> R {
    var base = NSTemporaryDirectory()
    if onTmpfs, access("/dev/shm", W_OK) == 0 { base = "/dev/shm" }
    if base.hasSuffix("/") { base.removeLast() }
    var template = Array((base + "/credfile-tests-XXXXXX").utf8CString)
    guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw HarnessError("mkdtemp in \(base) failed: \(String(cString: strerror(errno)))")
    }
    let resolved = try realPath(String(cString: created))
    defer { try? FileManager.default.removeItem(atPath: resolved) }
    return try body(TemporaryDirectory(path: resolved))
}

func realPath(_ path: String) throws -> String {
    guard let resolved = realpath(path, nil) else {
        throw HarnessError("realpath \(path): \(String(cString: strerror(errno)))")
    }
    defer { free(resolved) }
    return String(cString: resolved)
}

// MARK: - Files

/// The bytes of a file; throws when it cannot be read.
func readBytes(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { throw HarnessError("cannot read \(path)") }
    return [UInt8](data)
}

/// The bytes of a file as `Data` (compared with `memcmp`, fast even in a debug build).
func readData(_ path: String) throws -> Data {
    guard let data = FileManager.default.contents(atPath: path) else { throw HarnessError("cannot read \(path)") }
    return data
}

/// Writes `bytes` to `path` (plain `open`/`write`, mode 0600 before umask).
func writeBytes(_ path: String, _ bytes: some Collection<UInt8>) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let array = Array(bytes)
    var offset = 0
    while offset < array.count {
        let n = array.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        guard n > 0 else { throw HarnessError("write \(path): \(String(cString: strerror(errno)))") }
        offset += n
    }
}

func writeText(_ path: String, _ text: String) throws { try writeBytes(path, Array(text.utf8)) }

func fileExists(_ path: String) -> Bool { (try? lstatInfo(path)) != nil }

/// `lstat`, throwing when the path does not exist.
func lstatInfo(_ path: String) throws -> stat {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw HarnessError("lstat \(path): \(String(cString: strerror(errno)))") }
    return info
}

/// `stat` (follows symlinks).
func statInfo(_ path: String) throws -> stat {
    var info = stat()
    guard stat(path, &info) == 0 else { throw HarnessError("stat \(path): \(String(cString: strerror(errno)))") }
    return info
}

/// The permission bits of a file.
func mode(_ path: String) throws -> mode_t { try statInfo(path).st_mode & 0o7777 }

func isSymlink(_ path: String) throws -> Bool { try lstatInfo(path).st_mode & S_IFMT == S_IFLNK }

/// Splits bytes into lines, each with its LF (the last one may have none): a splitter
/// independent of the library's, to compare files line by line.
func rawLines(_ bytes: [UInt8]) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    var current: [UInt8] = []
    for byte in bytes {
        current.append(byte)
        if byte == 0x0A {
            lines.append(current)
            current = []
        }
    }
    if !current.isEmpty { lines.append(current) }
    return lines
}

extension Array where Element == UInt8 {
    var text: String { String(decoding: self, as: UTF8.self) }
}

// MARK: - The credfile binary

/// The `credfile` executable built with the tests.
///
/// `swift build --build-tests` (which `swift test` runs) builds every product of the
/// package, executables included, into the directory that holds the test bundle, so the
/// binary is looked for there first, then in `.build/debug` of this checkout. When it is
/// not found every test that needs it fails with ``HarnessError`` (never skips): build
/// it with `swift build --product credfile` and run the tests again.
enum CLI {
    static let binary: Result<String, HarnessError> = {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        if let first = CommandLine.arguments.first, first.contains("/") {
            candidates.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        // Tests/CredFileTests/TestSupport.swift → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug"))
        let paths = candidates.map { $0.appendingPathComponent("credfile").path }
        if let found = paths.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return .success(found)
        }
        return .failure(
            HarnessError(
                "the credfile executable was not found (looked at \(paths.joined(separator: ", "))); "
                    + "build it with `swift build --product credfile`, then run the tests again"))
    }()

    /// The path of the binary, or a loud failure.
    static func path() throws -> String { try binary.get() }

    /// The environment of every child: the test process's, in the C locale (English
    /// messages), without a fault hook left over from the caller, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["CREDFILE_TEST_FAULT"] = nil
        environment["LANG"] = "C"
        environment["LC_ALL"] = "C"
        environment["LC_MESSAGES"] = nil
        environment.merge(extra) { $1 }
        return environment
    }

    /// How long any single command may take before it counts as hung (it is then killed
    /// and the test fails): far more than any command here needs, even on a loaded machine.
    static let timeout: Double = 120

    /// Runs `credfile ARGUMENTS` with `stdin` as standard input, waits, and checks that
    /// its output holds no password.
    @discardableResult
    static func run(
        _ arguments: [String], stdin: String = "", environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ChildResult {
        try run(arguments, stdinBytes: Array(stdin.utf8), environment: environment, sourceLocation: sourceLocation)
    }

    /// ``run(_:stdin:environment:sourceLocation:)`` with raw bytes on standard input.
    @discardableResult
    static func run(
        _ arguments: [String], stdinBytes: [UInt8], environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ChildResult {
        let child = try Child.start(
            executable: path(), arguments: arguments, stdin: stdinBytes, environment: Self.environment(environment))
        return try child.wait(timeout: timeout, sourceLocation: sourceLocation)
    }

    /// Starts `credfile ARGUMENTS` without waiting (for kill tests).
    static func start(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) throws -> Child {
        try Child.start(
            executable: path(), arguments: arguments, stdin: Array(stdin.utf8), environment: Self.environment(environment))
    }

    /// Starts `/bin/sh -c SCRIPT` with `$1…` = `arguments`, `CREDFILE` set to the binary
    /// and `stdin` as standard input (passwords go there, never into the script or argv).
    static func shell(_ script: String, _ arguments: [String] = [], stdin: String = "") throws -> Child {
        try Child.start(
            executable: "/bin/sh", arguments: ["-c", script, "sh"] + arguments, stdin: Array(stdin.utf8),
            environment: Self.environment(["CREDFILE": path()]))
    }
}

/// What a finished child did.
struct ChildResult: CustomStringConvertible {
    /// The exit status, or nil when a signal ended it.
    let status: Int32?
    /// The signal that ended it, if one did.
    let signal: Int32?
    let stdout: String
    let stderr: String

    /// Standard error without the warning every run with few `--iterations` prints.
    var message: String {
        stderr.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !($0.hasPrefix("credfile: warning: ") && $0.contains(" iterations is below the minimum of ")) }
            .joined(separator: "\n")
    }

    /// Whether every line on standard error has the `credfile: ` form of SPEC §5.
    var diagnosticsWellFormed: Bool {
        stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("credfile: ") }
    }

    var description: String {
        "status \(status.map(String.init) ?? "-") signal \(signal.map(String.init) ?? "-")\nstdout: \(stdout)\nstderr: \(stderr)"
    }
}

/// A child process started with Foundation's `Process`; standard input comes from a
/// file and output goes to files, so no pipe can fill up and block either side.
///
/// Waiting uses the termination handler and a semaphore: `Process.waitUntilExit()` on
/// this toolchain polls its run loop every 50 ms, which made each short command 50 ms.
final class Child: @unchecked Sendable {  // the process is only touched by its owner; `done` is a semaphore
    let process: Process
    private let scratch: String
    private let done = DispatchSemaphore(value: 0)
    /// When the child was started, and when its end was noticed (set before `done` is
    /// signalled, read after waiting for it).
    private(set) var startedAt = ContinuousClock.now
    private var endedAt: ContinuousClock.Instant?

    private init(process: Process, scratch: String) {
        self.process = process
        self.scratch = scratch
    }

    static func start(executable: String, arguments: [String], stdin: [UInt8], environment: [String: String]) throws -> Child {
        var template = Array((NSTemporaryDirectory() + "/credfile-child-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        let scratch = String(cString: created)
        try writeBytes(scratch + "/stdin", stdin)
        try writeBytes(scratch + "/stdout", [])
        try writeBytes(scratch + "/stderr", [])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        guard let input = FileHandle(forReadingAtPath: scratch + "/stdin"),
            let output = FileHandle(forWritingAtPath: scratch + "/stdout"),
            let error = FileHandle(forWritingAtPath: scratch + "/stderr")
        else { throw HarnessError("cannot open the child's I/O files in \(scratch)") }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        let child = Child(process: process, scratch: scratch)
        process.terminationHandler = { _ in
            child.endedAt = ContinuousClock.now
            child.done.signal()
        }
        do {
            child.startedAt = ContinuousClock.now
            try process.run()
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw HarnessError("cannot start \(executable): \(error)")
        }
        // The child has its own copies now.
        try? input.close()
        try? output.close()
        try? error.close()
        return child
    }

    /// Seconds from start to end; call after ``wait(timeout:sourceLocation:)``.
    var runningTime: Double { endedAt.map { seconds($0 - startedAt) } ?? 0 }

    /// The process id.
    var pid: pid_t { process.processIdentifier }

    /// Sends SIGKILL if the child is still running; true when it was sent.
    @discardableResult
    func killNow() -> Bool {
        // Not yet reaped while `isRunning`, so the pid cannot have been reused.
        guard process.isRunning else { return false }
        return kill(process.processIdentifier, SIGKILL) == 0
    }

    /// Waits for the child to end and collects its output, which must hold no password
    /// and no hash string (every output of every child of the tests is checked here).
    /// After `timeout` seconds the child is killed and ``HarnessError`` thrown: a hung
    /// command fails the test.
    func wait(timeout: Double = CLI.timeout, sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildResult {
        if done.wait(timeout: .now() + timeout) == .timedOut {
            killNow()
            done.wait()
            try? FileManager.default.removeItem(atPath: scratch)
            throw HarnessError("\(process.executableURL?.lastPathComponent ?? "child") \(process.arguments?.first ?? "") hung for \(Int(timeout)) s and was killed")
        }
        done.signal()  // a second wait() returns at once
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let stdout = (FileManager.default.contents(atPath: scratch + "/stdout")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let stderr = (FileManager.default.contents(atPath: scratch + "/stderr")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let command = ([process.executableURL?.lastPathComponent ?? "?"] + (process.arguments ?? []).prefix(1)).joined(separator: " ")
        Secret.expectNoLeak(stdout + stderr, of: command, sourceLocation: sourceLocation)
        switch process.terminationReason {
        case .exit: return ChildResult(status: process.terminationStatus, signal: nil, stdout: stdout, stderr: stderr)
        case .uncaughtSignal: return ChildResult(status: nil, signal: process.terminationStatus, stdout: stdout, stderr: stderr)
        @unknown default: throw HarnessError("unknown termination reason")
        }
    }
}

// MARK: - Small policies

/// One round: the suite stays fast. (Hashes are still real PBKDF2 hashes.)
let oneRound: HashPolicy = {
    do { return try HashPolicy(rounds: 1) } catch { fatalError("rounds 1 is valid: \(error)") }  // in roundsRange
}()

func policy(rounds: Int, algorithm: HashAlgorithm = .sha256) throws -> HashPolicy {
    try HashPolicy(algorithm: algorithm, rounds: rounds)
}

/// The secret of `username`'s first entry.
func storedSecret(of username: String, in path: String) throws -> StoredSecret? {
    CredentialFile(bytes: try readBytes(path)).firstEntry(named: username)?.entry?.secret
}

/// Whether the tests run as root. The project's machines and CI run them as root; a few
/// tests need it (chown to another owner, chattr +i, mount) and are shown as skipped,
/// with that reason, elsewhere.
let isRoot = geteuid() == 0

/// Whether this test bundle (and so the `credfile` binary built with it) is a debug
/// build, where the `CREDFILE_TEST_FAULT` hook exists.
let isDebugBuild: Bool = {
    #if DEBUG
    return true
    #else
    return false
    #endif
}()

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

