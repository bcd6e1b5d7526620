// An example client of the CredFile library, using only its public names: what a Swift
// server (Vapor, Hummingbird, or a plain one) does with a credential file, and the
// figures that show why (SPEC §6). Run it with `bash Benchmarks/run.sh apps`, or:
//
//     swift run -c release credfile-server-example        # prints the figures
//
// Nothing here is asserted; the tests (Tests/CredFileTests/AppTests.swift) check the
// behaviour, this program measures it.
import CredFile
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// A scratch directory, removed at exit by the caller.
func scratchDirectory() -> String {
    var template = Array("/tmp/credfile-example-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }  // a writable /tmp
    guard let made else { fatalError("mkdtemp failed") }
    return String(cString: made)
}

/// The greatest lateness of a 10 ms heartbeat on the cooperative pool while `work` runs.
func heartbeatLateness(during work: @escaping @Sendable () async throws -> Void) async throws -> (max: Double, p99: Double) {
    let beats = Task { () -> [Double] in
        var late: [Double] = []
        while !Task.isCancelled {
            let start = ContinuousClock.now
            try? await Task.sleep(for: .milliseconds(10))
            late.append(max(0, seconds(since: start) - 0.010))
        }
        return late
    }
    try await Task.sleep(for: .milliseconds(50))
    try await work()
    beats.cancel()
    let late = await beats.value.sorted()
    guard !late.isEmpty else { return (0, 0) }
    return (late.last!, late[min(late.count - 1, late.count * 99 / 100)])  // non-empty
}

@main
struct ServerLoginsExample {
    static func main() async throws {
        let directory = scratchDirectory()
        defer { _ = unlink(directory + "/users.txt"); _ = unlink(directory + "/users.txt.lock"); _ = rmdir(directory) }
        let path = directory + "/users.txt"
        let logins = 16

        // A server's store: the default policy (1,200,000 rounds), sixteen users.
        let store = CredentialStore(path: path, caching: true)
        let users: [(String, String)] = (0..<logins).map { ("user\($0)", "correct horse battery \($0)") }
        try await store.importUsers(users.map { ($0.0, Password($0.1)) })

        // 1. The heartbeat: sync logins on the cooperative pool vs the async forms.
        let syncLateness = try await heartbeatLateness {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for (user, password) in users {
                    group.addTask { try syncLogin(store, user, password) }  // blocks a pool thread
                }
                for try await granted in group { precondition(granted) }
            }
        }
        let asyncLateness = try await heartbeatLateness {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for (user, password) in users {
                    group.addTask { try await store.authenticate(username: user, password: password) }
                }
                for try await granted in group { precondition(granted) }
            }
        }
        print("heartbeat lateness (10 ms beat, \(logins) logins at \(store.policy.rounds) rounds):")
        print("  sync on the cooperative pool: max \(ms(syncLateness.max)) ms, p99 \(ms(syncLateness.p99)) ms")
        print("  async (library threads):      max \(ms(asyncLateness.max)) ms, p99 \(ms(asyncLateness.p99)) ms")

        // 2. Throughput: sixteen concurrent async logins vs sixteen one after another.
        var start = ContinuousClock.now
        for (user, password) in users { _ = try await store.authenticate(username: user, password: password) }
        let sequential = seconds(since: start)
        start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for (user, password) in users { group.addTask { try await store.authenticate(username: user, password: password) } }
            for try await _ in group {}
        }
        let concurrent = seconds(since: start)
        print("throughput of \(logins) logins: concurrent ÷ sequential = \(ratio(sequential / concurrent))× (\(ms(sequential)) ms vs \(ms(concurrent)) ms)")

        // 3. The cache: 1,000 logins at 1 round on a 200,000-line file.
        var text = ""
        text.reserveCapacity(200_000 * 24)
        for i in 0..<200_000 { text += "person\(i),secret-\(i)\n" }
        let big = directory + "/big.txt"
        let fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { _ = unlink(big) }
        let onePolicy = try HashPolicy(rounds: 1)
        let plainStore = CredentialStore(path: big, policy: onePolicy)
        let cachedStore = CredentialStore(path: big, policy: onePolicy, caching: true)
        func time(_ s: CredentialStore) throws -> Double {
            let start = ContinuousClock.now
            for i in 0..<1_000 {
                let n = (i * 7919) % 200_000
                let granted = try s.authenticate(username: "person\(n)", password: "secret-\(n)")
                precondition(granted)
            }
            return seconds(since: start)
        }
        _ = try time(cachedStore)  // the first read builds the cache
        let plainTime = try time(plainStore)
        let cachedTime = try time(cachedStore)
        print("1,000 logins at 1 round on 200,000 lines: plain ÷ cached = \(ratio(plainTime / cachedTime))× (\(ms(plainTime)) ms vs \(ms(cachedTime)) ms)")
    }

    /// The synchronous login (inside an async function Swift picks the async overload).
    static func syncLogin(_ store: CredentialStore, _ user: String, _ password: String) throws -> Bool {
        try store.authenticate(username: user, password: password)
    }

    static func ms(_ s: Double) -> String { String(Int((s * 1000).rounded())) }
    static func ratio(_ r: Double) -> String { String(Double(Int(r * 100)) / 100) }
}
