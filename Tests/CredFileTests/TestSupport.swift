import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// What only the library's tests need on top of CredFileTestSupport: the built `credfile`
// run as a real child process whose every output is checked for passwords, and small
// hash policies.

// MARK: - The credfile binary

/// Runs the `credfile` executable built with the tests (``BuiltProduct``) through
/// ``ChildProcess``; every output of every run is checked for leaked passwords
/// (``Canary/expectNoLeak(_:of:sourceLocation:)``).
enum CLI {
    /// The path of the binary, or a loud failure.
    static func path() throws -> String { try BuiltProduct.path("credfile") }

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

    /// Runs `credfile ARGUMENTS` with `stdin` as standard input, waits, and checks that
    /// its output holds no password.
    @discardableResult
    static func run(
        _ arguments: [String], stdin: String = "", environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        try run(arguments, stdinBytes: Array(stdin.utf8), environment: environment, sourceLocation: sourceLocation)
    }

    /// ``run(_:stdin:environment:sourceLocation:)`` with raw bytes on standard input.
    @discardableResult
    static func run(
        _ arguments: [String], stdinBytes: [UInt8], environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        try start(arguments, stdinBytes: stdinBytes, environment: environment).checkedWait(
            sourceLocation: sourceLocation)
    }

    /// Starts `credfile ARGUMENTS` without waiting (for kill tests); wait with
    /// `checkedWait()`.
    static func start(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) throws
        -> ChildProcess
    {
        try start(arguments, stdinBytes: Array(stdin.utf8), environment: environment)
    }

    private static func start(_ arguments: [String], stdinBytes: [UInt8], environment: [String: String]) throws
        -> ChildProcess
    {
        try ChildProcess.start(path(), arguments, stdin: stdinBytes, environment: Self.environment(environment))
    }

    /// Starts `/bin/sh -c SCRIPT` with `$1…` = `arguments`, `CREDFILE` set to the binary
    /// and `stdin` as standard input (passwords go there, never into the script or argv).
    static func shell(_ script: String, _ arguments: [String] = [], stdin: String = "") throws -> ChildProcess {
        try ChildProcess.start(
            "/bin/sh", ["-c", script, "sh"] + arguments, stdin: Array(stdin.utf8),
            environment: Self.environment(["CREDFILE": path()]))
    }
}

extension ChildProcess {
    /// Waits for the child (``wait(timeout:)``: a hung child is killed and fails the test)
    /// and checks that its output holds no password and no hash string.
    func checkedWait(
        timeout: Duration = ChildProcess.defaultTimeout, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        let result = try wait(timeout: timeout)
        let command = (program as NSString).lastPathComponent
        Canary.expectNoLeak(result.stdout + result.stderr, of: command, sourceLocation: sourceLocation)
        return result
    }
}

extension ProcessResult {
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
