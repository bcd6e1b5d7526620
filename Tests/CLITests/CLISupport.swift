import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import credfile

#if canImport(Glibc)
import Glibc
#endif

// MARK: - What a run produced

/// The exit status and the two output streams of one run, in-process or as a process.
struct CLIResult: Equatable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Every line of standard error (without the final empty piece).
    var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
    /// Every line of standard output (without the final empty piece).
    var stdoutLines: [Substring] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---" }
}

extension CLIResult {
    /// What a child process did, its status as a shell reports it (128 + N for signal N).
    init(_ result: ProcessResult) {
        self.init(status: result.shellStatus, stdout: result.stdout, stderr: result.stderr)
    }
}

// MARK: - A scratch directory, and a record of everything printed in it

/// A temporary directory for one test, the passwords the test used, and every text the
/// CLI printed (stdout, stderr, prompts), so the test can check at the end that no
/// password was ever printed.
final class CLISession {
    private let temporary: TemporaryDirectory
    private(set) var passwords: [String] = []
    private(set) var printed: [String] = []

    init() throws {
        _ = BuiltBinary.ignoreBrokenPipes
        temporary = try TemporaryDirectory.make(prefix: "credfile-cli")
    }

    deinit { temporary.remove() }

    /// The session's directory (absolute, symlink-free).
    var directory: String { temporary.path }

    /// The absolute path of `name` in the scratch directory.
    func path(_ name: String) -> String { directory + "/" + name }

    /// Remembers `password` as one that must never be printed, and returns it.
    func password(_ password: String) -> String {
        passwords.append(password)
        return password
    }

    /// Writes `content` to `name` (exact bytes) and returns its path.
    @discardableResult
    func write(_ name: String, _ content: String) throws -> String {
        try write(name, bytes: Array(content.utf8))
    }

    @discardableResult
    func write(_ name: String, bytes: [UInt8]) throws -> String {
        try writeBytes(path(name), bytes)
        // 0600, as a credential file should be: `check` warns about any other mode (SPEC §5).
        chmod(path(name), 0o600)
        return path(name)
    }

    /// The bytes of `name`, or nil when it cannot be read.
    func bytes(_ name: String) -> [UInt8]? { try? readBytes(path(name)) }

    /// The text of `name` ("" when missing).
    func text(_ name: String) -> String { String(decoding: bytes(name) ?? [], as: UTF8.self) }

    /// Records a text the CLI showed (for the final leak check).
    func record(_ texts: String...) { printed.append(contentsOf: texts) }

    /// Runs `credfile arguments` in-process.
    /// - Parameters:
    ///   - stdin: the lines of standard input (without endings).
    ///   - tty: when given, standard input is a terminal and these are the answers typed
    ///     at the no-echo prompts, in order.
    ///   - environment: the environment (English by default).
    @discardableResult
    func run(
        _ arguments: [String], stdin: [String] = [], tty: [String]? = nil,
        environment: [String: String] = ["LANG": "C"]
    ) -> CLIResult {
        let fake = FakeTerminal(
            input: stdin.map { Array($0.utf8) }, answers: (tty ?? []).map { Array($0.utf8) },
            isTerminal: tty != nil, environment: environment)
        let status = CredFileCLI.run(arguments, terminal: fake.terminal)
        record(fake.stdout, fake.stderr, fake.prompts.joined())
        lastPrompts = fake.prompts
        lastUnreadInput = fake.input.count
        lastUnusedAnswers = fake.answers.count
        return CLIResult(status: status.rawValue, stdout: fake.stdout, stderr: fake.stderr)
    }

    /// The no-echo prompts shown by the last in-process run.
    private(set) var lastPrompts: [String] = []
    /// Lines of standard input the last run left unread.
    private(set) var lastUnreadInput = 0
    /// Answers to prompts the last run did not ask for.
    private(set) var lastUnusedAnswers = 0

    /// Checks that nothing printed in this session contains a password it used, or one
    /// of the canary strings.
    func expectNothingLeaked(sourceLocation: SourceLocation = #_sourceLocation) {
        for text in printed {
            for secret in passwords + Canary.all where !secret.isEmpty {
                #expect(
                    !text.contains(secret), "printed \(secret.debugDescription) in: \(text)",
                    sourceLocation: sourceLocation)
            }
        }
    }
}

/// Runs `body` with a fresh session, then checks that no password leaked.
func withSession(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (CLISession) throws -> Void
) throws {
    let session = try CLISession()
    defer { session.expectNothingLeaked(sourceLocation: sourceLocation) }
    try body(session)
}

// MARK: - A fake terminal for in-process runs

/// Captures standard output and error, feeds standard input line by line, and answers
/// the no-echo prompts when it plays a terminal.
final class FakeTerminal {
    var input: [[UInt8]]
    var answers: [[UInt8]]
    let isTerminal: Bool
    let environment: [String: String]
    var stdout = ""
    var stderr = ""
    var prompts: [String] = []

    init(input: [[UInt8]], answers: [[UInt8]], isTerminal: Bool, environment: [String: String]) {
        self.input = input
        self.answers = answers
        self.isTerminal = isTerminal
        self.environment = environment
    }

    var terminal: Terminal {
        Terminal(
            readInputLine: { [self] limit, tooLong in
                guard !input.isEmpty else { return nil }
                guard input[0].count <= limit else { throw tooLong }  // as BoundedReader: the line stays unread
                return input.removeFirst()
            },
            readSecret: { [self] prompt, tooLong in
                prompts.append(prompt)
                guard isTerminal, !answers.isEmpty else {
                    throw CredFileError(.io, "test: a no-echo prompt nobody answers")
                }
                guard answers[0].count <= PasswordRules.maximumCount else { throw tooLong }
                return answers.removeFirst()
            },
            showPrompt: { [self] in stdout += $0 },
            inputIsTerminal: isTerminal,
            errorIsTerminal: false,
            write: { [self] in stdout += $0 },
            writeError: { [self] in stderr += $0 },
            environment: environment)
    }
}

// MARK: - Checks shared by the suites

/// A usage error: exit 2, and every line on stderr in the `credfile: …` form.
func expectUsageError(_ result: CLIResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 2, "\(result)", sourceLocation: sourceLocation)
    expectErrorFormat(result, sourceLocation: sourceLocation)
}

/// Something on stderr, each line of it starting `credfile: `.
func expectErrorFormat(_ result: CLIResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!result.stderr.isEmpty, "\(result)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasSuffix("\n"), "\(result)", sourceLocation: sourceLocation)
    for line in result.stderrLines {
        #expect(line.hasPrefix("credfile: "), "\(result)", sourceLocation: sourceLocation)
    }
}

/// Verifies `password` against `user`'s entry in `path` with the library (not the CLI).
func libraryGrants(_ path: String, _ user: String, _ password: String) throws -> Bool {
    try CredentialStore(path: path, policy: HashPolicy(rounds: 1)).authenticate(username: user, password: password)
}

// MARK: - The built executable

/// The `credfile` executable run in a session: CredFileTestSupport's one runner (``CLI``),
/// its output recorded in the session for its leak check.
enum BuiltBinary {
    /// Set once: SIGPIPE ignored in the test process (the Squid helper test writes to a
    /// child's pipe; a child that exits first must give EPIPE, not end the test run).
    static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// The minimal environment of a child: a locale and a PATH, nothing inherited.
    static func environment(lang: String = "C") -> [String: String] { CLI.minimalEnvironment(lang: lang) }

    /// Runs the executable (or `executable`) in `directory` (default: the session's),
    /// with `stdin` as its standard input (nil: `/dev/null`, so at end of input at once);
    /// a run longer than `timeout` is killed and fails the test. The output is recorded
    /// in `session` for its leak check.
    static func run(
        _ arguments: [String], stdin: [UInt8]?, in session: CLISession,
        environment: [String: String] = BuiltBinary.environment(), directory: String? = nil,
        timeout: Duration = .seconds(20), executable: String? = nil
    ) throws -> CLIResult {
        let result = CLIResult(
            try CLI.spawn(
                arguments, stdin: stdin, environment: environment, directory: directory ?? session.directory,
                timeout: timeout, executable: executable))
        session.record(result.stdout, result.stderr)
        return result
    }
}

extension CLISession {
    /// Runs `program arguments` to its end (see ``ChildProcess``; `environment` nil
    /// inherits the test's) and records what it printed for the leak check.
    func spawn(
        _ program: String, _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String]? = nil,
        directory: String? = nil, timeout: Duration = .seconds(60)
    ) throws -> CLIResult {
        let result = CLIResult(
            try ChildProcess.run(
                program, arguments, stdin: stdin, environment: environment, directory: directory, timeout: timeout))
        record(result.stdout, result.stderr)
        return result
    }
}

/// Runs the bash `script` under GNU time (`$0` is `time`, `$1` the session's directory,
/// then `arguments`); the script runs the command as `"$0" -f %M -o "$1/rss" COMMAND…`
/// and writes its exit status to `$1/status`. Gives that status and the command's peak
/// resident set in kB (Int.max when time wrote none).
func runMeasuringPeakRSS(_ script: String, _ arguments: [String], in session: CLISession) throws -> (
    status: String, kilobytes: Int
) {
    _ = try ChildProcess.run(
        try ExternalTool.path("bash"), ["-c", script, try ExternalTool.path("time"), session.directory] + arguments,
        timeout: .seconds(600))
    let status = session.text("status").trimmingCharacters(in: .whitespacesAndNewlines)
    let kilobytes = Int(session.text("rss").split(separator: "\n").last { Int($0) != nil } ?? "") ?? Int.max
    return (status, kilobytes)
}
