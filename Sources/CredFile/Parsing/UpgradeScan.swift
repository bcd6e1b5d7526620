/// The upgrade's walk over the file's bytes: lines found with `memchr`, only plaintext
/// entries copied out, a batch at a time.
enum UpgradeScan {
    /// A plaintext entry taken into a batch.
    struct Line {
        /// Where its content starts in the bytes it was read from.
        let offset: Int
        /// Its bytes, without the ending.
        let content: [UInt8]
        /// The bytes before the first comma.
        let usernameLength: Int
        /// The secret (the bytes after the first comma).
        var secret: ArraySlice<UInt8> { content[(usernameLength + 1)...] }
    }

    /// Where the next batch starts looking, and the bytes the file must hold right before
    /// that offset for it to still mean the same place (else the walk starts again from
    /// the top, which is always safe: hashed lines are passed over).
    struct Cursor {
        var offset = 0
        var anchor: [UInt8] = []
    }

    /// Where line 1's content starts (after a BOM).
    static func firstLineStart(in bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { FileSyntax.firstLineStart($0) }
    }

    /// Calls `body` with (line number, content range, range with the ending) of each line
    /// from `start` (a line start) on, until it returns false. Line numbers count from 1
    /// at `start`.
    static func forEachLine(
        in bytes: [UInt8], from start: Int, _ body: (Int, Range<Int>, Range<Int>) -> Bool
    ) {
        bytes.withUnsafeBytes { buffer in
            var start = start
            var number = 1
            while start < buffer.count {
                // The file's own line rules (FileSyntax), not a restatement of them.
                let (content, ending) = FileSyntax.line(at: start, in: buffer)
                let next = content.upperBound + ending.bytes.count
                guard body(number, content, start..<next) else { return }
                number += 1
                start = next
            }
        }
    }

    /// Whether a line is a plaintext entry; a secret that starts with `$` never is, and
    /// is passed over without parsing the hash.
    static func isPlaintextEntry(_ content: ArraySlice<UInt8>) -> Bool {
        if let comma = content.firstIndex(of: UInt8(ascii: ",")), comma + 1 < content.endIndex,
            content[comma + 1] == UInt8(ascii: "$")
        {
            return false
        }
        guard case .entry(let entry) = LineClassifier.classify(content), case .plaintext = entry.secret else {
            return false
        }
        return true
    }

    /// Up to `count` plaintext entries after the cursor; moves nothing (the commit says
    /// where the next batch starts).
    static func nextBatch(in bytes: [UInt8], after cursor: inout Cursor, count: Int) -> [Line] {
        let top = firstLineStart(in: bytes)
        let anchorStart = cursor.offset - cursor.anchor.count
        let stillThere =
            cursor.offset > top && cursor.offset <= bytes.count && anchorStart >= top
            && (anchorStart == top || bytes[anchorStart - 1] == 0x0A)
            && bytes[anchorStart..<cursor.offset].elementsEqual(cursor.anchor)
        if !stillThere { cursor = Cursor(offset: top) }
        var batch: [Line] = []
        forEachLine(in: bytes, from: cursor.offset) { _, content, _ in
            guard isPlaintextEntry(bytes[content]) else { return true }
            let comma = bytes[content].firstIndex(of: UInt8(ascii: ","))! - content.lowerBound  // an entry has one
            batch.append(Line(offset: content.lowerBound, content: Array(bytes[content]), usernameLength: comma))
            return batch.count < count
        }
        return batch
    }

    /// How many plaintext entries the bytes hold.
    static func plaintextCount(in bytes: [UInt8]) -> Int {
        var count = 0
        forEachLine(in: bytes, from: firstLineStart(in: bytes)) { _, content, _ in
            if isPlaintextEntry(bytes[content]) { count += 1 }
            return true
        }
        return count
    }

    /// The number of the line of `file` whose content starts at `offset`, by binary search.
    static func lineNumber(startingAt offset: Int, in file: CredentialFile) -> Int? {
        var low = 0
        var high = file.lineCount
        while low < high {
            let mid = (low + high) / 2
            if file.span(of: mid).0.lowerBound < offset { low = mid + 1 } else { high = mid }
        }
        guard low < file.lineCount, file.span(of: low).0.lowerBound == offset else { return nil }
        return low + 1
    }
}
