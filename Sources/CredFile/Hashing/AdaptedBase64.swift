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
    static func encode(_ bytes: some Collection<UInt8>) -> String {
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

    /// Decodes the one canonical spelling, or returns nil.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? { Base64Core.decode(text, values: values) }
}

/// The one strict base64 decoder behind every spelling credfile reads: passlib's adapted
/// alphabet here, the standard one (`+/`, padded or not) for peers' hashes
/// (``HashFields``, ``PeerText``).
enum Base64Core {
    /// The standard alphabet's values (RFC 4648 §4), -1 for any other byte.
    static let standardValues: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(c)] = Int8(i)
        }
        return table
    }()

    /// Decodes unpadded `text` whose characters map through `values`, in its one canonical
    /// spelling: a length of 1 mod 4, a byte outside the alphabet, or a last character
    /// whose unused low bits are not zero give nil.
    static func decode(_ text: some Collection<UInt8>, values: [Int8]) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(text.count * 3 / 4)
        var bits: UInt32 = 0
        var count = 0
        for c in text {
            let v = values[Int(c)]
            guard v >= 0 else { return nil }
            bits = bits << 6 | UInt32(v)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
            }
            bits &= (1 << UInt32(count)) - 1
        }
        guard bits == 0 else { return nil }  // unused low bits must be zero
        return out
    }
}
