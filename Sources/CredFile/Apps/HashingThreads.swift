import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The library's own threads for PBKDF2 work (SPEC §6): the `async` forms of the front
/// door hop here, so a login's hashing (one PBKDF2 at the default policy: 168–225 ms
/// measured, `Benchmarks/README.md`) never occupies a thread of Swift's cooperative pool,
/// which has only one thread per core and runs every other task of a server. (Vapor does the same for bcrypt with `req.password.async`.)
///
/// One pool per process, one thread per online core, started on first use and kept
/// for the life of the process; jobs run in the order they were submitted. They are
/// plain `pthread`s, not libdispatch's workers (see `Threads`): a long-running
/// process (the Squid helper, `serve`) must not depend on libdispatch's worker monitor,
/// which ends the process when it cannot open `/proc/TID/stat`.
final class HashingThreads: Sendable {
    /// The pool every store shares.
    static let shared = HashingThreads(threadCount: ParallelHasher.defaultJobs)

    /// A job: the work. (A task cancelled before its job started is told by the
    /// `CancellationFlag` the work captured, not by the job.)
    private struct Job: Sendable {
        let run: @Sendable () -> Void
    }

    /// The jobs submitted and not started yet, from `head` on; a started job's slot is
    /// emptied at once, so its closure (and what it captured: a login's password) is
    /// released as soon as it has run, not when the array is next compacted.
    private let queue = Mutex<(jobs: [Job?], head: Int)>(([], 0))
    private let available = Semaphore(value: 0)
    /// The pool's threads, so a test can tell where work ran.
    private let threads = Mutex<Set<pthread_t>>([])
    /// How many threads the pool runs.
    let threadCount: Int

    /// Whether at least one thread started (if none could, each job runs on the thread
    /// that submits it rather than wait forever).
    private let startedThreads = Atomic<Int>(0)

    /// A pool of its own: ``shared`` for the library; a test that fills a pool on purpose
    /// makes one, so that it blocks no other test's logins (the shared pool's jobs waited
    /// behind it while those tests held the cooperative threads the filling test needed).
    init(threadCount: Int) {
        self.threadCount = max(1, threadCount)
        for _ in 0..<self.threadCount where Self.startThread(for: self) {
            startedThreads.add(1, ordering: .releasing)
        }
    }

    /// Whether the calling thread is one of the pool's (tests check where work ran).
    var isPoolThread: Bool { threads.withLock { $0.contains(pthread_self()) } }

    /// Runs `work` on a pool thread and returns its result to the awaiting task.
    ///
    /// Cancellation is honoured before the work starts: a task cancelled while its job
    /// waits in the queue gets ``CredFileError/Code/cancelled`` and the work never runs.
    /// Once started, the work runs to the end (a PBKDF2 cannot stop halfway).
    /// - Throws: what `work` throws, or ``CredFileError/Code/cancelled``.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let cancelled = CancellationFlag()
        if Task.isCancelled { throw CredFileError.cancelled }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                submit(
                    Job {
                        guard !cancelled.isCancelled else {
                            continuation.resume(throwing: CredFileError.cancelled)
                            return
                        }
                        continuation.resume(with: Result { try work() })
                    })
            }
        } onCancel: {
            cancelled.cancel()
        }
    }

    /// Runs `work` on a pool thread, after the jobs submitted before it; returns at once.
    /// (When no thread of the pool could be started, `work` runs now, on this thread.)
    func submit(_ work: @escaping @Sendable () -> Void) {
        submit(Job(run: work))
    }

    private func submit(_ job: Job) {
        guard startedThreads.load(ordering: .acquiring) > 0 else { return job.run() }
        queue.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// The next job, waiting for one.
    private func next() -> Job {
        available.wait()
        return queue.withLock { state in
            let job = state.jobs[state.head].take()!  // `available` counts the jobs waiting from head on
            state.head += 1
            // Compact now and then, so the array does not grow with the jobs ever run.
            if state.head >= 64, state.head * 2 >= state.jobs.count {
                state.jobs.removeFirst(state.head)
                state.head = 0
            }
            return job
        }
    }

    /// Starts one thread serving `pool`; false when `pthread_create` failed.
    private static func startThread(for pool: HashingThreads) -> Bool {
        let context = Unmanaged.passRetained(pool).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                // The pool was retained for this thread; it lives as long as the process.
                let pool = Unmanaged<HashingThreads>.fromOpaque(context!).takeRetainedValue()  // non-nil: passed below
                pool.threads.withLock { _ = $0.insert(pthread_self()) }
                while true { pool.next().run() }
            }, context)
        guard started == 0 else {
            Unmanaged<HashingThreads>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}

/// Jobs on the library's hashing threads (those of ``CredentialStore/runOnHashingThreads(_:)``),
/// at most `limit` of them submitted and not finished at a time, and a wait for all of
/// them: what a server that reads requests from one stream needs (the Squid helper),
/// with no libdispatch queue or semaphore.
public final class BoundedJobs: Sendable {
    private let pool: HashingThreads
    private let slots: Semaphore
    private let running = Mutex(0)
    private let finished = Semaphore(value: 0)

    /// At most `limit` (at least 1) jobs at once.
    public convenience init(limit: Int) { self.init(limit: limit, on: .shared) }

    /// At most `limit` (at least 1) jobs at once on `pool`.
    init(limit: Int, on pool: HashingThreads) {
        self.pool = pool
        slots = Semaphore(value: max(1, limit))
    }

    /// Runs `work` on the pool; waits first while `limit` jobs are running.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        slots.wait()
        running.withLock { $0 += 1 }
        pool.submit { [self] in
            work()
            let last = running.withLock { count in
                count -= 1
                return count == 0
            }
            slots.signal()
            if last { finished.signal() }
        }
    }

    /// Waits until every job submitted so far has finished.
    public func waitForAll() {
        while running.withLock({ $0 }) > 0 { finished.wait() }
    }
}
