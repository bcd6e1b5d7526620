/// The strict field readers every family's parser shares: decimal numbers, hex and
/// standard base64, each accepting exactly one spelling, so parsing then formatting a
/// hash gives back the same bytes and a hostile field is refused before any work.
enum HashFields {
    /// A decimal number without sign, spaces or leading zeros, at most `limit`; nil otherwise.
    /// Never parses more digits than the limit has, so nothing can overflow.
    static func decimal(_ digits: some Collection<UInt8>, limit: Int) -> Int? {
        guard !digits.isEmpty, digits.count <= String(limit).utf8.count,
            digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return value <= limit ? value : nil
    }

    /// Lowercase hex (Werkzeug's and Dovecot's spelling) to bytes; nil for anything else.
    static func lowercaseHex(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(text.count / 2)
        var high: UInt8?
        for c in text {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - 0x30
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - 0x61 + 10
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return out
    }

    /// Standard base64 with `=` padding (RFC 4648 §4, what Python's `b64encode` and
    /// OpenSSL's BIO write), canonical only: the length a multiple of 4, padding only at
    /// the end, the unused low bits zero. Nil for anything else.
    static func paddedBase64(_ text: some Collection<UInt8>) -> [UInt8]? { PeerText.base64(text, padded: true) }

    /// Splits at every `$`, keeping empty fields.
    static func dollarFields(_ text: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        text.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared case-insensitively
    /// (LDAP and Dovecot scheme names are).
    static func hasPrefixIgnoringCase(_ text: ArraySlice<UInt8>, _ prefix: String) -> Bool {
        let p = Array(prefix.utf8)
        guard text.count >= p.count else { return false }
        return zip(text, p).allSatisfy { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ b: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) ? b | 0x20 : b
    }
}
