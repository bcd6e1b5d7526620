#if canImport(Glibc)
import Glibc
#endif
internal import CCredFile  // mkostemp, which the Glibc module does not export
#if DEBUG
import Synchronization  // the fault hook's call counter
#endif

/// A failed system call: its name and errno.
struct SyscallError: Error {
    let name: String
    let errno: Int32

    /// The library error for it, with a sentence saying what was being done.
    func credFileError(_ doing: String, code: CredFileError.Code = .io) -> CredFileError {
        CredFileError(code, doing, cause: .init(syscall: name, errno: errno))
    }
}

/// Each system call credfile makes, wrapped once: `EINTR` is retried and a failure
/// becomes a ``SyscallError``. Every descriptor is opened `O_CLOEXEC`.
///
/// In debug builds a test can make one call fail on purpose (swift-system's
/// `ForceErrno.counted` idea) through the environment:
///
///     CREDFILE_TEST_FAULT=NAME[:ERRNO[:N]]
///
/// `NAME` is a wrapper's name (`open`, `read`, `write`, `fsync`, `fsync-directory` (the
/// `fsync` of the directory after `rename`), `rename`, `mkstemp`, `fchmod`, `fchown`,
/// `flock`, `lstat`, `readlink`, …); `ERRNO` a name such as `EIO`, `ENOSPC`, `EACCES` or a
/// number (default `EIO`); `N` makes only the N-th call of that name in the process fail
/// (default: every call). `fsync:EIO:2` fails the second `fsync` with `EIO`.
enum Syscall {
    #if DEBUG
    /// The fault the environment asks for, parsed once.
    struct Fault: Sendable {
        let name: String
        let errno: Int32
        /// Only this call of `name` fails (1-based); nil: every call.
        let call: Int?

        static let fromEnvironment: Fault? = getenv("CREDFILE_TEST_FAULT").flatMap { parse(String(cString: $0)) }

        /// Parses `NAME[:ERRNO[:N]]`; nil when it is malformed (then no fault is injected).
        static func parse(_ text: String) -> Fault? {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (1...3).contains(parts.count), !parts[0].isEmpty else { return nil }
            var code = EIO
            if parts.count >= 2 {
                guard let parsed = Int32(parts[1]) ?? errnoNames[parts[1]] else { return nil }
                code = parsed
            }
            var call: Int?
            if parts.count == 3 {
                guard let n = Int(parts[2]), n >= 1 else { return nil }
                call = n
            }
            return Fault(name: parts[0], errno: code, call: call)
        }

        static let errnoNames: [String: Int32] = [
            "EIO": EIO, "ENOSPC": ENOSPC, "EDQUOT": EDQUOT, "EACCES": EACCES, "EPERM": EPERM, "EROFS": EROFS,
            "ENOENT": ENOENT, "EEXIST": EEXIST, "ENAMETOOLONG": ENAMETOOLONG, "ELOOP": ELOOP, "EINTR": EINTR,
            "EAGAIN": EAGAIN, "EWOULDBLOCK": EWOULDBLOCK, "EBADF": EBADF, "EINVAL": EINVAL, "ENOMEM": ENOMEM,
            "EMFILE": EMFILE, "EXDEV": EXDEV, "EBUSY": EBUSY, "ENOLCK": ENOLCK,
        ]

        /// How many calls of the fault's wrapper were made so far (no other name is counted).
        private static let calls = Mutex(0)

        /// Whether this call of `name` is the one to fail.
        func strikes(_ called: String) -> Bool {
            guard called == name else { return false }
            guard let call else { return true }
            return Self.calls.withLock { count in
                count += 1
                return count == call
            }
        }
    }

    /// Throws the injected fault when this call of `name` is the chosen one.
    static func injectFault(_ name: String) throws(SyscallError) {
        if let fault = Fault.fromEnvironment, fault.strikes(name) {
            throw SyscallError(name: name, errno: fault.errno)
        }
    }
    #else
    @inline(__always) static func injectFault(_ name: String) throws(SyscallError) {}
    #endif

    @discardableResult
    private static func retrying<R: BinaryInteger>(_ name: String, _ body: () -> R) throws(SyscallError) -> R {
        try injectFault(name)
        while true {
            let result = body()
            if result != -1 { return result }
            if errno != EINTR { throw SyscallError(name: name, errno: errno) }
        }
    }

    /// The corresponding C function is `open`.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(SyscallError) -> Int32 {
        try retrying("open") { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// The corresponding C function is `close`; its result is ignored (Linux closes the fd anyway).
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// The corresponding C function is `flock`.
    static func flock(_ fd: Int32, _ operation: Int32) throws(SyscallError) {
        try retrying("flock") { systemFlock(fd, operation) }
    }

    /// The corresponding C function is `fstat`.
    static func fstat(_ fd: Int32) throws(SyscallError) -> stat {
        var info = stat()
        _ = try retrying("fstat") { Glibc.fstat(fd, &info) }
        return info
    }

    /// The status of the file `path` names, links followed. The corresponding C function is `stat`.
    static func status(of path: String) throws(SyscallError) -> stat {
        var info = stat()
        _ = try retrying("stat") { systemStat(path, &info) }
        return info
    }

    /// The corresponding C function is `lstat`; nil when the path does not exist.
    static func lstat(_ path: String) throws(SyscallError) -> stat? {
        var info = stat()
        do {
            _ = try retrying("lstat") { Glibc.lstat(path, &info) }
        } catch  where error.errno == ENOENT {
            return nil
        }
        return info
    }

    /// Faults in the pages of `buffer` (fresh memory about to be written) in one call,
    /// when it is 1 MiB or more: see `credfile_prefault`. The corresponding C function is
    /// `madvise` with `MADV_POPULATE_WRITE`.
    static func prefault<Element>(_ buffer: UnsafeMutableBufferPointer<Element>) {
        let bytes = buffer.count * MemoryLayout<Element>.stride
        guard bytes >= 1 << 20, let base = buffer.baseAddress else { return }
        credfile_prefault(base, bytes)
    }

    /// Runs `body` on the first `size` bytes of `fd` mapped read-only, and gives its
    /// result; nil when the file cannot be mapped, or is not `size` bytes long any more
    /// when `body` is done (it shrank or grew meanwhile: the caller reads it instead).
    ///
    /// A mapping shares the kernel's cached pages: no fresh pages to fault in and fill
    /// (reading a 100 MB file into memory costs ~40 ms here, mapping it ~9). The pages
    /// are faulted in as they are first read, by the threads that read the file's pieces
    /// at once (`MAP_POPULATE` had one thread fault them all in first: `check` ~4% slower).
    /// The corresponding C function is `mmap`.
    static func withMapping<R>(_ fd: Int32, size: Int, _ body: (UnsafeRawBufferPointer) -> R) throws(SyscallError)
        -> R?
    {
        try injectFault("read")
        guard let base = map(fd, size: size) else { return nil }
        defer { unmap(base, size: size) }
        let buffer = UnsafeRawBufferPointer(start: base, count: size)
        guard let (result, shrank) = guardingReads(of: buffer, { body(buffer) }), !shrank,
            let after = try? fstat(fd), after.st_size == size
        else { return nil }
        return result
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
    /// running `body`, when another thread's guard is active (one at a time: the
    /// caller reads the file into memory instead).
    static func guardingReads<R, E: Error>(of mapping: UnsafeRawBufferPointer, _ body: () throws(E) -> R) throws(E)
        -> (R, shrank: Bool)?
    {
        guard let base = mapping.baseAddress, credfile_mapped_read_begin(base, mapping.count) == 0 else { return nil }
        let result: R
        do {
            result = try body()
        } catch {
            _ = credfile_mapped_read_end()
            throw error
        }
        return (result, credfile_mapped_read_end() != 0)
    }

    /// Reads the whole file from `fd` (`sizeHint` bytes expected; more or fewer is fine).
    /// The corresponding C function is `read`.
    static func readAll(_ fd: Int32, sizeHint: Int) throws(SyscallError) -> [UInt8] {
        try injectFault("read")
        if sizeHint >= 8 << 20, let whole = readInPieces(fd, size: sizeHint) { return whole }
        var result: [UInt8] = []
        var capacity = max(sizeHint, 0) + 1  // one more byte tells the end apart from a grown file
        while true {
            var failure: SyscallError?
            let chunk = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                count = 0
                while count < buffer.count {
                    let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { failure = SyscallError(name: "read", errno: errno); return }
                    if n == 0 { break }
                    count += n
                }
            }
            if let failure { throw failure }
            if result.isEmpty { result = chunk } else { result += chunk }
            if chunk.count < capacity { return result }
            capacity = max(capacity, 65536)
        }
    }

    /// Reads exactly `size` bytes from the start of `fd` in pieces at once (`pread`, one
    /// piece per core): the page faults of a fresh buffer then happen in parallel (a
    /// 100 MB file here: ~130 ms on one thread, ~75 ms on two). Nil when the file is not
    /// `size` bytes long any more or a read fails; `pread` leaves the file offset at 0,
    /// so the caller then reads it sequentially (and reports the error, if it recurs).
    /// The corresponding C function is `pread`.
    private static func readInPieces(_ fd: Int32, size: Int) -> [UInt8]? {
        var complete = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
            count = 0
            guard let base = buffer.baseAddress else { return }
            let filled = Parallel.map(size, minimum: 4 << 20) { range -> Bool in
                var offset = range.lowerBound
                while offset < range.upperBound {
                    let n = Glibc.pread(fd, base + offset, range.upperBound - offset, off_t(offset))
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return false }
                    offset += n
                }
                return true
            }
            // Exactly `size` bytes: a byte past them means the file grew meanwhile.
            var extra: UInt8 = 0
            complete = filled.allSatisfy { $0 } && Glibc.pread(fd, &extra, 1, off_t(size)) == 0
            if complete { count = size }
        }
        return complete ? bytes : nil
    }

    /// Reads `fd` to its end in pieces of at most `chunkSize` bytes through one reused
    /// buffer, handing each to `body` until it returns false. The corresponding C
    /// function is `read`.
    static func readChunks(_ fd: Int32, chunkSize: Int, _ body: (UnsafeRawBufferPointer) -> Bool) throws(SyscallError) {
        try injectFault("read")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 1), alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw SyscallError(name: "read", errno: errno) }
            if n == 0 || !body(UnsafeRawBufferPointer(rebasing: buffer[..<n])) { return }
        }
    }

    /// Writes all of `bytes`. The corresponding C function is `write`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SyscallError) {
        try writeAll(fd, bytes[...])
    }

    /// Writes all of `bytes` (a piece of a larger buffer: nothing is copied).
    /// The corresponding C function is `write`.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) throws(SyscallError) {
        // ArraySlice's withUnsafeBytes rethrows untyped: the error is carried out in a Result.
        try bytes.withUnsafeBytes { buffer in Result { () throws(SyscallError) in try writeAll(fd, buffer) } }.get()
    }

    /// Writes all of `bytes`. The corresponding C function is `write`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SyscallError) {
        var offset = 0
        while offset < bytes.count {
            let n = try retrying("write") {
                Glibc.write(fd, bytes.baseAddress! + offset, min(bytes.count - offset, 1 << 30))
            }
            offset += Int(n)
        }
    }

    /// Copies `count` bytes of `source` from `offset` to the end of what was written to
    /// `fd`, inside the kernel: no user buffer to fill and copy from (a 26 MB file here:
    /// ~11 ms, against 50–130 ms to read it into fresh memory and write it out). Returns
    /// the count copied; fewer than `count` when the kernel cannot copy between these
    /// files (the caller writes the rest). The corresponding C function is
    /// `copy_file_range`; faults are injected as `write`'s.
    static func copyRange(from source: Int32, offset: Int, count: Int, to fd: Int32) throws(SyscallError) -> Int {
        try injectFault("write")
        var at = Int64(offset)
        var copied = 0
        while copied < count {
            let n = credfile_copy_file_range(source, &at, fd, min(count - copied, 1 << 30))
            if n > 0 {
                copied += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            // 0: the source is shorter than it was (the caller writes the rest from memory);
            // EXDEV, EINVAL, ENOSYS, EOPNOTSUPP: no copy between these files.
            if n == 0 || [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF].contains(errno) { return copied }
            throw SyscallError(name: "write", errno: errno)
        }
        return copied
    }

    /// The corresponding C function is `fsync`. `name` tells a directory's `fsync`
    /// (`fsync-directory`) apart from a file's, for errors and the fault hook.
    static func fsync(_ fd: Int32, name: String = "fsync") throws(SyscallError) {
        _ = try retrying(name) { Glibc.fsync(fd) }
    }

    /// Creates a unique file from a template ending in `XXXXXX`, close-on-exec from the
    /// start (no window in which a fork could inherit it), mode 0600.
    /// The corresponding C function is `mkostemp` with `O_CLOEXEC`.
    static func mkstemp(_ template: String) throws(SyscallError) -> (fd: Int32, path: String) {
        var buffer = Array(template.utf8CString)
        // The buffer is never empty: utf8CString always holds the terminating NUL.
        let fd = try retrying("mkstemp") {
            buffer.withUnsafeMutableBufferPointer { credfile_mkostemp_cloexec($0.baseAddress!) }
        }
        return (fd, String(decoding: buffer.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Empties the file and moves its offset back to the start, to write it again.
    /// The corresponding C functions are `ftruncate` and `lseek`.
    static func truncateToStart(_ fd: Int32) throws(SyscallError) {
        _ = try retrying("write") { Glibc.ftruncate(fd, 0) }
        _ = try retrying("write") { Glibc.lseek(fd, 0, SEEK_SET) }
    }

    /// The corresponding C function is `fchmod`.
    static func fchmod(_ fd: Int32, _ mode: mode_t) throws(SyscallError) {
        _ = try retrying("fchmod") { Glibc.fchmod(fd, mode) }
    }

    /// The corresponding C function is `fchown`.
    static func fchown(_ fd: Int32, _ uid: uid_t, _ gid: gid_t) throws(SyscallError) {
        _ = try retrying("fchown") { Glibc.fchown(fd, uid, gid) }
    }

    /// The corresponding C function is `rename`.
    static func rename(_ from: String, _ to: String) throws(SyscallError) {
        _ = try retrying("rename") { Glibc.rename(from, to) }
    }

    /// The corresponding C function is `unlink`; a missing file is not an error.
    static func unlink(_ path: String) {
        _ = Glibc.unlink(path)
    }

    /// The target of a symlink, as stored. The corresponding C function is `readlink`.
    static func readlink(_ path: String) throws(SyscallError) -> String {
        try injectFault("readlink")
        var size = 256
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            let n = Glibc.readlink(path, &buffer, size)
            if n < 0 {
                if errno == EINTR { continue }
                throw SyscallError(name: "readlink", errno: errno)
            }
            if n < size {
                return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            size *= 2  // the target may have been truncated: try a larger buffer
        }
    }

    /// The working directory. The corresponding C function is `getcwd`.
    static func currentDirectory() throws(SyscallError) -> String {
        guard let cwd = getcwd(nil, 0) else { throw SyscallError(name: "getcwd", errno: errno) }
        defer { free(cwd) }
        return String(cString: cwd)
    }

    /// The names in a directory. The corresponding C functions are `opendir` and `readdir`.
    static func directoryEntries(_ path: String) throws(SyscallError) -> [String] {
        guard let dir = opendir(path) else { throw SyscallError(name: "opendir", errno: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            names.append(name)
        }
        return names
    }
}

/// Glibc's `flock` function (inside `Syscall`, `Glibc.flock` names the `struct flock`).
private func systemFlock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }

/// Glibc's `stat` function (inside `Syscall`, `stat` names the struct).
private func systemStat(_ path: String, _ info: inout stat) -> Int32 { stat(path, &info) }
extension Syscall {
    /// Reads up to `buffer.count` bytes at `offset` without moving the file position
    /// (a blocklist is searched this way, never loaded). Returns how many were read.
    /// The corresponding C function is `pread`.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SyscallError) -> Int
    {
        try retrying("pread") { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }
}
