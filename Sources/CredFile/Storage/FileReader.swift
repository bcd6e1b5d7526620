#if canImport(Glibc)
import Glibc
#endif

/// Reads files without a lock: whole, mapped, or in reused chunks. Readers need no lock
/// because every writer replaces the file by `rename` (``AtomicWriter``): a reader sees
/// the old file or the new one. Only regular files are read; a FIFO is opened
/// `O_NONBLOCK`, so it never blocks a reader waiting for a writer.
enum FileReader {
    /// The file's bytes, read without a lock; nil when it does not exist.
    /// - Throws: ``CredFileError/Code/io`` when it exists but cannot be read.
    static func read(_ path: String) throws -> [UInt8]? {
        try readWithInfo(path, followingLast: true)?.bytes
    }

    /// Runs `body` on the file's bytes, read without a lock, and gives its result; nil
    /// when the file does not exist. A file of `mappingMinimum` bytes or more is mapped,
    /// not copied (see ``Syscall/withMapping(_:size:_:)``); when it changes size while
    /// mapped, `body` runs again on the bytes read the usual way. `body` must not keep
    /// the buffer.
    /// - Throws: ``CredFileError/Code/io`` when it exists but cannot be read.
    static func withBytes<R>(_ path: String, _ body: (UnsafeRawBufferPointer) -> R) throws -> R? {
        try withOpenedFile(path, followingLast: true) { fd, info throws(SyscallError) -> R in
            let size = Int(info.st_size)
            if size >= mappingMinimum, let result = try Syscall.withMapping(fd, size: size, body) { return result }
            // mmap leaves the file offset where it was: at the start.
            return try Syscall.readAll(fd, sizeHint: size).withUnsafeBytes(body)
        }
    }

    /// The size from which ``withBytes(_:_:)`` maps a file: below it, a copy costs little.
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
            throw error.credFileError("cannot read \(path)")
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
            throw error.credFileError("cannot open \(path)")
        }
        do {
            let info = try Syscall.fstat(fd)
            guard info.st_mode & S_IFMT == S_IFREG else {
                if info.st_mode & S_IFMT == S_IFDIR { throw SyscallError(name: "open", errno: EISDIR) }
                throw CredFileError(.io, "cannot read \(path): not a regular file")
            }
            return (fd, info)
        } catch {
            Syscall.close(fd)
            if let error = error as? SyscallError { throw error.credFileError("cannot read \(path)") }
            throw error
        }
    }
}
