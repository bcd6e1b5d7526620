internal import CCredFile  // memmem and the SSE2 alphabet scan, which the Glibc module does not export

#if canImport(Glibc)
import Glibc
#endif

/// The fast byte loops the parsers share: word-at-a-time tests, searches through
/// `memchr`/`memmem`, and the one SSE2 alphabet scan in C. They know no rule of the
/// file (those are ``FileSyntax``'s, SPEC §2) or of a hash (``SecretSyntax``'s); they
/// only say what bytes are, fast. `FastPathTests` holds the word-at-a-time ones to
/// byte-at-a-time loops.
enum Bytes {
    private static let lineFeed: UInt8 = 0x0A

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
        let pattern = UInt64(lineFeed) &* ones
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
            if byte == lineFeed { count += 1 }
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

    /// How many characters of `text` from `from` on are in passlib's adapted base64
    /// alphabet (`A–Z a–z 0–9 . /`), sixteen bytes at a time in SSE2. The corresponding C
    /// function is `credfile_adapted_base64_run`.
    static func adaptedBase64Run(_ text: UnsafeRawBufferPointer, from: Int) -> Int {
        guard from < text.count, let base = text.baseAddress else { return 0 }
        return credfile_adapted_base64_run(base + from, text.count - from)
    }
}
