import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// Issue #33 item 4 in the library: the guard's state under attack and under an admin's
// hands: the name bound an attacker cannot use to evict a victim's count, rows of
// bounded size, a database deleted or replaced under a long-running process, and
// reading failures without creating a database. The CLI's side: GuardStateCLITests.

/// A file with `bob` (hashed, 1 round), guarded by `policy` with its database at the default path.
private func guardedStore(_ directory: TemporaryDirectory, policy guardPolicy: GuardPolicy) throws -> CredentialStore {
    var store = CredentialStore(path: directory.file("app.cred"), policy: try policy(rounds: 1))
    try store.register(username: "bob", password: Password("tangerine-river-stone"), storage: .hashed)
    store.loginGuard = try LoginGuard(credentialFile: store.path, policy: guardPolicy, log: .none, service: "test")
    return store
}

private func login(_ store: CredentialStore, _ password: String) throws -> CredentialStore.Verification {
    try store.verify(username: "bob", password: Password(password), upgradeOnSuccess: false, client: "192.0.2.1")
}

/// Removes a database with its `-wal` and `-shm` files.
private func removeDatabase(_ path: String) {
    for file in [path, path + "-wal", path + "-shm"] { unlink(file) }
}

@Suite("Guard state (issue #33 item 4): bounds under attack, replaced databases, read-only listing")
struct GuardStateTests {
    /// Processes opening a new database together: SQLite may answer the WAL switch or the
    /// migration "database is locked" at once, without its busy wait (its deadlock rule).
    /// `GuardCLITests/racingFirstOpen` races real processes (6 of 320 failed in CI before,
    /// under load; it seldom fails on an idle machine); this checks the rule itself.
    @Test("opening a database: SQLITE_BUSY at once is tried again, up to the busy timeout; other errors are not")
    func busyAtOpenIsRetried() throws {
        let busy = SQLiteError(code: 5, message: "database is locked")
        var calls = 0
        try SQLiteStateStore.retryingWhileBusy { () throws(SQLiteError) in
            calls += 1
            if calls < 4 { throw busy }
        }
        #expect(calls == 4)
        var tries = 0
        #expect(throws: SQLiteError.self) {
            try SQLiteStateStore.retryingWhileBusy(for: 20) { () throws(SQLiteError) in
                tries += 1
                throw busy
            }
        }
        #expect(tries > 1 && tries < 20, "\(tries)")
        var others = 0
        #expect(throws: SQLiteError.self) {
            try SQLiteStateStore.retryingWhileBusy { () throws(SQLiteError) in
                others += 1
                throw SQLiteError(code: 11, message: "database disk image is malformed")
            }
        }
        #expect(others == 1)
    }

    @Test("the eviction attack: 2,000 fresh names past a bound of 32 never push out a victim's 20 failures")
    func evictionAttack() throws {
        try withTemporaryDirectory { directory in
            let database = GuardDatabase(path: directory.file("a.guard.db"), owner: nil, nameLimit: 32)
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 100, maximumDelay: 0)
            let victim = Array("victim".utf8)
            for n in 1...20 {
                #expect(try database.reserve(victim, now: Int64(n), policy: policy) == .admitted(count: n))
            }
            // A throttled bystander who failed earlier than every fresh name stays too.
            for n in 1...6 { _ = try database.reserve(Array("bystander".utf8), now: Int64(n), policy: policy) }
            for n in 0..<2_000 {
                _ = try database.reserve(Array("fresh-\(n)".utf8), now: Int64(1_000 + n), policy: policy)
                #expect(try database.nameCount() <= 32)
            }
            #expect(try database.row(victim)?.count == 20)
            #expect(try database.row(Array("bystander".utf8))?.count == 6)
            // The victim's next attempt is its 21st: the count was never reset.
            #expect(try database.reserve(victim, now: 10_000, policy: policy) == .admitted(count: 21))
            // Only when every other name is throttled does the least recently failed of them go.
            let full = GuardDatabase(path: directory.file("b.guard.db"), owner: nil, nameLimit: 3)
            for name in ["t1", "t2", "t3"] {
                for n in 1...6 { _ = try full.reserve(Array(name.utf8), now: Int64(n), policy: policy) }
            }
            _ = try full.reserve(Array("late".utf8), now: 100, policy: policy)
            #expect(try full.nameCount() == 3)
            #expect(try full.row(Array("t1".utf8)) == nil && full.row(Array("late".utf8))?.count == 1)
        }
    }

    @Test("rows are bounded in bytes: 8 KiB names are stored in 256 bytes, apart from each other and findable")
    func longNames() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("long.guard.db")
            let database = GuardDatabase(path: path, owner: nil, nameLimit: 64)
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 100, maximumDelay: 0)
            let stem = [UInt8](repeating: UInt8(ascii: "a"), count: 8_192)
            for n in 0..<200 {
                _ = try database.reserve(stem + Array("\(n)".utf8), now: Int64(n), policy: policy)
            }
            _ = try database.reserve(stem + Array("199".utf8), now: 500, policy: policy)
            #expect(try database.row(stem + Array("199".utf8))?.count == 2)
            #expect(try database.row(stem + Array("198".utf8))?.count == 1)
            let rows = try database.rows()
            #expect(rows.count == 64 && rows.allSatisfy { $0.name.count == 256 })
            let connection = try SQLiteConnection(path: path, busyTimeout: 1_000)
            let total = try connection.prepare("SELECT sum(length(name)), max(length(name)) FROM failures")
            #expect(try total.step())
            #expect(total.int64(0) == 64 * 256 && total.int64(1) == 256)
            // A name of 255 bytes is stored as it is; one of 256 is digested.
            #expect(GuardDatabase.storedKey(Array(stem.prefix(255))) == Array(stem.prefix(255)))
            #expect(GuardDatabase.storedKey(Array(stem.prefix(256))).count == 256)
            #expect(GuardDatabase.storedKey(Array(stem.prefix(256))) != Array(stem.prefix(256)))
            #expect(try database.clear(stem + Array("199".utf8)))
            #expect(try database.row(stem + Array("199".utf8)) == nil)
        }
    }

    @Test("a database deleted under a long-running guard: the guard counts in the new file that others see")
    func deletedDatabase() throws {
        try withTemporaryDirectory { directory in
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 100, maximumDelay: 0)
            let serving = try guardedStore(directory, policy: policy)
            let guardian = try #require(serving.loginGuard)
            #expect(try !login(serving, "wrong-1").granted)
            removeDatabase(guardian.databasePath)
            #expect(try !login(serving, "wrong-2").granted)
            // Another process (an admin's `credfile failures`) sees the serving process's count.
            let admin = try LoginGuard(credentialFile: serving.path, policy: policy, log: .none, service: "admin")
            #expect(try admin.failureRecord(username: "bob")?.failures == 1)
            #expect(fileExists(guardian.databasePath))
        }
    }

    @Test("a database replaced under a long-running guard: an admin's fresh database ends its lockout")
    func replacedDatabase() throws {
        try withTemporaryDirectory { directory in
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 3, maximumDelay: 0)
            let serving = try guardedStore(directory, policy: policy)
            let guardian = try #require(serving.loginGuard)
            for n in 1...3 { #expect(try !login(serving, "wrong-\(n)").granted) }
            #expect(try login(serving, "tangerine-river-stone").denial == .lockedOut)
            // The admin builds a fresh database elsewhere and renames it into place.
            let fresh = directory.file("fresh.guard.db")
            do {  // its connection closes at the end of this scope, as another process's would
                let other = GuardDatabase(path: fresh, owner: nil)
                _ = try other.reserve(Array("someone".utf8), now: LoginGuard.now(), policy: policy)
            }
            removeDatabase(guardian.databasePath)
            for suffix in ["-wal", "-shm", ""] {
                #expect(rename(fresh + suffix, guardian.databasePath + suffix) == 0)
            }
            #expect(try login(serving, "tangerine-river-stone").granted)
            #expect(try guardian.failureRecord(username: "someone")?.failures == 1)
        }
    }

    @Test("reading failures creates no database: failureRecords, failureRecord, the resets")
    func readOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("app.cred")
            try writeText(path, "bob,legacy-password-1\n")
            let guardian = try LoginGuard(credentialFile: path, log: .none, service: "admin")
            #expect(try guardian.failureRecords().isEmpty)
            #expect(try guardian.failureRecord(username: "bob") == nil)
            #expect(try !guardian.resetFailures(username: "bob"))
            #expect(try guardian.resetAllFailures() == 0)
            #expect(try guardian.admitsCachedLogin(username: Array("bob".utf8), client: nil))
            #expect(!fileExists(guardian.databasePath))
        }
    }
}
