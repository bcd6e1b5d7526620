#if canImport(Glibc)
import Glibc
#endif

/// credfile's own threads for work split across the cores, instead of libdispatch's.
///
/// libdispatch's global queues run a worker monitor on Linux that reads
/// `/proc/TID/stat` of each worker once a second while work waits, and it ends the
/// process on purpose (SIGILL) when that `open` fails: a helper that runs for weeks
/// under a low `RLIMIT_NOFILE`, or when the system runs out of descriptors or memory,
/// died of it. Threads started here are plain `pthread`s that nothing watches; when one
/// cannot be started, its share runs on the calling thread, so the work still gets done.
enum Threads {
    /// Runs `body(i)` for every `i` in `0..<count` at once: on `count − 1` threads started
    /// for the call and on the calling thread, and returns when all have finished (as
    /// `DispatchQueue.concurrentPerform` does). `body` must be safe to run on several
    /// threads at once.
    static func concurrentPerform(iterations count: Int, _ body: (Int) -> Void) {
        guard count > 1 else {
            if count == 1 { body(0) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let shared = Work(body)
            var started: [(thread: pthread_t, iteration: Int)] = []
            var leftOver: [Int] = []
            for iteration in 1..<count {
                let context = Unmanaged.passRetained(Job(work: shared, iteration: iteration)).toOpaque()
                var thread = pthread_t()
                let result = pthread_create(
                    &thread, nil,
                    { context in
                        // Retained for this thread, released here.
                        let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()  // non-nil: passed below
                        job.work.body(job.iteration)
                        return nil
                    }, context)
                if result == 0 {
                    started.append((thread, iteration))
                } else {
                    Unmanaged<Job>.fromOpaque(context).release()
                    leftOver.append(iteration)  // no thread (EAGAIN, ENOMEM): done here below
                }
            }
            body(0)
            for iteration in leftOver { body(iteration) }
            for (thread, _) in started { pthread_join(thread, nil) }
        }
    }

    /// The body shared by a call's threads (it outlives none of them: the call joins them).
    private final class Work: @unchecked Sendable {
        let body: (Int) -> Void
        init(_ body: @escaping (Int) -> Void) { self.body = body }
    }

    /// One thread's share of a call.
    private final class Job: @unchecked Sendable {
        let work: Work
        let iteration: Int
        init(work: Work, iteration: Int) {
            self.work = work
            self.iteration = iteration
        }
    }
}

/// A counting semaphore (POSIX `sem_t`): no thread of libdispatch's is involved.
final class Semaphore: @unchecked Sendable {
    // @unchecked: the sem_t is only touched through sem_wait / sem_post, which are
    // thread-safe; it lives at a fixed address (allocated once) as POSIX requires.
    private let semaphore: UnsafeMutablePointer<sem_t>

    /// A semaphore whose count starts at `value`.
    init(value: Int) {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, UInt32(max(0, value)))
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Waits until the count is above zero, then lowers it by one. The corresponding C
    /// function is `sem_wait` (`EINTR` retried).
    func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }

    /// Raises the count by one, waking one waiter. The corresponding C function is `sem_post`.
    func signal() {
        sem_post(semaphore)
    }
}
