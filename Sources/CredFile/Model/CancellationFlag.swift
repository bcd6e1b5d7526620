import Synchronization

/// A flag set once, from any thread: a request to stop a long operation (``CredentialStore/upgrade(policy:jobs:dryRun:batchInterval:maximumBatch:stop:progress:)``),
/// safe to set from any thread, and from a signal handler (one lock-free atomic store).
public final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)

    /// A flag that is not set.
    public init() {}

    /// Asks the operation to stop.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}
