import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The library's own threads for PBKDF2 work (SPEC §6): the `async` forms of the front
/// door hop here, so a login's ~100 ms of hashing never occupies a thread of Swift's
/// cooperative pool, which has only one thread per core and runs every other task of
/// a server. (Vapor does the same for bcrypt with `req.password.async`.)
///
/// One pool per process, one thread per online core, started on first use and kept
/// for the life of the process; jobs run in the order they were submitted.
final class HashingThreads: Sendable {
    /// The pool every store shares.
    static let shared = HashingThreads(threadCount: ParallelHasher.defaultJobs)

    /// A job: the work, and a flag set when its task was cancelled before it started.
    private struct Job: Sendable {
        let run: @Sendable () -> Void
    }

    private let queue = Mutex<(jobs: [Job], head: Int)>(([], 0))
    private let available = DispatchSemaphore(value: 0)
    /// The pool's threads, so a test can tell where work ran.
    private let threads = Mutex<Set<pthread_t>>([])
    /// How many threads the pool runs.
    let threadCount: Int

    /// Whether at least one thread started (if none could, jobs run on Dispatch's
    /// global queue rather than wait forever).
    private let startedThreads = Atomic<Int>(0)

    private init(threadCount: Int) {
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
                submit(Job {
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

    /// Runs `work` on a pool thread, in submission order, and returns at once.
    func submit(_ work: @escaping @Sendable () -> Void) { submit(Job(run: work)) }

    private func submit(_ job: Job) {
        guard startedThreads.load(ordering: .acquiring) > 0 else { return DispatchQueue.global().async { job.run() } }
        queue.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// The next job, waiting for one.
    private func next() -> Job {
        available.wait()
        return queue.withLock { state in
            let job = state.jobs[state.head]
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
        let started = pthread_create(&thread, nil, { context in
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

