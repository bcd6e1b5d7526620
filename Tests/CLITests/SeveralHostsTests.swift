import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// SPEC §15 with the built binary: two `serve` processes (two hosts behind a load
/// balancer) on one PostgreSQL 15 state database the test starts in a private directory,
/// and FILE replaced by rename under a running `serve`.
@Suite(.serialized) struct SeveralHostsTests {
    typealias Serve = IntegrationServeTests

    /// Two serves on `state`, on loopback ports, with `extra` options.
    static func twoServes(_ session: CLISession, file: String, state: String, _ extra: [String]) throws -> [(
        Serve.Service, String
    )] {
        try (0..<2).map { _ in
            let port = try Integration.freePort()
            let service = try Serve.Service(
                session, file: file, listen: "127.0.0.1:\(port)", ["--state", state, "--log", "stderr"] + extra)
            return (service, "http://127.0.0.1:\(port)/auth")
        }
    }

    @Test(
        "failures alternated between two serves lock the name out at exactly max-failures",
        .enabled(
            if: PostgreSQLServer.isInstalled && ExternalTool.runnable("curl"),
            Comment(rawValue: PostgreSQLServer.skipNote)))
    func alternatedFailures() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let state = try PostgreSQLServer.shared().freshDatabase()
            let serves = try Self.twoServes(
                session, file: file, state: state, ["--max-failures", "6", "--max-delay", "0", "--cache-seconds", "0"])
            let (alice, password) = Serve.alice
            for n in 0..<5 {
                let answer = try Serve.ask(session, serves[n % 2].1, user: (alice, "wrong-\(n)"))
                #expect(answer.status == "401")
            }
            // After 5 of 6: the right password still passes on either, and resets the count.
            #expect(try Serve.ask(session, serves[1].1, user: (alice, password)).status == "200")
            for n in 0..<6 {
                #expect(try Serve.ask(session, serves[n % 2].1, user: (alice, "wrong-\(n)")).status == "401")
            }
            for (service, url) in serves {
                #expect(try Serve.ask(session, url, user: (alice, password)).status == "401", "\(service.log)")
            }
            let failures = try CLI.run(["failures", file, alice, "--state", state, "--json"])
            #expect(failures.stdout.contains("\"failures\":6") && failures.stdout.contains("\"locked_out\":true"))
            #expect(serves[1].0.log.contains("locked out; user=alice failures=6"))
        }
    }

    @Test(
        "the database stopped mid-run: 503 and no grant on both serves; they recover when it returns",
        .enabled(
            if: PostgreSQLServer.isInstalled && ExternalTool.runnable("curl"),
            Comment(rawValue: PostgreSQLServer.skipNote)))
    func outage() throws {
        try withSession { session in
            let server = try PostgreSQLServer()
            defer { server.stop() }
            let file = try Serve.users(session)
            let state = try server.freshDatabase()
            let initialized = try CLI.run(["state", file, "--state", state, "--init"])
            #expect(initialized.status == 0 && initialized.stdout.contains("schema 0 -> "), "\(initialized)")
            let serves = try Self.twoServes(session, file: file, state: state, ["--cache-seconds", "0"])
            let (alice, password) = Serve.alice
            for (_, url) in serves { #expect(try Serve.ask(session, url, user: (alice, password)).status == "200") }
            let grantedBefore = serves[0].0.log.components(separatedBy: "authentication success").count
            server.stopServer()
            for (service, url) in serves {
                for _ in 0..<3 {
                    #expect(try Serve.ask(session, url, user: (alice, password)).status == "503", "\(service.log)")
                    #expect(try Serve.ask(session, url, user: (alice, "wrong")).status == "503")
                }
            }
            // Logged, but not once per request (at most once a second).
            let lines = serves[0].0.log.split(separator: "\n").filter { $0.contains("guard database unusable") }
            #expect(!lines.isEmpty && lines.count < 6, "\(serves[0].0.log)")
            #expect(serves[0].0.log.components(separatedBy: "authentication success").count == grantedBefore)
            let verify = try CLI.run(["verify", file, alice, "--state", state], stdin: password + "\n")
            #expect(verify.status == 5, "\(verify)")
            try server.restart()
            for (service, url) in serves {
                #expect(try Serve.ask(session, url, user: (alice, password)).status == "200", "\(service.log)")
            }
        }
    }

    @Test(
        "a sign-out on one serve ends the session on the other at its next request",
        .enabled(if: PostgreSQLServer.isInstalled, Comment(rawValue: PostgreSQLServer.skipNote)))
    func signOutEverywhere() throws {
        typealias Portal = IntegrationPortalTests
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [Portal.alice])
            let state = try PostgreSQLServer.shared().freshDatabase()
            let ports = [try Integration.freePort(), try Integration.freePort()]
            let serves = try ports.map { try Portal.service(session, file, port: $0, ["--state", state]) }
            var onA = Portal.Browser(port: ports[0])
            _ = try onA.open()
            #expect(try onA.signIn("alice", Portal.alice.1).status == 303)
            // The load balancer sends the same browser to host B: same cookies.
            let onB = Portal.Browser(port: ports[1], preSession: onA.preSession, csrf: onA.csrf, session: onA.session)
            #expect(try onB.auth().status == 200, "\(serves[1].log)")
            let out = try Portal.send(
                ports[0], "POST", "/.credfile/logout",
                headers: [("Origin", "https://\(Portal.host)"), ("Cookie", onA.cookie)],
                body: Portal.form([("csrf", onA.csrf)]))
            #expect(out.status == 303)
            #expect(try onB.auth().status == 401, "\(serves[1].log)")
        }
    }

    @Test(
        "a one-time code used on one serve fails on the other",
        .enabled(
            if: PostgreSQLServer.isInstalled && ExternalTool.runnable("oathtool", "curl"),
            Comment(rawValue: PostgreSQLServer.skipNote)))
    func codeOnce() throws {
        try withSession { session in
            let file = try SecondFactorCLITests.files(session)
            let state = try PostgreSQLServer.shared().freshDatabase()
            let serves = try Self.twoServes(
                session, file: file, state: state, ["--otp-append", "--cache-seconds", "0"])
            let code = try SecondFactorCLITests.oathtoolCode(session)
            let typed = SecondFactorCLITests.password + code
            #expect(try Serve.ask(session, serves[0].1, user: ("bob", typed)).status == "200", "\(serves[0].0.log)")
            #expect(try Serve.ask(session, serves[1].1, user: ("bob", typed)).status == "401", "\(serves[1].0.log)")
            #expect(serves[1].0.log.contains("reason=wrong-code"), "\(serves[1].0.log)")
        }
    }

    @Test(
        "8 processes × 50 failures on one PostgreSQL database lose no count",
        .enabled(if: PostgreSQLServer.isInstalled, Comment(rawValue: PostgreSQLServer.skipNote)))
    func eightProcesses() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let state = try PostgreSQLServer.shared().freshDatabase()
            let credfile = try Integration.credfile(in: session)
            // Each process: 25 failures on its own name, 25 on shared-(N mod 2): four
            // processes race on each shared name's row, 100 attempts, exactly max-failures.
            let script = """
                i=0
                while [ $i -lt 25 ]; do
                    echo wrong | "$1" verify "$2" "own-$3" --state "$4" --max-delay 0 --log none --iterations 1000
                    echo wrong | "$1" verify "$2" "shared-$(($3 % 2))" --state "$4" --max-delay 0 --log none --iterations 1000
                    i=$((i + 1))
                done >/dev/null 2>&1
                """
            let processes = try (0..<8).map { n in
                try ChildProcess.start("/bin/sh", ["-c", script, "sh", credfile, file, "\(n)", state])
            }
            for process in processes { _ = try process.wait(timeout: .seconds(300)) }
            let listing = try CLI.run(["failures", file, "--state", state, "--json"])
            let records = try #require(
                try JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [[String: Any]])
            let counts = Dictionary(
                uniqueKeysWithValues: records.map { ($0["user"] as? String ?? "", $0["failures"] as? Int ?? 0) })
            for n in 0..<8 { #expect(counts["own-\(n)"] == 25, "\(listing.stdout)") }
            #expect(counts["shared-0"] == 100 && counts["shared-1"] == 100, "\(listing.stdout)")
        }
    }

    @Test(
        "FILE replaced by rename while serve runs: the next request uses the new file",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func replacedByRename() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let port = try Integration.freePort()
            let service = try Serve.Service(session, file: file, listen: "127.0.0.1:\(port)")
            let url = "http://127.0.0.1:\(port)/auth"
            let (alice, old) = Serve.alice
            #expect(try Serve.ask(session, url, user: (alice, old)).status == "200")
            // As rsync does: the new copy written beside FILE, then renamed over it.
            let staged = session.path(".users.txt.rsync")
            var store = CredentialStore(path: staged, policy: try HashPolicy(rounds: Integration.rounds))
            store.passwordPolicy = .permissive
            let new = "Otra-clave-distinta-2026"
            try store.register(username: alice, password: Password(new), storage: .hashed)
            chmod(staged, 0o644)
            #expect(rename(staged, file) == 0)
            #expect(try Serve.ask(session, url, user: (alice, new)).status == "200", "\(service.log)")
            #expect(try Serve.ask(session, url, user: (alice, old)).status == "401")
        }
    }
}
