import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// `credfile checkpassword` with fd 3 as qmail and Dovecot set it up, and
/// `credfile helper --protocol squid` spawned and spoken to exactly as Squid does
/// (a pipe on each side, URL-escaped fields, channel IDs with `concurrency=N`).
@Suite struct IntegrationHelperTests {
    static let alice = ("alice", "Alice-Pass-2026!")

    // MARK: checkpassword

    /// Runs `credfile checkpassword ARGS` through /bin/sh with `request` on fd 3 (from a
    /// file), as Dovecot does with a pipe; `request == nil` leaves fd 3 closed.
    static func checkpassword(_ arguments: [String], request: [UInt8]?, in session: CLISession) throws -> CLIResult {
        let credfile = try BuiltProduct.path("credfile")
        var script = "exec \"$0\" checkpassword \"$@\""
        if let request {
            try session.write("request", bytes: request)
            script += " 3<\(session.path("request"))"
        } else {
            script += " 3<&-"
        }
        return try Integration.run(
            "/bin/sh", ["-c", script, credfile] + arguments, environment: BuiltBinary.environment(), in: session)
    }

    struct FramingCase: CustomTestStringConvertible, Sendable {
        let name: String
        let request: [UInt8]?
        let status: Int32
        var testDescription: String { name }
    }

    static func request(_ user: String, _ password: String, _ rest: [UInt8] = [0]) -> [UInt8] {
        Array(user.utf8) + [0] + Array(password.utf8) + [0] + rest
    }

    static let framingCases: [FramingCase] = [
        FramingCase(name: "Dovecot's user\\0password\\0\\0", request: request("alice", "Alice-Pass-2026!"), status: 0),
        FramingCase(
            name: "qmail's timestamp",
            request: request("alice", "Alice-Pass-2026!", Array("<1234.5678@host>".utf8) + [0]), status: 0),
        FramingCase(name: "no timestamp terminator", request: request("alice", "Alice-Pass-2026!", []), status: 0),
        FramingCase(name: "wrong password", request: request("alice", "Alice-Pass-2027!"), status: 1),
        FramingCase(name: "unknown user", request: request("mallory", "Alice-Pass-2026!"), status: 1),
        FramingCase(name: "empty password", request: request("alice", ""), status: 1),
        FramingCase(
            name: "exactly 512 bytes",
            request: request("alice", "Alice-Pass-2026!", [UInt8](repeating: 0x30, count: 512 - 23)), status: 0),
        FramingCase(
            name: "513 bytes: misuse",
            request: request("alice", "Alice-Pass-2026!", [UInt8](repeating: 0x30, count: 513 - 23)), status: 2),
        FramingCase(name: "no NUL at all: misuse", request: Array("alice".utf8), status: 2),
        FramingCase(
            name: "no NUL after the password: misuse",
            request: Array("alice".utf8) + [0] + Array("Alice-Pass-2026!".utf8), status: 2),
        FramingCase(name: "empty login: misuse", request: [0] + Array("Alice-Pass-2026!".utf8) + [0, 0], status: 2),
        FramingCase(name: "empty request: misuse", request: [], status: 2),
        FramingCase(
            name: "login not UTF-8: misuse", request: [0xFF, 0xFE, 0] + Array("Alice-Pass-2026!".utf8) + [0, 0],
            status: 2),
        FramingCase(name: "fd 3 closed: misuse", request: nil, status: 2),
    ]

    @Test("fd 3 framing and the caller's exit codes", arguments: framingCases)
    func checkpasswordFraming(_ row: FramingCase) throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            _ = session.password("Alice-Pass-2027!")
            let result = try Self.checkpassword(
                [
                    "--iterations", "\(Integration.rounds)", file, "/bin/sh", "-c",
                    "echo granted \"$USER\" \"$0\" \"$1\"", "--json", "x y",
                ],
                request: row.request, in: session)
            #expect(result.status == row.status, "\(result)")
            if row.status == 0 {
                // PROG ran with every argument after it, options-looking ones included.
                #expect(result.stdout == "granted alice --json x y\n", "\(result)")
            } else {
                #expect(result.stdout.isEmpty, "\(result)")
            }
            if row.status == 1 { #expect(result.stderr.isEmpty, "\(result)") }
            if row.status == 2 { expectErrorFormat(result) }
        }
    }

    @Test("temporary failures exit 111: FILE missing, PROG that cannot be run")
    func checkpasswordTemporaryFailure() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let missing = try Self.checkpassword(
                [session.path("missing.txt"), "/bin/true"], request: Self.request("alice", "Alice-Pass-2026!"),
                in: session)
            #expect(missing.status == 111, "\(missing)")
            expectErrorFormat(missing)
            let noProgram = try Self.checkpassword(
                ["--iterations", "\(Integration.rounds)", file, session.path("no-such-program")],
                request: Self.request("alice", "Alice-Pass-2026!"), in: session)
            #expect(noProgram.status == 111, "\(noProgram)")
            let noProg = try Self.checkpassword([file], request: Self.request("alice", "Alice-Pass-2026!"), in: session)
            expectUsageError(noProg)
        }
    }

    // MARK: Squid's helper protocol

    /// The helper as Squid runs it: both ends are pipes; lines are written one by one and
    /// answers read as they come.
    final class SquidHelperProcess {
        let pid: pid_t
        /// The write end of its standard input and the read end of its standard output.
        private var input: Int32
        private let output: Int32
        private var pending: [UInt8] = []
        private var status: Int32?

        /// Starts `credfile helper ARGUMENTS --protocol squid`, through `launcher` when
        /// one is given (a program and its arguments that exec the rest, such as
        /// `prlimit --nofile=7 --`).
        init(_ arguments: [String], launcher: [String] = []) throws {
            _ = BuiltBinary.ignoreBrokenPipes  // a helper that exits early gives EPIPE, not SIGPIPE
            // Close-on-exec, so no child (of this or a parallel test) holds an end open.
            var toChild: [Int32] = [-1, -1]
            var fromChild: [Int32] = [-1, -1]
            guard pipe(&toChild) == 0 else { throw HarnessError.system("pipe") }
            guard pipe(&fromChild) == 0 else {
                toChild.forEach { close($0) }
                throw HarnessError.system("pipe")
            }
            for end in toChild + fromChild { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            defer {
                close(toChild[0])
                close(fromChild[1])
            }
            do {
                let command =
                    launcher + [try BuiltProduct.path("credfile"), "helper"] + arguments + ["--protocol", "squid"]
                pid = try ChildProcess.spawn(
                    command[0], Array(command.dropFirst()), environment: BuiltBinary.environment(), newSession: false
                ) { actions in
                    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
                    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
                    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
                }
            } catch {
                close(toChild[1])
                close(fromChild[0])
                throw error
            }
            input = toChild[1]
            output = fromChild[0]
        }

        func send(_ line: String) throws { try send(Array(line.utf8)) }
        func send(_ bytes: [UInt8]) throws {
            var rest = (bytes + [0x0A])[...]
            while !rest.isEmpty {
                let n = rest.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw HarnessError.system("write", "to the helper") }
                rest = rest.dropFirst(n)
            }
        }

        /// The next answer line (without LF); fails after 60 s.
        func answer() throws -> String {
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                if let lf = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<lf], as: UTF8.self)
                    pending.removeSubrange(...lf)
                    return line
                }
                var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                guard ContinuousClock.now < deadline, poll(&poller, 1, 1000) >= 0 else {
                    throw HarnessError("no answer from the helper")
                }
                guard poller.revents != 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = read(output, &buffer, buffer.count)
                guard n > 0 else { throw HarnessError("the helper closed its output") }
                pending += buffer[..<n]
            }
        }

        /// Closes its input (end of input) and waits for its exit status (128 + N for signal N).
        func finish() -> Int32 {
            if let status { return status }
            if input >= 0 { close(input) }
            input = -1
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            let (exitStatus, signal) = ChildProcess.decode(waitStatus: raw)
            status = exitStatus ?? 128 + (signal ?? 0)
            return status ?? -1
        }

        deinit {
            if status == nil {
                kill(pid, SIGKILL)
                _ = finish()
            }
            close(output)
        }
    }

    @Test(
        "without concurrency: in-order OK / ERR / BH, URL-escaped fields, no difference between unknown user and wrong password"
    )
    func squidSequential() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(
                in: session, users: [Self.alice, ("josé luis", "p@ss w:rd ñ 100%")])
            let helper = try SquidHelperProcess(["--iterations", "\(Integration.rounds)", file])
            let rows: [(String, String)] = [
                ("alice Alice-Pass-2026%21", "OK"),
                ("alice Alice-Pass-2026!", "OK"),  // unescaped bytes stand for themselves
                ("alice Alice-Pass-2027%21", "ERR"),
                ("mallory Alice-Pass-2026%21", "ERR"),
                ("jos%C3%A9%20luis p%40ss%20w%3Ard%20%C3%B1%20100%25", "OK"),
                ("jos%c3%a9%20luis p%40ss%20w%3ard%20%c3%b1%20100%25", "OK"),  // lowercase hex
                ("ali Alice-Pass-2026%21", "ERR"),
                ("alice ", "ERR"),
                ("alice Alice-Pass-2026%21%00", "ERR"),  // HMAC's zero padding must not let this in
                ("alice%ZZ Alice", "BH message=\"bad %-escape in the user name\""),
                ("alice Alice%2", "BH message=\"bad %-escape in the password\""),
                ("alice", "BH message=\"expected 'user password' (URL-escaped)\""),
                ("", "BH message=\"expected 'user password' (URL-escaped)\""),
                ("x alice Alice-Pass-2026%21", "BH message=\"the channel ID is not a number\""),
                ("alice Alice-Pass-2026%21", "OK"),  // still running after bad lines
            ]
            for (line, expected) in rows {
                try helper.send(line)
                #expect(try helper.answer() == expected, "for \(line.debugDescription)")
            }
            #expect(helper.finish() == 0)
        }
    }

    @Test("concurrency: channel IDs repeated, answers matched by ID, all answered before EOF ends it")
    func squidConcurrent() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let helper = try SquidHelperProcess(["--iterations", "\(Integration.rounds)", file])
            var expected: [String: String] = [:]
            for id in 0..<40 {
                switch id % 4 {
                case 0: try helper.send("\(id) alice Alice-Pass-2026%21"); expected["\(id)"] = "OK"
                case 1: try helper.send("\(id) alice wrong-one"); expected["\(id)"] = "ERR"
                case 2: try helper.send("\(id) mallory Alice-Pass-2026%21"); expected["\(id)"] = "ERR"
                default:
                    try helper.send("\(id) alice %G0");
                    expected["\(id)"] = "BH message=\"bad %-escape in the password\""
                }
            }
            var seen: [String: String] = [:]
            for _ in 0..<40 {
                let answer = try helper.answer()
                let parts = answer.split(separator: " ", maxSplits: 1).map(String.init)
                try #require(parts.count == 2, "answer \(answer.debugDescription)")
                #expect(seen.updateValue(parts[1], forKey: parts[0]) == nil, "channel \(parts[0]) answered twice")
            }
            #expect(seen == expected)
            #expect(helper.finish() == 0)
        }
    }

    @Test(
        "--group (SPEC §13): checkpassword runs PROG only for a member; the Squid helper answers ERR for a non-member and sees the group file change"
    )
    func group() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(
                in: session, users: [Self.alice, ("bob", "B0b-Pass-2026!~")])
            let groups = try session.write("app.htgroup", "mail: alice\n")
            let options = ["--iterations", "\(Integration.rounds)", "--groups", groups, "--group", "mail"]
            let member = try Self.checkpassword(
                options + [file, "/bin/true"], request: Self.request("alice", "Alice-Pass-2026!"), in: session)
            #expect(member.status == 0, "\(member)")
            let outsider = try Self.checkpassword(
                options + ["--log", "stderr", file, "/bin/true"], request: Self.request("bob", "B0b-Pass-2026!~"),
                in: session)
            #expect(outsider.status == 1 && outsider.stderr.contains("reason=not-in-group"), "\(outsider)")

            let helper = try SquidHelperProcess(options + [file])
            func ask(_ line: String) throws -> String {
                try helper.send("3 " + line)
                return try helper.answer()
            }
            #expect(try ask("alice Alice-Pass-2026%21") == "3 OK")
            #expect(try ask("bob B0b-Pass-2026%21~") == "3 ERR")
            try session.write("app.htgroup.new", "mail: alice bob\n")
            #expect(rename(session.path("app.htgroup.new"), groups) == 0)
            #expect(try ask("bob B0b-Pass-2026%21~") == "3 OK", "a member added to the group file was not seen")
            #expect(helper.finish() == 0)
        }
    }

    @Test("FILE changed while running: seen at the next request (added, changed, removed user)")
    func squidReload() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            let store = CredentialStore(path: file, policy: try HashPolicy(rounds: Integration.rounds))
            let helper = try SquidHelperProcess(["--iterations", "\(Integration.rounds)", file])
            func ask(_ line: String) throws -> String {
                try helper.send("7 " + line)
                return try helper.answer()
            }
            #expect(try ask("bob B0b-Pass-2026%21~") == "7 ERR")
            try store.register(
                username: "bob", password: Password(session.password("B0b-Pass-2026!~")), storage: .hashed)
            #expect(try ask("bob B0b-Pass-2026%21~") == "7 OK")
            try store.changePassword(
                username: "alice", to: Password(session.password("Al1ce-New-2026!")), storage: .hashed)
            #expect(try ask("alice Alice-Pass-2026%21") == "7 ERR")
            #expect(try ask("alice Al1ce-New-2026%21") == "7 OK")
            try store.remove(username: "bob")
            #expect(try ask("bob B0b-Pass-2026%21~") == "7 ERR")
            unlink(file)
            #expect(try ask("alice Al1ce-New-2026%21") == "7 BH message=\"cannot read the credential file\"")
            #expect(helper.finish() == 0)
        }
    }

    @Test("helper needs --protocol squid")
    func helperProtocolOption() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Self.alice])
            expectUsageError(try BuiltBinary.run(["helper", file], stdin: nil, in: session))
            expectUsageError(try BuiltBinary.run(["helper", file, "--protocol", "ncsa"], stdin: nil, in: session))
            let empty = try BuiltBinary.run(["helper", file, "--protocol", "squid"], stdin: [], in: session)
            #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty)")
        }
    }
}
