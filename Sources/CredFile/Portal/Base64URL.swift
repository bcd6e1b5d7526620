/// Base64url without padding (RFC 4648 §5), the alphabet of the portal's cookie values and
/// anti-forgery tokens (SPEC §11): it needs no quoting in a `Set-Cookie` value or a form.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The unpadded base64url text of `bytes`.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(value >> UInt32(shift)) & 63]) }
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            var value = UInt32(input[index]) << 16
            if rest == 2 { value |= UInt32(input[index + 1]) << 8 }
            let characters = rest == 1 ? 2 : 3
            for shift in [18, 12, 6].prefix(characters) { out.append(alphabet[Int(value >> UInt32(shift)) & 63]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of unpadded base64url `text`; nil for padding, any other character, a
    /// length no encoding has, or unused low bits that are not zero (so each byte string
    /// has exactly one text: no two cookie values open the same session).
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            guard let value = sextet(character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard bits != 6, accumulator == 0 else { return nil }  // one lone character, or stray bits
        return out
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
