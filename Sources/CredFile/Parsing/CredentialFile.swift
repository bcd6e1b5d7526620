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

/// A parsed credential file: the exact bytes read, split into lines (SPEC §2).
///
/// The grammar, and every byte rule, is `FileSyntax`'s.
///
/// Lines are views into one byte buffer and are classified only when asked, so a
/// file of a million lines costs one buffer and one array of line offsets.
/// `render()` gives back the identical bytes; `render(applying:)` gives them back
/// with only the changed lines changed.
public struct CredentialFile: Sendable {
    /// The UTF-8 byte order mark.
    public static let bom: [UInt8] = FileSyntax.bom

    /// The file's bytes, exactly as read.
    public var bytes: [UInt8] { source.array }
    /// The bytes: in memory, or (inside a rewrite) mapped from the file. Every reading
    /// below goes through it, never through ``bytes``, which copies a mapping.
    let source: FileBytes
    /// Whether the bytes start with a UTF-8 BOM (skipped by the parser, kept on render).
    public let hasBOM: Bool
    /// The offset where each line's content starts, found on first use: a one-user
    /// change of a million-line file finds its line by a scan and never needs it.
    private let index = LineIndex()

    /// Splits `bytes` into lines (lazily: the line index is built when first asked).
    public init(bytes: [UInt8]) { self.init(source: FileBytes(bytes)) }

    /// Splits the bytes of `source` into lines (lazily).
    init(source: FileBytes) {
        self.source = source
        self.hasBOM = source.withUnsafeBytes { $0.starts(with: FileSyntax.bom) }
    }

    /// Parses UTF-8 text.
    public init(_ text: String) { self.init(bytes: Array(text.utf8)) }

    /// The offset where each line's content starts.
    var lineStarts: [Int] { index.starts(of: source) }

    /// The number of lines.
    public var lineCount: Int { lineStarts.count }

    /// The lines, classified lazily.
    public var lines: LazyMapSequence<Range<Int>, CredentialLine> {
        let starts = lineStarts
        return (0..<starts.count).lazy.map { index in
            let (content, ending) = self.source.withUnsafeBytes { file in
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
        CredentialLine(number: number, content: source.slice(content), offset: content.lowerBound, ending: ending)
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
        return source.withUnsafeBytes { file in starts.withUnsafeBufferPointer { body(file, $0) } }
    }

    /// The first entry line of `username` (NFC-compared), malformed or not: it alone
    /// counts for that name. Nil when no entry has that name.
    public func firstEntry(named username: String) -> CredentialLine? {
        let hit = source.withUnsafeBytes { LineScanner.firstEntry(named: FileSyntax.nameKey(of: username), in: $0) }
        return hit.map { line(number: $0.number, content: $0.content, ending: $0.ending) }
    }

    /// Every entry line of `username` (NFC-compared).
    public func entries(named username: String) -> [CredentialLine] {
        let hits = source.withUnsafeBytes { LineScanner.entries(named: FileSyntax.nameKey(of: username), in: $0) }
        return hits.map { line(number: $0.number, content: $0.content, ending: $0.ending) }
    }

    /// A name's first entry line: its number and the range of its content in the file's
    /// bytes.
    struct FirstEntry {
        let number: Int
        let content: Range<Int>
    }

    /// Every name's first entry line, by the name's comparison key (NFC bytes): one pass
    /// over the file for callers that look up many names (`import`, the file cache of
    /// the long-running logins), where ``firstEntry(named:)`` per name would read the
    /// file once per name. (``FirstLines`` answers the other question, whether a line is
    /// its name's first, in a few bytes a line for `check` of a huge file.)
    func firstEntryIndex() -> [[UInt8]: FirstEntry] {
        var index: [[UInt8]: FirstEntry] = [:]
        index.reserveCapacity(lineCount)
        withRawLines { file, starts in
            for number in stride(from: 1, through: starts.count, by: 1) {
                let content = Self.span(of: number - 1, starts: starts, in: file).0
                guard let key = Self.nameKey(ofLineAt: content, in: file) else { continue }
                let bytes = key.bytes(in: file)
                if index[bytes] == nil { index[bytes] = FirstEntry(number: number, content: content) }
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
    public func render() -> [UInt8] { rendered(applying: Changes()) }

    /// The bytes with `changes` applied; every other line byte for byte: the pieces of
    /// `writeRendered(applying:to:)`, joined.
    /// - Throws: ``CredFileError/Code/malformedFile`` when a line the changes edit is not
    ///   a line of this file (``check(_:)``): changes made from another read of a file
    ///   that changed since.
    public func render(applying changes: Changes) throws -> [UInt8] {
        try check(changes)
        return rendered(applying: changes)
    }

    /// ``render(applying:)`` of checked changes.
    private func rendered(applying changes: Changes) -> [UInt8] {
        var out: [UInt8] = []
        // Room for every replacement too: growing past the reserve would copy the whole
        // output into a buffer twice its size (an upgrade batch lengthens many lines).
        let replaced = changes.edited.values.reduce(0) {
            if case .replace(let l) = $1.action { $0 + l.count } else { $0 }
        }
        out.reserveCapacity(source.count + replaced + changes.appended.reduce(0) { $0 + $1.count + 2 } + 3)
        source.withUnsafeBytes { file in
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
