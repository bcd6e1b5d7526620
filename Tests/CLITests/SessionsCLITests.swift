import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import credfile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §11's sessions as an admin sees them: `credfile sessions FILE [USER] [--end]
// [--json]` over the state database that serve's portal writes, and a session ended by a
// change of its user's line made by `passwd` and `lock`.

@Suite("credfile sessions and sessions ended by a changed entry (SPEC §11)")
struct SessionsCLITests {
    /// The line of `user` in `path` now (its content without ending), nil when none.
    static func line(_ path: String, _ user: String) throws -> [UInt8]? {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return CredentialFile(bytes: bytes).firstEntry(named: user).map { Array($0.content) }
    }

    /// FILE with bob and alice, hashed with few rounds.
    static func file(_ session: CLISession) throws -> String {
        var store = CredentialStore(path: session.path("app.cred"), policy: try HashPolicy(rounds: 1000))
        store.passwordPolicy = .permissive
        for (user, password) in [("bob", "Tangerine-River-Stone-7"), ("alice", "Walnut-Harbor-Kite-42")] {
            try store.register(username: user, password: Password(session.password(password)), storage: .hashed)
        }
        return store.path
    }

    @Test("sessions lists user, times, client and user agent, never a token; --end ends one user's or all")
    func listAndEnd() throws {
        try withSession { session in
            let file = try Self.file(session)
            let storage = SQLiteSessionStorage(path: file + ".guard.db")
            let sessions = try PortalSessions(storage: storage, limits: try SessionLimits())
            let line = { (user: String) throws -> [UInt8]? in try Self.line(file, user) }
            var tokens: [SessionToken] = []
            for (user, second) in [("bob", 1_800_000_000), ("alice", 1_800_000_060), ("bob", 1_800_000_120)] {
                tokens.append(
                    try sessions.start(
                        user: user, line: try #require(try line(user)), now: Int64(second), client: "203.0.113.9",
                        userAgent: "Mozilla/5.0 (X11; Linux x86_64)\tevil"))
            }
            let text = session.run(["sessions", file])
            #expect(text.status == 0)
            let rows = text.stdout.split(separator: "\n")
            #expect(
                rows.count == 3
                    && rows[0].hasPrefix("bob\tstarted 2027-01-15T08:00:00Z\tlast seen 2027-01-15T08:00:00Z"))
            #expect(rows[1].hasPrefix("alice\t") && rows.allSatisfy { $0.contains("203.0.113.9") })
            #expect(!text.stdout.contains("\tevil"), "a tab in the user agent is printed raw")
            let json = session.run(["sessions", file, "bob", "--json"])
            let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(items.count == 2 && items.allSatisfy { $0["user"] as? String == "bob" })
            #expect(items.first?["started"] as? String == "2027-01-15T08:00:00Z")
            #expect(
                Set(items.first?.keys.map { $0 } ?? []) == ["user", "started", "last_seen", "client", "user_agent"])
            for token in tokens {
                #expect(!text.stdout.contains(token.cookieValue) && !json.stdout.contains(token.cookieValue))
            }
            let ended = session.run(["sessions", file, "bob", "--end"])
            #expect(ended.status == 0 && ended.stdout == "2 sessions ended\n")
            #expect(try sessions.check(tokens[0], now: 1_800_000_200, line: line) == .none(reason: nil))
            #expect(try sessions.check(tokens[1], now: 1_800_000_200, line: line) == .signedIn(user: "alice"))
            #expect(session.run(["sessions", file, "--end"]).stdout == "1 session ended\n")
            #expect(session.run(["sessions", file]).stdout == "")
        }
    }

    @Test("sessions on a FILE whose state database does not exist lists none and creates nothing")
    func noDatabase() throws {
        try withSession { session in
            let file = try Self.file(session)
            #expect(session.run(["sessions", file, "--json"]).stdout == "[]\n")
            #expect(session.run(["sessions", file, "--end"]).status == 0)
            #expect(access(file + ".guard.db", F_OK) != 0)
        }
    }

    @Test("passwd and lock end the user's sessions at their next request; another user's stay")
    func changedEntryEnds() throws {
        try withSession { session in
            let file = try Self.file(session)
            let sessions = try PortalSessions(
                storage: SQLiteSessionStorage(path: file + ".guard.db"), limits: try SessionLimits())
            let line = { (user: String) throws -> [UInt8]? in try Self.line(file, user) }
            let now: Int64 = 1_800_000_000
            let bob = try sessions.start(user: "bob", line: try #require(try line("bob")), now: now)
            let alice = try sessions.start(user: "alice", line: try #require(try line("alice")), now: now)
            let passwd = session.run(
                ["passwd", file, "bob", "--iterations", "1000"], stdin: [session.password("Olive-Compass-Lantern-9")])
            #expect(passwd.status == 0)
            #expect(try sessions.check(bob, now: now + 1, line: line) == .none(reason: .entryChanged))
            #expect(try sessions.check(alice, now: now + 1, line: line) == .signedIn(user: "alice"))
            let again = try sessions.start(user: "alice", line: try #require(try line("alice")), now: now + 2)
            #expect(session.run(["lock", file, "alice"]).status == 0)
            #expect(try sessions.list(user: "alice").count == 2, "a session ends at its next request, not before")
            #expect(try sessions.check(again, now: now + 3, line: line) == .none(reason: .entryChanged))
            #expect(try sessions.check(alice, now: now + 3, line: line) == .none(reason: .entryChanged))
            #expect(try sessions.list(user: nil).isEmpty)
        }
    }
}
