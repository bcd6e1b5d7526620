#if canImport(Glibc)
import Glibc
#endif

/// Finds the real programs that integration tests and cross-checks run (nginx, slapd,
/// pamtester, the PyPI peers' Python, …), so that a missing one is never a silent pass.
///
/// Use it as a trait and inside the test:
///
///     @Test(.enabled(if: ExternalTool.runnable("nginx"), Comment(rawValue: ExternalTool.skipNote("nginx"))))
///     func nginx() throws { let nginx = try ExternalTool.path("nginx") … }
///
/// Under `CI=true` a test is always enabled and ``path(_:)`` throws for a missing
/// program, so the test fails and says which; elsewhere the test is reported as
/// skipped with the note, never as passed.
public enum ExternalTool {
    /// Whether this run is CI's (`CI=true`), where every program must be there.
    public static var isCI: Bool { getenv("CI").map { String(cString: $0) == "true" } ?? false }

    /// The directories searched, after `PATH`: where Debian puts daemons and helpers.
    static let extraDirectories = ["/usr/sbin", "/sbin", "/usr/lib/squid", "/usr/lib/dovecot"]

    /// The Python that has the PyPI peers (passlib, Django, Werkzeug, bcrypt, argon2-cffi):
    /// the virtual environment `Scripts/setup.sh test` makes in this checkout's
    /// `.build/peers-venv` (Debian 12's system pip refuses to install into the system Python).
    /// An absolute path, so it goes where a program's name does:
    /// `ExternalTool.runnable(ExternalTool.peerPython)`, `try ExternalTool.path(ExternalTool.peerPython)`.
    /// Also for Python's standard library alone: `python3` on PATH may be anyone's (pyenv's shim,
    /// a hand-built one), and `FreshMachineTests` fails on a program that no setup.sh package provides.
    public static let peerPython: String = {
        // This file is Sources/_CredFileFuzzChecks/ExternalTool.swift (also when Fuzz/ builds it).
        var root = Substring(#filePath)
        for _ in 0..<3 { root = root[..<(root.lastIndex(of: "/") ?? root.startIndex)] }
        return String(root) + "/.build/peers-venv/bin/python3"
    }()

    /// The absolute path of `name`, or nil.
    public static func find(_ name: String) -> String? {
        if name.hasPrefix("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + extraDirectories {
            let candidate = directory + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// True when every program is installed, or when this is CI (so the test runs and fails).
    public static func runnable(_ names: String...) -> Bool {
        isCI || names.allSatisfy { find($0) != nil }
    }

    /// The comment a skipped test shows.
    public static func skipNote(_ names: String...) -> String {
        "not installed here: \(names.joined(separator: ", ")) (run Scripts/setup.sh test); under CI=true this test fails instead"
    }

    /// The path of `name`; throws ``Missing`` when it is not installed.
    public static func path(_ name: String) throws -> String {
        guard let found = find(name) else { throw Missing(name: name) }
        return found
    }

    /// A program a test needs is not installed.
    public struct Missing: Error, CustomStringConvertible {
        /// The program's name.
        public let name: String
        /// What to do about it.
        public var description: String { "\(name) is not installed: run Scripts/setup.sh test (CI installs it)" }
    }
}
