import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// Issue #33 item 2 through a real `credfile serve` on loopback, asked by curl: the cache
/// of good logins is never an oracle for a throttled or locked-out name (SPEC §10). The
/// victim logs in (cached); an attacker throttles the name with a few real guesses, then
/// tries many passwords quickly, the right one among them. (The library's side:
/// CredFileTests/CacheOracleTests.swift.)
@Suite(.serialized) struct IntegrationServeCacheTests {
    typealias Service = IntegrationServeTests.Service

    static let victim = "192.0.2.10"
    static let stranger = "198.51.100.7"

    /// `alice`'s failures in serve's guard database (the default one beside FILE).
    static func failures(_ file: String) throws -> Int {
        let reader = try LoginGuard(credentialFile: file, log: .none, service: "test")
        return try reader.failureRecord(username: IntegrationServeTests.alice.0)?.failures ?? 0
    }

    /// One request for `alice` with `password`, from `client` (X-Real-IP, believed from the trusted loopback peer).
    static func ask(_ session: CLISession, _ url: String, _ password: String, from client: String) throws -> String {
        try IntegrationServeTests.ask(
            session, url, user: (IntegrationServeTests.alice.0, password), extraHeaders: ["X-Real-IP: \(client)"]
        ).status
    }

    @Test(
        "the attack through serve: a throttled name's cache tells a stranger nothing, its owner keeps working, and the lockout comes at max-failures",
        .timeLimit(.minutes(2)),
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func cacheIsNoOracle() throws {
        try withSession { session in
            let file = try IntegrationServeTests.users(session, [IntegrationServeTests.alice])
            let right = session.password(IntegrationServeTests.alice.1)
            let port = try Integration.freePort()
            let maximum = 12
            let service = try Service(
                session, file: file, listen: "127.0.0.1:\(port)",
                [
                    "--log", "stderr", "--free-failures", "0", "--max-failures", "\(maximum)", "--trusted-proxy",
                    "127.0.0.1/32",
                ])
            let url = "http://127.0.0.1:\(port)/auth"
            // The victim logs in: hashed, then cached and owned by its address.
            #expect(try Self.ask(session, url, right, from: Self.victim) == "200", "\(service.log)")
            #expect(try Self.ask(session, url, right, from: Self.victim) == "200", "\(service.log)")
            // The attacker throttles the name with real guesses, each after the delay the
            // last one set (1 s, 2 s, 4 s): after the fourth, the next waits 8 s.
            for (guess, wait) in [("guess-1", 1.2), ("guess-2", 2.2), ("guess-3", 4.2), ("guess-4", 0)] {
                #expect(try Self.ask(session, url, guess, from: Self.stranger) == "401")
                usleep(UInt32(wait * 1_000_000))
            }
            #expect(try Self.failures(file) == 4, "\(service.log)")
            // Then many passwords quickly, the right one early among them: nothing is granted
            // to the stranger, nothing is counted.
            let guesses = (0..<24).map { $0 == 3 ? right : "quick-\($0)" }
            let answers = try guesses.map { try Self.ask(session, url, $0, from: Self.stranger) }
            #expect(answers == Array(repeating: "401", count: guesses.count), "\(service.log)")
            #expect(try Self.failures(file) == 4, "a guess too early was counted: \(service.log)")
            // The owner keeps working while the name is throttled.
            #expect(try Self.ask(session, url, right, from: Self.victim) == "200", "\(service.log)")
            // An attacker behind the owner's address has every miss counted: the lockout
            // comes at max-failures, after exactly max-failures − 4 more comparisons.
            var compared = 0
            while try Self.failures(file) < maximum, compared < 2 * maximum {
                #expect(try Self.ask(session, url, "nat-\(compared)", from: Self.victim) == "401")
                compared += 1
            }
            #expect(compared == maximum - 4, "\(service.log)")
            for client in [Self.victim, Self.stranger] {
                #expect(try Self.ask(session, url, right, from: client) == "401", "a locked-out name was let in")
            }
            #expect(try Self.failures(file) == maximum)
            service.waitForLog("locked out; user=alice")
            let log = service.log
            #expect(!log.contains("authentication success; service=serve user=alice rhost=\(Self.stranger)"), "\(log)")
            #expect(log.contains("user=alice rhost=\(Self.stranger) "), "\(log)")
            #expect(log.contains("reason=throttled") && log.contains("reason=locked-out"), "\(log)")
            #expect(log.contains("locked out; user=alice failures=\(maximum)"), "\(log)")
        }
    }
}
