#if canImport(Glibc)
import Glibc
#endif

/// An open blocklist file: form detection, line scan and binary search, all by `pread`.
struct BlocklistFile {
    let path: String
    let fd: Int32
    let size: Int

    /// Lines longer than this in a SHA-1 list are an error (real ones are under 60 bytes).
    static let maximumDigestLine = 256
    /// Below this many bytes the binary search reads the rest and scans it.
    static let scanWindow = 8192

    /// Opens the regular file at `path`.
    /// - Throws: ``CredFileError/Code/usage`` when it is not a regular file;
    ///   ``CredFileError/Code/io`` when it cannot be opened or read.
    init(path: String) throws {
        do {
            // O_NONBLOCK: a FIFO without a writer would otherwise block the open forever.
            fd = try Syscall.open(path, O_RDONLY | O_NONBLOCK)
        } catch {
            throw error.credFileError("cannot open the blocklist \(Escaped.path(path))")
        }
        self.path = path
        let info: stat
        do {
            info = try Syscall.fstat(fd)
        } catch {
            Syscall.close(fd)
            throw error.credFileError("cannot read the blocklist \(Escaped.path(path))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            Syscall.close(fd)
            throw CredFileError.usage(
                "the blocklist \(Escaped.path(path)) is not a regular file (a pipe, FIFO or device cannot be searched, "
                    + "and read as empty it would let every password through): save the list to a file and name that")
        }
        size = Int(info.st_size)
    }

    func close() { Syscall.close(fd) }

    /// Up to `count` bytes at `offset`.
    func read(_ count: Int, at offset: Int, reads: inout Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(0, min(count, size - offset)))
        var done = 0
        while done < buffer.count {
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SyscallError) -> Int in
                    try Syscall.pread(fd, UnsafeMutableRawBufferPointer(rebasing: raw[done...]), at: offset + done)
                }
            }
            let n: Int
            switch result {
            case .success(let count): n = count
            case .failure(let error): throw error.credFileError("cannot read the blocklist \(Escaped.path(path))")
            }
            reads += 1
            if n == 0 { break }
            done += n
        }
        return Array(buffer[0..<done])
    }

    /// SHA-1 when the first line is 40 hex digits with an optional `:count`.
    func detectForm() throws -> Blocklist.Form {
        var reads = 0
        let head = try read(Self.maximumDigestLine, at: 0, reads: &reads)
        var line = head.prefix { $0 != 0x0A }
        if line.last == 0x0D { line = line.dropLast() }
        return Self.digestLine(line) != nil ? .sha1 : .passwords
    }

    /// The 40 hex digits of a `SHA1HEX[:count]` line (CR already removed), uppercased,
    /// or nil when the line is not one.
    static func digestLine(_ line: ArraySlice<UInt8>) -> [UInt8]? {
        guard line.count >= 40 else { return nil }
        let digits = line.prefix(40)
        guard digits.allSatisfy(isHexDigit) else { return nil }
        let rest = line.dropFirst(40)
        if !rest.isEmpty {
            guard rest.first == UInt8(ascii: ":"), rest.count > 1,
                rest.dropFirst().allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
        }
        return digits.map { (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) ? $0 - 32 : $0 }
    }

    static func isHexDigit(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(b)
    }

    private func malformed(near offset: Int) -> CredFileError {
        CredFileError.usage(
            "the blocklist \(Escaped.path(path)) is not a sorted SHA1HEX[:count] list (near byte \(offset))")
    }

    /// Binary search for `target` (40 uppercase hex digits) over byte offsets: each step
    /// reads the first whole line after the midpoint (one `pread` of 256 bytes); when the
    /// window is small it is read and scanned.
    func binarySearch(for target: [UInt8], reads: inout Int) throws -> Bool {
        // Invariant: every line starting before `low` sorts before target, every line
        // starting at or after `high` sorts after it; `low` is a line start.
        var low = 0
        var high = size
        while high - low > Self.scanWindow {
            let middle = low + (high - low) / 2
            let probe = try read(Self.maximumDigestLine, at: middle - 1, reads: &reads)
            // The line start at or after `middle` (the byte before tells whether `middle` is one).
            guard let newline = probe.firstIndex(of: 0x0A) else { throw malformed(near: middle) }
            let start = middle + newline  // probe[0] is the byte at middle - 1
            guard start < high else { break }  // no line starts in [middle, high): scan
            let rest = probe[(newline + 1)...]
            let raw = rest.prefix { $0 != 0x0A }
            let atEnd = middle - 1 + probe.count == size
            // A line with no LF within the probe is the file's last line, or too long.
            guard raw.count < rest.count || atEnd else { throw malformed(near: start) }
            var line = raw
            if line.last == 0x0D { line = line.dropLast() }
            guard let digest = Self.digestLine(line) else { throw malformed(near: start) }
            if digest == target { return true }
            if digest.lexicographicallyPrecedes(target) {
                low = min(start + raw.count + 1, size)  // the next line's start
            } else {
                high = start
            }
        }
        return try scanDigests(from: low, to: high, for: target, reads: &reads)
    }

    /// Scans the lines that start in [from, to) for `target`.
    private func scanDigests(from: Int, to: Int, for target: [UInt8], reads: inout Int) throws -> Bool {
        var offset = from
        var pending: [UInt8] = []
        while offset < to || !pending.isEmpty {
            let chunk =
                offset < size
                ? try read(min(65536, max(to - offset, 0) + Self.maximumDigestLine), at: offset, reads: &reads) : []
            let startOfChunk = offset - pending.count
            pending += chunk
            offset += chunk.count
            var lineStart = 0
            while let newline = pending[lineStart...].firstIndex(of: 0x0A) {
                if startOfChunk + lineStart >= to { return false }
                var line = pending[lineStart..<newline]
                if line.last == 0x0D { line = line.dropLast() }
                if !line.isEmpty {
                    guard let digest = Self.digestLine(line) else { throw malformed(near: startOfChunk + lineStart) }
                    if digest == target { return true }
                    if target.lexicographicallyPrecedes(digest) { return false }
                }
                lineStart = newline + 1
            }
            pending = Array(pending[lineStart...])
            if chunk.isEmpty {  // end of file: a last line without LF
                if !pending.isEmpty, startOfChunk + lineStart < to {
                    var line = pending[...]
                    if line.last == 0x0D { line = line.dropLast() }
                    if Self.digestLine(line) == target { return true }
                }
                return false
            }
            if pending.count > Self.maximumDigestLine { throw malformed(near: offset) }
        }
        return false
    }

    /// Hands each line of a one-password-a-line file to `body`, folded as passwords are
    /// compared (lowercased, NFC; a CR before the LF dropped; blank lines skipped), read
    /// 64 KiB at a time. A line longer than any password can be (65,536 bytes) is skipped.
    /// Returns the count of reads.
    func forEachFoldedLine(_ body: (UnsafeRawBufferPointer) -> Void) throws -> Int {
        var reads = 0
        var offset = 0
        var pending: [UInt8] = []
        var lowered: [UInt8] = []
        func fold(_ raw: ArraySlice<UInt8>) {
            var line = raw
            if line.last == 0x0D { line = line.dropLast() }
            if line.isEmpty { return }  // a blank line lists nothing
            if line.allSatisfy({ $0 < 0x80 }) {
                lowered.removeAll(keepingCapacity: true)
                for byte in line {
                    lowered.append((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte)
                }
                return lowered.withUnsafeBytes(body)
            }
            guard let text = String(validating: Array(line), as: UTF8.self) else { return }
            Array(Unicode.nfcBytes(of: text.lowercased())).withUnsafeBytes(body)
        }
        while true {
            let chunk = try read(65536, at: offset, reads: &reads)
            offset += chunk.count
            pending += chunk
            var lineStart = 0
            while let newline = pending[lineStart...].firstIndex(of: 0x0A) {
                fold(pending[lineStart..<newline])
                lineStart = newline + 1
            }
            pending = Array(pending[lineStart...])
            if chunk.isEmpty {
                fold(pending[...])
                return reads
            }
            // A line longer than any password (4,096 bytes after NFC, plus slack) can't match:
            // drop it rather than grow the buffer.
            if pending.count > 65536 { pending.removeAll() }
        }
    }
}
