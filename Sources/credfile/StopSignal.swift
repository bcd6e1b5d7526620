import CredFile
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM while `upgrade` runs: the handler only records which signal came,
/// in an atomic (async-signal-safe); the upgrade's threads ask ``requested`` before each
/// hash, the finished hashes are committed, and the command exits 128 + the signal
/// itself (SPEC §5: 130 / 143). A second signal ends the process at once: every commit
/// is one atomic rename, so the file is still the old or the new bytes.
///
/// Unlike the crash handlers of `CCredFileProcess.h`, which are in C because they run
/// when the process (and perhaps the Swift runtime) is already broken, this handler can
/// be Swift: it is a closure with no captures (a plain C function pointer), and it only
/// does lock-free atomic operations on statics initialized before it is installed and
/// calls `_exit`, all async-signal-safe; no allocation, lock or runtime call is reached.
enum StopSignal {
    /// The first signal received since ``install()``, or 0.
    private static let received = Atomic<Int32>(0)
    /// Set by the handler; the upgrade checks it before each hash.
    static let flag = CancellationFlag()

    /// The signal that asked to stop, if one did.
    static var requested: Int32? {
        let signal = received.load(ordering: .relaxed)
        return signal == 0 ? nil : signal
    }

    /// Catches SIGINT and SIGTERM until ``restore()``.
    static func install() {
        // Touches both statics, so no lazy initialization can happen inside the handler.
        received.store(0, ordering: .relaxed)
        _ = flag.isCancelled
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            if StopSignal.received.compareExchange(expected: 0, desired: signal, ordering: .relaxed).exchanged {
                StopSignal.flag.cancel()
                return
            }
            _exit(128 + signal)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        for signal in [SIGINT, SIGTERM] { sigaction(signal, &action, nil) }
        // A parent may hand down a mask that blocks them (Foundation's Process does):
        // then a stop request would wait, unseen, until the upgrade ended.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Back to the default actions.
    static func restore() {
        for signal in [SIGINT, SIGTERM] { Glibc.signal(signal, SIG_DFL) }
    }
}
