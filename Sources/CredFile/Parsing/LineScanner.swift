#if canImport(Glibc)
import Glibc
#endif

/// The streaming lookup: finds the first entry line of a name without splitting the
/// file into lines or building any String.
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
    }

    /// The first line whose username field (the bytes before the first comma) equals
    /// `key` (NFC bytes) after NFC normalization. Comments and comma-less lines have no name.
    static func firstEntry(named key: [UInt8], in buffer: UnsafeRawBufferPointer) -> Hit? {
        firstEntry(named: key, in: buffer, from: buffer.starts(with: CredentialFile.bom) ? 3 : 0)
    }

    /// Every entry line of `key`, in file order (for `delete`, which removes them all).
    static func entries(named key: [UInt8], in buffer: UnsafeRawBufferPointer) -> [Hit] {
        var hits: [Hit] = []
        var from = buffer.starts(with: CredentialFile.bom) ? 3 : 0
        while let hit = firstEntry(named: key, in: buffer, from: from) {
            hits.append(hit)
            from = hit.content.upperBound + hit.ending.bytes.count  // the next line's start
            if hit.ending == .none { break }
        }
        return hits
    }

    /// The first entry of `key` among the lines that start at or after `first` (a line start).
    private static func firstEntry(named key: [UInt8], in buffer: UnsafeRawBufferPointer, from first: Int) -> Hit? {
        guard !key.isEmpty, first < buffer.count else { return nil }
        let simpleKey = key.first != UInt8(ascii: "#") && !key.contains(UInt8(ascii: ",")) && !key.contains(0x0A)
        guard simpleKey else { return scan(for: key, in: buffer, from: first) }

        let pattern = [0x0A] + key + [UInt8(ascii: ",")]
        var candidate: Int?
        if buffer[first...].starts(with: pattern.dropFirst()) {
            candidate = first
        } else {
            let rest = UnsafeRawBufferPointer(rebasing: buffer[first...])
            candidate = pattern.withUnsafeBytes { CLibrary.firstRange(of: $0, in: rest) }.map { first + $0 + 1 }
        }
        let before = UnsafeRawBufferPointer(rebasing: buffer[first..<(candidate ?? buffer.count)])
        guard isASCII(before) else { return scan(for: key, in: buffer, from: first) }
        return candidate.map { line(at: $0, in: buffer) }
    }

    /// The 1-based number of the line that starts at `offset`.
    static func lineNumber(at offset: Int, in buffer: UnsafeRawBufferPointer) -> Int {
        var number = 1
        var position = 0
        while let lf = CredentialFile.index(of: 0x0A, in: buffer, from: position, to: offset) {
            number += 1
            position = lf + 1
        }
        return number
    }

    /// Line by line, normalizing non-ASCII username fields.
    private static func scan(for key: [UInt8], in buffer: UnsafeRawBufferPointer, from first: Int) -> Hit? {
        let base = buffer.baseAddress!  // count > 0
        var start = first
        while start < buffer.count {
            let end = CredentialFile.index(of: 0x0A, in: buffer, from: start, to: buffer.count) ?? buffer.count
            if buffer[start] != UInt8(ascii: "#"),
                let comma = CredentialFile.index(of: UInt8(ascii: ","), in: buffer, from: start, to: end),
                matches(field: UnsafeRawBufferPointer(start: base + start, count: comma - start), key: key)
            {
                return line(at: start, in: buffer)
            }
            start = end + 1
        }
        return nil
    }

    /// The line that starts at `start`.
    private static func line(at start: Int, in buffer: UnsafeRawBufferPointer) -> Hit {
        guard let lf = CredentialFile.index(of: 0x0A, in: buffer, from: start, to: buffer.count) else {
            return Hit(content: start..<buffer.count, ending: .none)
        }
        if lf > start, buffer[lf - 1] == 0x0D { return Hit(content: start..<(lf - 1), ending: .crlf) }
        return Hit(content: start..<lf, ending: .lf)
    }

    /// Whether a raw username field names `key`: equal bytes, or, when the field is not
    /// ASCII, equal after NFC normalization.
    private static func matches(field: UnsafeRawBufferPointer, key: [UInt8]) -> Bool {
        if field.count == key.count,
            key.withUnsafeBytes({ memcmp($0.baseAddress!, field.baseAddress!, key.count) }) == 0
        {
            return true
        }
        guard !isASCII(field) else { return false }
        return Unicode.nfcBytes(ofField: field) == key
    }

    /// Whether every byte is below 0x80, eight bytes at a time.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var high: UInt64 = 0
        while index + 32 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                | bytes.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                | bytes.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                | bytes.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
            index += 32
            if index & 4095 == 0, high & 0x8080_8080_8080_8080 != 0 { return false }
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
