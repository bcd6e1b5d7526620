#if canImport(Glibc)
import Glibc
#endif

/// Reads files without a lock: whole, mapped, or in reused chunks. Readers need no lock
/// because every writer replaces the file by `rename` (``AtomicWriter``): a reader sees
/// the old file or the new one. Only regular files are read; a FIFO is opened
/// `O_NONBLOCK`, so it never blocks a reader waiting for a writer.
package enum FileReader {
    /// The file's bytes, read without a lock; nil when it does not exist.
    /// - Throws: ``CredFileError/Code/io`` when it exists but cannot be read.
    static func read(_ path: String) throws -> [UInt8]? {
        try readWithInfo(path, followingLast: true)?.bytes
    }

    /// The bytes of a file its caller judges before reading (the configuration file: type,
    /// owner, mode, size); nil when it does not exist. Opens it `O_NONBLOCK` and `O_NOCTTY`
    /// (a FIFO or terminal put in its place cannot hang the reader), hands its `fstat` to
    /// `admit`, and reads it whole when `admit` answers true; false: it reads as empty.
    /// - Throws: a ``SyscallError`` when `open`, `fstat` or `read` fails (the caller words
    ///   it); what `admit` throws.
    package static func read(_ path: String, admitting admit: (stat) throws -> Bool) throws -> [UInt8]? {
        let fd: Int32
        do {
            fd = try Syscall.open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        } catch  where error.errno == ENOENT {
            return nil
        }
        defer { Syscall.close(fd) }
        let info = try Syscall.fstat(fd)
        guard try admit(info) else { return [] }
        return try Syscall.readAll(fd, sizeHint: Int(info.st_size))
    }

    /// Thrown by the `body` of ``withGuardedBytes(_:_:)``, before it has handed on
    /// anything, when the mapped file turned out to be truncated: `body` then runs again
    /// on the file read into memory.
    struct ReadAgain: Error {}

    /// Runs `body` on the file's bytes, read without a lock, and gives its result; nil
    /// when the file does not exist. A file of `mappingMinimum` bytes or more is mapped
    /// (guarded against SIGBUS, see ``Syscall/guardingReads(of:_:)``), and `body` is
    /// given a question to ask before it hands anything on: whether the file was truncated
    /// in place so far. When it was, `body` throws ``ReadAgain`` and runs again on the
    /// bytes read into memory. For a `body` that streams what it finds (`check`), where
    /// running again after handing something on would say it twice.
    ///
    /// A mapping shares the kernel's cached pages: no fresh pages to fault in and fill
    /// (reading a 100 MB file into memory costs ~40 ms here, mapping it ~9). The pages
    /// are faulted in as they are first read, by the threads that read the file's pieces
    /// at once (`MAP_POPULATE` had one thread fault them all in first: `check` ~4% slower).
    /// - Throws: what `body` throws; ``CredFileError/Code/io`` when the file cannot be
    ///   read, or when it was truncated or resized in place after `body` began to hand
    ///   things on (what it handed on may not match the file: the message says so).
    static func withGuardedBytes<R>(
        _ path: String, _ body: (UnsafeRawBufferPointer, _ truncatedSoFar: () -> Bool) throws -> R
    ) throws -> R? {
        guard let (fd, info) = try openForReading(path, followingLast: true) else { return nil }
        defer { Syscall.close(fd) }
        let size = Int(info.st_size)
        if size >= mappingMinimum {
            do {
                try Syscall.injectFault("read")  // the fault hook's `read` covers a mapped read too
            } catch {
                throw error.credFileError("cannot read \(Escaped.path(path))")
            }
        }
        if size >= mappingMinimum, let base = Syscall.map(fd, size: size) {
            defer { Syscall.unmap(base, size: size) }
            let mapping = UnsafeRawBufferPointer(start: base, count: size)
            do {
                if let (result, shrank) = try Syscall.guardingReads(
                    of: mapping,
                    { (mappingGuard: Syscall.MappingGuard) in
                        try body(mapping, { mappingGuard.hasFaulted })
                    })
                {
                    let now = try? Syscall.fstat(fd)
                    guard !shrank, now?.st_size == info.st_size else {
                        throw CredFileError(
                            .io,
                            "\(Escaped.path(path)) was truncated or resized in place while it was read (by another program): what was "
                                + "reported may not match it; run the command again")
                    }
                    return result
                }
                // No guard free: read into memory below.
            } catch is ReadAgain {
                // Truncated before anything was handed on: read into memory below.
            }
        }
        let bytes: [UInt8]
        do {
            // mmap leaves the file offset where it was: at the start.
            bytes = try Syscall.readAll(fd, sizeHint: size)
        } catch {
            throw error.credFileError("cannot read \(Escaped.path(path))")
        }
        return try bytes.withUnsafeBytes { try body($0, { false }) }
    }

    /// The size from which ``withGuardedBytes(_:_:)`` maps a file: below it, a copy costs little.
    static let mappingMinimum = 1 << 20

    /// The file's bytes and `fstat`; nil when it does not exist.
    /// - Parameter followingLast: follow a symlink at the last component (readers); a
    ///   writer passes false for its resolved path (`O_NOFOLLOW`).
    static func readWithInfo(_ path: String, followingLast: Bool = true) throws -> (bytes: [UInt8], info: stat)? {
        try withOpenedFile(path, followingLast: followingLast) { fd, info throws(SyscallError) in
            (try Syscall.readAll(fd, sizeHint: Int(info.st_size)), info)
        }
    }

    /// Reads the file without a lock in pieces of at most `chunkSize` bytes through one
    /// reused buffer, handing each to `body` until it returns false or the file ends: a
    /// scan that never holds the file (a 100 MB file read whole costs its size in fresh
    /// pages, which this machine fills at ~1 GB/s). Nil when the file does not exist.
    static func scan(_ path: String, chunkSize: Int = 1 << 17, _ body: (UnsafeRawBufferPointer) -> Bool) throws
        -> Void?
    {
        try withOpenedFile(path, followingLast: true) { fd, _ throws(SyscallError) in
            try Syscall.readChunks(fd, chunkSize: chunkSize, body)
        }
    }

    /// Opens a regular file for reading (O_NONBLOCK, O_NOFOLLOW unless `followingLast`)
    /// and runs `body` on it; nil when it does not exist.
    private static func withOpenedFile<R>(
        _ path: String, followingLast: Bool, _ body: (Int32, stat) throws(SyscallError) -> R
    ) throws -> R? {
        guard let (fd, info) = try openForReading(path, followingLast: followingLast) else { return nil }
        defer { Syscall.close(fd) }
        do {
            return try body(fd, info)
        } catch {
            throw error.credFileError("cannot read \(Escaped.path(path))")
        }
    }

    /// Opens a regular file for reading (O_NONBLOCK, O_NOFOLLOW unless `followingLast`);
    /// nil when it does not exist. The caller closes the descriptor.
    static func openForReading(_ path: String, followingLast: Bool) throws -> (fd: Int32, info: stat)? {
        let fd: Int32
        do {
            // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer,
            // forever, and a writer would wait holding the lock. It changes nothing for
            // a regular file, and anything else is refused below.
            fd = try Syscall.open(path, O_RDONLY | O_NONBLOCK | (followingLast ? 0 : O_NOFOLLOW))
        } catch  where error.errno == ENOENT {
            return nil
        } catch {
            throw error.credFileError("cannot open \(Escaped.path(path))")
        }
        do {
            let info = try Syscall.fstat(fd)
            guard info.st_mode & S_IFMT == S_IFREG else {
                if info.st_mode & S_IFMT == S_IFDIR { throw SyscallError(name: "open", errno: EISDIR) }
                throw CredFileError(.io, "cannot read \(Escaped.path(path)): not a regular file")
            }
            return (fd, info)
        } catch {
            Syscall.close(fd)
            if let error = error as? SyscallError { throw error.credFileError("cannot read \(Escaped.path(path))") }
            throw error
        }
    }
}
