/// passlib's "adapted base64": standard base64 with `.` for `+`, and no `=` padding.
///
/// Decoding is strict, so each byte string has exactly one spelling: a length of
/// 1 mod 4 is refused, and so is a last character whose unused low bits are not zero.
enum AdaptedBase64 {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./".utf8)

    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    /// Encodes bytes without padding.
    static func encode(_ bytes: some Collection<UInt8>) -> String { Base64Core.encode(bytes, alphabet: alphabet) }

    /// Decodes the one canonical spelling, or returns nil.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? { Base64Core.decode(text, values: values) }

    /// The number of bytes `text` decodes to when it is the one canonical spelling, else
    /// nil; nothing is decoded (what `check` and `list` need of a salt and a checksum).
    static func canonicalCount(_ text: UnsafeRawBufferPointer) -> Int? {
        Base64Core.canonicalCount(text, values: values)
    }

    /// Runs `body` with the alphabet's values (-1 for a byte outside it), for loops that
    /// scan many texts.
    static func withValues<R>(_ body: (UnsafeBufferPointer<Int8>) -> R) -> R { values.withUnsafeBufferPointer(body) }

    /// Where the run of alphabet characters of `text` that starts at `from` ends — what
    /// ``Base64Core/alphabetEnd(of:from:values:)`` finds with this alphabet's table,
    /// sixteen bytes at a time in C (`credfile_adapted_base64_run`, SSE2). (`check` of a
    /// million hashes spent a quarter of its time in the byte-at-a-time loop, and 15 %
    /// in a word-at-a-time one in Swift.)
    static func alphabetEnd(of text: UnsafeRawBufferPointer, from: Int) -> Int {
        from + Bytes.adaptedBase64Run(text, from: from)
    }
}

/// The one strict base64 decoder behind every spelling credfile reads: passlib's adapted
/// alphabet here, the standard one (`+/`, padded or not) for peers' hashes
/// (``PeerText``).
enum Base64Core {
    /// The standard alphabet's values (RFC 4648 §4), -1 for any other byte.
    static let standardValues: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(c)] = Int8(i)
        }
        return table
    }()

    private static let standardAlphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Standard base64 (RFC 4648 §4) of `bytes`, with `=` padding or without (the PHC
    /// string format's).
    static func standard(_ bytes: some Collection<UInt8>, padded: Bool) -> String {
        let text = encode(bytes, alphabet: standardAlphabet)
        return padded ? text + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4) : text
    }

    /// Encodes bytes in `alphabet` (64 characters), without padding; the unused low bits
    /// of the last character are zero, so the text is the canonical spelling.
    static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var bits: UInt32 = 0
        var count = 0
        for b in bytes {
            bits = bits << 8 | UInt32(b)
            count += 8
            while count >= 6 {
                count -= 6
                out.append(alphabet[Int(bits >> UInt32(count) & 63)])
            }
        }
        if count > 0 { out.append(alphabet[Int(bits << UInt32(6 - count) & 63)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The number of bytes `text` decodes to when it is the one canonical unpadded
    /// spelling in the alphabet of `values`, else nil: a length of 1 mod 4, a byte outside
    /// the alphabet, or a last character whose unused low bits are not zero. The one
    /// statement of canonical base64; ``decode(_:values:)`` asks it first.
    static func canonicalCount(_ text: UnsafeRawBufferPointer, values: [Int8]) -> Int? {
        values.withUnsafeBufferPointer { table -> Int? in
            guard alphabetEnd(of: text, from: 0, values: table) == text.count else { return nil }
            return canonicalCount(ofAlphabetText: text, values: table)
        }
    }

    /// Where the run of alphabet characters of `text` that starts at `from` ends.
    static func alphabetEnd(of text: UnsafeRawBufferPointer, from: Int, values: UnsafeBufferPointer<Int8>) -> Int {
        var index = from
        while index < text.count, values[Int(text[index])] >= 0 { index += 1 }
        return index
    }

    /// ``canonicalCount(_:values:)`` of a text known to be all alphabet characters: nil
    /// for a length of 1 mod 4 or a last character whose unused low bits are not zero.
    static func canonicalCount(ofAlphabetText text: UnsafeRawBufferPointer, values: UnsafeBufferPointer<Int8>) -> Int? {
        guard text.count % 4 != 1 else { return nil }
        // The unused low bits of the last character: 4 after 2 characters, 2 after 3.
        let unused: Int8 =
            switch text.count % 4 {
            case 2: 0x0F
            case 3: 0x03
            default: 0
            }
        if unused != 0, let last = text.last, values[Int(last)] & unused != 0 { return nil }
        return text.count * 3 / 4
    }

    /// Decodes unpadded `text` whose characters map through `values`, in its one canonical
    /// spelling (``canonicalCount(_:values:)``); nil for any other. With `anyLastBits`, a
    /// last character whose unused low bits are not zero is taken too (HTTP Basic
    /// credentials, RFC 7617, whose senders are not held to one spelling). Nothing is
    /// decoded before the whole text is known good, and a copy of a text that is not
    /// contiguous is zeroed (it may encode a password).
    static func decode(_ text: some Collection<UInt8>, values: [Int8], anyLastBits: Bool = false) -> [UInt8]? {
        if let decoded = text.withContiguousStorageIfAvailable({
            decode(UnsafeRawBufferPointer($0), values: values, anyLastBits: anyLastBits)
        }) {
            return decoded
        }
        var bytes = Array(text)
        defer { bytes.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        return bytes.withUnsafeBytes { decode($0, values: values, anyLastBits: anyLastBits) }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, values: [Int8], anyLastBits: Bool) -> [UInt8]? {
        let count: Int? = values.withUnsafeBufferPointer { table in
            guard alphabetEnd(of: bytes, from: 0, values: table) == bytes.count else { return nil }
            guard anyLastBits else { return canonicalCount(ofAlphabetText: bytes, values: table) }
            return bytes.count % 4 == 1 ? nil : bytes.count * 3 / 4
        }
        guard let count else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(count)
        var bits: UInt32 = 0
        var pending = 0
        for c in bytes {
            bits = bits << 6 | UInt32(values[Int(c)])
            pending += 6
            if pending >= 8 {
                pending -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> UInt32(pending)))
            }
            bits &= (1 << UInt32(pending)) - 1
        }
        return out
    }
}
