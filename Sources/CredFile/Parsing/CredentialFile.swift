#if canImport(Glibc)
import Glibc
#endif

/// One line of a credential file: its bytes, its ending, and what it is.
public struct CredentialLine: Sendable {
    /// The 1-based line number.
    public let number: Int
    /// The bytes of the line without its ending (and without the BOM on line 1).
    public let content: ArraySlice<UInt8>
    /// How the line ends.
    public let ending: LineEnding
    /// Blank, comment or entry, classified on demand (no String is built for it).
    public var kind: LineKind { LineClassifier.classify(content) }
    /// The entry on this line, if it is an entry line.
    public var entry: Entry? { if case .entry(let e) = kind { e } else { nil } }
}

/// A parsed credential file: the exact bytes read, split into lines (SPEC §2).
///
/// The grammar:
///
///     file    = [BOM] *(line LF) [line]        ; CR before LF belongs to the ending
///     line    = blank / comment / entry
///     blank   = *(SP / TAB)
///     comment = "#" *byte
///     entry   = username "," secret            ; split at the first comma
///
/// Lines are views into one byte buffer and are classified only when asked, so a
/// file of a million lines costs one buffer and one array of line offsets.
/// `render()` gives back the identical bytes; `render(applying:)` gives them back
/// with only the changed lines changed.
public struct CredentialFile: Sendable {
    /// The UTF-8 byte order mark.
    public static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The file's bytes, exactly as read.
    public let bytes: [UInt8]
    /// Whether the bytes start with a UTF-8 BOM (skipped by the parser, kept on render).
    public let hasBOM: Bool
    /// The offset where each line's content starts.
    private let lineStarts: [Int]

    /// Splits `bytes` into lines.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
        let hasBOM = bytes.starts(with: Self.bom)
        self.hasBOM = hasBOM
        var starts: [Int] = []
        bytes.withUnsafeBytes { buffer in
            var start = hasBOM ? 3 : 0
            while start < buffer.count {
                starts.append(start)
                guard let lf = Self.index(of: 0x0A, in: buffer, from: start, to: buffer.count) else { break }
                start = lf + 1
            }
        }
        lineStarts = starts
    }

    /// Parses UTF-8 text.
    public init(_ text: String) { self.init(bytes: Array(text.utf8)) }

    /// The number of lines.
    public var lineCount: Int { lineStarts.count }

    /// The lines, classified lazily.
    public var lines: LazyMapSequence<Range<Int>, CredentialLine> {
        (0..<lineCount).lazy.map { self.line($0 + 1) }
    }

    /// Line `number` (1-based).
    public func line(_ number: Int) -> CredentialLine {
        let (content, ending) = span(of: number - 1)
        return CredentialLine(number: number, content: bytes[content], ending: ending)
    }

    /// The number of the line whose content starts at `offset` (binary search).
    private func number(ofLineStartingAt offset: Int) -> Int {
        var low = 0
        var high = lineStarts.count
        while low < high {
            let mid = (low + high) / 2
            if lineStarts[mid] < offset { low = mid + 1 } else { high = mid }
        }
        return low + 1
    }

    func span(of index: Int) -> (Range<Int>, LineEnding) {
        let start = lineStarts[index]
        let next = index + 1 < lineStarts.count ? lineStarts[index + 1] : bytes.count
        guard next > start, bytes[next - 1] == 0x0A else { return (start..<next, .none) }
        if next - 1 > start, bytes[next - 2] == 0x0D { return (start..<(next - 2), .crlf) }
        return (start..<(next - 1), .lf)
    }

    /// The first entry line of `username` (NFC-compared), malformed or not: it alone
    /// counts for that name. Nil when no entry has that name.
    public func firstEntry(named username: String) -> CredentialLine? {
        let hit = bytes.withUnsafeBytes { LineScanner.firstEntry(named: Unicode.nfcBytes(of: username), in: $0) }
        return hit.map { line(number(ofLineStartingAt: $0.content.lowerBound)) }
    }

    /// Every entry line of `username` (NFC-compared).
    public func entries(named username: String) -> [CredentialLine] {
        let hits = bytes.withUnsafeBytes { LineScanner.entries(named: Unicode.nfcBytes(of: username), in: $0) }
        return hits.map { line(number(ofLineStartingAt: $0.content.lowerBound)) }
    }

    /// The entries that decide a login: the first line of each name, in file order.
    /// Later lines of the same name are shadowed and never authenticate.
    public func effectiveEntries() -> [CredentialLine] {
        var seen = Set<[UInt8]>()
        return lines.filter { line in
            guard let entry = line.entry, entry.hasName else { return false }
            return seen.insert(entry.key).inserted
        }
    }

    /// The bytes, identical to the ones read.
    public func render() -> [UInt8] { render(applying: Changes()) }

    /// The bytes with `changes` applied; every other line byte for byte.
    public func render(applying changes: Changes) -> [UInt8] {
        var out: [UInt8] = []
        // Room for every replacement too: growing past the reserve would copy the whole
        // output into a buffer twice its size (an upgrade batch lengthens many lines).
        let replaced = changes.edited.values.reduce(0) { if case .replace(let l) = $1 { $0 + l.count } else { $0 } }
        out.reserveCapacity(bytes.count + replaced + changes.appended.reduce(0) { $0 + $1.count + 2 })
        var cursor = 0  // bytes before it are written
        for number in changes.edited.keys.sorted() where number >= 1 && number <= lineCount {
            let (content, ending) = span(of: number - 1)
            out.append(contentsOf: bytes[cursor..<content.lowerBound])
            if case .replace(let newContent) = changes.edited[number] {
                out.append(contentsOf: newContent)
                out.append(contentsOf: ending.bytes)
            }
            cursor = content.upperBound + ending.bytes.count
        }
        out.append(contentsOf: bytes[cursor...])
        if !changes.appended.isEmpty, let last = out.last, last != 0x0A, out.count > (hasBOM ? Self.bom.count : 0) {
            // The one change made to an existing line: it gains an ending. A CR at its
            // end is content (a control byte: the line is malformed); an LF alone would
            // turn that CR into a CRLF ending and the malformed line into a valid one.
            out += last == 0x0D ? [0x0D, 0x0A] : [0x0A]
        }
        for line in changes.appended {
            out.append(contentsOf: line)
            out.append(0x0A)
        }
        // U+FEFF at the start of a line that is not the file's first is part of that line
        // (a name `\u{FEFF}admin` is not `admin`). When the change brings such a line to
        // the very start (the lines before it removed, or an append to an empty file), a
        // BOM goes in front, so the parser skips that one and the line keeps its meaning.
        if !hasBOM, out.starts(with: Self.bom) { out.insert(contentsOf: Self.bom, at: 0) }
        return out
    }

    /// The first `needle` in `buffer[from..<to]`, found with `memchr`.
    static func index(of needle: UInt8, in buffer: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        guard from < to, let base = buffer.baseAddress,
            let hit = memchr(base + from, Int32(needle), to - from)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(hit))
    }
}

extension CredentialFile {
    /// Edits to apply in one rewrite: lines replaced or removed, entries appended.
    public struct Changes: Sendable {
        enum Edit: Sendable {
            case replace([UInt8])
            case remove
        }
        var edited: [Int: Edit] = [:]
        var appended: [[UInt8]] = []

        /// No change yet.
        public init() {}

        /// Whether nothing would change.
        public var isEmpty: Bool { edited.isEmpty && appended.isEmpty }

        /// Replaces the secret of the entry on `line`, keeping its username bytes and ending.
        public mutating func replaceSecret(of line: CredentialLine, with secret: String) {
            guard let entry = line.entry else { return }
            edited[line.number] = .replace(Array(entry.username) + [UInt8(ascii: ",")] + Array(secret.utf8))
        }

        /// Removes `line` with its ending.
        public mutating func remove(_ line: CredentialLine) {
            edited[line.number] = .remove
        }

        /// Appends `username,secret` with an LF at the end of the file.
        public mutating func append(username: String, secret: String) {
            appended.append(Array(username.utf8) + [UInt8(ascii: ",")] + Array(secret.utf8))
        }
    }
}
