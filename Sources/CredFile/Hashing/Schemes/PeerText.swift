/// The text pieces peer hash strings are made of, read strictly: each byte string has
/// one spelling, so a hash that parses is the hash the peer wrote.
enum PeerText {
    /// Splits at every `$` (the field separator of crypt, PHC, Django and Werkzeug).
    static func fields(_ text: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        text.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
    }

    /// crypt(3)'s alphabet `./0-9A-Za-z`.
    static func isCryptByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
            true
        default: false
        }
    }

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

    /// A decimal number without sign or leading zeros, at most `maximum`, or nil.
    static func decimal(_ text: some Collection<UInt8>, maximum: Int) -> Int? {
        guard !text.isEmpty, text.count <= 19, text.first != UInt8(ascii: "0") || text.count == 1 else { return nil }
        var value = 0
        for c in text {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(c - UInt8(ascii: "0"))
            if value > maximum { return nil }
        }
        return value
    }

    /// Lower-case hex (as Django and Werkzeug write it), or nil.
    static func lowerHex(_ text: some Collection<UInt8>) -> [UInt8]? {
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
    static func lowerHexText(_ bytes: some Sequence<UInt8>) -> [UInt8] {
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
}

/// The SPEC §3.2 limits every family applies before any work, beside its peer's own.
enum PeerLimits {
    /// Rounds (sha-crypt, PBKDF2) above this are hostile.
    static let maximumRounds = 50_000_000
    /// bcrypt's log2 cost above this is hostile (and bcrypt's own maximum).
    static let maximumBcryptCost = 31
    /// argon2 memory above 1 GiB, in KiB.
    static let maximumArgon2MemoryKiB = 1 << 20
    /// argon2 passes above this are hostile.
    static let maximumArgon2Time = 10
    /// scrypt (and yescrypt) N·r above this is hostile (SPEC §3.2), and so is N·r·p.
    static let maximumScryptNr: UInt64 = 1 << 30
    /// Salts longer than this are hostile (passlib's range for PBKDF2 salts).
    static let maximumSaltCount = 1024
}
