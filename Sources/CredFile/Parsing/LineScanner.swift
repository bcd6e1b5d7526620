/// The streaming lookup: finds the first entry line of a name without splitting the
/// file into lines or building any String. Every rule it applies is asked of
/// ``FileSyntax``.
///
/// Fast path: `memmem` for `LF name ,` (or the name at the very start), then a check
/// that every byte before the hit is ASCII — ASCII is already NFC, so no earlier line
/// can name the user. Otherwise, a line-by-line scan that normalizes non-ASCII names.
enum LineScanner {
    /// A line found by the scanner.
    struct Hit {
        /// The byte range of the line's content (without its ending).
        let content: Range<Int>
        /// How it ends.
        let ending: LineEnding
        /// Its 1-based line number (counted while looking: no second pass).
        let number: Int
    }

    /// The first line whose name field equals `key` (NFC bytes, ``FileSyntax/nameKey(of:)``)
    /// after normalization. Comments and comma-less lines have no name.
    static func firstEntry(named key: [UInt8], in buffer: UnsafeRawBufferPointer) -> Hit? {
        firstEntry(named: key, in: buffer, from: FileSyntax.firstLineStart(buffer), number: 1)
    }

    /// Every entry line of `key`, in file order (for `delete`, which removes them all).
    static func entries(named key: [UInt8], in buffer: UnsafeRawBufferPointer) -> [Hit] {
        var hits: [Hit] = []
        var from = FileSyntax.firstLineStart(buffer)
        var number = 1
        while let hit = firstEntry(named: key, in: buffer, from: from, number: number) {
            hits.append(hit)
            from = hit.content.upperBound + hit.ending.bytes.count  // the next line's start
            number = hit.number + 1
            if hit.ending == .none { break }
        }
        return hits
    }

    /// The first entry of `key` among the lines that start at or after `first` (a line
    /// start, whose line number is `number`).
    static func firstEntry(named key: [UInt8], in buffer: UnsafeRawBufferPointer, from first: Int, number: Int) -> Hit?
    {
        guard !key.isEmpty, first < buffer.count else { return nil }
        // A key that could not be a whole name field (it would start a comment, or hold
        // the field's end or a line's end) is left to the careful scan.
        let simpleKey = !FileSyntax.isComment(key) && !key.contains(FileSyntax.comma) && !key.contains(FileSyntax.lf)
        guard simpleKey else { return scan(for: key, in: buffer, from: first, number: number) }

        let pattern = [FileSyntax.lf] + key + [FileSyntax.comma]
        var candidate: Int?
        if buffer[first...].starts(with: pattern.dropFirst()) {
            candidate = first
        } else {
            let rest = UnsafeRawBufferPointer(rebasing: buffer[first...])
            candidate = pattern.withUnsafeBytes { Bytes.offset(of: $0, in: rest) }.map { first + $0 + 1 }
        }
        let before = UnsafeRawBufferPointer(rebasing: buffer[first..<(candidate ?? buffer.count)])
        guard let lineFeeds = Bytes.lineFeedsIfASCII(before) else {
            return scan(for: key, in: buffer, from: first, number: number)
        }
        return candidate.map { hit(at: $0, number: number + lineFeeds, in: buffer) }
    }

    /// Line by line, normalizing non-ASCII name fields.
    private static func scan(for key: [UInt8], in buffer: UnsafeRawBufferPointer, from first: Int, number: Int) -> Hit?
    {
        var start = first
        var number = number
        while start < buffer.count {
            let end = Bytes.index(of: FileSyntax.lf, in: buffer, from: start, to: buffer.count) ?? buffer.count
            let line = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
            if !FileSyntax.isComment(line),
                let comma = Bytes.index(of: FileSyntax.comma, in: line, from: 0, to: line.count),
                FileSyntax.field(UnsafeRawBufferPointer(rebasing: line[..<comma]), names: key)
            {
                return hit(at: start, number: number, in: buffer)
            }
            start = end + 1
            number += 1
        }
        return nil
    }

    /// The line that starts at `start`.
    private static func hit(at start: Int, number: Int, in buffer: UnsafeRawBufferPointer) -> Hit {
        let (content, ending) = FileSyntax.line(at: start, in: buffer)
        return Hit(content: content, ending: ending, number: number)
    }
}
