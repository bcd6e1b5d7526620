import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The login checks' (SPEC §7) care for what they read: their bounded reads go through
/// ``BoundedReader``; the copies they keep are zeroed with this.
enum BoundedInput {
    /// Overwrites `bytes` with zeros in a way the optimizer keeps (`explicit_bzero`).
    static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }
}

/// Reads LF-terminated lines from a descriptor in chunks, keeping at most `maximum + 1`
/// bytes of an overlong line (the rest up to its LF is discarded), so a hostile caller
/// cannot make the helper's memory grow.
///
/// The lines hold passwords, so no byte of one outlives its use: the bytes read are
/// zeroed in the read buffer as soon as they are taken from it, and the line is built
/// in one buffer of fixed capacity (it never grows, so no copy is left behind in freed
/// memory) that is zeroed after each line. The caller zeroes the line it gets.
final class ChunkedLineReader {
    private let fd: Int32
    private let maximum: Int
    /// What `read` fills; `start..<end` is not taken yet, the rest is zeros.
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    /// The line being gathered, at most `maximum + 1` bytes (its capacity, reserved once).
    private var line: [UInt8] = []
    private var atEnd = false

    init(fd: Int32, maximum: Int) {
        self.fd = fd
        self.maximum = maximum
        buffer = [UInt8](repeating: 0, count: 16_384)
        line.reserveCapacity(maximum + 1)
    }

    deinit {
        BoundedInput.zero(&buffer)
        BoundedInput.zero(&line)
    }

    /// The next line without its LF (longer than `maximum` when it was overlong), or nil
    /// at end of input. A last line without LF is returned too.
    /// - Throws: ``CredFileError/Code/io`` when `read` fails.
    func next() throws -> [UInt8]? {
        var discarding = false
        defer {
            BoundedInput.zero(&line)
            line.removeAll(keepingCapacity: true)
        }
        while true {
            let lf = buffer[start..<end].firstIndex(of: 0x0A)
            let taken = start..<(lf ?? end)
            if !discarding {
                line += buffer[taken].prefix(maximum + 1 - line.count)
                discarding = line.count > maximum
            }
            // Zeroed as soon as taken (with the LF): nothing read lingers in the buffer.
            buffer.withUnsafeMutableBytes { raw in
                let upper = lf.map { $0 + 1 } ?? end
                if upper > start { _ = memset(raw.baseAddress! + start, 0, upper - start) }  // non-empty buffer
            }
            if let lf {
                start = lf + 1
                return Array(line)
            }
            start = 0
            end = 0
            if atEnd { return line.isEmpty && !discarding ? nil : Array(line) }
            let read = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SyscallError) in try Syscall.read(fd, into: raw, name: "read-input") }
            }
            switch read {
            case .success(let n): if n == 0 { atEnd = true } else { end = n }
            case .failure(let error):
                throw CredFileError(.io, "cannot read standard input (read: \(String(cString: strerror(error.errno))))")
            }
        }
    }
}
