#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A file's bytes as read: copied into memory, or mapped read-only from the open file.
///
/// A mapping shares the kernel's cached pages, so a one-user change of a 100 MB file
/// does not first fill 100 MB of fresh memory (~40 ms here) to find one line. Everything
/// that parses reads through ``withUnsafeBytes(_:)``; ``array`` exists for the few
/// callers that need an `[UInt8]` (a mapping is copied once, on first use).
///
/// A mapping is only made by ``AtomicWriter`` under its lock, for the span of one
/// rewrite, with the SIGBUS guard of ``Syscall/guardingReads(of:_:)`` around its use:
/// a file truncated in place by another program must not kill the process.
final class FileBytes: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init except `copied`, which
    // a Mutex guards; the mapped memory is read-only.

    /// The bytes when they were read into memory.
    private let stored: [UInt8]?
    /// The mapping's start when mapped (nil for a mapped empty range).
    private let mapped: UnsafeRawPointer?
    /// How many bytes.
    let count: Int
    /// The copy of a mapping that ``array`` made.
    private let copied = Mutex<[UInt8]?>(nil)

    /// Bytes in memory.
    init(_ bytes: [UInt8]) {
        stored = bytes
        mapped = nil
        count = bytes.count
    }

    /// The first `size` bytes of `fd`, mapped read-only; nil when the file cannot be
    /// mapped (the caller reads it instead).
    init?(mapping fd: Int32, size: Int) {
        guard let base = Syscall.map(fd, size: size) else { return nil }
        stored = nil
        mapped = base
        count = size
    }

    deinit {
        if let mapped { Syscall.unmap(mapped, size: count) }
    }

    /// Whether the bytes are a mapping of the file (they change if the file is changed
    /// in place; a copy in memory does not).
    var isMapped: Bool { mapped != nil }

    /// Runs `body` on the bytes.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        if let mapped { return try body(UnsafeRawBufferPointer(start: mapped, count: count)) }
        // Array's withUnsafeBytes rethrows untyped: the error is carried out in a Result.
        let result = stored.unsafelyUnwrapped.withUnsafeBytes { buffer in
            Result { () throws(E) -> R in try body(buffer) }
        }
        return try result.get()
    }

    /// The bytes as an array: the one read, or a copy of the mapping made on first use.
    var array: [UInt8] {
        if let stored { return stored }
        return copied.withLock { copy in
            if let copy { return copy }
            let made = withUnsafeBytes { Array($0) }
            copy = made
            return made
        }
    }

    /// The byte at `offset`.
    subscript(offset: Int) -> UInt8 { withUnsafeBytes { $0[offset] } }

    /// A copy of the bytes in `range`, as an array slice whose indices are `range`'s
    /// when the bytes are in memory (a slice of them) and start at 0 when mapped.
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        if let stored { return stored[range] }
        return withUnsafeBytes { ArraySlice(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}
