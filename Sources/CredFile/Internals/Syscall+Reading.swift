#if canImport(Glibc)
import Glibc
#endif

/// Reading files through descriptors: whole (sequentially, or in parallel pieces for a
/// large file), in reused chunks, or at an offset.
extension Syscall {
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
                    let n = retrying { Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count) }
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
                    let n = retrying { Glibc.pread(fd, base + offset, range.upperBound - offset, off_t(offset)) }
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
            let n = retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            if n < 0 { throw SyscallError(name: "read", errno: errno) }
            if n == 0 || !body(UnsafeRawBufferPointer(rebasing: buffer[..<n])) { return }
        }
    }

    /// Reads up to `buffer.count` bytes from `fd` at its position (a pipe or terminal
    /// gives what has come, at least one byte unless at its end). Returns how many were
    /// read, 0 at the end. The corresponding C function is `read`; `name` is the wrapper's
    /// name for errors and the fault hook (`read-input` for the CLI's standard input).
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, name: String = "read")
        throws(SyscallError) -> Int
    {
        try retrying(name) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `buffer.count` bytes at `offset` without moving the file position
    /// (a blocklist is searched this way, never loaded). Returns how many were read.
    /// The corresponding C function is `pread`.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SyscallError) -> Int
    {
        try retrying("pread") { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }
}
