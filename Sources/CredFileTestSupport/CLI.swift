import Foundation
import Testing

/// The built `credfile` (``BuiltProduct``) run as a child process (``ChildProcess``): the
/// one runner of the binary, shared by the test targets. The library's tests run it with
/// ``run(_:stdin:environment:sourceLocation:)`` (the test's environment in the C locale,
/// every output checked for leaked passwords); the CLI's tests through their session
/// (`BuiltBinary`, which records the output for the session's own leak check) with
/// ``spawn(_:stdin:environment:directory:timeout:executable:)``.
public enum CLI {
    /// The path of the binary, or a loud failure.
    public static func path() throws -> String { try BuiltProduct.path("credfile") }

    /// The environment of every child of ``run(_:stdin:environment:sourceLocation:)``: the
    /// test process's, in the C locale (English messages), without a fault hook left over
    /// from the caller, plus `extra`.
    public static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["CREDFILE_TEST_FAULT"] = nil
        environment["LANG"] = "C"
        environment["LC_ALL"] = "C"
        environment["LC_MESSAGES"] = nil
        environment.merge(extra) { $1 }
        return environment
    }

    /// The minimal environment of a child: a locale and a PATH, nothing inherited.
    public static func minimalEnvironment(lang: String = "C") -> [String: String] {
        ["LANG": lang, "PATH": "/usr/bin:/bin"]
    }

    /// Runs `credfile ARGUMENTS` with `stdin` as standard input, waits, and checks that
    /// its output holds no password.
    @discardableResult
    public static func run(
        _ arguments: [String], stdin: String = "", environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        try run(arguments, stdinBytes: Array(stdin.utf8), environment: environment, sourceLocation: sourceLocation)
    }

    /// ``run(_:stdin:environment:sourceLocation:)`` with raw bytes on standard input.
    @discardableResult
    public static func run(
        _ arguments: [String], stdinBytes: [UInt8], environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        try start(arguments, stdinBytes: stdinBytes, environment: environment).checkedWait(
            sourceLocation: sourceLocation)
    }

    /// Starts `credfile ARGUMENTS` without waiting (for kill tests); wait with
    /// `checkedWait()`.
    public static func start(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) throws
        -> ChildProcess
    {
        try start(arguments, stdinBytes: Array(stdin.utf8), environment: environment)
    }

    private static func start(_ arguments: [String], stdinBytes: [UInt8], environment: [String: String]) throws
        -> ChildProcess
    {
        try ChildProcess.start(path(), arguments, stdin: stdinBytes, environment: Self.environment(environment))
    }

    /// Runs the binary (or `executable`) to its end with exactly `environment`, in
    /// `directory`, with `stdin` as its standard input (nil: `/dev/null`); a run longer
    /// than `timeout` is killed and fails the test. The output is not checked here: the
    /// caller records it for its own leak check.
    public static func spawn(
        _ arguments: [String], stdin: [UInt8]?, environment: [String: String], directory: String?,
        timeout: Duration, executable: String? = nil
    ) throws -> ProcessResult {
        try ChildProcess.run(
            executable ?? path(), arguments, stdin: stdin, environment: environment, directory: directory,
            timeout: timeout)
    }

    /// Starts `/bin/sh -c SCRIPT` with `$1…` = `arguments`, `CREDFILE` set to the binary
    /// and `stdin` as standard input (passwords go there, never into the script or argv).
    public static func shell(_ script: String, _ arguments: [String] = [], stdin: String = "") throws -> ChildProcess {
        try ChildProcess.start(
            "/bin/sh", ["-c", script, "sh"] + arguments, stdin: Array(stdin.utf8),
            environment: Self.environment(["CREDFILE": path()]))
    }
}

extension ChildProcess {
    /// Waits for the child (``wait(timeout:)``: a hung child is killed and fails the test)
    /// and checks that its output holds no password and no hash string.
    public func checkedWait(
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
    public var message: String {
        stderr.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !($0.hasPrefix("credfile: warning: ") && $0.contains(" iterations is below the minimum of ")) }
            .joined(separator: "\n")
    }

    /// Whether every line on standard error has the `credfile: ` form of SPEC §5.
    public var diagnosticsWellFormed: Bool {
        stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("credfile: ") }
    }
}
