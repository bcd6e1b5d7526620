import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §9 through the real binary: every login path guarded, the `failures`, `lock` and
// `unlock` commands, a guard database that cannot be used (never silently unguarded),
// many processes at once (no count lost), and the log lines through a real rsyslogd.
// The real callers (pamtester/pam_exec, Dovecot, Squid) and fail2ban: GuardIntegrationTests.

/// The guard options of a short run: delays of a fraction of a second, logs on stderr.
func guardOptions(free: Int = 2, maxFailures: Int = 100, maxDelay: String = "30") -> [String] {
    [
        "--iterations", "1000", "--free-failures", "\(free)", "--max-failures", "\(maxFailures)", "--max-delay",
        maxDelay,
        "--log", "stderr",
    ]
}

@Suite("Guarding logins through the binary (SPEC §9)", .serialized)
struct GuardCLITests {
    static let bob = ("bob", "Tangerine-River-Stone-7")

    /// A file with bob (hashed) and a legacy plaintext entry, readable only by root.
    static func file(_ session: CLISession, name: String = "app.cred") throws -> String {
        var store = CredentialStore(path: session.path(name), policy: try HashPolicy(rounds: 1000))
        store.passwordPolicy = .permissive
        try store.register(username: bob.0, password: Password(session.password(bob.1)), storage: .hashed)
        try store.register(
            username: "legacy", password: Password(session.password("Legacy-Pass-2026")), storage: .plaintext)
        return store.path
    }

    /// `credfile verify FILE USER` with `password` on stdin.
    static func verify(_ session: CLISession, _ file: String, _ user: String, _ password: String, _ options: [String])
        throws -> CLIResult
    {
        try BuiltBinary.run(["verify", file, user] + options, stdin: Array((password + "\n").utf8), in: session)
    }

    /// `credfile failures FILE [USER] --json`, parsed.
    /// (Give it the callers' guard options: the delay it shows depends on them, as it would
    /// on a host where both read /etc/credfile.conf.)
    static func failures(_ session: CLISession, _ file: String, _ extra: [String] = []) throws -> [[String: Any]] {
        let result = try BuiltBinary.run(["failures", file] + extra + ["--json"], stdin: nil, in: session)
        try #require(result.status == 0, "\(result)")
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(parsed as? [[String: Any]], "\(result)")
    }

    @Test(
        "verify: throttled after the free failures (the right password denied alike, not counted), reset by failures --reset"
    )
    func verifyThrottled() throws {
        try withSession { session in
            let file = try Self.file(session)
            let options = guardOptions(free: 2)
            let wrong = try Self.verify(session, file, Self.bob.0, "wrong-password-1", options)
            #expect(wrong.status == 1)
            #expect(
                wrong.stderr.contains(
                    "authentication failure; service=verify user=bob rhost= file=\(file) reason=wrong-password"),
                "\(wrong)")
            // Two free failures; the delays after the 3rd and 4th (1 and 2 s) waited out;
            // the right password within the 4 s after the 5th.
            _ = try Self.verify(session, file, Self.bob.0, "wrong-password-2", options)
            _ = try Self.verify(session, file, Self.bob.0, "wrong-password-3", options)
            usleep(1_100_000)
            _ = try Self.verify(session, file, Self.bob.0, "wrong-password-4", options)
            usleep(2_100_000)
            _ = try Self.verify(session, file, Self.bob.0, "wrong-password-5", options)
            let throttled = try Self.verify(session, file, Self.bob.0, Self.bob.1, options)
            #expect(throttled.status == 1 && throttled.stdout == wrong.stdout)
            #expect(throttled.stderr.contains("reason=throttled"), "\(throttled)")
            // The denial the caller sees is the same as for a wrong password (the log line aside).
            func withoutLog(_ text: String) -> [Substring] {
                text.split(separator: "\n").filter { !$0.contains("authentication") }
            }
            #expect(withoutLog(throttled.stderr) == withoutLog(wrong.stderr))
            let records = try Self.failures(session, file, options)
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(Set(record.keys) == ["user", "failures", "last_failure", "throttled_until", "locked_out"])
            #expect(record["user"] as? String == "bob" && record["failures"] as? Int == 5)
            #expect(record["locked_out"] as? Bool == false)
            let last = try #require(record["last_failure"] as? String)
            #expect(
                last.count == 20 && last.hasSuffix("Z") && last.dropFirst(10).first == "T", "RFC 3339 in UTC: \(last)")
            #expect(record["throttled_until"] is String)
            let reset = try BuiltBinary.run(["failures", file, Self.bob.0, "--reset"], stdin: nil, in: session)
            #expect(reset.status == 0, "\(reset)")
            #expect(try Self.failures(session, file).isEmpty)
            #expect(try Self.verify(session, file, Self.bob.0, Self.bob.1, options).status == 0)
        }
    }

    @Test(
        "lockout at max-failures: every attempt denied until unlock; an unknown name is locked out alike; above 100 is a usage error"
    )
    func lockout() throws {
        try withSession { session in
            let file = try Self.file(session)
            let options = guardOptions(free: 3, maxFailures: 3)
            for user in [Self.bob.0, "mallory"] {
                for n in 1...3 { _ = try Self.verify(session, file, user, "wrong-\(n)", options) }
                let after = try Self.verify(session, file, user, Self.bob.1, options)
                #expect(after.status == 1 && after.stderr.contains("reason=locked-out"), "\(user): \(after)")
            }
            let first = try Self.verify(session, file, "carl", "x", guardOptions(free: 3, maxFailures: 1))
            #expect(first.stderr.contains("locked out; user=carl failures=1"), "\(first)")
            let records = try Self.failures(session, file)
            #expect(Set(records.compactMap { $0["user"] as? String }) == ["bob", "mallory", "carl"])
            #expect(records.allSatisfy { $0["locked_out"] as? Bool == true && $0["throttled_until"] is NSNull })
            let unlock = try BuiltBinary.run(["unlock", file, Self.bob.0], stdin: nil, in: session)
            #expect(unlock.status == 0, "\(unlock)")
            #expect(try Self.verify(session, file, Self.bob.0, Self.bob.1, options).status == 0)
            #expect(try Self.failures(session, file, ["mallory"]).count == 1)
            let over = try BuiltBinary.run(
                ["verify", file, Self.bob.0, "--max-failures", "101"], stdin: Array("x\n".utf8), in: session)
            #expect(over.status == 2, "\(over)")
        }
    }

    @Test("the login screen is guarded: throttled, the right password gets the same wrong-credentials answer")
    func loginScreen() throws {
        try withSession { session in
            let file = try Self.file(session)
            let options = guardOptions(free: 0, maxDelay: "60")
            func login(_ password: String) throws -> CLIResult {
                try BuiltBinary.run(
                    ["login", file] + options, stdin: Array("\(Self.bob.0)\n\(password)\n".utf8), in: session)
            }
            // Delays of 1 and 2 s waited out; the right password within the 4 s after the 3rd failure.
            let first = try login("wrong-password-1")
            usleep(1_100_000)
            let second = try login("wrong-password-2")
            usleep(2_100_000)
            _ = try login("wrong-password-3")
            let throttled = try login(Self.bob.1)
            #expect(first.status == 1 && second.status == 1 && throttled.status == 1, "\(throttled)")
            #expect(throttled.stdout == first.stdout, "the throttled answer differs from a wrong password's")
            #expect(
                throttled.stderr.contains("service=login user=bob rhost= file=\(file) reason=throttled"), "\(throttled)"
            )
        }
    }

    @Test("--no-guard: no database, and the log says guarding is off")
    func noGuard() throws {
        try withSession { session in
            let file = try Self.file(session)
            let result = try Self.verify(session, file, Self.bob.0, "wrong", guardOptions() + ["--no-guard"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("guard disabled; service=verify file=\(file)"), "\(result)")
            #expect(!fileExists(file + ".guard.db"))
        }
    }

    /// The first logins after an install: several processes (pam_exec starts one per
    /// login) open a state database that does not exist yet, each switching it to WAL and
    /// migrating it. SQLite answered some of them "database is locked" at once, without
    /// its busy wait: a temporary failure for a login that had none (exit 5 in CI's
    /// SecondFactorCLITests race, 6 of 320 openers in a loop beside it; on an idle machine
    /// the race seldom shows, so GuardStateTests/busyAtOpenIsRetried checks the rule too).
    @Test("8 processes opening a new state database at once all succeed, 20 times over")
    func racingFirstOpen() throws {
        try withSession { session in
            let file = try Self.file(session)
            for round in 0..<20 {
                for suffix in ["", "-wal", "-shm"] { unlink(file + ".guard.db" + suffix) }
                let racers = try (0..<8).map { _ in
                    try CLI.start(["state", file, "--init"], stdin: "", environment: CLI.environment())
                }
                let results = try racers.map { try $0.checkedWait() }
                #expect(results.allSatisfy { $0.status == 0 }, "round \(round): \(results.filter { $0.status != 0 })")
            }
        }
    }

    @Test(
        "a guard database that cannot be used: exit 5 (verify, pam), 111 (checkpassword), BH (helper), the log naming state"
    )
    func unusableDatabase() throws {
        try withSession { session in
            let file = try Self.file(session)
            let state = session.path("missing-directory/app.guard.db")
            let options = guardOptions() + ["--state", state]
            let verify = try Self.verify(session, file, Self.bob.0, Self.bob.1, options)
            #expect(verify.status == 5 && verify.stderr.contains("state"), "\(verify)")
            #expect(
                verify.stderr.contains("guard database unusable, login refused; service=verify user=bob"), "\(verify)")
            var environment = BuiltBinary.environment()
            environment["PAM_USER"] = Self.bob.0
            environment["PAM_TYPE"] = "auth"
            let pam = try BuiltBinary.run(
                ["pam", file] + options, stdin: Array(Self.bob.1.utf8), in: session, environment: environment)
            #expect(pam.status == 5 && pam.stderr.contains("state="), "\(pam)")
            let helper = try BuiltBinary.run(
                ["helper", file, "--protocol", "squid"] + options, stdin: Array("bob \(Self.bob.1)\n".utf8), in: session
            )
            #expect(helper.status == 0 && helper.stdout.hasPrefix("BH message=\""), "\(helper)")
            #expect(helper.stderr.contains("state="), "\(helper)")
            // A FILE that is not there: the I/O error of an unguarded check, and no database beside it.
            let missing = try Self.verify(session, session.path("missing.cred"), Self.bob.0, Self.bob.1, guardOptions())
            #expect(missing.status == 5 && missing.stderr.contains("cannot open"), "\(missing)")
            #expect(!fileExists(session.path("missing.cred.guard.db")))
        }
    }

    @Test(
        "run as a user who may read FILE but not write beside it: every login a temporary failure, never unguarded",
        .enabled(if: isRoot && getpwnam("nobody") != nil, "needs root to run as nobody"))
    func unprivilegedCaller() throws {
        try withSession { session in
            let file = try Self.file(session)
            chmod(session.directory, 0o755)
            chmod(file, 0o644)
            let credfile = try Integration.credfile(in: session)
            let setpriv = try ExternalTool.path("setpriv")
            let asNobody = [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", credfile, "verify", file, Self.bob.0,
            ]
            let result = try session.spawn(setpriv, asNobody + guardOptions(), stdin: Array((Self.bob.1 + "\n").utf8))
            #expect(result.status == 5, "\(result)")
            #expect(result.stderr.contains("state"), "\(result)")
            #expect(!fileExists(file + ".guard.db"))
            // With a state database it may write, the same user logs in.
            let state = session.path("nobody-state")
            mkdir(state, 0o700)
            chown(state, getpwnam("nobody")!.pointee.pw_uid, getpwnam("nobody")!.pointee.pw_gid)  // checked above
            let good = try session.spawn(
                setpriv, asNobody + guardOptions() + ["--state", state + "/app.guard.db"],
                stdin: Array((Self.bob.1 + "\n").utf8))
            #expect(good.status == 0, "\(good)")
        }
    }

    @Test("many processes at once lose no count: 8 Squid helper processes x 50 failures = exactly 400")
    func concurrentProcesses() throws {
        try withSession { session in
            let file = try Self.file(session)
            let names = ["ann", "ben", "cat", "dan"]
            let options = [
                "--iterations", "1000", "--free-failures", "100", "--max-failures", "100", "--max-delay", "0",
                "--log", "stderr", "--jobs", "4",
            ]
            // Each process: 50 requests with channel IDs (answered on 4 threads), the names in turn.
            let children = try (0..<8).map { process in
                let lines = (0..<50).map { i in "\(i) \(names[(process * 50 + i) % 4]) wrong-\(process)-\(i)\n" }
                    .joined()
                return try ChildProcess.start(
                    try BuiltProduct.path("credfile"), ["helper", file, "--protocol", "squid"] + options,
                    stdin: Array(lines.utf8), environment: BuiltBinary.environment())
            }
            var logged = 0
            for child in children {
                let result = try child.wait(timeout: .seconds(300))
                #expect(result.status == 0, "\(result)")
                #expect(
                    result.stdout.split(separator: "\n").count == 50 && !result.stdout.contains("OK")
                        && !result.stdout.contains("BH"))
                logged += result.stderr.split(separator: "\n").filter { $0.contains("reason=unknown-user") }.count
            }
            let records = try Self.failures(session, file)
            #expect(records.compactMap { $0["failures"] as? Int }.reduce(0, +) == 400, "\(records)")
            #expect(Set(records.compactMap { $0["user"] as? String }) == Set(names))
            #expect(records.allSatisfy { $0["failures"] as? Int == 100 && $0["locked_out"] as? Bool == true })
            #expect(logged == 400)
        }
    }

    @Test(
        "a process per login keeps the database's log bounded: 2,000 logins, the log never past its limit, every failure counted"
    )
    func logDoesNotGrow() throws {
        try withSession { session in
            let file = try Self.file(session)
            let options = ["--iterations", "1000", "--free-failures", "100", "--max-delay", "0", "--log", "none"]
            let names = (0..<50).map { "someone-\($0)" }
            // Each process opens the database alone, adds its failure to the log and closes
            // it without a checkpoint; the commit that takes the log to logPages pages
            // empties it. A failure writes 2 or 3 pages of 4 KiB (+ 24 bytes a frame): a
            // log that nothing emptied would hold some 16 MB after 2,000 logins.
            let frame = 24 + 4096
            let limit = 32 + (Int(GuardDatabase.logPages) + 8) * frame
            var largest = 0
            for n in 0..<2000 {
                let result = try Self.verify(session, file, names[n % names.count], "wrong", options)
                try #require(result.status == 1, "login \(n): \(result)")
                largest = max(largest, Int(try statInfo(file + ".guard.db-wal").st_size))
            }
            #expect(largest <= limit, "the write-ahead log reached \(largest) bytes (limit \(limit))")
            // it was used, not emptied at every close
            #expect(largest > limit / 2, "the log never filled: \(largest) bytes")
            // 50 names: the database holds a few pages beyond its schema's (one page a table
            // and an index, more as §11–§14 add tables), however many logins went by. The
            // schema's size is that of a database with one failure in it.
            let fresh = try Self.file(session, name: "fresh.txt")
            try #require(try Self.verify(session, fresh, names[0], "wrong", options).status == 1)
            let schema = try statInfo(fresh + ".guard.db").st_size
            let size = try statInfo(file + ".guard.db").st_size
            #expect(size <= schema + 16 * 4096, "\(size) bytes, \(schema) for the schema and one failure")
            let records = try Self.failures(session, file, options)
            #expect(records.count == names.count)
            #expect(records.allSatisfy { $0["failures"] as? Int == 40 }, "\(records)")
        }
    }

    @Test(
        "a reader that keeps an old snapshot: logins do not wait for it, and the first commit after it ends empties the log"
    )
    func stuckReader() throws {
        try withSession { session in
            let file = try Self.file(session)
            let options = ["--iterations", "1000", "--free-failures", "100", "--max-delay", "0", "--log", "none"]
            let log = file + ".guard.db-wal"
            _ = try Self.verify(session, file, "someone-0", "wrong", options)
            // A read transaction held open (an admin's sqlite3 shell inside BEGIN, a stopped
            // process): no checkpoint may copy the frames after its snapshot.
            let reader = try SQLiteConnection(path: file + ".guard.db", busyTimeout: GuardDatabase.busyTimeout)
            try reader.leaveLogOnClose()
            try reader.execute("BEGIN")
            let read = try reader.prepare("SELECT count FROM names")
            #expect(try read.step())
            let limit = 32 + (Int(GuardDatabase.logPages) + 8) * (24 + 4096)
            // Past the log's limit every commit tries to empty it; none may wait out the busy
            // timeout (10 s) for the reader: each login has 5 s.
            var n = 1
            while try statInfo(log).st_size <= limit && n < 400 {
                let result = try BuiltBinary.run(
                    ["verify", file, "someone-\(n % 50)"] + options, stdin: Array("wrong\n".utf8), in: session,
                    timeout: .seconds(5))
                try #require(result.status == 1, "login \(n): \(result)")
                n += 1
            }
            #expect(try statInfo(log).st_size > limit, "the reader held the log back")
            for m in n..<(n + 10) {
                let result = try BuiltBinary.run(
                    ["verify", file, "someone-\(m % 50)"] + options, stdin: Array("wrong\n".utf8), in: session,
                    timeout: .seconds(5))
                try #require(result.status == 1, "login \(m): \(result)")
            }
            read.reset()
            try reader.execute("COMMIT")
            _ = try Self.verify(session, file, "someone-0", "wrong", options)
            #expect(try statInfo(log).st_size == 0, "the log was not emptied once the reader was done")
            #expect(
                try Self.failures(session, file, options).compactMap { $0["failures"] as? Int }.reduce(0, +) == n + 11)
        }
    }

    @Test(
        "lock and unlock: list shows locked, the right password is denied, export refuses it; unlock restores the login"
    )
    func lockAndUnlock() throws {
        try withSession { session in
            let file = try Self.file(session)
            for user in [Self.bob.0, "legacy"] {
                let locked = try BuiltBinary.run(["lock", file, user, "--iterations", "1000"], stdin: nil, in: session)
                #expect(locked.status == 0, "\(locked)")
            }
            let list = try BuiltBinary.run(["list", file], stdin: nil, in: session)
            #expect(list.stdout == "bob\tlocked pbkdf2-sha256 1000\nlegacy\tlocked pbkdf2-sha256 1000\n", "\(list)")
            let denied = try Self.verify(session, file, Self.bob.0, Self.bob.1, guardOptions())
            #expect(denied.status == 1 && denied.stderr.contains("reason=locked"), "\(denied)")
            let check = try BuiltBinary.run(["check", file, "--no-guard"], stdin: nil, in: session)
            #expect(check.status == 0, "\(check)")
            let export = try BuiltBinary.run(["export", file, "--to", "ldif"], stdin: nil, in: session)
            #expect(
                export.status == 4 && export.stderr.contains(":1: error: cannot export user 'bob': locked entry"),
                "\(export)")
            #expect(try BuiltBinary.run(["lock", file, "nobody"], stdin: nil, in: session).status == 3)
            #expect(try BuiltBinary.run(["unlock", file, "nobody"], stdin: nil, in: session).status == 3)
            for (user, password) in [Self.bob, ("legacy", "Legacy-Pass-2026")] {
                #expect(try BuiltBinary.run(["unlock", file, user], stdin: nil, in: session).status == 0)
                #expect(try Self.verify(session, file, user, password, guardOptions()).status == 0, "\(user)")
            }
        }
    }

    @Test(
        "check reports a guard database that FILE's group may not write",
        .enabled(if: isRoot && getgrnam("proxy") != nil, "needs root and the proxy group"))
    func checkReportsGuardDatabase() throws {
        try withSession { session in
            let file = try Self.file(session)
            chown(file, 0, getgrnam("proxy")!.pointee.gr_gid)  // checked above
            chmod(file, 0o640)
            let check = try BuiltBinary.run(["check", file], stdin: nil, in: session)
            #expect(check.stdout.contains("\(file): warning: the file can be read by its group"), "\(check)")
            #expect(check.stdout.contains("set state"), "\(check)")
            let unguarded = try BuiltBinary.run(["check", file, "--no-guard"], stdin: nil, in: session)
            #expect(!unguarded.stdout.contains("guard database"), "\(unguarded)")
        }
    }
}
