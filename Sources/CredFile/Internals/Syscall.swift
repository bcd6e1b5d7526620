#if canImport(Glibc)
import Glibc
#endif
internal import CCredFile  // mkostemp, copy_file_range and the timed flock, which the Glibc module lacks

/// A failed system call: its name and errno.
package struct SyscallError: Error {
    /// The wrapper's name (`write`, `read-input`, …): what failed, for messages and the fault hook.
    package let name: String
    /// The `errno` of the failure.
    package let errno: Int32

    /// The library error for it, with a sentence saying what was being done.
    func credFileError(_ doing: String, code: CredFileError.Code = .io) -> CredFileError {
        CredFileError(code, doing, cause: .init(syscall: name, errno: errno))
    }
}

/// Each system call credfile makes, wrapped once: `EINTR` is retried (``retrying(_:)``)
/// and a failure becomes a ``SyscallError``. Every descriptor is opened `O_CLOEXEC`.
/// The plain wrappers are here; the whole-file reads are in `Syscall+Reading.swift`, the
/// mappings and their SIGBUS guard in `Syscall+Mapping.swift`, and the debug builds'
/// fault hook (`CREDFILE_TEST_FAULT`) in `FaultInjection.swift`.
///
/// The CLI's writes to standard output, standard error and the log, and its reads of
/// standard input and the terminal, use the `package` wrappers below too (under names of
/// their own, `write-output` and `read-input`, so a fault injected into the file's `write`
/// or `read` does not silence the message that reports it).
package enum Syscall {
    /// Calls `body`, a C call that returns -1 and sets `errno` on failure, again while it
    /// fails with `EINTR`, and gives its last result: the one `EINTR` loop of the wrappers.
    static func retrying<R: BinaryInteger>(_ body: () -> R) -> R {
        while true {
            let result = body()
            if result != -1 || errno != EINTR { return result }
        }
    }

    /// The CPU time the calling thread has used, in seconds (its share of the machine
    /// only: time spent preempted by other processes does not count): what a login's
    /// measured padding counts (``Verifier``) and ``MachineRate`` measures by.
    ///
    /// The corresponding C function is `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// ``retrying(_:)`` for a wrapper named `name`: the fault hook first, then a failure
    /// other than `EINTR` becomes a ``SyscallError``.
    @discardableResult
    static func retrying<R: BinaryInteger>(_ name: String, _ body: () -> R) throws(SyscallError) -> R {
        try injectFault(name)
        let result = retrying(body)
        if result == -1 { throw SyscallError(name: name, errno: errno) }
        return result
    }

    /// The corresponding C function is `open`. `name` tells the writer's `open` of the
    /// directory after `rename` (`open-directory`) apart from the others, for errors and
    /// the fault hook.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600, name: String = "open") throws(SyscallError)
        -> Int32
    {
        try retrying(name) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// The corresponding C function is `close`; its result is ignored (Linux closes the fd anyway).
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// The corresponding C function is `flock`.
    static func flock(_ fd: Int32, _ operation: Int32) throws(SyscallError) {
        try retrying("flock") { systemFlock(fd, operation) }
    }

    /// `flock(fd, operation)` that waits in the kernel's queue for at most `timeout`
    /// seconds (greater than 0): the lock goes to the waiters in the kernel's order, not
    /// to whoever polls at the moment it is released. `EINTR` from another signal goes
    /// on waiting; the time running out is `EWOULDBLOCK`; `ENOSYS` when no signal could
    /// be set aside for the timer that ends the wait (the caller polls instead). The
    /// corresponding C function is `flock`, with a timer (`timer_create`) of this thread.
    static func flock(_ fd: Int32, _ operation: Int32, timeout: Double) throws(SyscallError) {
        try injectFault("flock")
        let nanoseconds = Int64(min(timeout, 1e9) * 1e9)
        guard credfile_flock_timed(fd, operation, max(nanoseconds, 1)) == 0 else {
            throw SyscallError(name: "flock", errno: errno)
        }
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

    /// Writes all of `bytes`. The corresponding C function is `write`; `name` is the
    /// wrapper's name for errors and the fault hook (`write-output` for the CLI's own
    /// output and messages).
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], name: String = "write") throws(SyscallError) {
        try writeAll(fd, bytes[...], name: name)
    }

    /// Writes all of `bytes` (a piece of a larger buffer: nothing is copied).
    /// The corresponding C function is `write`.
    package static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>, name: String = "write") throws(SyscallError) {
        // ArraySlice's withUnsafeBytes rethrows untyped: the error is carried out in a Result.
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(SyscallError) in try writeAll(fd, buffer, name: name) }
        }.get()
    }

    /// Writes all of `bytes`. The corresponding C function is `write`. A `write` that
    /// writes nothing of a non-empty rest is an `EIO` failure, not an endless loop.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, name: String = "write")
        throws(SyscallError)
    {
        var offset = 0
        while offset < bytes.count {
            let n = try retrying(name) {
                Glibc.write(fd, bytes.baseAddress! + offset, min(bytes.count - offset, 1 << 30))
            }
            if n == 0 { throw SyscallError(name: name, errno: EIO) }
            offset += Int(n)
        }
    }

    /// Copies `count` bytes of `source` from `offset` to the end of what was written to
    /// `fd`, inside the kernel: no user buffer to fill and copy from (a 26 MB file here:
    /// ~11 ms, against 50–130 ms to read it into fresh memory and write it out). Returns
    /// the count copied; fewer than `count` when the kernel cannot copy between these
    /// files (the caller writes the rest). The corresponding C function is
    /// `copy_file_range`, and its failure is named so. The fault hook strikes here for
    /// `copy_file_range` and, as it puts bytes in the new file, for `write` too.
    static func copyRange(from source: Int32, offset: Int, count: Int, to fd: Int32) throws(SyscallError) -> Int {
        try injectFault("write")
        try injectFault("copy_file_range")
        var at = Int64(offset)
        var copied = 0
        while copied < count {
            let n = retrying { credfile_copy_file_range(source, &at, fd, min(count - copied, 1 << 30)) }
            if n > 0 {
                copied += n
                continue
            }
            // 0: the source is shorter than it was (the caller writes the rest from memory);
            // EXDEV, EINVAL, ENOSYS, EOPNOTSUPP: no copy between these files.
            if n == 0 || [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF].contains(errno) { return copied }
            throw SyscallError(name: "copy_file_range", errno: errno)
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
            let n = retrying { Glibc.readlink(path, &buffer, size) }
            if n < 0 { throw SyscallError(name: "readlink", errno: errno) }
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
