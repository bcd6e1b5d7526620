import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §9's guard database after a process is killed with SIGKILL in the middle of its
// work: it opens, passes SQLite's integrity check, and holds exactly the failures that
// were committed. strace kills `credfile verify` on entering a chosen system call (its
// n-th write to the log, a step of a checkpoint), so each crash lands where it is meant
// to; a second test kills processes from here at random moments.

@Suite("The guard database after kill -9 (SPEC §9)", .serialized)
struct GuardCrashTests {
    /// No throttling and no lockout in the way: every attempt is checked and counted.
    static let options = ["--iterations", "1000", "--free-failures", "100", "--max-delay", "0", "--log", "none"]

    /// A credential file whose guard database the test follows: the failures it expects,
    /// and a wrong password tried by a `credfile verify` process, killed or not.
    final class Database {
        let session: CLISession
        let file: String
        var path: String { file + ".guard.db" }
        var log: String { path + "-wal" }
        /// The failures committed so far, per name.
        var expected: [String: Int] = [:]

        init(_ session: CLISession) throws {
            self.session = session
            file = try GuardCLITests.file(session)
        }

        /// One wrong password for `user`; under strace, SIGKILL on entering the `nth`
        /// `call` on `path` when `killAt` is given. Counts the failure when the process
        /// answered. - Returns: whether the process was killed.
        func fail(_ user: String, killAt: (path: String, call: String, nth: Int)? = nil) throws -> Bool {
            var program = try BuiltProduct.path("credfile")
            var arguments = ["verify", file, user] + GuardCrashTests.options
            if let killAt {
                arguments =
                    [
                        "-qq", "-o", "/dev/null", "-P", killAt.path, "-e", "trace=\(killAt.call)",
                        "-e", "inject=\(killAt.call):signal=SIGKILL:when=\(killAt.nth)", program,
                    ] + arguments
                program = try ExternalTool.path("strace")
            }
            let result = try session.spawn(
                program, arguments, stdin: Array("wrong\n".utf8), environment: BuiltBinary.environment(),
                directory: session.directory)
            // strace ends as its tracee did: killed by SIGKILL, 128 + 9 as a shell says it.
            if result.status == 128 + SIGKILL { return true }
            try #require(result.status == 1, "\(result)")
            expected[user, default: 0] += 1
            return false
        }

        /// The log's size in bytes.
        func logSize() throws -> Int { Int(try statInfo(log).st_size) }

        /// Checks the database as the next process finds it: every expected failure there
        /// and no other (read by `credfile failures`), and whole (SQLite's integrity check,
        /// and the names count equal to the rows).
        func check(_ after: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let records = try GuardCLITests.failures(session, file, GuardCrashTests.options)
            var counts: [String: Int] = [:]
            for record in records {
                counts[try #require(record["user"] as? String)] = try #require(record["failures"] as? Int)
            }
            #expect(counts == expected, "after \(after)", sourceLocation: sourceLocation)
            #expect(try Self.integrity(of: path) == ["ok", "1"], "after \(after)", sourceLocation: sourceLocation)
        }

        /// `PRAGMA integrity_check`'s lines, then 1 when the names count matches the rows.
        /// The connection leaves the log as the guard does (a plain close would checkpoint
        /// and delete it, and the test would go on with a state no crash left).
        static func integrity(of path: String) throws -> [String] {
            let connection = try SQLiteConnection(path: path, busyTimeout: GuardDatabase.busyTimeout)
            try connection.leaveLogOnClose()
            var lines: [String] = []
            for query in [
                "PRAGMA integrity_check", "SELECT (SELECT count(*) FROM failures) = (SELECT count FROM names)",
            ] {
                let statement = try connection.prepare(query)
                while try statement.step() { lines.append(String(decoding: statement.bytes(0), as: UTF8.self)) }
            }
            return lines
        }
    }

    @Test(
        "kill -9 at each write of a commit and at each step of a checkpoint: the database opens whole with every committed failure",
        .enabled(if: ExternalTool.runnable("strace"), Comment(rawValue: ExternalTool.skipNote("strace"))))
    func killedAtEachStep() throws {
        try withSession { session in
            let database = try Database(session)
            #expect(try !database.fail("ann"))
            try database.check("the first failure")

            // A commit appended to a log that holds frames, killed before each of its writes
            // (a frame's header, then its page; the last one the commit frame's page): of a
            // known name's failure, then of a new name's (its row and the names count).
            var killed = 0
            for nth in 1...40 {
                guard try database.fail("ann", killAt: (database.log, "pwrite64", nth)) else { break }
                killed += 1
                try database.check("a kill before write \(nth) of a known name's commit")
            }
            #expect((4..<40).contains(killed), "\(killed) writes in a known name's commit")
            killed = 0
            for nth in 1...40 {
                guard try database.fail("new-\(nth)", killAt: (database.log, "pwrite64", nth)) else { break }
                killed += 1
                try database.check("a kill before write \(nth) of a new name's commit")
            }
            #expect((6..<40).contains(killed), "\(killed) writes in a new name's commit")

            // The commit that takes the log to its limit empties it in a checkpoint: fsync
            // the log, copy its pages into the database, set the database's size, fsync it,
            // truncate the log. Killed at each step, that commit's failure stands (it was
            // committed first), and the next process copies the log again. The pages go
            // last: the run that copies them all without a kill empties the log.
            let names = ["ben", "cat", "dan", "eve"]
            var next = 0
            let steps =
                [
                    (database.log, "fdatasync", 1), (database.path, "ftruncate", 1), (database.path, "fdatasync", 1),
                    (database.log, "ftruncate", 1),
                ] + (1...40).map { (database.path, "pwrite64", $0) }
            var killedInCheckpoint: [String] = []
            stepping: for step in steps {
                // Until a commit reaches the limit (the log left full by a kill reaches it at once).
                for _ in 0..<400 {
                    let user = names[next % names.count]
                    next += 1
                    let before = try database.logSize()
                    if try database.fail(user, killAt: step) {
                        database.expected[user, default: 0] += 1
                        killedInCheckpoint.append("\(step.1) \(step.2)")
                        try database.check("a kill at \(step.1) \(step.2) of a checkpoint (\(step.0))")
                        continue stepping
                    }
                    if try database.logSize() < before { break stepping }  // a whole checkpoint: no step left
                }
                Issue.record("no commit reached the log's limit")
                return
            }
            #expect(
                killedInCheckpoint.starts(with: [
                    "fdatasync 1", "ftruncate 1", "fdatasync 1", "ftruncate 1", "pwrite64 1",
                ]),
                "\(killedInCheckpoint)")
            #expect(try database.logSize() == 0, "the last checkpoint emptied the log")

            // A commit into the emptied log writes its header first and syncs it.
            #expect(try database.fail("fay", killAt: (database.log, "fdatasync", 1)))
            try database.check("a kill at the sync of the log's header")
            for nth in 1...3 {
                #expect(try database.fail("fay", killAt: (database.log, "pwrite64", nth)))
                try database.check("a kill before write \(nth) of a commit into an empty log")
            }
            #expect(try !database.fail("fay"))
            try database.check("the end")
        }
    }

    @Test(
        "kill -9 at random moments of 150 logins: the database opens whole, every answered failure counted, no attempt twice"
    )
    func killedAtRandom() throws {
        try withSession { session in
            let database = try Database(session)
            #expect(try !database.fail("ann"))  // creates the database, and times a whole run
            let start = ContinuousClock.now
            #expect(try !database.fail("ann"))
            let run = ContinuousClock.now - start
            var random = SeededRandom(seed: 0x6775_6172_6432)
            let names = ["ben", "cat", "dan"]
            let microseconds = Double(run.components.seconds) * 1e6 + Double(run.components.attoseconds) / 1e12
            var started: [String: Int] = [:]
            var killed = 0
            for n in 0..<150 {
                let user = names[n % names.count]
                let child = try ChildProcess.start(
                    try BuiltProduct.path("credfile"), ["verify", database.file, user] + Self.options,
                    stdin: Array("wrong\n".utf8), environment: BuiltBinary.environment(), directory: session.directory)
                started[user, default: 0] += 1
                usleep(UInt32(Double.random(in: 0..<1.5, using: &random) * microseconds))
                child.kill(SIGKILL)
                let result = try child.wait(timeout: .seconds(60))
                if result.status == 1 {
                    database.expected[user, default: 0] += 1
                } else {
                    #expect(result.signal == SIGKILL, "\(result)")
                    killed += 1
                }
            }
            // A killed process may have committed its attempt before the kill: each name has
            // every answered failure and at most one more per killed process.
            let records = try GuardCLITests.failures(session, database.file, Self.options)
            for user in names {
                let count = try #require(records.first { $0["user"] as? String == user }?["failures"] as? Int)
                #expect(
                    count >= database.expected[user, default: 0] && count <= started[user, default: 0],
                    "\(user): \(count)")
            }
            #expect(killed > 0 && killed < 150, "\(killed) of 150 killed")
            #expect(try Database.integrity(of: database.path) == ["ok", "1"])
        }
    }
}
