/// The text pieces peer hash strings are made of, read strictly: each byte string has
/// one spelling, so a hash that parses is the hash the peer wrote.
/// The text pieces hash strings are made of, read strictly: each byte string has one
/// spelling, so a hash that parses is the hash the peer wrote, and a hostile field is
/// refused before any work. The one home of these readers (credfile's own format reads
/// its rounds here too).
enum PeerText {
    /// Splits at every `$` (the field separator of crypt, PHC, Django and Werkzeug),
    /// keeping empty fields.
    static func dollarFields(_ text: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        text.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
    }

    /// crypt(3)'s alphabet `./0-9A-Za-z`.
    static func isCryptByte(_ b: UInt8) -> Bool { cryptValue(b) != nil }

    /// The index of `b` in crypt(3)'s alphabet `./0-9A-Za-z`, or nil.
    static func cryptValue(_ b: UInt8) -> Int? {
        switch b {
        case UInt8(ascii: "."): 0
        case UInt8(ascii: "/"): 1
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(b - UInt8(ascii: "0")) + 2
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(b - UInt8(ascii: "A")) + 12
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(b - UInt8(ascii: "a")) + 38
        default: nil
        }
    }

    /// Whether every byte is in crypt(3)'s alphabet.
    static func isCryptText(_ text: some Collection<UInt8>) -> Bool { text.allSatisfy(isCryptByte) }

    /// Whether `text` is written as a decimal number is written once: digits only, at
    /// least one, no sign, no spaces, no leading zero (but `0` itself).
    static func isCanonicalDecimal(_ text: some Collection<UInt8>) -> Bool {
        guard let first = text.first else { return false }
        return text.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            && (first != UInt8(ascii: "0") || text.count == 1)
    }

    /// A decimal number in its one spelling (``isCanonicalDecimal(_:)``), at most
    /// `maximum`, or nil. Reads no further than the value stays within `maximum`, so no
    /// length of digits can overflow.
    static func decimal(_ text: some Collection<UInt8>, maximum: Int) -> Int? {
        guard isCanonicalDecimal(text) else { return nil }
        var value = 0
        for c in text {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow, times10 <= maximum - Int(c - UInt8(ascii: "0")) else { return nil }
            value = times10 + Int(c - UInt8(ascii: "0"))
        }
        return value
    }

    /// Lower-case hex (as Django, Werkzeug and Dovecot write it) to bytes, or nil.
    static func lowercaseHex(_ text: some Collection<UInt8>) -> [UInt8]? {
        let digits = Array(text)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    /// Lower-case hex of `bytes`.
    static func lowercaseHexText(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return out
    }

    /// Standard base64 (`+/`), with `=` padding (`padded`: LDAP, Django, mosquitto) or
    /// without (PHC strings), in its one canonical spelling (unused low bits zero), or nil.
    static func base64(_ text: some Collection<UInt8>, padded: Bool) -> [UInt8]? {
        var body = Array(text)
        if padded {
            guard body.count % 4 == 0 else { return nil }
            var padding = 0
            while padding < 2, body.last == UInt8(ascii: "=") {
                body.removeLast()
                padding += 1
            }
        }
        return Base64Core.decode(body, values: Base64Core.standardValues)
    }

    /// Standard base64 with `=` padding (RFC 4648 §4, what Python's `b64encode` and
    /// OpenSSL's BIO write), canonical only; nil for anything else.
    static func paddedBase64(_ text: some Collection<UInt8>) -> [UInt8]? { base64(text, padded: true) }

    /// The `{SCHEME}` prefix's name, uppercased (LDAP schemes are case-insensitive), and
    /// the rest; nil when the secret has no `{…}` prefix.
    static func ldapScheme(_ secret: ArraySlice<UInt8>) -> (name: String, rest: ArraySlice<UInt8>)? {
        guard secret.first == UInt8(ascii: "{"), let close = secret.firstIndex(of: UInt8(ascii: "}")) else {
            return nil
        }
        let name = secret[secret.index(after: secret.startIndex)..<close]
        guard !name.isEmpty, name.allSatisfy(SecretSyntax.isSchemeByte) else { return nil }
        return (String(decoding: name, as: UTF8.self).uppercased(), secret[secret.index(after: close)...])
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared case-insensitively
    /// (LDAP and Dovecot scheme names are); no other byte folds.
    static func hasPrefixIgnoringCase(_ text: ArraySlice<UInt8>, _ prefix: String) -> Bool {
        func lowercased(_ b: UInt8) -> UInt8 { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) ? b | 0x20 : b }
        let p = Array(prefix.utf8)
        guard text.count >= p.count else { return false }
        return zip(text, p).allSatisfy { lowercased($0) == lowercased($1) }
    }
}

/// The limits of the formats themselves that the PBKDF2 families share (SPEC §3.2: each
/// scheme keeps its peer's own limits): the one home of them, read by credfile's own
/// format too. What a hash costs is not a parser's question: the cost limits judge it
/// (SPEC §3.1, ``CostLimits``), which replaced version 2's list of hostile parameters.
enum PeerLimits {
    /// The most rounds PBKDF2 can run here: `PKCS5_PBKDF2_HMAC` and credfile's loop take
    /// an `int` (``PBKDF2``).
    static let maximumRounds = Int(Int32.max)
    /// The rounds a PBKDF2 hash may have: 1 to ``maximumRounds``.
    static let rounds = 1...maximumRounds
    /// The longest salt: passlib's range for PBKDF2 salts, and SPEC §3.2's for every scheme.
    static let maximumSaltCount = 1024
}
