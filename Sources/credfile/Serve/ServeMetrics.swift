import CredFile
import Synchronization

/// SPEC §16: what `serve --metrics-listen ADDRESS` answers at `GET /metrics`, in
/// Prometheus' text format (version 0.0.4). Counters of this process since it started;
/// never a name, an address or a secret in a label: the labels are `method` and `result`,
/// each from a fixed list.
final class ServeMetrics: Sendable {
    /// How a login came: `basic` (an `Authorization: Basic` header), `form` (the sign-in
    /// page), `session` (a session cookie); the passkeys branch adds `passkey`.
    enum Method: String, CaseIterable, Sendable {
        case basic, form, session, passkey
    }

    /// What became of it.
    enum Result: String, CaseIterable, Sendable {
        case granted, denied, throttled
        case lockedOut = "locked_out"
        case unavailable
    }

    /// The histogram's upper bounds, in seconds (a cached login takes microseconds, a
    /// policy PBKDF2 a quarter second, a queued one longer).
    static let bounds: [Double] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// The process's metrics.
    static let shared = ServeMetrics()

    /// The counters, behind one lock (a login takes it once).
    private struct Counts {
        var logins = [Int](repeating: 0, count: Method.allCases.count * Result.allCases.count)
        var buckets = [Int](repeating: 0, count: ServeMetrics.bounds.count)
        var durationCount = 0
        var durationSum = 0.0
        var cacheHits = 0
        var registrations = 0
    }
    private let counts = Mutex(Counts())

    /// Counts one login's outcome and how long it took to answer.
    func login(_ method: Method, _ result: Result, seconds: Double) {
        let methodIndex = Method.allCases.firstIndex(of: method) ?? 0
        let resultIndex = Result.allCases.firstIndex(of: result) ?? 0
        counts.withLock { counts in
            counts.logins[methodIndex * Result.allCases.count + resultIndex] += 1
            for (index, bound) in Self.bounds.enumerated() where seconds <= bound { counts.buckets[index] += 1 }
            counts.durationCount += 1
            counts.durationSum += seconds
        }
    }

    /// The outcome of a login the guard answered: `verification`, or nil when it threw.
    static func result(of verification: CredentialStore.Verification?) -> Result {
        guard let verification else { return .unavailable }
        if verification.granted { return .granted }
        switch verification.denial {
        case .throttled: return .throttled
        case .lockedOut: return .lockedOut
        default: return .denied
        }
    }

    /// Counts a login answered from the cache of good logins.
    func cacheHit() { counts.withLock { $0.cacheHits += 1 } }

    /// Counts an account made on the registration page (SPEC §12).
    func registration() { counts.withLock { $0.registrations += 1 } }

    /// The text `GET /metrics` answers; `sessions` and `hashQueue` are read at the scrape.
    func text(sessions: Int, hashQueue: Int) -> String {
        let counts = self.counts.withLock { $0 }
        var out = """
            # HELP credfile_logins_total Logins answered, by how they came and what became of them.
            # TYPE credfile_logins_total counter

            """
        for (m, method) in Method.allCases.enumerated() {
            for (r, result) in Result.allCases.enumerated() {
                let value = counts.logins[m * Result.allCases.count + r]
                out += "credfile_logins_total{method=\"\(method.rawValue)\",result=\"\(result.rawValue)\"} \(value)\n"
            }
        }
        out += """
            # HELP credfile_login_duration_seconds How long a login took to answer.
            # TYPE credfile_login_duration_seconds histogram

            """
        for (index, bound) in Self.bounds.enumerated() {
            out += "credfile_login_duration_seconds_bucket{le=\"\(bound)\"} \(counts.buckets[index])\n"
        }
        let count = counts.durationCount
        let sum = counts.durationSum
        out += "credfile_login_duration_seconds_bucket{le=\"+Inf\"} \(count)\n"
        out += "credfile_login_duration_seconds_sum \(sum)\n"
        out += "credfile_login_duration_seconds_count \(count)\n"
        out += """
            # HELP credfile_sessions Sessions of the sign-in page in the state database.
            # TYPE credfile_sessions gauge
            credfile_sessions \(sessions)
            # HELP credfile_hash_queue Logins waiting for a hashing thread or being hashed.
            # TYPE credfile_hash_queue gauge
            credfile_hash_queue \(hashQueue)
            # HELP credfile_cache_hits_total Logins answered from the cache of good logins.
            # TYPE credfile_cache_hits_total counter
            credfile_cache_hits_total \(counts.cacheHits)
            # HELP credfile_registrations_total Accounts made on the registration page.
            # TYPE credfile_registrations_total counter
            credfile_registrations_total \(counts.registrations)

            """
        return out
    }

    /// The answer of the metrics listener to `request`: 200 with the text for
    /// `GET /metrics`, 404 for any other path, 405 for another method.
    static func answer(_ request: ServeRequest, service: LoginService) -> HTTPResponse {
        guard request.path == "/metrics" else { return HTTPResponse(status: 404) }
        guard request.method == "GET" || request.method == "HEAD" else { return HTTPResponse(status: 405) }
        let sessions = (try? service.generation.portal?.sessions.list(user: nil).count) ?? 0
        let body = shared.text(sessions: sessions, hashQueue: service.hashQueue)
        return HTTPResponse(
            status: 200,
            headers: [
                .init(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8"),
                .init(name: "Cache-Control", value: "no-store"),
            ], body: Array(body.utf8))
    }
}
