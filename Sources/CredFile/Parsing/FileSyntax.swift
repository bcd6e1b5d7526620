internal import CCredFile  // memmem, which the Glibc module does not export

#if canImport(Glibc)
import Glibc
#endif

/// The one home of the file's byte rules (SPEC §2): what a line, a line ending, a
/// blank, a comment, a name field, a control byte, printable ASCII and name equality
/// are. The line classifier, the streaming lookup, `check`'s fast path and the username
/// rules all ask here; none of them restates a rule. (What a *secret* is belongs to
/// ``SecretSyntax``.)
///
///     file    = [BOM] *(line LF) [line]        ; CR before LF belongs to the ending
///     line    = blank / comment / entry
///     blank   = *(SP / TAB)
///     comment = "#" *byte
///     entry   = username "," secret            ; split at the first comma
enum FileSyntax {
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let tab: UInt8 = 0x09
    static let space: UInt8 = 0x20
    static let comma = UInt8(ascii: ",")
    static let commentMark = UInt8(ascii: "#")
    /// The UTF-8 byte order mark, skipped at the very start of a file.
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The longest line, in bytes without its ending, that can be an entry.
    static let maximumLineLength = 65_536

    // MARK: Lines

    /// Where the content of the file's first line starts: after a BOM, if there is one.
    static func firstLineStart(_ bytes: UnsafeRawBufferPointer) -> Int { bytes.starts(with: bom) ? bom.count : 0 }

    /// The content and ending of the line that starts at `start` and runs up to
    /// `next` (the next line's start, or the end of the file): LF, CR LF, or none.
    static func split(_ bytes: UnsafeRawBufferPointer, lineFrom start: Int, to next: Int) -> (Range<Int>, LineEnding) {
        guard next > start, bytes[next - 1] == lf else { return (start..<next, .none) }
        if next - 1 > start, bytes[next - 2] == cr { return (start..<(next - 2), .crlf) }
        return (start..<(next - 1), .lf)
    }

    /// The content and ending of the line that starts at `start`.
    static func line(at start: Int, in bytes: UnsafeRawBufferPointer) -> (Range<Int>, LineEnding) {
        let next = index(of: lf, in: bytes, from: start, to: bytes.count).map { $0 + 1 } ?? bytes.count
        return split(bytes, lineFrom: start, to: next)
    }

    /// Empty, or only spaces and tabs: never holds a user.
    static func isBlank(_ line: some Collection<UInt8>) -> Bool { line.allSatisfy { $0 == space || $0 == tab } }

    /// First byte `#`: never holds a user.
    static func isComment(_ line: some Collection<UInt8>) -> Bool { line.first == commentMark }

    /// A control byte a line must not hold: 0x00–0x08, 0x0A–0x1F, 0x7F (TAB is allowed).
    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != tab) || byte == 0x7F }

    /// Why a line cannot be an entry whatever its fields are: its length, a control byte,
    /// or invalid UTF-8, in that order; nil when the line is fine.
    static func lineProblem(_ line: ArraySlice<UInt8>) -> MalformedReason? {
        if line.count > maximumLineLength { return .lineTooLong(limit: maximumLineLength) }
        if isPrintableASCII(line) { return nil }  // the common case, eight bytes at a time
        var ascii = true
        for (column, byte) in zip(1..., line) {
            if isControl(byte) { return .controlByte(byte, column: column) }
            if byte >= 0x80 { ascii = false }
        }
        if !ascii && !isValidUTF8(line) { return .invalidUTF8 }
        return nil
    }

    // MARK: Names

    /// The name field of an entry line: the bytes before the first comma (nil: no comma).
    static func nameField(of line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        line.firstIndex(of: comma).map { line[line.startIndex..<$0] }
    }

    /// The bytes a name is compared by: its NFC form when it is valid UTF-8, the bytes
    /// unchanged otherwise (they can never equal a valid name). Names are case-sensitive.
    static func nameKey(_ field: some Collection<UInt8>) -> [UInt8] { Unicode.nfcBytes(ofField: field) }

    /// The comparison bytes of a name given as text (NFC).
    static func nameKey(of name: String) -> [UInt8] { Unicode.nfcBytes(of: name) }

    /// Whether a raw name field from the file names `key` (NFC bytes): equal bytes, or,
    /// when the field is not ASCII (ASCII is already NFC), equal after normalization.
    static func field(_ field: UnsafeRawBufferPointer, names key: [UInt8]) -> Bool {
        if field.count == key.count, key.withUnsafeBytes({ $0.elementsEqual(field) }) { return true }
        guard !isASCII(field) else { return false }
        return nameKey(field) == key
    }

    // MARK: Bytes, fast

    /// Whether every byte is in 0x20…0x7E, tested eight bytes at a time.
    static func isPrintableASCII(_ line: ArraySlice<UInt8>) -> Bool { line.withUnsafeBytes { isPrintableASCII($0) } }

    /// Whether every byte is in 0x20…0x7E, tested eight bytes at a time.
    static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        isPrintableASCII(bytes, without: 0x7F)  // 0x7F is never printable: no extra byte refused
    }

    /// Whether every byte is in 0x20…0x7E and none is `excluded`, eight bytes at a time.
    static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer, without excluded: UInt8) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        var flags: UInt64 = 0
        while index + 8 <= bytes.count {
            let x = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let del = x ^ (0x7F &* ones)
            let other = x ^ (UInt64(excluded) &* ones)
            // Some byte is >= 0x80, < 0x20 ("hasless"), 0x7F or `excluded` ("haszero" of
            // x ^ 0x7F…, x ^ excluded…): exact for "is there any such byte", which is all
            // we ask.
            flags |=
                (x & highs) | ((x &- 0x20 &* ones) & ~x & highs) | ((del &- ones) & ~del & highs)
                | ((other &- ones) & ~other & highs)
            index += 8
        }
        while index < bytes.count {
            let b = bytes[index]
            if b < 0x20 || b >= 0x7F || b == excluded { return false }
            index += 1
        }
        return flags == 0
    }

    /// Whether every byte is below 0x80, 32 bytes at a time.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var high: UInt64 = 0
        while index + 32 <= bytes.count {
            high |=
                bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
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

    /// Whether the bytes are valid UTF-8.
    static func isValidUTF8(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Whether `bytes` starts with `prefix`, with no String or iterator (the per-line
    /// fast paths ask it a million times).
    static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        // Two word compares, not memcmp: the prefixes are a dozen bytes, asked once per
        // line of a million, and the call cost more than the compare.
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count, let base = bytes.baseAddress else { return count == 0 }
        let start = UnsafeRawPointer(prefix.utf8Start)
        if count >= 8, count <= 16 {
            // Two words that cover the prefix (overlapping in the middle).
            return base.loadUnaligned(as: UInt64.self) == start.loadUnaligned(as: UInt64.self)
                && base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                    == start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        }
        for index in 0..<count where bytes[index] != start.load(fromByteOffset: index, as: UInt8.self) { return false }
        return true
    }

    /// Whether `bytes` are exactly `text`'s bytes.
    static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && hasPrefix(bytes, text)
    }

    /// How many line feeds `bytes` holds when every byte is ASCII; nil when one is not.
    /// One pass for what the streaming lookup asks of the lines before its hit (are they
    /// all ASCII, so no NFC name among them can match; and how many are they), eight
    /// bytes at a time. A byte of `x = word ^ LF…` is zero exactly where an LF is; the
    /// expression below sets that byte's high bit, and only that bit, for each zero byte
    /// (exact: no carries between bytes). Those bits, shifted to 0/1, add up in eight
    /// byte-wide counters, summed by one multiplication every 255 words.
    static func lineFeedsIfASCII(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let pattern = UInt64(lf) &* ones
        var count = 0
        var high: UInt64 = 0
        var index = 0
        while index + 8 <= bytes.count {
            var counters: UInt64 = 0
            let words = min((bytes.count - index) / 8, 255)
            for _ in 0..<words {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                high |= word
                let x = word ^ pattern
                counters &+= (~(((x & low7) &+ low7) | x | low7)) >> 7
                index += 8
            }
            count += Int((counters &* ones) >> 56)
            if high & 0x8080_8080_8080_8080 != 0 { return nil }
        }
        while index < bytes.count {
            let byte = bytes[index]
            high |= UInt64(byte)
            if byte == lf { count += 1 }
            index += 1
        }
        if high & 0x80 != 0 { return nil }
        return count
    }

    /// ``index(of:in:from:to:)`` for a needle that is usually near `from` (a name's
    /// comma): the first sixteen bytes are searched a word at a time in line, the rest by
    /// `memchr`, whose call costs more than a short search.
    static func index(ofNear needle: UInt8, in buffer: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        var index = from
        while index + 8 <= min(to, from + 16) {
            let x = buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ (UInt64(needle) &* ones)
            // The lowest byte flagged is a zero byte of x (a borrow can flag only bytes
            // above a true zero): the first needle.
            let zeros = (x &- ones) & ~x & 0x8080_8080_8080_8080
            if zeros != 0 { return index + zeros.trailingZeroBitCount / 8 }
            index += 8
        }
        return Self.index(of: needle, in: buffer, from: index, to: to)
    }

    /// The first `needle` in `buffer[from..<to]`. The corresponding C function is `memchr`.
    static func index(of needle: UInt8, in buffer: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        guard from < to, let base = buffer.baseAddress, let hit = memchr(base + from, Int32(needle), to - from)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(hit))
    }

    /// The offset of the first `needle` in `haystack`. The corresponding C function is `memmem`.
    static func offset(of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Int? {
        guard needle.count <= haystack.count, let base = haystack.baseAddress,
            let hit = credfile_memmem(base, haystack.count, needle.baseAddress, needle.count)
        else { return nil }
        return base.distance(to: hit)
    }
}
