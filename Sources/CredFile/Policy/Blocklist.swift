import Synchronization
internal import CredFileBlocklist  // builtInBlocklistText, the generated data
#if canImport(Glibc)
import Glibc
#endif

/// A list of passwords that must not be chosen (SPEC §8, NIST SP 800-63B-4 §3.1.1.2):
/// the built-in list of common passwords, or a file.
///
/// A file comes in one of two forms, told apart by its first line:
/// * **SHA-1** — the first line is 40 hex digits, optionally followed by `:` and a count
///   (`7C4A8D09CA3762AF61E59520943DC26494F8941B:24230577`), as in the Pwned Passwords
///   download. The file must be sorted by digest (case does not matter); it is searched by
///   binary search with `pread`, a few pages per lookup, and never loaded (it can be tens
///   of GB). A line may end in CRLF.
/// * **passwords** — anything else: one password a line (a CR before the LF is dropped,
///   blank lines are ignored), compared case-insensitively with the whole password. It is
///   read once per process, in 64 KiB chunks, at the first lookup: each line's folded
///   form is hashed (a keyed hash, so no one who writes the list can make lines collide)
///   into one sorted array of 8 bytes a line, and every lookup is a binary search of it
///   (a scan per lookup read a 120 MB list for every password of an `import`).
///
/// Only a regular file can be a blocklist: a pipe, FIFO or device is refused (a
/// ``CredFileError/Code/usage`` error), because it cannot be searched or read twice, and
/// reading one as if it were empty would let every password through. A FIFO is opened
/// `O_NONBLOCK`, so one without a writer cannot hang the command.
///
/// Lookups compare the whole password, case-insensitively (both sides lowercased), as
/// NIST and Django do. A SHA-1 list holds digests of passwords as typed, which cannot be
/// lowercased: a password is looked up as typed and, when it differs, lowercased.
public struct Blocklist: Sendable, Equatable {
    /// What the list holds.
    public enum Form: String, Sendable {
        /// credfile's built-in list of common passwords (see ``builtIn``).
        case builtIn = "built-in"
        /// A file of passwords, one a line.
        case passwords
        /// A sorted file of `SHA1HEX[:count]` lines.
        case sha1
    }

    /// The file's path, or `nil` for the built-in list.
    public let path: String?
    /// What the list holds.
    public let form: Form
    /// A passwords list's index, made at its first lookup and shared by every copy.
    private let index: PasswordIndex?

    /// Lists compare by what they are: their path and form.
    public static func == (a: Blocklist, b: Blocklist) -> Bool { a.path == b.path && a.form == b.form }

    /// The built-in list: the 19,640 lowercased passwords Django 5.2 ships as
    /// `common-passwords.txt.gz` (Royce Williams' list of the 20,000 most common Pwned
    /// Passwords, BSD licence; see `Sources/CredFileBlocklist/README.md`).
    public static let builtIn = Blocklist(path: nil, form: .builtIn)

    private init(path: String?, form: Form) {
        self.path = path
        self.form = form
        self.index = form == .passwords ? PasswordIndex() : nil
    }

    /// A blocklist file; its form is read from its first line now.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be opened or read;
    ///   ``CredFileError/Code/usage`` when it is not a regular file (a pipe, a FIFO,
    ///   `/dev/stdin` on a terminal or pipe, a device).
    public init(path: String) throws {
        let file = try BlocklistFile(path: path)
        defer { file.close() }
        self.init(path: path, form: try file.detectForm())
    }

    /// How many entries the built-in list holds.
    public static var builtInCount: Int { BuiltInList.words.count }

    /// Whether `password` is on the list.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read, or
    ///   ``CredFileError/Code/usage`` when a SHA-1 file has a line that is not one.
    public func contains(_ password: Password) throws -> Bool {
        try lookUp(password).isListed
    }

    /// What one lookup found and cost.
    public struct Lookup: Sendable {
        /// Whether the password is on the list.
        public let isListed: Bool
        /// How many `pread` calls it made (0 for the built-in list).
        public let reads: Int
    }

    /// Looks `password` up and says how many reads it took (for benchmarks).
    /// - Throws: as ``contains(_:)``.
    public func lookUp(_ password: Password) throws -> Lookup {
        let folded = PasswordText.folded(password)
        switch form {
        case .builtIn:
            return Lookup(isListed: folded.map { BuiltInList.contains($0) } ?? false, reads: 0)
        case .passwords:
            // A list of passwords is text: a password that is not UTF-8 cannot be on it.
            guard let folded, let index else { return Lookup(isListed: false, reads: 0) }
            return try index.lookUp(Array(folded.utf8), in: path ?? "")
        case .sha1:
            let file = try BlocklistFile(path: path ?? "")
            defer { file.close() }
            var reads = 0
            var candidates: [[UInt8]] = [password.bytes.withUnsafeBytes { Array($0) }]
            if let folded, Array(folded.utf8) != candidates[0] { candidates.append(Array(folded.utf8)) }
            for candidate in candidates {
                let found = try file.binarySearch(for: try Self.sha1Hex(candidate), reads: &reads)
                if found { return Lookup(isListed: true, reads: reads) }
            }
            return Lookup(isListed: false, reads: reads)
        }
    }

    /// The uppercase hex SHA-1 of `bytes` (OpenSSL), as the Pwned Passwords list spells it.
    static func sha1Hex(_ bytes: [UInt8]) throws -> [UInt8] {
        let digest = bytes.withUnsafeBytes { OpenSSL.digest(.sha1, $0) }
        let hex = Array("0123456789ABCDEF".utf8)
        return digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }
    }
}

/// The built-in list: one string literal, searched as it is for the first lookups of a
/// process and split into a set after that.
enum BuiltInList {
    /// Every entry (lowercase already), split from the literal (~12 ms) when first read:
    /// by the lookup after the first ``searchesBeforeSet``.
    static let words: Set<Substring> = Set(builtInBlocklistText.split(separator: "\n", omittingEmptySubsequences: true))

    /// Lookups made so far in this process.
    private static let lookups = Atomic<Int>(0)

    /// How many lookups search the literal (160 KB, ~20 µs each) before the set is built:
    /// `add` and `passwd` ask once or twice and never pay for the set; `import` and
    /// `check --passwords` ask thousands of times and do.
    static let searchesBeforeSet = 32

    /// Whether `word` (folded) is an entry.
    static func contains(_ word: String) -> Bool {
        guard lookups.add(1, ordering: .relaxed).oldValue < searchesBeforeSet else {
            return words.contains(Substring(word))
        }
        return searchLiteral(word)
    }

    /// Whether `word` is a line of the literal, by one `memmem` (no set built).
    static func searchLiteral(_ word: String) -> Bool {
        guard !word.isEmpty, !word.utf8.contains(FileSyntax.lf) else { return false }
        // The entry with its line ends, in the text with one LF added at each end.
        let needle = Array(("\n" + word + "\n").utf8)
        var text = "\n" + builtInBlocklistText + "\n"
        return text.withUTF8 { haystack in
            needle.withUnsafeBytes { Bytes.offset(of: $0, in: UnsafeRawBufferPointer(haystack)) != nil }
        }
    }
}

/// Text forms of a password for comparisons with lists and words.
enum PasswordText {
    /// The password as a lowercased `String` (after NFC, which `Password` holds), or nil
    /// when its bytes are not UTF-8.
    static func folded(_ password: Password) -> String? {
        password.bytes.withUnsafeBytes { String(validating: Array($0), as: UTF8.self) }?.lowercased()
    }
}

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

/// The index of a one-password-a-line blocklist: a keyed 64-bit hash of each line's
/// folded form, sorted, made from one read of the file at the first lookup (by whichever
/// thread asks first) and kept for the life of the process. Two different passwords
/// share a hash with a chance of about one in 2^64 / lines (a password then counts as
/// listed: it fails closed); whoever writes the list cannot aim at that, since the key
/// is drawn at random per process.
final class PasswordIndex: Sendable {
    private let hashes = Mutex<[UInt64]?>(nil)
    /// The hash key, from the system's CSPRNG.
    private let key: (UInt64, UInt64) = {
        var random = SystemRandomNumberGenerator()
        return (random.next(), random.next())
    }()

    /// The keyed hash of `bytes` (a folded password or line).
    private func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key.0)
        hasher.combine(key.1)
        hasher.combine(bytes: bytes)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// Whether `folded` (a lowercased password's UTF-8) is a line of the file at `path`;
    /// the first lookup reads the file (its reads are counted), the others read nothing.
    func lookUp(_ folded: [UInt8], in path: String) throws -> Blocklist.Lookup {
        let (sorted, reads) = try hashes.withLock { built throws -> ([UInt64], Int) in
            if let built { return (built, 0) }
            let file = try BlocklistFile(path: path)
            defer { file.close() }
            var made: [UInt64] = []
            let reads = try file.forEachFoldedLine { made.append(hash($0)) }
            made.sort()
            built = made
            return (made, reads)
        }
        let target = folded.withUnsafeBytes { hash($0) }
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < target { low = middle + 1 } else { high = middle }
        }
        return Blocklist.Lookup(isListed: low < sorted.count && sorted[low] == target, reads: reads)
    }
}
