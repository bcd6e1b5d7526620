import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile

// SPEC §15 and issue #40's benchmark: a failure transaction on the PostgreSQL state store
// costs few round trips (pipelined statements, prepared once per connection), and what
// makes it cheap (BEGIN sent with the first statement, a write sent with the COMMIT, the
// name count changed by the statement that inserts) keeps every rule: the names count
// stays true under racing hosts, and a failed statement rolls the whole transaction back.

@Suite("PostgreSQL state store: the round trips of a failure, and what they keep")
struct PostgreSQLRoundTripTests {
    @Test(
        "a failure: 2 round trips, for a new name, a name with a row or a refusal; statements prepared once")
    func roundTrips() throws {
        let store = PostgreSQLStateStore(connectionString: try PostgreSQLServer.shared().freshDatabase())
        let database = GuardDatabase(store: store)
        let policy = try GuardPolicy(freeFailures: 2, maximumFailures: 4, maximumDelay: 1)
        let bob = Array("bob".utf8)
        #expect(try database.nameCount() == 0)  // connected and migrated
        /// What `body` answered, and how many round trips it took.
        func trips<R>(_ body: () throws -> R) rethrows -> (R, Int) {
            let before = store.roundTrips
            let answer = try body()
            return (answer, store.roundTrips - before)
        }
        // BEGIN + lock + SELECT; the INSERT with the name count, the bound, COMMIT.
        let new = try trips { try database.reserve(bob, now: 1_000, policy: policy) }
        #expect(new.0 == .admitted(count: 1) && new.1 == 2)
        // BEGIN + lock + SELECT; the write + COMMIT.
        let second = try trips { try database.reserve(bob, now: 1_001, policy: policy) }
        #expect(second.0 == .admitted(count: 2) && second.1 == 2)
        let third = try trips { try database.reserve(bob, now: 1_002, policy: policy) }
        #expect(third.0 == .admitted(count: 3) && third.1 == 2)
        // BEGIN + lock + SELECT; COMMIT.
        let early = try trips { try database.reserve(bob, now: 1_003, policy: policy) }
        #expect(early.0 == .throttled(count: 3) && early.1 == 2)
        #expect(try trips { try database.release(bob, policy: policy) }.1 == 2)
        #expect(try database.row(bob)?.count == 2 && database.nameCount() == 1)
        let prepared = {
            try store.read { tables in
                try (tables as! PostgreSQLTables).connection.query("SELECT count(*) FROM pg_prepared_statements")
                    .rows.first?[0].int
            } ?? nil
        }
        let first = try prepared()
        for n in 0..<20 { _ = try database.reserve(Array("n\(n)".utf8), now: 2_000, policy: policy) }
        #expect(try prepared() == first, "no statement prepared twice on one connection")
        #expect(try database.nameCount() == 21 && database.rows().count == 21)
    }

    @Test(
        "a statement that fails in a transaction rolls back all of it, the held-back write too; the connection goes on")
    func failedTransaction() throws {
        let store = PostgreSQLStateStore(connectionString: try PostgreSQLServer.shared().freshDatabase())
        let database = GuardDatabase(store: store)
        let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 10, maximumDelay: 0)
        let bob = Array("bob".utf8)
        #expect(try database.reserve(bob, now: 1, policy: policy) == .admitted(count: 1))
        for failing in ["SELECT 1 / 0", "SELECT no_such_column FROM failures"] {
            do {
                try store.write { tables in
                    let failures = tables.failures
                    let row = try failures.row(bob)!
                    _ = try failures.insert(
                        FailureRow(name: Array("eve".utf8), count: 1, lastFailure: 2, lockedOut: false))
                    try failures.update(FailureRow(name: bob, count: row.count + 5, lastFailure: 2, lockedOut: false))
                    try (tables as! PostgreSQLTables).connection.later(PostgreSQLStatement(failing))
                }
                Issue.record("\(failing) did not fail")
            } catch {
                #expect(error.code == .guardDatabase)
            }
            #expect(try database.row(bob)?.count == 1 && database.row(Array("eve".utf8)) == nil)
            #expect(try database.nameCount() == 1)
        }
        // The name's lock went with the rollback: another transaction takes it at once.
        #expect(try database.reserve(bob, now: 3, policy: policy) == .admitted(count: 2))
    }

    @Test("statements made up at run time: at most preparedLimit stay prepared, the rest still run, pipelined too")
    func preparedLimit() throws {
        let connection = try PostgreSQLConnection(connectionString: try PostgreSQLServer.shared().freshDatabase())
        let limit = PostgreSQLConnection.preparedLimit
        for n in 0..<limit + 20 {
            #expect(try connection.query("SELECT $1::bigint + \(n)", [.int(1)]).rows.first?[0].int == Int64(n + 1))
        }
        let two = try connection.run([
            PostgreSQLStatement("SELECT $1::bigint * 2", [.int(21)]),
            PostgreSQLStatement("SELECT $1::bigint * 3", [.int(14)]),
        ])
        #expect(two.map { $0.rows.first?[0].int } == [42, 42])
        let kept = try connection.query("SELECT count(*) FROM pg_prepared_statements").rows.first?[0].int
        #expect(kept == Int64(limit))
    }

    @Test(
        "8 threads inserting their own new names: the name count stays true, also at the bound",
        arguments: StateBackend.allCases)
    func racingNewNames(_ backend: StateBackend) throws {
        try withTemporaryDirectory { directory in
            let location = try backend.location(directory)
            let policy = try GuardPolicy(freeFailures: 5, maximumFailures: 100, maximumDelay: 0)
            let errors = Mutex<[String]>([])
            for (limit, prefix) in [(1_000, "free"), (50, "bound")] {
                DispatchQueue.concurrentPerform(iterations: 8) { thread in
                    let database = GuardDatabase(store: location.store(), nameLimit: limit)
                    for n in 0..<25 {
                        do {
                            _ = try database.reserve(
                                Array("\(prefix)-\(thread)-\(n)".utf8), now: Int64(n), policy: policy)
                        } catch {
                            errors.withLock { $0.append("\(error)") }
                        }
                    }
                }
                let database = GuardDatabase(store: location.store(), nameLimit: limit)
                let expected = prefix == "free" ? 200 : 50
                #expect(try database.nameCount() == expected && database.rows().count == expected, "\(prefix)")
            }
            #expect(errors.withLock { $0 } == [])
        }
    }
}
