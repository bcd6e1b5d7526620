import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// SPEC §16: `serve --metrics-listen`: a live scrape after a mixed load, accepted by the
/// real `promtool check metrics` (Debian `prometheus`), whose counters match the log lines
/// the same run wrote; no name, address or secret in it.
@Suite(.serialized) struct MetricsTests {
    typealias Serve = IntegrationServeTests

    /// The value of the sample `series` (its whole text before the value) in `text`.
    static func value(_ text: String, _ series: String) -> Int? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    @Test(
        "metrics.md's Prometheus files as written: promtool accepts the scrape configuration and the alert rules",
        .enabled(
            if: ExternalTool.runnable("promtool") || ExternalTool.isCI,
            Comment(rawValue: ExternalTool.skipNote("promtool"))))
    func documentedFiles() throws {
        let examples = DocumentationPagesTests.root + "/Examples/metrics/"
        let promtool = try ExternalTool.path("promtool")
        let config = try ChildProcess.run(promtool, ["check", "config", "--syntax-only", examples + "prometheus.yml"])
        #expect(config.status == 0, "\(config)")
        let rules = try ChildProcess.run(promtool, ["check", "rules", examples + "credfile-alerts.yml"])
        #expect(rules.status == 0 && rules.stdout.contains("SUCCESS"), "\(rules)")
    }

    @Test(
        "a live scrape after a mixed load: promtool accepts it, the counters match the log, no name or address",
        .enabled(
            if: ExternalTool.runnable("curl", "promtool") || ExternalTool.isCI,
            Comment(rawValue: ExternalTool.skipNote("curl", "promtool")))
    )
    func scrape() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let port = try Integration.freePort()
            let metricsPort = try Integration.freePort()
            let service = try Serve.Service(
                session, file: file, listen: "127.0.0.1:\(port)",
                [
                    "--metrics-listen", "127.0.0.1:\(metricsPort)", "--log", "stderr", "--free-failures", "2",
                    "--max-failures", "4", "--max-delay", "1",
                ])
            let url = "http://127.0.0.1:\(port)/auth"
            let (alice, password) = Serve.alice
            var statuses: [String] = []
            // 1 checked, 2 cached.
            for _ in 0..<3 { statuses.append(try Serve.ask(session, url, user: (alice, password)).status) }
            for n in 0..<3 { statuses.append(try Serve.ask(session, url, user: ("mallory", "guess-\(n)")).status) }
            // mallory: 2 free failures, the 3rd throttles for 1 s: the next is throttled.
            statuses.append(try Serve.ask(session, url, user: ("mallory", "guess-x")).status)
            statuses.append(try Serve.ask(session, url, user: (alice, "wrong")).status)
            #expect(statuses == ["200", "200", "200", "401", "401", "401", "401", "401"])
            let scrape = try Integration.run(
                try ExternalTool.path("curl"), ["-s", "http://127.0.0.1:\(metricsPort)/metrics"], in: session)
            let text = scrape.stdout
            let promtool = try ChildProcess.run(
                try ExternalTool.path("promtool"), ["check", "metrics"], stdin: Array(text.utf8))
            #expect(promtool.status == 0, "\(promtool)\n\(text)")
            let log = service.log.split(separator: "\n")
            let successes = log.filter { $0.contains("authentication success;") }.count
            let failures = log.filter { $0.contains("authentication failure;") }
            let granted = Self.value(text, #"credfile_logins_total{method="basic",result="granted"}"#)
            let hits = Self.value(text, "credfile_cache_hits_total")
            // A login answered from the cache is not logged (SPEC §10): granted = logged + hits.
            #expect(granted == 3 && hits == 2 && successes == 1, "\(text)\n\(service.log)")
            #expect(
                Self.value(text, #"credfile_logins_total{method="basic",result="denied"}"#)
                    == failures.filter { $0.contains("reason=wrong-password") || $0.contains("reason=unknown-user") }
                    .count)
            #expect(
                Self.value(text, #"credfile_logins_total{method="basic",result="throttled"}"#)
                    == failures.filter { $0.contains("reason=throttled") }.count)
            #expect(Self.value(text, #"credfile_logins_total{method="basic",result="throttled"}"#) == 1)
            #expect(Self.value(text, "credfile_login_duration_seconds_count") == 8)
            for series in ["credfile_sessions", "credfile_hash_queue", "credfile_registrations_total"] {
                #expect(Self.value(text, series) != nil, "\(series) missing")
            }
            for secret in [alice, "mallory", "127.0.0.1", password, "guess"] {
                #expect(!text.contains(secret), "\(secret) in the scrape")
            }
            let other = try Integration.run(
                try ExternalTool.path("curl"),
                ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(metricsPort)/auth"],
                in: session)
            #expect(other.stdout == "404", "the metrics listener answers logins: \(other)")
        }
    }

    @Test("--metrics-listen on an address that is not loopback needs --listen-public")
    func publicNeedsFlag() throws {
        try withSession { session in
            let file = try Serve.users(session)
            let result = try CLI.run(
                [
                    "serve", file, "--listen", "127.0.0.1:\(try Integration.freePort())", "--metrics-listen",
                    "0.0.0.0:9999",
                ])
            #expect(result.status == 2, "\(result)")
        }
    }
}
