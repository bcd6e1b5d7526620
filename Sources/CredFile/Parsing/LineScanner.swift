#if canImport(Glibc)
import Glibc
#endif

/// The streaming lookup: finds the first entry line of a name without splitting the
/// file into lines or building any String, with `memchr` for line ends and commas.
enum LineScanner {
    /// A line found by the scanner.
    struct Hit {
        /// 1-based line number.
        let number: Int
        /// The byte range of the line's content (without its ending).
        let content: Range<Int>
        /// How it ends.
        let ending: LineEnding
    }

    /// The first line whose username field (the bytes before the first comma) equals
    /// `key` (NFC bytes) after NFC normalization. Comments and comma-less lines have no name.
    static func firstEntry(named key: [UInt8], in buffer: UnsafeRawBufferPointer) -> Hit? {
        guard !key.isEmpty, let base = buffer.baseAddress else { return nil }
        let count = buffer.count
        var start = buffer.starts(with: CredentialFile.bom) ? 3 : 0
        var number = 1
        while start < count {
            let lf = CredentialFile.index(of: 0x0A, in: buffer, from: start, to: count)
            let end = lf ?? count
            if buffer[start] != UInt8(ascii: "#"),
                let comma = CredentialFile.index(of: UInt8(ascii: ","), in: buffer, from: start, to: end),
                matches(field: UnsafeRawBufferPointer(start: base + start, count: comma - start), key: key)
            {
                var contentEnd = end
                var ending = LineEnding.none
                if lf != nil {
                    ending = .lf
                    if end > start, buffer[end - 1] == 0x0D {
                        ending = .crlf
                        contentEnd -= 1
                    }
                }
                return Hit(number: number, content: start..<contentEnd, ending: ending)
            }
            guard let lf else { break }
            start = lf + 1
            number += 1
        }
        return nil
    }

    /// Whether a raw username field names `key`: equal bytes, or, when the field is not
    /// ASCII, equal after NFC normalization.
    private static func matches(field: UnsafeRawBufferPointer, key: [UInt8]) -> Bool {
        if field.count == key.count,
            key.withUnsafeBytes({ memcmp($0.baseAddress!, field.baseAddress!, key.count) }) == 0
        {
            return true
        }
        guard field.contains(where: { $0 >= 0x80 }) else { return false }
        return Unicode.nfcBytes(ofField: field) == key
    }
}
