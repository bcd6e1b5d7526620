import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §15: the state store's rules hold the same in SQLite and in PostgreSQL (a real
// PostgreSQL 15 the tests start in a private directory, PostgreSQLServer). The guard's
// counting (GuardDatabase over FailureTable), the code steps and the schema run here
// against both backends; the sessions run in PortalTests (StorageKind.postgresql) and the
// second factor in SecondFactorTests (enrolAndReplay), each over both.

/// The backends every test here runs against.
enum StateBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgresql

    var testDescription: String { rawValue }

    /// A fresh, empty state location of this backend (in `directory` for SQLite).
    func location(_ directory: TemporaryDirectory) throws -> StateLocation {
        switch self {
        case .sqlite: StateLocation(sqlitePath: directory.file("app.guard.db"))
        case .postgresql:
            try StateLocation(state: try PostgreSQLServer.shared().freshDatabase(), credentialFile: directory.file("x"))
        }
    }
}

@Suite("State store backends (SPEC §15): SQLite and PostgreSQL alike")
struct StateBackendTests {
    @Test(
        "failures: counted, throttled, locked out at max-failures, released, cleared", arguments: StateBackend.allCases)
    func counting(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let database = GuardDatabase(store: try backend.location(directory).store())
            let policy = try GuardPolicy(freeFailures: 2, maximumFailures: 5, maximumDelay: 1)
            let bob = Array("bob".utf8)
            #expect(try database.row(bob) == nil && database.nameCount() == 0)
            #expect(try database.reserve(bob, now: 1_000, policy: policy) == .admitted(count: 1))
            #expect(try database.reserve(bob, now: 1_001, policy: policy) == .admitted(count: 2))
            #expect(try database.reserve(bob, now: 1_002, policy: policy) == .admitted(count: 3))
            // After the 3rd (free-failures 2): 1 s.
            #expect(try database.reserve(bob, now: 1_500, policy: policy) == .throttled(count: 3))
            #expect(try database.reserve(bob, now: 2_002, policy: policy) == .admitted(count: 4))
            try database.release(bob, policy: policy)
            #expect(try database.row(bob)?.count == 3)
            #expect(try database.reserve(bob, now: 9_000, policy: policy) == .admitted(count: 4))
            #expect(try database.reserve(bob, now: 19_000, policy: policy) == .admitted(count: 5))
            #expect(try database.reserve(bob, now: 99_000, policy: policy) == .lockedOut(count: 5))
            #expect(try database.row(bob)?.lockedOut == true)
            #expect(try database.reserve(Array("eve".utf8), now: 1, policy: policy) == .admitted(count: 1))
            #expect(try database.nameCount() == 2 && database.rows().map(\.name) == [bob, Array("eve".utf8)])
            #expect(try database.clear(bob) && !database.clear(bob))
            #expect(try database.nameCount() == 1)
            #expect(try database.clearAll() == 1 && database.nameCount() == 0)
        }
    }

    @Test("the bound: fresh names past it never push out a throttled victim", arguments: StateBackend.allCases)
    func bound(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let database = GuardDatabase(store: try backend.location(directory).store(), nameLimit: 16)
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 100, maximumDelay: 0)
            let victim = Array("victim".utf8)
            for n in 1...20 { _ = try database.reserve(victim, now: Int64(n), policy: policy) }
            for n in 0..<100 {
                _ = try database.reserve(Array("fresh-\(n)".utf8), now: Int64(1_000 + n), policy: policy)
            }
            #expect(try database.nameCount() == 16 && database.rows().count == 16)
            #expect(try database.row(victim)?.count == 20)
            let long = [UInt8](repeating: 0x61, count: 8_192)
            _ = try database.reserve(long, now: 5_000, policy: policy)
            #expect(try database.row(long)?.count == 1 && database.row(long + [0x62]) == nil)
        }
    }

    @Test("8 threads × 50 failures on one name and on their own names lose no count", arguments: StateBackend.allCases)
    func concurrency(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let location = try backend.location(directory)
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 100, maximumDelay: 0)
            let errors = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                // Each thread its own store (SQLite: its own connection, as a process).
                let database = GuardDatabase(store: location.store())
                for n in 0..<50 {
                    do {
                        _ = try database.reserve(Array("shared".utf8), now: Int64(n), policy: policy)
                        _ = try database.reserve(Array("own-\(thread)".utf8), now: Int64(n), policy: policy)
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }
            }
            #expect(errors.withLock { $0 } == [])
            let database = GuardDatabase(store: location.store())
            // 400 attempts, locked out at 100: every admitted one counted, none past the lockout.
            #expect(try database.row(Array("shared".utf8))?.count == 100)
            for thread in 0..<8 { #expect(try database.row(Array("own-\(thread)".utf8))?.count == 50) }
            #expect(try database.nameCount() == 9)
        }
    }

    @Test("a code step is accepted once, also by 8 threads racing with the same code", arguments: StateBackend.allCases)
    func codeSteps(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let location = try backend.location(directory)
            let store = location.store()
            let bob = Array("bob".utf8)
            #expect(try store.write { try $0.codeSteps.accept(user: bob, step: 10) })
            #expect(try !store.write { try $0.codeSteps.accept(user: bob, step: 10) })
            #expect(try !store.write { try $0.codeSteps.accept(user: bob, step: 9) })
            #expect(try store.read { try $0.codeSteps.lastStep(user: bob) } == 10)
            let accepted = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let store = location.store()
                if (try? store.write({ try $0.codeSteps.accept(user: bob, step: 11) })) == true {
                    accepted.add(1, ordering: .relaxed)
                }
            }
            #expect(accepted.load(ordering: .relaxed) == 1)
            try store.write { try $0.codeSteps.remove(user: bob) }
            #expect(try store.read { try $0.codeSteps.lastStep(user: bob) } ?? nil == nil)
        }
    }

    @Test(
        "invitations (§12): single use also when 8 threads race with one code, expiring, bound, revoked",
        arguments: StateBackend.allCases)
    func invitations(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let location = try backend.location(directory)
            let registrations = Registrations(location: location)
            let issued = try registrations.issue(count: 2, lifetime: 100, user: nil, now: 1000)
            let bound = try registrations.issue(count: 1, lifetime: 100, user: "dora", now: 1000)[0]
            #expect(try registrations.accepts(issued[0].code, username: "x", now: 1099))
            #expect(try !registrations.accepts(issued[0].code, username: "x", now: 1100), "expired at its second")
            #expect(try registrations.accepts(bound.code, username: "dora", now: 1000))
            #expect(try !registrations.accepts(bound.code, username: "carla", now: 1000))
            let redeemed = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 8) { n in
                // Each thread its own store: another process, or another host on PostgreSQL.
                let racer = Registrations(location: location)
                if (try? racer.redeem(issued[0].code, username: "racer\(n)", now: 1001)) ?? nil != nil {
                    redeemed.add(1, ordering: .relaxed)
                }
            }
            #expect(redeemed.load(ordering: .relaxed) == 1)
            #expect(try registrations.revoke(id: issued[1].id))
            #expect(try !registrations.accepts(issued[1].code, username: "x", now: 1000))
            #expect(try registrations.invitations().map(\.id) == [issued[0].id, bound.id])
            #expect(try registrations.invitations().first?.used == 1001)
        }
    }

    @Test(
        "registration limits (§12): 8 threads racing for the last free places of the hour get exactly them",
        arguments: StateBackend.allCases)
    func registrationLimits(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let location = try backend.location(directory)
            let limits = RegistrationLimits(perAddress: 100, total: 3)
            let admitted = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 8) { n in
                let racer = Registrations(location: location)
                if (try? racer.admit(client: "client-\(n)", limits: limits, now: 10)) ?? nil != nil {
                    admitted.add(1, ordering: .relaxed)
                }
            }
            #expect(admitted.load(ordering: .relaxed) == 3)
            let later = Registrations(location: location)
            #expect(try later.admit(client: "late", limits: limits, now: 20) == nil)
            #expect(try later.admit(client: "late", limits: limits, now: 3611) != nil, "an hour later")
        }
    }

    @Test("pending sign-ins (§14's second step): stored, read, used up once", arguments: StateBackend.allCases)
    func pendingSignIns(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let store = try backend.location(directory).store()
            let pending = PendingSignIn(
                tokenDigest: Array(repeating: 7, count: 32), user: "bob", entryDigest: [1, 2, 3], expires: 400,
                target: "https://app.example/x")
            let old = PendingSignIn(
                tokenDigest: Array(repeating: 8, count: 32), user: "eve", entryDigest: [4], expires: 100, target: nil)
            try store.write { try $0.pendingSignIns.insert(old, now: 50) }
            try store.write { try $0.pendingSignIns.insert(pending, now: 100) }
            #expect(try store.read { try $0.pendingSignIns.pending(tokenDigest: old.tokenDigest) } ?? nil == nil)
            #expect(try store.read { try $0.pendingSignIns.pending(tokenDigest: pending.tokenDigest) } == pending)
            #expect(try store.write { try $0.pendingSignIns.delete(tokenDigest: pending.tokenDigest) })
            #expect(try !store.write { try $0.pendingSignIns.delete(tokenDigest: pending.tokenDigest) })
        }
    }

    @Test("both backends have the same schema steps; state --init reports the version")
    func schema() throws {
        #expect(PostgreSQLStateStore.migrations.count == SQLiteStateStore.migrations.count)
        let server = try PostgreSQLServer.shared()
        let state = try server.freshDatabase()
        let location = try StateLocation(state: state, credentialFile: "unused")
        let first = try location.initialize()
        #expect(first.before == 0 && first.after == SQLiteStateStore.migrations.count)
        #expect(try location.initialize().before == SQLiteStateStore.migrations.count)
        let name = String(state.dropFirst("postgresql:///".count).prefix { $0 != "?" })
        #expect(try server.psql("SELECT version FROM credfile_schema", database: name) == "\(first.after)\n")
    }

    @Test("a password in the connection string is refused; the string is never echoed")
    func password() throws {
        for state in [
            "postgresql://credfile:s3cr3t-canary@db.example/credfile",
            "postgresql://db.example/credfile?password=s3cr3t-canary",
            "host=db.example dbname=credfile password=s3cr3t-canary",
            "password = s3cr3t-canary host=db.example",
        ] {
            do {
                _ = try StateLocation(state: state, credentialFile: "unused")
                Issue.record("accepted \(state)")
            } catch {
                #expect(error.code == .usage)
                #expect(!error.message.contains("s3cr3t"))
            }
        }
        #expect(StateLocation.isPostgreSQL("postgres://x/y") && !StateLocation.isPostgreSQL("/var/lib/x.db"))
        #expect(StateLocation.isPostgreSQL("host=db.example dbname=app") && StateLocation.isPostgreSQL("dbname =app"))
        #expect(!StateLocation.isPostgreSQL("/var/lib/host=x.db") && !StateLocation.isPostgreSQL("/srv/a b=c"))
    }

    @Test("§15's \"any libpq connection string\": the keyword = value form reaches the same database as the URI")
    func keywordForm() throws {
        let server = try PostgreSQLServer.shared()
        let uri = try server.freshDatabase()
        let name = String(uri.dropFirst("postgresql:///".count).prefix { $0 != "?" })
        let keywords = "host=\(server.directory) user=credfile dbname=\(name)"
        let location = try StateLocation(state: keywords, credentialFile: "unused")
        #expect(location.path == nil, "a PostgreSQL location, not an SQLite path")
        let bob = Array("bob".utf8)
        #expect(try location.store().write { try $0.codeSteps.accept(user: bob, step: 42) })
        let other = try StateLocation(state: uri, credentialFile: "unused").store()
        #expect(try other.read { try $0.codeSteps.lastStep(user: bob) } == 42)
    }

    @Test("Documentation/several-hosts.md's grants, as written: a role that may not create tables uses every table")
    func grantsRecipe() throws {
        try withTemporaryDirectory { directory in
            let server = try PostgreSQLServer.shared()
            let owner = try server.freshDatabase()
            let database = String(owner.dropFirst("postgresql:///".count).prefix { $0 != "?" })
            #expect(try StateLocation(state: owner, credentialFile: directory.file("x")).initialize().before == 0)
            // The page's block that follows "run `--init` once as the owner and grant:".
            let page = try String(
                contentsOf: BuiltProduct.packageRoot.appendingPathComponent("Documentation/several-hosts.md"),
                encoding: .utf8)
            let after = try #require(page.range(of: "run `--init` once as the owner and grant:\n\n```text\n"))
            let grants = String(page[after.upperBound...].prefix { $0 != "`" })
            #expect(grants.contains("GRANT"))
            try server.psql(
                "DO $$ BEGIN CREATE ROLE credfile_serve LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
            try server.psql(grants, database: database)
            let served = try StateLocation(
                state: server.connectionString(database).replacingOccurrences(
                    of: "user=credfile", with: "user=credfile_serve"),
                credentialFile: directory.file("x"))
            // Not the owner: it may not create a table (so the grants are what let it in).
            #expect(throws: (any Error).self) {
                try server.psql("SET ROLE credfile_serve; CREATE TABLE intruder (x int)", database: database)
            }
            // Every table, as serve uses it.
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 10, maximumDelay: 0)
            let guardDatabase = GuardDatabase(store: served.store())
            #expect(try guardDatabase.reserve(Array("bob".utf8), now: 1, policy: policy) == .admitted(count: 1))
            let sessions = CachedSessionStorage(SQLiteSessionStorage(location: served))
            _ = try sessions.key(named: "grants-test")
            let record = SessionRecord(
                tokenDigest: Array(repeating: 3, count: 32), user: "bob", entryDigest: [1], started: 1,
                lastSeen: 4_000_000_000,
                client: nil, userAgent: nil)
            try sessions.insert(record, limit: 4)
            #expect(try sessions.session(tokenDigest: record.tokenDigest)?.user == "bob")
            #expect(try sessions.remove(tokenDigest: record.tokenDigest))  // the trigger runs as this role
            let registrations = Registrations(location: served)
            let invitation = try registrations.issue(count: 1, lifetime: 100, user: nil, now: 1000)[0]
            #expect(try registrations.redeem(invitation.code, username: "carla", now: 1001) != nil)
            #expect(
                try registrations.admit(
                    client: "192.0.2.1", limits: RegistrationLimits(perAddress: 5, total: 5), now: 1) != nil)
            let store = served.store()
            #expect(try store.write { try $0.codeSteps.accept(user: Array("bob".utf8), step: 7) })
            try store.write {
                try $0.challenges.insert(digest: [9], purpose: 1, user: Array("bob".utf8), expires: 100, now: 1)
            }
            #expect(try store.write { try $0.challenges.take(digest: [9]) }?.purpose == 1)
            let pending = PendingSignIn(
                tokenDigest: Array(repeating: 5, count: 32), user: "bob", entryDigest: [1], expires: 400, target: nil)
            try store.write { try $0.pendingSignIns.insert(pending, now: 100) }
            #expect(try store.write { try $0.pendingSignIns.delete(tokenDigest: pending.tokenDigest) })
        }
    }

    @Test("the database stopped: a guardDatabase error, never an admitted attempt; it reconnects when back")
    func outage() throws {
        let server = try PostgreSQLServer()
        defer { server.stop() }
        let state = try server.freshDatabase()
        let database = GuardDatabase(store: try StateLocation(state: state, credentialFile: "unused").store())
        let policy = try GuardPolicy(freeFailures: 10, maximumFailures: 100, maximumDelay: 0)
        let bob = Array("bob".utf8)
        #expect(try database.reserve(bob, now: 1, policy: policy) == .admitted(count: 1))
        server.stopServer()
        for n in 2...4 {
            do {
                let answer = try database.reserve(bob, now: Int64(n), policy: policy)
                Issue.record("answered \(answer) with the database stopped")
            } catch {
                #expect(error.code == .guardDatabase)
            }
        }
        try server.restart()
        #expect(try database.reserve(bob, now: 5, policy: policy) == .admitted(count: 2))
    }
}
