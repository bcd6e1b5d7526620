import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// `upgrade` at scale (SPEC §5): commits in batches that other readers and writers see
// while it runs, stops cleanly on SIGINT / SIGTERM with its finished work committed,
// and a rerun continues where it stopped. Behaviour only: nothing here is timed.

/// `count` plaintext entries `u00…,Sekr3t-p00…` (LF endings).
private func plaintextFile(_ count: Int) -> [UInt8] {
    Array((0..<count).map { "u\(pad($0)),\(Canary.password("p\(pad($0))"))\n" }.joined().utf8)
}

private func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

/// For each line of the file: whether it holds a PBKDF2 hash.
private func hashedFlags(_ path: String) throws -> [Bool] {
    rawLines(try readBytes(path)).map { line in line.text.contains(",$pbkdf2-") }
}

/// Expects every line of a file made by ``plaintextFile(_:)`` to be the plaintext entry
/// or a hash of its password, the hashed ones first (batches go front to back).
/// Returns how many are hashed.
@discardableResult
private func expectPrefixHashed(
    _ path: String, count: Int, sourceLocation: SourceLocation = #_sourceLocation
) throws -> Int {
    let lines = rawLines(try readBytes(path))
    try #require(lines.count == count, "line count changed", sourceLocation: sourceLocation)
    var hashed = 0
    for (index, line) in lines.enumerated() {
        let head = "u\(pad(index)),"
        #expect(line.text.hasPrefix(head) && line.last == 0x0A, "line \(index + 1)", sourceLocation: sourceLocation)
        let secret = Array(line.dropFirst(head.utf8.count).dropLast())
        if secret.starts(with: Array("$pbkdf2-".utf8)) {
            #expect(
                hashed == index, "line \(index + 1) is hashed after a plaintext line", sourceLocation: sourceLocation)
            let hash = try PasswordHash(parsing: secret[...])
            #expect(
                try hash.verify(Password(Canary.password("p\(pad(index))"))), "line \(index + 1)",
                sourceLocation: sourceLocation)
            hashed += 1
        } else {
            #expect(
                secret.text == Canary.password("p\(pad(index))"), "line \(index + 1) changed",
                sourceLocation: sourceLocation)
        }
    }
    return hashed
}

/// Records what the file looked like at each progress call.
private final class Observations: @unchecked Sendable {  // ParallelHasher reports one call at a time
    var hashedAt: [Int: Int] = [:]  // done → hashed lines in the file at that moment
}

@Suite("Upgrade at scale: batches, stops and resumption", .serialized)
struct UpgradeBatchTests {
    // MARK: The library

    @Test(
        "Each batch is committed as it finishes: a reader sees the hashes of earlier batches while later ones are hashed"
    )
    func batchesAreVisibleWhileRunning() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeBytes(path, plaintextFile(10))
            let store = CredentialStore(path: path, policy: oneRound)
            let seen = Observations()
            let summary = try store.upgrade(jobs: 1, maximumBatch: 3) { done, _ in
                seen.hashedAt[done] = (try? hashedFlags(path).filter { $0 }.count) ?? -1
            }
            #expect(summary.upgraded == 10 && summary.skipped == 0 && summary.left == 0 && !summary.stopped)
            #expect(summary.batches == 4, "10 entries in batches of 3")
            // A reader between batches: hash k of the run sees the batches before its own.
            for done in 1...10 {
                #expect(seen.hashedAt[done] == (done - 1) / 3 * 3, "at hash \(done): \(seen.hashedAt)")
            }
            #expect(try expectPrefixHashed(path, count: 10) == 10)
            // Idempotent: nothing left, nothing written.
            let inode = try statInfo(path).st_ino
            let again = try store.upgrade(jobs: 1, maximumBatch: 3)
            #expect(again.upgraded == 0 && again.batches == 0 && again.alreadyHashed == 10)
            #expect(try statInfo(path).st_ino == inode)
        }
    }

    @Test("A hash interval of zero commits after every round of hashes, not after the whole file")
    func intervalEndsBatches() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeBytes(path, plaintextFile(6))
            let summary = try CredentialStore(path: path, policy: oneRound).upgrade(jobs: 1, batchInterval: .zero)
            #expect(summary.upgraded == 6 && summary.left == 0)
            // One unit of hashes per batch when the interval is already over: the first
            // batch (four entries, sized for one thread) commits its first pair where
            // SHA-256 pairs interleave (ParallelHasher), else its first hash; the later
            // batches are sized to one entry.
            let firstUnit = PBKDF2.interleaves(.sha256) ? 2 : 1  // oneRound is PBKDF2-SHA256
            #expect(
                summary.batches == 6 - (firstUnit - 1), "one unit of hashes per batch when the interval is already over"
            )
            try expectPrefixHashed(path, count: 6)
        }
    }

    @Test(
        "shouldStop: the finished hashes are committed, the summary says stopped and how many are left, and a rerun finishes"
    )
    func stopAndResume() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeBytes(path, plaintextFile(10))
            let store = CredentialStore(path: path, policy: oneRound)
            let stop = CancellationFlag()
            let summary = try store.upgrade(jobs: 1, maximumBatch: 3, stop: stop) { done, _ in
                if done == 5 { stop.cancel() }
            }
            #expect(summary.stopped)
            #expect(summary.upgraded == 5, "the 3 of the first batch and the 2 finished of the second")
            #expect(summary.left == 5)
            #expect(summary.batches == 2)
            #expect(try expectPrefixHashed(path, count: 10) == 5)

            let rest = try store.upgrade(jobs: 2)
            #expect(!rest.stopped && rest.upgraded == 5 && rest.alreadyHashed == 5 && rest.left == 0)
            #expect(try expectPrefixHashed(path, count: 10) == 10)
        }
    }

    @Test("A stop before the first hash writes nothing and reports every entry left")
    func stopBeforeAnything() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            let original = plaintextFile(4)
            try writeBytes(path, original)
            let summary = try CredentialStore(path: path, policy: oneRound).upgrade(
                stop: {
                    let flag = CancellationFlag(); flag.cancel(); return flag
                }())
            #expect(summary.stopped && summary.upgraded == 0 && summary.left == 4 && summary.batches == 0)
            #expect(try readBytes(path) == original)
            #expect(try dir.names() == ["users.txt"])
        }
    }

    @Test(
        "Writers between and during batches: their changes are kept, and a line changed under a hash is hashed again later"
    )
    func writersBetweenBatches() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeBytes(path, plaintextFile(10))
            let store = CredentialStore(path: path, policy: oneRound)
            let other = CredentialStore(path: path, policy: oneRound)
            let failures = Mutex<[String]>([])
            // Batches of 3 on one thread: batch 2 is u03, u04, u05.
            let summary = try store.upgrade(jobs: 1, maximumBatch: 3) { done, _ in
                guard done == 4 else { return }  // u03 is hashed, batch 2 not yet committed
                do {
                    // Behind the walk, already hashed: a new password, hashed.
                    try other.changePassword(username: "u01", to: Password(Canary.password("new01")), storage: .hashed)
                    // In the batch in flight: the hash being made is for the old bytes.
                    try other.changePassword(
                        username: "u04", to: Password(Canary.password("new04")), storage: .plaintext)
                    // Ahead of the walk.
                    try other.changePassword(
                        username: "u08", to: Password(Canary.password("new08")), storage: .plaintext)
                    try other.register(
                        username: "late", password: Password(Canary.password("late")), storage: .plaintext)
                    try other.remove(username: "u09")
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "a writer failed during the upgrade: \(failures.withLock { $0 })")
            #expect(summary.skipped == 1, "u04's hash was for bytes that changed")
            #expect(summary.left == 0 && !summary.stopped)
            let logins: [(String, String)] = [
                ("u00", Canary.password("p00")), ("u01", Canary.password("new01")), ("u04", Canary.password("new04")),
                ("u05", Canary.password("p05")), ("u08", Canary.password("new08")), ("late", Canary.password("late")),
            ]
            for (user, password) in logins {
                #expect(try store.authenticate(username: user, password: password), "\(user)")
            }
            #expect(try !store.authenticate(username: "u04", password: Canary.password("p04")))
            #expect(try store.read().firstEntry(named: "u09") == nil)
            // Nothing is left in plaintext: u04, u08 and late were hashed when the walk got there.
            for line in try store.read().lines {
                if case .plaintext? = line.entry?.secret { Issue.record("line \(line.number) is still plaintext") }
            }
        }
    }

    @Test("ParallelHasher.hash(until:) returns the hashes of a prefix and stops taking work")
    func hasherStopsOnAPrefix() throws {
        let passwords = (0..<20).map { Password("pw\($0)") }
        let hasher = ParallelHasher(policy: oneRound, jobs: 2)
        let hashes = try hasher.hash(passwords, until: { finished in finished >= 7 }, progress: nil)
        #expect(hashes.count >= 7 && hashes.count < 20, "\(hashes.count)")
        for (hash, password) in zip(hashes, passwords) { #expect(try hash.verify(password)) }
        #expect(try hasher.hash(passwords, until: { _ in true }, progress: nil).isEmpty)
        #expect(try hasher.hash(passwords, until: { _ in false }, progress: nil).count == 20)
    }

    // MARK: The command

    /// Starts `credfile upgrade` on `count` entries with slow hashes and short batches.
    private func startSlowUpgrade(_ path: String, json: Bool = false, jobs: Int = 2) throws -> ChildProcess {
        try CLI.start(
            ["upgrade", "--iterations", "200000", "--jobs", "\(jobs)", path] + (json ? ["--json"] : []),
            environment: ["CREDFILE_UPGRADE_BATCH_SECONDS": "0.2"])
    }

    /// Waits until at least `count` lines of the file are hashed while `child` runs.
    private func waitForHashedLines(_ path: String, _ count: Int, while child: ChildProcess) throws -> Bool {
        for _ in 0..<6000 where child.isRunning {
            if (try? hashedFlags(path).filter { $0 }.count) ?? 0 >= count { return true }
            usleep(10_000)
        }
        return false
    }

    @Test(
        "SIGTERM / SIGINT stop credfile upgrade: finished hashes committed, the count left printed, exit 143 / 130, a rerun finishes",
        .enabled(if: isDebugBuild, "CREDFILE_UPGRADE_BATCH_SECONDS exists in debug builds only"),
        arguments: [(SIGTERM, "SIGTERM", Int32(143)), (SIGINT, "SIGINT", Int32(130))])
    func signalStopsTheCommand(signal: Int32, name: String, status: Int32) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            let count = 60
            try writeBytes(path, plaintextFile(count))
            let upgrade = try startSlowUpgrade(path)
            // A batch committed while it runs (a reader sees it), then the signal.
            let sawBatch = try waitForHashedLines(path, 2, while: upgrade)
            #expect(sawBatch, "no batch was committed while the upgrade ran")
            kill(upgrade.pid, signal)
            let result = try upgrade.checkedWait()
            #expect(result.signal == nil, "killed by the signal instead of exiting: \(result)")
            #expect(result.status == status, "\(result)")
            let hashed = try expectPrefixHashed(path, count: count)
            #expect(hashed >= 2 && hashed < count, "\(hashed) hashed: the stop came too late to test anything")
            #expect(result.stdout.hasPrefix("upgraded \(hashed) entries in "), "\(result)")
            #expect(
                result.message.contains(
                    "credfile: upgrade stopped by \(name) after committing its finished hashes; \(count - hashed) entries are still plaintext: run upgrade again to continue"
                ),
                "\(result)")
            #expect(result.diagnosticsWellFormed)
            #expect(try dir.temporaryFiles(of: "users.txt").isEmpty)

            // The rerun continues: it finds only what is left.
            let rerun = try CLI.run(["upgrade", "--json", "--iterations", "1000", path])
            #expect(rerun.status == 0, "\(rerun)")
            let summary = try jsonObject(rerun.stdout)
            #expect(summary["upgraded"] as? Int == count - hashed)
            #expect(summary["alreadyHashed"] as? Int == hashed)
            #expect(summary["left"] as? Int == 0 && summary["stopped"] as? Bool == false)
            #expect(try expectPrefixHashed(path, count: count) == count)
        }
    }

    @Test(
        "upgrade --json after SIGTERM: stopped, left, batches, rate; exit 143",
        .enabled(if: isDebugBuild, "CREDFILE_UPGRADE_BATCH_SECONDS exists in debug builds only"))
    func signalJSON() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            try writeBytes(path, plaintextFile(60))
            let upgrade = try startSlowUpgrade(path, json: true)
            #expect(try waitForHashedLines(path, 1, while: upgrade))
            kill(upgrade.pid, SIGTERM)
            let result = try upgrade.checkedWait()
            #expect(result.status == 143, "\(result)")
            let summary = try jsonObject(result.stdout)
            let hashed = try hashedFlags(path).filter { $0 }.count
            #expect(summary["stopped"] as? Bool == true)
            #expect(summary["upgraded"] as? Int == hashed)
            #expect(summary["left"] as? Int == 60 - hashed)
            #expect((summary["batches"] as? Int).map { $0 >= 1 } == true)
            #expect((summary["rate"] as? Double).map { $0 > 0 } == true)
        }
    }

    @Test(
        "A concurrent add completes while the upgrade runs, and later batches keep it (and hash it)",
        .enabled(if: isDebugBuild, "CREDFILE_UPGRADE_BATCH_SECONDS exists in debug builds only"))
    func concurrentWriterIsNotStarved() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            let count = 24
            try writeBytes(path, plaintextFile(count))
            let upgrade = try startSlowUpgrade(path, json: true, jobs: 1)
            #expect(try waitForHashedLines(path, 1, while: upgrade))
            let add = try CLI.run(
                ["add", "--plaintext", path, "during"], stdin: Canary.password("during") + "\n")
            #expect(add.status == 0, "\(add)")
            #expect(upgrade.isRunning, "the upgrade ended before the add: the overlap was not tested")
            let result = try upgrade.checkedWait()
            #expect(result.status == 0, "\(result)")
            let summary = try jsonObject(result.stdout)
            #expect((summary["batches"] as? Int).map { $0 >= 2 } == true, "\(result)")
            #expect(summary["left"] as? Int == 0)
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(try store.authenticate(username: "during", password: Canary.password("during")))
            if case .plaintext? = try storedSecret(of: "during", in: path) {
                Issue.record("the entry added meanwhile was not hashed when the walk reached it")
            }
            for n in 0..<count {
                #expect(try store.authenticate(username: "u\(pad(n))", password: Canary.password("p\(pad(n))")))
            }
        }
    }
}
