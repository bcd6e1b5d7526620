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
    /// - Parameters:
    ///   - passwords: the passwords to hash.
    ///   - progress: called with (done, total) after each hash, one call at a time.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails; ``CredFileError/Code/usage``
    ///   when the policy's algorithm is argon2id (use ``secrets(for:progress:)``).
    public func hash(_ passwords: [Password], progress: (@Sendable (Int, Int) -> Void)?) throws -> [PasswordHash] {
        try hash(passwords, until: { _ in false }, progress: progress)
    }

    /// The PBKDF2 hashes of the passwords in order, until `shouldStop` says so (see
    /// ``secrets(for:until:progress:)``, which makes the hashes of any policy).
    ///
    /// The work is cut into units, taken in order by the threads: pairs of passwords
    /// hashed at once where the policy's PRF interleaves on this CPU
    /// (`PBKDF2.interleaves(_:)`: two chains per core, ~1.6× one chain's rate), as many
    /// as leave every thread a unit, then single passwords. Each thread asks `shouldStop`
    /// (with the number of hashes finished so far) before it takes the next unit, and
    /// finishes any unit it took, so the answer is the hashes of a prefix of `passwords`
    /// (all of them when `shouldStop` never answers true). A stop costs at most one
    /// unit's time (a pair: about 1.25 hashes').
    /// - Parameters:
    ///   - passwords: the passwords to hash, in order.
    ///   - shouldStop: asked from the hashing threads with the count of finished hashes,
    ///     so it must be cheap and thread-safe.
    ///   - progress: called with (done, total) after each hash, one call at a time.
    /// - Returns: the hashes of `passwords[0..<n]` for some `n`.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails; ``CredFileError/Code/usage``
    ///   when the policy's algorithm is argon2id.
    public func hash(
        _ passwords: [Password], until shouldStop: @Sendable (_ finished: Int) -> Bool,
        progress: (@Sendable (Int, Int) -> Void)?
    ) throws -> [PasswordHash] {
        guard let digest = policy.algorithm.pbkdf2Digest else {
            throw CredFileError.usage("the policy's algorithm is argon2id, not PBKDF2")
        }
        let policy = self.policy
        return try run(passwords, pairs: PBKDF2.interleaves(digest), until: shouldStop, progress: progress) { unit in
            if unit.count == 2 {
                let pair = try PasswordHash.hashing(unit[unit.startIndex], unit[unit.startIndex + 1], policy: policy)
                return [pair.0, pair.1]
            }
            return [try PasswordHash(hashing: unit[unit.startIndex], policy: policy)]
        }
    }

    /// One new secret per password, in order: the hash string of the policy's algorithm
    /// (``HashPolicy/hash(_:)``), as the file stores it.
    /// - Parameters:
    ///   - passwords: the passwords to hash.
    ///   - progress: called with (done, total) after each hash, one call at a time.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL or libargon2 fails.
    public func secrets(for passwords: [Password], progress: (@Sendable (Int, Int) -> Void)?) throws -> [String] {
        try secrets(for: passwords, until: { _ in false }, progress: progress)
    }

    /// New secrets for the passwords in order, until `shouldStop` says so: the PBKDF2
    /// hashes of ``hash(_:until:progress:)`` as strings, or argon2id's, one password a
    /// unit. The answer is the secrets of a prefix of `passwords`, as there.
    /// - Parameters:
    ///   - passwords: the passwords to hash.
    ///   - shouldStop: asked from the hashing threads with the count of finished hashes,
    ///     so it must be cheap and thread-safe.
    ///   - progress: called with (done, total) after each hash, one call at a time.
    /// - Returns: the hash strings of `passwords[0..<n]` for some `n`.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL or libargon2 fails.
    public func secrets(
        for passwords: [Password], until shouldStop: @Sendable (_ finished: Int) -> Bool,
        progress: (@Sendable (Int, Int) -> Void)?
    ) throws -> [String] {
        guard policy.algorithm == .argon2id else {
            return try hash(passwords, until: shouldStop, progress: progress).map(\.string)
        }
        let policy = self.policy
        return try run(passwords, pairs: false, until: shouldStop, progress: progress) { unit in
            try unit.map { try policy.hash($0) }
        }
    }

    /// The units of `passwords` (pairs where `pairs` allows), each made by `make` on one
    /// of `jobs` threads, until `shouldStop` says so: the results of a prefix of
    /// `passwords`, in order (see ``hash(_:until:progress:)``).
    private func run<Result: Sendable>(
        _ passwords: [Password], pairs: Bool, until shouldStop: @Sendable (_ finished: Int) -> Bool,
        progress: (@Sendable (Int, Int) -> Void)?, _ make: @Sendable (ArraySlice<Password>) throws -> [Result]
    ) throws -> [Result] {
        let state = State<Result>(count: passwords.count)
        let threads = min(jobs, max(passwords.count, 1))
        let units = Units(count: passwords.count, threads: threads, pairs: pairs)
        Threads.concurrentPerform(iterations: threads) { _ in
            while !shouldStop(state.done.load(ordering: .relaxed)) {
                // Units are taken in order and every one taken is finished (or the whole
                // call fails), so the finished hashes are always a prefix.
                let unit = state.next.add(1, ordering: .relaxed).oldValue
                guard unit < units.count else { return }
                let indices = units.indices(of: unit)
                do {
                    let hashes = try make(passwords[indices])
                    state.results.withLock { results in
                        for (index, hash) in zip(indices, hashes) { results[index] = hash }
                    }
                    let done = state.done.add(hashes.count, ordering: .relaxed).newValue
                    if let progress {
                        state.reporting.withLock { _ in
                            for finished in (done - hashes.count + 1)...done { progress(finished, passwords.count) }
                        }
                    }
                } catch {
                    state.failure.withLock { $0 = $0 ?? error }
                    state.next.store(units.count, ordering: .relaxed)  // stop the others
                    return
                }
            }
        }
        if let failure = state.failure.withLock({ $0 }) { throw failure }
        let taken = units.passwordsBefore(unit: min(state.next.load(ordering: .relaxed), units.count))
        return state.results.withLock { results in
            results[0..<taken].map { $0! }  // every unit taken was filled, or failure was set
        }
    }

    /// How `count` passwords are cut into units for `threads` threads: the first `pairs`
    /// units are two passwords each, the rest one. With pairs allowed, as many as still
    /// leave every thread a unit (`count` − max(`threads`, ⌈`count`/2⌉)): `threads`
    /// passwords for as many threads are hashed one each, in parallel, sooner than as pairs.
    struct Units {
        /// The number of units.
        let count: Int
        /// How many of the first units are pairs.
        let pairs: Int

        init(count passwords: Int, threads: Int, pairs allowed: Bool) {
            count = allowed ? min(passwords, max(threads, (passwords + 1) / 2)) : passwords
            pairs = passwords - count
        }

        /// The indices of the passwords in `unit`.
        func indices(of unit: Int) -> Range<Int> {
            unit < pairs ? 2 * unit..<2 * unit + 2 : pairs + unit..<pairs + unit + 1
        }

        /// The number of passwords in the units before `unit`.
        func passwordsBefore(unit: Int) -> Int { unit < pairs ? 2 * unit : pairs + unit }
    }

    private final class State<Result: Sendable>: Sendable {
        let next = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let results: Mutex<[Result?]>
        let failure = Mutex<(any Error)?>(nil)
        let reporting = Mutex<Void>(())
        init(count: Int) { results = Mutex(Array(repeating: nil, count: count)) }
    }
}
