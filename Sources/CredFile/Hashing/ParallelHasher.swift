import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Hashes many passwords on several threads (for `upgrade` and `import`).
public struct ParallelHasher: Sendable {
    /// All online cores.
    public static var defaultJobs: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The policy of the new hashes.
    public let policy: HashPolicy
    /// How many threads hash at once.
    public let jobs: Int

    /// A hasher with `jobs` threads (at least one).
    public init(policy: HashPolicy, jobs: Int = ParallelHasher.defaultJobs) {
        self.policy = policy
        self.jobs = max(1, jobs)
    }

    /// One new hash per password, in order.
    /// - Parameter progress: called with (done, total) after each hash, one call at a time.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    public func hash(_ passwords: [Password], progress: (@Sendable (Int, Int) -> Void)?) throws -> [PasswordHash] {
        try hash(passwords, until: { _ in false }, progress: progress)
    }

    /// New hashes for the passwords in order, until `shouldStop` says so.
    ///
    /// Each thread asks `shouldStop` (with the number of hashes finished so far) before
    /// it takes the next password, and finishes any
    /// password it took, so the answer is the hashes of a prefix of `passwords` (all of
    /// them when `shouldStop` never answers true). A stop costs at most one hash's time.
    /// - Parameters:
    ///   - shouldStop: asked from the hashing threads with the count of finished hashes,
    ///     so it must be cheap and thread-safe.
    ///   - progress: called with (done, total) after each hash, one call at a time.
    /// - Returns: the hashes of `passwords[0..<n]` for some `n`.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    public func hash(
        _ passwords: [Password], until shouldStop: @Sendable (_ finished: Int) -> Bool,
        progress: (@Sendable (Int, Int) -> Void)?
    ) throws -> [PasswordHash] {
        let state = State(count: passwords.count)
        let policy = self.policy
        Threads.concurrentPerform(iterations: min(jobs, max(passwords.count, 1))) { _ in
            while !shouldStop(state.done.load(ordering: .relaxed)) {
                // Indices are taken in order and every one taken is finished (or the whole
                // call fails), so the finished hashes are always a prefix.
                let index = state.next.add(1, ordering: .relaxed).oldValue
                guard index < passwords.count else { return }
                do {
                    let hash = try PasswordHash(hashing: passwords[index], policy: policy)
                    state.results.withLock { $0[index] = hash }
                    let done = state.done.add(1, ordering: .relaxed).newValue
                    if let progress { state.reporting.withLock { _ in progress(done, passwords.count) } }
                } catch {
                    state.failure.withLock { $0 = $0 ?? error }
                    state.next.store(passwords.count, ordering: .relaxed)  // stop the others
                    return
                }
            }
        }
        if let failure = state.failure.withLock({ $0 }) { throw failure }
        let taken = min(state.next.load(ordering: .relaxed), passwords.count)
        return state.results.withLock { results in
            results[0..<taken].map { $0! }  // every index taken was filled, or failure was set
        }
    }

    private final class State: Sendable {
        let next = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let results: Mutex<[PasswordHash?]>
        let failure = Mutex<(any Error)?>(nil)
        let reporting = Mutex<Void>(())
        init(count: Int) { results = Mutex(Array(repeating: nil, count: count)) }
    }
}
