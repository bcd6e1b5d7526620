#if canImport(Glibc)
import Glibc
#endif
internal import CCredFile  // madvise(MADV_POPULATE_WRITE) and the SIGBUS guard of mapped reads

/// Mapped files, and the guard that makes reading a mapping of a file truncated in place
/// safe.
extension Syscall {
    /// Faults in the pages of `buffer` (fresh memory about to be written) in one call,
    /// when it is 1 MiB or more: see `credfile_prefault`. The corresponding C function is
    /// `madvise` with `MADV_POPULATE_WRITE`.
    static func prefault<Element>(_ buffer: UnsafeMutableBufferPointer<Element>) {
        let bytes = buffer.count * MemoryLayout<Element>.stride
        guard bytes >= 1 << 20, let base = buffer.baseAddress else { return }
        credfile_prefault(base, bytes)
    }

    /// The first `size` bytes of `fd` mapped read-only (private: never written back);
    /// nil when `size` is 0 or the kernel refuses. A page is read when first touched.
    /// The corresponding C function is `mmap`.
    static func map(_ fd: Int32, size: Int) -> UnsafeRawPointer? {
        guard size > 0, let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0),
            base != MAP_FAILED
        else { return nil }
        return UnsafeRawPointer(base)
    }

    /// Removes a mapping ``map(_:size:)`` made. The corresponding C function is `munmap`.
    static func unmap(_ base: UnsafeRawPointer, size: Int) {
        munmap(UnsafeMutableRawPointer(mutating: base), size)
    }

    /// Runs `body`, during which reading `mapping` past the end of a file truncated in
    /// place does not kill the process with SIGBUS: the C side puts a page of zeros there
    /// (`credfile_mapped_read_begin`). Gives `body`'s result and whether that happened
    /// (then what `body` read is not the file: the caller reads it again); nil, without
    /// running `body`, when no guard is free (32 mappings are guarded at once already:
    /// the caller reads the file into memory instead). `body` gets a ``MappingGuard``
    /// that can tell, while it runs, whether a page was replaced so far.
    static func guardingReads<R, E: Error>(
        of mapping: UnsafeRawBufferPointer, _ body: (MappingGuard) throws(E) -> R
    ) throws(E) -> (R, shrank: Bool)? {
        guard let base = mapping.baseAddress else { return nil }
        let slot = credfile_mapped_read_begin(base, mapping.count)
        guard slot >= 0 else { return nil }
        let result: R
        do {
            result = try body(MappingGuard(slot: slot))
        } catch {
            _ = credfile_mapped_read_end(slot)
            throw error
        }
        return (result, credfile_mapped_read_end(slot) != 0)
    }

    /// ``guardingReads(of:_:)`` for a `body` that does not ask the guard.
    static func guardingReads<R, E: Error>(of mapping: UnsafeRawBufferPointer, _ body: () throws(E) -> R) throws(E)
        -> (R, shrank: Bool)?
    {
        try guardingReads(of: mapping) { (_: MappingGuard) throws(E) in try body() }
    }

    /// The guard of one mapping being read (``guardingReads(of:_:)``).
    struct MappingGuard: Sendable {
        fileprivate let slot: Int32

        /// Whether a page of the mapping had to be replaced by zeros so far: the file
        /// was truncated in place, and what was read from the mapping since is not the file.
        var hasFaulted: Bool { credfile_mapped_read_faulted(slot) != 0 }
    }
}
