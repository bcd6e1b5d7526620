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

/// The login check of the outside callers (pam, checkpassword, the Squid helper).
enum LoginCheck {
    /// A name no entry can have (a line holding NUL is malformed), checked instead of a
    /// login that cannot be in the file, so that it costs the same as any other.
    static let unmatchableName = "\u{0}"

    /// Verifies raw bytes from a caller, through the store's guard when it has one
    /// (SPEC §9: the name is counted as sent, its bytes NFC-compared; `client` is the
    /// log's `rhost=`). A username that is not UTF-8, or a password holding a NUL byte
    /// (no stored password can; and HMAC pads its key with zeros, so PBKDF2 alone would
    /// take `pw\0` for `pw`), is denied after the same work as a wrong password.
    static func verify(
        _ store: CredentialStore, username: some Collection<UInt8>, password: some Collection<UInt8>, upgrade: Bool,
        client: String?
    ) throws -> CredentialStore.Verification {
        let name = String(validating: Array(username), as: UTF8.self)
        let acceptable = name != nil && !password.contains(0)
        var unguarded = store
        unguarded.loginGuard = nil
        func check() throws -> CredentialStore.Verification {
            try unguarded.verify(
                username: acceptable ? name! : unmatchableName,  // `name` is non-nil when acceptable
                password: Password(utf8: password), upgradeOnSuccess: upgrade && acceptable)
        }
        guard let loginGuard = store.loginGuard else { return try check() }
        return try loginGuard.attempt(username: username, client: client, check)
    }

    /// A client address from the caller's environment (`PAM_RHOST`, `TCPREMOTEIP`): nil
    /// when unset or empty; bytes that are not UTF-8 are shown as the log escapes them.
    static func client(_ bytes: [UInt8]?) -> String? {
        guard let bytes, !bytes.isEmpty else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
