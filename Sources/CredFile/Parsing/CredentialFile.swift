import Synchronization

/// One line of a credential file: its bytes, its ending, and what it is.
public struct CredentialLine: Sendable {
    /// The 1-based line number.
    public let number: Int
    /// The bytes of the line without its ending (and without the BOM on line 1).
    public let content: ArraySlice<UInt8>
    /// Where `content` starts in the file: what ``CredentialFile/Changes`` names it by.
    let offset: Int
    /// How the line ends.
    public let ending: LineEnding
    /// Blank, comment or entry, classified on demand (no String is built for it).
    public var kind: LineKind { LineClassifier.classify(content) }
    /// The entry on this line, if it is an entry line.
    public var entry: Entry? { if case .entry(let e) = kind { e } else { nil } }
}

/// An effective entry as `list` shows it: its name and how its secret is stored.
public struct ListedEntry: Sendable {
    /// The 1-based line number.
    public let line: Int
    /// The raw bytes of the name field (escape them with ``Escaped/name(_:)`` to print).
    public let username: ArraySlice<UInt8>
    /// How the secret is stored, without the secret.
    public let storage: StorageSummary
    /// The username as text when it is valid UTF-8.
    public var usernameText: String? { String(validating: username, as: UTF8.self) }
}

/// A parsed credential file: the exact bytes read, split into lines (SPEC §2).
///
/// The grammar, and every byte rule, is ``FileSyntax``'s.
///
/// Lines are views into one byte buffer and are classified only when asked, so a
/// file of a million lines costs one buffer and one array of line offsets.
/// `render()` gives back the identical bytes; `render(applying:)` gives them back
/// with only the changed lines changed.
public struct CredentialFile: Sendable {
    /// The UTF-8 byte order mark.
    public static let bom: [UInt8] = FileSyntax.bom

    /// The file's bytes, exactly as read.
    public var bytes: [UInt8] { storage.array }
    /// The bytes: in memory, or (inside a rewrite) mapped from the file. Every reading
    /// below goes through it, never through ``bytes``, which copies a mapping.
    let storage: FileBytes
    /// Whether the bytes start with a UTF-8 BOM (skipped by the parser, kept on render).
    public let hasBOM: Bool
    /// The offset where each line's content starts, found on first use: a one-user
    /// change of a million-line file finds its line by a scan and never needs it.
    private let index = LineIndex()

    /// Splits `bytes` into lines (lazily: the line index is built when first asked).
    public init(bytes: [UInt8]) { self.init(storage: FileBytes(bytes)) }

    /// Splits the bytes of `storage` into lines (lazily).
    init(storage: FileBytes) {
        self.storage = storage
        self.hasBOM = storage.withUnsafeBytes { $0.starts(with: FileSyntax.bom) }
    }

    /// Parses UTF-8 text.
    public init(_ text: String) { self.init(bytes: Array(text.utf8)) }

    /// The offset where each line's content starts.
    var lineStarts: [Int] { index.starts(of: storage) }

    /// The number of lines.
    public var lineCount: Int { lineStarts.count }

    /// The lines, classified lazily.
    public var lines: LazyMapSequence<Range<Int>, CredentialLine> {
        let starts = lineStarts
        return (0..<starts.count).lazy.map { index in
            let (content, ending) = self.storage.withUnsafeBytes { file in
                starts.withUnsafeBufferPointer { Self.span(of: index, starts: $0, in: file) }
            }
            return self.line(number: index + 1, content: content, ending: ending)
        }
    }

    /// Line `number` (1-based).
    public func line(_ number: Int) -> CredentialLine {
        let (content, ending) = span(of: number - 1)
        return line(number: number, content: content, ending: ending)
    }

    /// The line numbered `number` whose content is `content`.
    private func line(number: Int, content: Range<Int>, ending: LineEnding) -> CredentialLine {
        CredentialLine(number: number, content: storage.slice(content), offset: content.lowerBound, ending: ending)
    }

    /// The content range and ending of the line at 0-based `index`.
    func span(of index: Int) -> (Range<Int>, LineEnding) {
        withRawLines { file, starts in Self.span(of: index, starts: starts, in: file) }
    }

    /// The content range and ending of the line at 0-based `index` of `starts`, over raw
    /// buffers: the loops that run in pieces on several threads use these, never
    /// `bytes[…]` slices, whose retain and release of the one shared array buffer would
    /// bounce its reference count between the cores on every line.
    static func span(of index: Int, starts: UnsafeBufferPointer<Int>, in file: UnsafeRawBufferPointer) -> (
        Range<Int>, LineEnding
    ) {
        let next = index + 1 < starts.count ? starts[index + 1] : file.count
        return FileSyntax.split(file, lineFrom: starts[index], to: next)
    }

    /// Runs `body` with the file's bytes and its line starts as raw buffers.
    func withRawLines<R>(_ body: (UnsafeRawBufferPointer, UnsafeBufferPointer<Int>) -> R) -> R {
        let starts = lineStarts
        return storage.withUnsafeBytes { file in starts.withUnsafeBufferPointer { body(file, $0) } }
    }

    /// The first entry line of `username` (NFC-compared), malformed or not: it alone
    /// counts for that name. Nil when no entry has that name.
    public func firstEntry(named username: String) -> CredentialLine? {
        let hit = storage.withUnsafeBytes { LineScanner.firstEntry(named: FileSyntax.nameKey(of: username), in: $0) }
        return hit.map { line(number: $0.number, content: $0.content, ending: $0.ending) }
    }

    /// Every entry line of `username` (NFC-compared).
    public func entries(named username: String) -> [CredentialLine] {
        let hits = storage.withUnsafeBytes { LineScanner.entries(named: FileSyntax.nameKey(of: username), in: $0) }
        return hits.map { line(number: $0.number, content: $0.content, ending: $0.ending) }
    }

    /// Every name's first entry line, by the name's comparison key (NFC bytes): one pass
    /// over the file for callers that look up many names (`import`), where
    /// ``firstEntry(named:)`` per name would read the file once per name.
    func firstEntryIndex() -> [[UInt8]: Int] {
        var index: [[UInt8]: Int] = [:]
        withRawLines { file, starts in
            for number in stride(from: 1, through: starts.count, by: 1) {
                guard let key = Self.nameKey(ofLineAt: Self.span(of: number - 1, starts: starts, in: file).0, in: file)
                else { continue }
                let bytes = key.bytes(in: file)
                if index[bytes] == nil { index[bytes] = number }
            }
        }
        return index
    }

    /// The entries that decide a login: the first line of each name, in file order.
    /// Later lines of the same name are shadowed and never authenticate.
    public func effectiveEntries() -> [CredentialLine] {
        let firstLines = firstLines()
        return Array(lines.filter { firstLines.isFirst($0.number) })
    }

    /// Each effective entry with how its secret is stored under `policy`, in file order:
    /// what `list` shows. A hash in credfile's own format is validated, never decoded.
    public func listing(policy: HashPolicy) -> [ListedEntry] {
        var listed: [ListedEntry] = []
        forEachListedEntry(policy: policy) { listed.append($0) }
        return listed
    }

    /// Calls `body` with each entry of ``listing(policy:)`` in turn, without holding
    /// them all (a million-user file is listed in the memory of the file plus a block).
    public func forEachListedEntry(policy: HashPolicy, _ body: (ListedEntry) -> Void) {
        forEachListedBlock(policy: policy, empty: [(line: Int, name: Range<Int>, storage: StorageSummary)]()) {
            $0.append($1)
        } _: { block in
            for (line, name, storage) in block {
                body(ListedEntry(line: line, username: self.storage.slice(name), storage: storage))
            }
        }
    }

    /// The listing as `list` prints it, `name<TAB>storage<LF>` per entry (the name as
    /// ``Escaped/appendName(_:to:)`` shows it, the storage as ``StorageSummary/description``),
    /// handed to `body` in blocks of bytes, in file order.
    public func forEachListingBlock(policy: HashPolicy, _ body: ([UInt8]) -> Void) {
        storage.withUnsafeBytes { file in
            forEachListedBlock(policy: policy, empty: [UInt8]()) { out, entry in
                Escaped.appendName(UnsafeRawBufferPointer(rebasing: file[entry.name]), to: &out)
                out.append(UInt8(ascii: "\t"))
                entry.storage.append(to: &out)
                out.append(FileSyntax.lf)
            } _: {
                body($0)
            }
        }
    }

    /// The effective entries, in blocks of lines judged in pieces at once: each piece's
    /// entries (line number, name range, storage) are gathered by `gather` into a value
    /// that starts as `empty`, and `body` gets the values in file order.
    private func forEachListedBlock<Gathered>(
        policy: HashPolicy, empty: Gathered,
        _ gather: (inout Gathered, (line: Int, name: Range<Int>, storage: StorageSummary)) -> Void,
        _ body: (Gathered) -> Void
    ) {
        let firstLines = firstLines()
        withRawLines { file, starts in
            let blockSize = 1 << 16
            for blockStart in stride(from: 0, to: starts.count, by: blockSize) {
                let count = min(blockSize, starts.count - blockStart)
                let pieces = Parallel.map(count, minimum: 1 << 13) { piece -> Gathered in
                    var gathered = empty
                    for index in (blockStart + piece.lowerBound)..<(blockStart + piece.upperBound)
                    where firstLines.isFirst(index + 1) {
                        let content = Self.span(of: index, starts: starts, in: file).0
                        if let storage = storage(ofEntryAt: content, in: file, policy: policy) {
                            let comma = Bytes.index(
                                of: FileSyntax.comma, in: file, from: content.lowerBound, to: content.upperBound)
                            let name = content.lowerBound..<(comma ?? content.lowerBound)
                            gather(&gathered, (index + 1, name, storage))
                        }
                    }
                    return gathered
                }
                pieces.forEach(body)
            }
        }
    }

    /// How the secret of the entry line with content `range` is stored (nil: no entry).
    private func storage(ofEntryAt range: Range<Int>, in file: UnsafeRawBufferPointer, policy: HashPolicy)
        -> StorageSummary?
    {
        if let comma = Self.cleanEntryComma(UnsafeRawBufferPointer(rebasing: file[range])) {
            let secret = (range.lowerBound + comma + 1)..<range.upperBound
            if let quick = SecretSyntax.quickSummary(UnsafeRawBufferPointer(rebasing: file[secret])) {
                return quick.storage(under: policy)
            }
            return SecretSyntax.classify(self.storage.slice(secret)).storage(under: policy)
        }
        if case .entry(let entry) = LineClassifier.classify(self.storage.slice(range)) {
            return entry.secret.storage(under: policy)
        }
        return nil
    }

    /// The index of names that repeat an earlier line's (``FirstLines``).
    func firstLines() -> FirstLines {
        withRawLines { file, starts in
            FirstLines(count: starts.count, file: file) {
                Self.nameKey(ofLineAt: Self.span(of: $0, starts: starts, in: file).0, in: file)
            }
        }
    }

    /// The name key of the line with content `range`: nil when it holds no name (a
    /// comment, no comma, an empty name field); the name field itself when it is ASCII
    /// (ASCII is its own NFC form: no copy); else its NFC bytes.
    static func nameKey(ofLineAt range: Range<Int>, in file: UnsafeRawBufferPointer) -> FirstLines.Key? {
        guard !FileSyntax.isComment(UnsafeRawBufferPointer(rebasing: file[range])),
            let comma = Bytes.index(of: FileSyntax.comma, in: file, from: range.lowerBound, to: range.upperBound),
            comma > range.lowerBound
        else { return nil }
        let field = UnsafeRawBufferPointer(rebasing: file[range.lowerBound..<comma])
        return Bytes.isASCII(field) ? .inFile(range.lowerBound..<comma) : .normalized(FileSyntax.nameKey(field))
    }

    /// The bytes, identical to the ones read.
    public func render() -> [UInt8] { render(applying: Changes()) }

    /// The bytes with `changes` applied; every other line byte for byte: the pieces of
    /// ``writeRendered(applying:to:)``, joined.
    public func render(applying changes: Changes) -> [UInt8] {
        var out: [UInt8] = []
        // Room for every replacement too: growing past the reserve would copy the whole
        // output into a buffer twice its size (an upgrade batch lengthens many lines).
        let replaced = changes.edited.values.reduce(0) { if case .replace(let l) = $1 { $0 + l.count } else { $0 } }
        out.reserveCapacity(storage.count + replaced + changes.appended.reduce(0) { $0 + $1.count + 2 } + 3)
        storage.withUnsafeBytes { file in
            writeRendered(applying: changes) { piece in
                switch piece {
                case .original(let range): out.append(contentsOf: UnsafeRawBufferPointer(rebasing: file[range]))
                case .new(let bytes): out.append(contentsOf: bytes)
                }
            }
        }
        return out
    }
}

extension CredentialFile {
    /// Whether a line's content starts at `offset`: the changes name lines by where they
    /// start, so applying them needs no line index; an offset from another file's line
    /// that is no line start here is ignored, never spliced into the middle of a line.
    func isLineStart(_ offset: Int) -> Bool {
        let first = hasBOM ? Self.bom.count : 0
        return offset >= first && offset < storage.count && (offset == first || storage[offset - 1] == FileSyntax.lf)
    }

    /// Edits to apply in one rewrite: lines replaced or removed, entries appended.
    public struct Changes: Sendable {
        enum Edit: Sendable {
            case replace([UInt8])
            case remove
        }
        /// By the offset where the line's content starts.
        var edited: [Int: Edit] = [:]
        var appended: [[UInt8]] = []

        /// No change yet.
        public init() {}

        /// Whether nothing would change.
        public var isEmpty: Bool { edited.isEmpty && appended.isEmpty }

        /// Replaces the secret of the entry on `line`, keeping its username bytes and ending.
        /// - Throws: ``CredFileError/Code/usage`` when `line` holds no entry with a name,
        ///   or when the new line would not be a well-formed entry (an empty secret, a
        ///   line break or other control byte, invalid UTF-8, too long): a change never
        ///   writes a second line or a malformed one.
        public mutating func replaceSecret(of line: CredentialLine, with secret: String) throws {
            guard let entry = line.entry, entry.hasName else {
                throw CredFileError(.usage, "line \(line.number) holds no entry to change")
            }
            edited[line.offset] = .replace(try Self.entryLine(entry.username, secret))
        }

        /// Removes `line` with its ending.
        public mutating func remove(_ line: CredentialLine) {
            edited[line.offset] = .remove
        }

        /// Appends `username,secret` with an LF at the end of the file.
        /// - Throws: ``CredFileError/Code/usage`` when `username` breaks a rule for new
        ///   names (``Username/problem(_:)``: a comma, a control character such as a line
        ///   break or NUL, …) or the secret would not make a well-formed entry.
        public mutating func append(username: String, secret: String) throws {
            let name = Array(username.utf8)
            if let problem = Username.problem(name) { throw CredFileError(refusing: .username(problem)) }
            appended.append(try Self.entryLine(name[...], secret))
        }

        /// `name,secret`, checked to read back as exactly that entry.
        private static func entryLine(_ name: ArraySlice<UInt8>, _ secret: String) throws -> [UInt8] {
            let secretBytes = Array(secret.utf8)
            guard !secretBytes.isEmpty else { throw CredFileError(refusing: .secret(.emptySecret)) }
            let line = Array(name) + [FileSyntax.comma] + secretBytes
            if let problem = FileSyntax.lineProblem(line[...]) { throw CredFileError(refusing: .secret(problem)) }
            if case .malformed(let reason) = SecretSyntax.classify(secretBytes[...]) {
                throw CredFileError(refusing: .secret(.malformedHash(reason)))
            }
            return line
        }
    }
}

/// A file's line starts, computed once, on first use, by whichever thread asks first
/// (``CredentialFile`` is a value shared across threads).
final class LineIndex: Sendable {
    private let starts = Mutex<[Int]?>(nil)

    /// The line starts of `bytes` (the file this index belongs to).
    func starts(of bytes: FileBytes) -> [Int] {
        starts.withLock { built in
            if let built { return built }
            let computed = bytes.withUnsafeBytes { Self.lineStarts(of: $0) }
            built = computed
            return computed
        }
    }

    /// Where each line's content starts: after the BOM, then after each LF. The bytes
    /// are cut into pieces searched at once, twice: each piece counts its line starts,
    /// then writes them into its part of the one array (the pieces' threads allocate
    /// nothing, so no thread's heap keeps a piece's memory).
    static func lineStarts(of buffer: UnsafeRawBufferPointer) -> [Int] {
        do {
            let first = FileSyntax.firstLineStart(buffer)
            /// Calls `body` with each line start in `piece` of the bytes, in order.
            func forEachStart(in piece: Range<Int>, _ body: (Int) -> Void) {
                if piece.lowerBound == 0, first < buffer.count { body(first) }
                // An LF just before the piece starts a line at its first byte.
                var from = piece.lowerBound == 0 ? first : piece.lowerBound - 1
                while let lf = Bytes.index(of: FileSyntax.lf, in: buffer, from: from, to: buffer.count),
                    lf + 1 < piece.upperBound, lf + 1 < buffer.count
                {
                    body(lf + 1)
                    from = lf + 1
                }
            }
            let counts = Parallel.map(buffer.count, minimum: 1 << 22) { piece -> (Range<Int>, Int) in
                var count = 0
                forEachStart(in: piece) { _ in count += 1 }
                return (piece, count)
            }
            let pieces = counts.map(\.0)
            let total = counts.reduce(0) { $0 + $1.1 }
            return [Int](unsafeUninitializedCapacity: total) { starts, initialized in
                var offsets: [Int] = []  // where each piece's starts go
                var sum = 0
                for (_, count) in counts {
                    offsets.append(sum)
                    sum += count
                }
                _ = Parallel.map(pieces.count, minimum: 1) { indices -> Void in
                    for index in indices {
                        var slot = offsets[index]
                        Syscall.prefault(UnsafeMutableBufferPointer(rebasing: starts[slot..<(slot + counts[index].1)]))
                        forEachStart(in: pieces[index]) {
                            starts[slot] = $0
                            slot += 1
                        }
                    }
                }
                initialized = total
            }
        }
    }
}
