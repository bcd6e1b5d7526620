import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// kill -9 at random (seeded, so repeatable) instants of a writer rewriting a large file
// (SPEC §4, STYLE practice 14): after every kill the file is byte for byte the old or
// the new version, and the next write removes the temporary file the dead writer left.

/// A 200,000-line file: entries (LF and CRLF), comments and blank lines, about 3.4 MB.
/// One line in four is an entry (`u<line>,Sekr3t<line>`), which keeps `check` of the
/// whole file affordable in a debug build while the rewrite still moves every byte.
func bigFile(lines: Int) -> Data {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(lines * 18)
    func digits(_ n: Int) {
        var divisor = 100_000
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(n / divisor % 10))
            divisor /= 10
        }
    }
    let marker = Array(Canary.marker.utf8)
    let comment = Array("# note ".utf8)
    for j in 0..<lines {
        switch j % 4 {
        case 0:
            bytes.append(UInt8(ascii: "u"))
            digits(j)
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: marker)
            digits(j)
            if j % 8 == 4 { bytes.append(0x0D) }
        case 2:
            bytes.append(contentsOf: [0x20, 0x09])
        default:
            bytes.append(contentsOf: comment)
            digits(j)
        }
        bytes.append(0x0A)
    }
    return Data(bytes)
}

/// `data` with the secret of the entry `name` (a line starting `name,` after an LF)
/// replaced by `secret`; computed without the library.
func replacingSecret(of name: String, with secret: String, in data: Data) throws -> Data {
    guard let found = data.range(of: Data("\n\(name),".utf8)),
        let lf = data[found.upperBound...].firstIndex(of: 0x0A)
    else { throw HarnessError("\(name) is not in the file") }
    var end = lf
    if data[lf - 1] == 0x0D { end = lf - 1 }
    var result = data
    result.replaceSubrange(found.upperBound..<end, with: Data(secret.utf8))
    return result
}

@Suite("Crash: kill -9 at random instants", .serialized)
struct CrashTests {
    /// One writing command and the file it must produce from `old`.
    struct Operation {
        let arguments: [String]
        let stdin: String
        let expected: Data
    }

    /// Operation `i` on `old`: update an entry with `import`, append one with `import`, or
    /// change one with `passwd` (plaintext, so the new bytes are known in advance).
    static func operation(_ i: Int, on old: Data, path: String, rng: inout SeededRandom) throws -> Operation {
        let user = String(format: "u%06d", 4 * Int.random(in: 1..<50_000, using: &rng))
        switch i % 3 {
        case 0:
            let secret = "\(Canary.marker)-import-\(i)"
            return Operation(
                arguments: ["import", "--plaintext", path], stdin: "\(user),\(secret)\n",
                expected: try replacingSecret(of: user, with: secret, in: old))
        case 1:
            let secret = "\(Canary.marker)-added-\(i)"
            return Operation(
                arguments: ["import", "--plaintext", path], stdin: "added\(i),\(secret)\n",
                expected: old + Data("added\(i),\(secret)\n".utf8))
        default:
            let secret = "\(Canary.marker)-passwd-\(i)"
            return Operation(
                arguments: ["passwd", "--plaintext", path, user], stdin: secret + "\n",
                expected: try replacingSecret(of: user, with: secret, in: old))
        }
    }

    /// When a kill is sent, relative to the writer's run.
    enum Instant: CaseIterable {
        /// A random time within the whole run (as long as recent runs took).
        case anywhere
        /// A random time after the temporary file appeared: while it is written,
        /// fsynced and renamed.
        case whileWriting
        /// Right after the temporary file was renamed over FILE: the new bytes must be there.
        case afterRename
    }

    @Test(
        "A writer of a 200,000-line file killed at 100 random instants: old or new bytes, stray temporary files removed"
    )
    func killWriterAtRandomInstants() throws {
        // On the disk, not tmpfs: fsync of the 3.4 MB temporary file widens the window in
        // which a kill leaves a stray temporary file.
        try withTemporaryDirectory { dir in
            let name = "big.txt"
            let path = dir.file(name)
            var current = bigFile(lines: 200_000)
            try writeBytes(path, current)
            var rng = SeededRandom(seed: 0xC0FFEE)
            // How long whole runs took (the last ones count: the machine's load changes).
            var durations: [Double] = []
            var estimatedRun: Double { durations.suffix(5).sorted()[durations.suffix(5).count / 2] }
            // How long the temporary file lived (from the .afterRename kills), to spread
            // the .whileWriting kills over it.
            var writeWindows: [Double] = [0.005]

            // Two whole runs first: they work, and they time a run.
            for i in 0..<2 {
                let op = try Self.operation(i, on: current, path: path, rng: &rng)
                let child = try CLI.start(op.arguments, stdin: op.stdin)
                let result = try child.checkedWait()
                durations.append(child.runningTime)
                #expect(result.status == 0, "\(result)")
                #expect(try readData(path) == op.expected)
                current = op.expected
            }

            var kills = 0, killedBySignal = 0, sawOld = 0, sawNew = 0, strays = 0, cleanups = 0, missed = 0
            var mustComplete = false
            var i = 2
            // 100 kills, and on until one of them came after a rename (a rewrite that copies
            // in the kernel leaves little time between the rename and the exit, and under
            // load the watcher can miss it for a hundred kills).
            while (kills < 100 || sawNew == 0) && i < 1_000 {
                defer { i += 1 }
                let op = try Self.operation(i, on: current, path: path, rng: &rng)
                let child = try CLI.start(op.arguments, stdin: op.stdin)
                if mustComplete {
                    // The write after a crash: it must finish and remove the stray file.
                    let result = try child.checkedWait()
                    durations.append(child.runningTime)
                    #expect(result.status == 0, "\(result)")
                    #expect(try readData(path) == op.expected)
                    #expect(try dir.temporaryFiles(of: name).isEmpty, "the next write left the stray temporary file")
                    current = op.expected
                    mustComplete = false
                    cleanups += 1
                    continue
                }
                let instant = Instant.allCases[i % 3]
                var sent = false
                var renamed = false
                switch instant {
                case .anywhere:
                    usleep(UInt32(Double.random(in: 0...estimatedRun, using: &rng) * 1_000_000))
                    sent = child.killNow()
                case .whileWriting, .afterRename:
                    // Watch for the temporary file (every 0.2 ms).
                    var appeared: ContinuousClock.Instant?
                    let extra = Double.random(in: 0...(writeWindows.max() ?? 0.005), using: &rng)
                    while child.isRunning && !sent {
                        let temporary = (try? dir.temporaryFiles(of: name))?.isEmpty == false
                        if appeared == nil, temporary { appeared = .now }
                        if let appeared {
                            if instant == .whileWriting, seconds(.now - appeared) >= extra {
                                sent = child.killNow()
                            } else if instant == .afterRename, !temporary {
                                writeWindows.append(seconds(.now - appeared))
                                renamed = true
                                sent = child.killNow()
                            }
                        }
                        if !sent { usleep(200) }
                    }
                }
                let result = try child.checkedWait()
                guard sent else {
                    // It ended first (or the short write window was missed): not a kill.
                    missed += 1
                    durations.append(child.runningTime)
                    #expect(result.status == 0, "\(result)")
                    #expect(try readData(path) == op.expected)
                    current = op.expected
                    #expect(try dir.temporaryFiles(of: name).isEmpty, "a writer that finished left a temporary file")
                    continue
                }
                kills += 1
                if result.signal == SIGKILL { killedBySignal += 1 } else { #expect(result.status == 0, "\(result)") }
                let now = try readData(path)
                if now == current && !renamed {
                    sawOld += 1
                } else if now == op.expected {
                    sawNew += 1
                    current = op.expected
                } else {
                    Issue.record(
                        "after kill \(kills) (\(instant)) the file is neither the \(renamed ? "new" : "old or the new") version"
                    )
                    break
                }
                let temporaries = try dir.temporaryFiles(of: name)
                #expect(temporaries.count <= 1, "\(temporaries)")
                if !temporaries.isEmpty {
                    strays += 1
                    mustComplete = true
                }
                #expect(try dir.names().filter { !$0.hasPrefix(".") } == [name, name + ".lock"])
            }
            #expect(kills >= 100)
            #expect(killedBySignal >= 50, "too few kills hit a running writer: the test did not test much")
            #expect(sawOld > 0 && sawNew > 0)

            // The final file: whole, and `check` finds no error (the first version had none).
            if mustComplete {
                #expect(
                    try CLI.run(["add", "--plaintext", path, "final"], stdin: Canary.password("final") + "\n").status
                        == 0)
                cleanups += 1
            }
            #expect(try dir.temporaryFiles(of: name).isEmpty)
            print(
                "CrashTests: a rewrite takes about \(Int(estimatedRun * 1000)) ms; \(kills) kills (\(killedBySignal) ended by "
                    + "SIGKILL), \(missed) runs ended before the kill; old \(sawOld), new \(sawNew); stray temporary "
                    + "files \(strays), each removed by the next write (\(cleanups))")
            let check = try CLI.run(["check", path])
            #expect(check.status == 0, "check found errors")
            #expect(!check.stdout.contains(": error:"))
        }
    }

    @Test("A lock holder killed with -9 does not block the next writer (flock dies with its process)")
    func killedLockHolder() throws {
        try withTemporaryDirectory(onTmpfs: true) { dir in
            let path = dir.file("creds.txt")
            #expect(
                try CLI.run(["add", "--iterations", "1", path, "a"], stdin: Canary.password("a") + "\n").status == 0)
            let before = try readBytes(path)
            // A process that holds flock(LOCK_EX) on FILE.lock: the shell opens it as fd 9,
            // flock(1) locks that open file, and the shell becomes `sleep`, keeping fd 9.
            let holder = try ChildProcess.start(
                "/bin/sh", ["-c", "exec 9>>\"$1\" && flock 9 && exec sleep 60", "sh", path + ".lock"],
                stdin: [], environment: CLI.environment([:]))
            defer { holder.killNow() }
            // Wait until it holds the lock (flock -n fails while it does).
            var held = false
            for _ in 0..<200 where !held {
                usleep(20_000)
                let probe = try ChildProcess.start(
                    "/usr/bin/flock", ["-n", path + ".lock", "true"], stdin: [],
                    environment: CLI.environment([:]))
                held = try probe.checkedWait().status == 1
            }
            try #require(held, "the helper never took the lock")
            let blocked = try CLI.start(["add", "--iterations", "1", path, "b"], stdin: Canary.password("b") + "\n")
            // Wait until the writer waits for the lock: it polls flock(2) with LOCK_NB and
            // sleeps between tries, so its current system call (/proc/PID/syscall) is
            // flock (73 on x86_64), nanosleep (35) or clock_nanosleep (230).
            var waiting = false
            for _ in 0..<500 where !waiting && blocked.isRunning {
                usleep(20_000)
                let syscall = (try? String(contentsOfFile: "/proc/\(blocked.pid)/syscall", encoding: .utf8)) ?? ""
                #if arch(x86_64)
                waiting = ["73 ", "35 ", "230 "].contains { syscall.hasPrefix($0) }
                #else
                waiting = !syscall.isEmpty
                #endif
            }
            #expect(waiting, "the writer did not wait for the lock")
            #expect(blocked.isRunning)
            #expect(try readBytes(path) == before)
            holder.killNow()
            _ = try holder.checkedWait()
            let result = try blocked.checkedWait()
            #expect(result.status == 0, "\(result)")
            #expect(
                try CredentialStore(path: path, policy: oneRound).authenticate(
                    username: "b", password: Canary.password("b")))
            #expect(try mode(path + ".lock") == 0o600)
        }
    }
}
