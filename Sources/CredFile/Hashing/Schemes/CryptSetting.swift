/// The crypt(3) strings of every method libxcrypt computes, read as libxcrypt 4.4's own
/// code reads them (its `lib/crypt-*.c`) and refusing what it would refuse or never give
/// back: a salt it truncates, rounds it clamps, a last character whose unused bits are
/// not zero, a yescrypt salt its decoder rejects. A string this accepts is one `crypt_rn`
/// returns byte for byte for the right password; `CryptSettingTests` holds that to
/// libxcrypt itself on seeded random settings. Only the cost parameters are kept. (One
/// rule of libxcrypt's is for every method, and asked of libxcrypt itself by the
/// family, ``Libxcrypt/computes(_:)``: no byte of the string may be a space, a control
/// byte, non-ASCII, or one of `!*:;\`.)
enum CryptSetting {
    /// Why a string is not one libxcrypt gives back; never quotes the string.
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    typealias Reading = Result<CryptHash.Method, Failure>

    /// The method and cost of a crypt(3) string (without any `{…}` prefix).
    static func method(of text: ArraySlice<UInt8>) -> Reading {
        for (prefix, read) in readers where text.starts(with: prefix.utf8) {
            return read(text.dropFirst(prefix.utf8.count))
        }
        if text.first == UInt8(ascii: "$") {
            let id = String(decoding: text.dropFirst().prefix { $0 != UInt8(ascii: "$") }, as: UTF8.self)
            return .failure(
                Failure("crypt method $\(SecretSyntax.knownCryptIDs.contains(id) ? id : "?")$ is not verified"))
        }
        if text.first == UInt8(ascii: "_") { return bsdi(text.dropFirst()) }
        return des(text)
    }

    /// Each `$id$` method's reader, asked about what follows its prefix (longer ids first).
    private static let readers: [(String, @Sendable (ArraySlice<UInt8>) -> Reading)] = [
        ("$2a$", { bcrypt($0, variant: UInt8(ascii: "a")) }), ("$2b$", { bcrypt($0, variant: UInt8(ascii: "b")) }),
        ("$2y$", { bcrypt($0, variant: UInt8(ascii: "y")) }), ("$2x$", { bcrypt($0, variant: UInt8(ascii: "x")) }),
        ("$5$", { shaCrypt($0, hashCount: 43, lastBelow: 16).map { .sha256Crypt(rounds: $0) } }),
        ("$6$", { shaCrypt($0, hashCount: 86, lastBelow: 4).map { .sha512Crypt(rounds: $0) } }),
        ("$y$", { yescrypt($0, gost: false) }), ("$gy$", { yescrypt($0, gost: true) }),
        ("$7$", scrypt), ("$1$", md5Crypt), ("$sha1$", sha1Crypt), ("$md5", sunMD5), ("$3$", ntHash),
    ]

    // MARK: bcrypt, sha-crypt, md5crypt

    /// `CC$` + 22 salt characters + 31 hash characters, cost 04–31 (Blowfish's format).
    /// The salt's last character carries 2 bits and the hash's 4, so each is one of the
    /// characters bcrypt writes there (bcrypt's alphabet is crypt's in another order).
    static func bcrypt(_ rest: ArraySlice<UInt8>, variant: UInt8) -> Reading {
        let f = PeerText.dollarFields(rest)
        guard f.count == 2 else { return .failure(Failure("bcrypt hash does not have 3 fields")) }
        guard f[0].count == 2, let cost = PeerText.decimal(f[0].drop { $0 == UInt8(ascii: "0") }, maximum: 31),
            cost >= 4
        else { return .failure(Failure("bcrypt cost is not two digits from 04 to 31")) }
        let body = Array(f[1])
        guard body.count == 53, PeerText.isCryptText(body) else {
            return .failure(Failure("bcrypt salt and hash are not 53 characters of ./0-9A-Za-z"))
        }
        guard ".Oeu".utf8.contains(body[21]), ".CGKOSWaeimquy26".utf8.contains(body[52]) else {
            return .failure(Failure("bcrypt salt or hash is not canonical"))
        }
        return .success(.bcrypt(variant: variant, cost: cost))
    }

    /// sha256-crypt and sha512-crypt: an optional `rounds=N$` (1,000 to 999,999,999,
    /// without leading zeros; 5,000 without it), a salt of up to 16 bytes other than
    /// `$`, `:` and LF (libxcrypt uses the first 16 of a longer one, so that one is never
    /// given back), `$`, and the hash in crypt's alphabet.
    static func shaCrypt(_ rest: ArraySlice<UInt8>, hashCount: Int, lastBelow: Int) -> Result<Int, Failure> {
        var rest = rest
        var rounds = 5000
        if rest.starts(with: "rounds=".utf8) {
            let digits = rest.dropFirst(7).prefix { $0 != UInt8(ascii: "$") }
            guard digits.first != UInt8(ascii: "0"), let n = PeerText.decimal(digits, maximum: 999_999_999), n >= 1000,
                digits.endIndex < rest.endIndex
            else { return .failure(Failure("sha-crypt rounds are not a number from 1000 to 999999999")) }
            rounds = n
            rest = rest[(digits.endIndex + 1)...]
        }
        guard let (salt, hash) = saltAndHash(rest, maximum: 16) else {
            return .failure(Failure("sha-crypt salt is not up to 16 bytes other than $ : and LF"))
        }
        guard salt.count <= 16, isCanonical(hash, count: hashCount, lastBelow: lastBelow) else {
            return .failure(
                Failure("sha-crypt hash is not \(hashCount) characters of ./0-9A-Za-z as libxcrypt writes them"))
        }
        return .success(rounds)
    }

    /// `$1$`: a salt of up to 8 bytes other than `$`, `:` and LF, `$`, 22 hash characters.
    static func md5Crypt(_ rest: ArraySlice<UInt8>) -> Reading {
        guard let (_, hash) = saltAndHash(rest, maximum: 8) else {
            return .failure(Failure("md5-crypt salt is not up to 8 bytes other than $ : and LF"))
        }
        guard isCanonical(hash, count: 22, lastBelow: 4) else {
            return .failure(Failure("md5-crypt hash is not 22 characters of ./0-9A-Za-z as libxcrypt writes them"))
        }
        return .success(.md5Crypt)
    }

    /// The salt (up to `maximum` bytes, none of them `$`, `:` or LF) and the hash after it.
    private static func saltAndHash(_ rest: ArraySlice<UInt8>, maximum: Int) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)?
    {
        guard let dollar = rest.firstIndex(of: UInt8(ascii: "$")) else { return nil }
        let salt = rest[..<dollar]
        guard salt.count <= maximum, !salt.contains(UInt8(ascii: ":")), !salt.contains(0x0A) else { return nil }
        return (salt, rest[(dollar + 1)...])
    }

    /// `count` characters of crypt's alphabet whose last one, which carries the digest's
    /// last bits, has the value libxcrypt can write there (below `lastBelow`).
    private static func isCanonical(_ hash: ArraySlice<UInt8>, count: Int, lastBelow: Int) -> Bool {
        guard hash.count == count, PeerText.isCryptText(hash), let last = hash.last.flatMap(PeerText.cryptValue) else {
            return false
        }
        return last < lastBelow
    }

    // MARK: DES and its extensions

    /// Traditional DES: 2 salt and 11 hash characters; bigcrypt: the same followed by 11
    /// more for each further 8 bytes of the password (2 to 16 blocks). DES's 64-bit block
    /// leaves the last character of each block 2 unused bits.
    static func des(_ text: ArraySlice<UInt8>) -> Reading {
        let blocks = (text.count - 2) / 11
        guard text.count >= 13, (text.count - 2) % 11 == 0, blocks <= 16, PeerText.isCryptText(text) else {
            return .failure(Failure("not a crypt(3) hash: neither $id$, BSDi _, DES (13 characters) nor bigcrypt"))
        }
        for block in 0..<blocks {
            guard let last = PeerText.cryptValue(text[text.startIndex + 2 + 11 * block + 10]), last % 4 == 0 else {
                return .failure(Failure("DES hash is not as libxcrypt writes it"))
            }
        }
        return .success(blocks == 1 ? .desCrypt : .bigCrypt(blocks: blocks))
    }

    /// BSDi's `_` + 4 characters of iteration count and 4 of salt (little-endian, 6 bits
    /// each) + the 11-character DES hash.
    static func bsdi(_ rest: ArraySlice<UInt8>) -> Reading {
        guard rest.count == 19, PeerText.isCryptText(rest), let last = rest.last.flatMap(PeerText.cryptValue),
            last % 4 == 0
        else { return .failure(Failure("BSDi hash is not _, 8 setting and 11 hash characters of ./0-9A-Za-z")) }
        var count = 0
        for (i, c) in rest.prefix(4).enumerated() { count |= (PeerText.cryptValue(c) ?? 0) << (6 * i) }
        return .success(.bsdiCrypt(count: count))
    }

    // MARK: The other $id$ methods

    /// NT: `$3$$` and 32 lower-case hex digits (MD4 of the UTF-16LE password).
    static func ntHash(_ rest: ArraySlice<UInt8>) -> Reading {
        guard rest.first == UInt8(ascii: "$"), let digest = PeerText.lowercaseHex(rest.dropFirst()), digest.count == 16
        else { return .failure(Failure("NT hash is not $3$$ and 32 lower-case hex digits")) }
        return .success(.ntHash)
    }

    /// sha1-crypt: `<iterations>$<salt>$<28 characters>`, the iterations in decimal as
    /// libxcrypt prints them, the salt 1–64 characters of crypt's alphabet (libxcrypt
    /// asserts that bound: a longer one would abort the process).
    static func sha1Crypt(_ rest: ArraySlice<UInt8>) -> Reading {
        let f = PeerText.dollarFields(rest)
        guard f.count == 3, let iterations = PeerText.decimal(f[0], maximum: Int(UInt32.max)),
            (1...64).contains(f[1].count), PeerText.isCryptText(f[1]), f[2].count == 28, PeerText.isCryptText(f[2])
        else {
            return .failure(Failure("sha1-crypt hash is not iterations$salt$hash as libxcrypt writes it"))
        }
        return .success(.sha1Crypt(iterations: iterations))
    }

    /// SunMD5: `$md5` then `$` or `,`, an optional `rounds=N$` (N from 1, without leading
    /// zeros, up to 2^32 − 1, added to 4,096), a salt of crypt's alphabet, and `$` + 22
    /// characters, or `$$` + 22 (the "bug-compatible" spelling whose first `$` is part
    /// of the salt).
    static func sunMD5(_ rest: ArraySlice<UInt8>) -> Reading {
        guard let separator = rest.first, separator == UInt8(ascii: "$") || separator == UInt8(ascii: ",") else {
            return .failure(Failure("SunMD5 hash does not start $md5$ or $md5,"))
        }
        var p = rest.dropFirst()
        var rounds: UInt32 = 4096
        if p.starts(with: "rounds=".utf8) {
            let digits = p.dropFirst(7).prefix { $0 != UInt8(ascii: "$") }
            guard digits.first != UInt8(ascii: "0"), let extra = PeerText.decimal(digits, maximum: Int(UInt32.max)),
                digits.endIndex < p.endIndex
            else { return .failure(Failure("SunMD5 rounds are not a number from 1 to 4294967295")) }
            rounds = rounds &+ UInt32(extra)  // as libxcrypt adds them, in unsigned int
            p = p[(digits.endIndex + 1)...]
        }
        let salt = p.prefix(while: PeerText.isCryptByte)
        var hash = p[salt.endIndex...]
        if hash.starts(with: "$$".utf8) { hash = hash.dropFirst() }
        guard hash.first == UInt8(ascii: "$"), salt.count <= 300, isCanonical(hash.dropFirst(), count: 22, lastBelow: 4)
        else { return .failure(Failure("SunMD5 hash is not salt$hash as libxcrypt writes it")) }
        return .success(.sunMD5(rounds: Int(rounds)))
    }

    // MARK: yescrypt and scrypt

    /// `$y$`/`$gy$` + parameters + `$` + salt + `$` + 43 hash characters. The parameters
    /// are yescrypt's variable-length numbers: flavor, log2(N), r, and optionally a mask
    /// saying p and t follow (yescrypt 1.1's `g` and ROM are not for crypt: refused as
    /// libxcrypt refuses them). The salt decodes to at most 64 bytes by yescrypt's rule
    /// (a 1-character group, or unused bits that are not zero, fail), as libxcrypt's
    /// `decode64` does: a salt it cannot decode is malformed here, not an error at login.
    static func yescrypt(_ rest: ArraySlice<UInt8>, gost: Bool) -> Reading {
        let fields = PeerText.dollarFields(rest)
        guard fields.count == 3 else { return .failure(Failure("yescrypt hash is not params$salt$hash")) }
        guard let parameters = yescryptParameters(fields[0]) else {
            return .failure(Failure("yescrypt parameters are not ones libxcrypt computes"))
        }
        guard yescryptSaltDecodes(fields[1]) else { return .failure(Failure("yescrypt salt does not decode")) }
        guard isCanonical(fields[2], count: 43, lastBelow: 16) else {
            return .failure(Failure("yescrypt hash is not 43 characters of ./0-9A-Za-z as libxcrypt writes them"))
        }
        return .success(.yescrypt(parameters, gost: gost))
    }

    /// yescrypt's `decode64_uint32`: a first character that also says how many follow, the
    /// value counted from `minimum`, in unsigned 32-bit arithmetic as libxcrypt has it.
    private static func yescryptNumber(_ text: inout ArraySlice<UInt8>, minimum: UInt32) -> UInt32? {
        guard let first = text.popFirst(), let c = PeerText.cryptValue(first).map(UInt32.init) else { return nil }
        var (start, end, chars, bits): (UInt32, UInt32, Int, UInt32) = (0, 47, 1, 0)
        var value = minimum
        while c > end {
            value = value &+ ((end + 1 - start) << bits)
            start = end + 1
            end = start + (62 - end) / 2
            chars += 1
            bits += 6
        }
        value = value &+ ((c - start) << bits)
        while chars > 1 {
            chars -= 1
            guard let next = text.popFirst(), let v = PeerText.cryptValue(next) else { return nil }
            bits -= 6
            value = value &+ (UInt32(v) << bits)
        }
        return value
    }

    /// The parameters field, with the checks of libxcrypt's `yescrypt_r` and
    /// `yescrypt_kdf`: flavor classic (0), WORM (1) or the RW default (47, `j`); N from 4
    /// to 2^32; r·p below 2^30; RW with N/p above 3; no `g`, no ROM.
    private static func yescryptParameters(_ field: ArraySlice<UInt8>) -> YescryptParameters? {
        var text = field
        guard let flavor = yescryptNumber(&text, minimum: 0), flavor == 0 || flavor == 1 || flavor == 47,
            let nLog2 = yescryptNumber(&text, minimum: 1), (2...32).contains(nLog2),
            let r = yescryptNumber(&text, minimum: 1)
        else { return nil }
        var p: UInt32 = 1
        var t: UInt32 = 0
        if !text.isEmpty {
            guard let have = yescryptNumber(&text, minimum: 1), have & 12 == 0 else { return nil }
            if have & 1 != 0 {
                guard let value = yescryptNumber(&text, minimum: 2) else { return nil }
                p = value
            }
            if have & 2 != 0 {
                guard let value = yescryptNumber(&text, minimum: 1) else { return nil }
                t = value
            }
        }
        let n = UInt64(1) << UInt64(nLog2)
        guard text.isEmpty, r >= 1, p >= 1, UInt64(r) * UInt64(p) < 1 << 30, n <= UInt64(Int.max) / 128 / UInt64(r),
            flavor != 0 || t == 0, flavor != 47 || n / UInt64(p) > 3
        else { return nil }
        return YescryptParameters(flavor: flavor, nLog2: Int(nLog2), r: Int(r), p: Int(p), t: Int(t))
    }

    /// Whether a yescrypt salt decodes by libxcrypt's `decode64` into at most 64 bytes:
    /// little-endian groups of up to 4 characters, each group at least 2 characters and
    /// its unused high bits zero.
    private static func yescryptSaltDecodes(_ salt: ArraySlice<UInt8>) -> Bool {
        guard salt.count <= 86, PeerText.isCryptText(salt) else { return false }
        var bytes = 0
        var rest = salt
        while !rest.isEmpty {
            let group = rest.prefix(4)
            rest = rest.dropFirst(group.count)
            guard group.count >= 2 else { return false }
            var value: UInt32 = 0
            for (i, c) in group.enumerated() { value |= UInt32(PeerText.cryptValue(c) ?? 0) << (6 * i) }
            let whole = group.count * 6 / 8
            guard value >> (8 * whole) == 0 else { return false }
            bytes += whole
        }
        return bytes <= 64
    }

    /// libxcrypt's `$7$` scrypt: log2(N) in 1 character (2…32), r and p in 5 each
    /// (little-endian, 30 bits), the salt in crypt's alphabet (its text used as it is),
    /// `$` and 43 hash characters; r·p below 2^30.
    static func scrypt(_ rest: ArraySlice<UInt8>) -> Reading {
        let fields = PeerText.dollarFields(rest)
        guard fields.count == 2, fields[0].count >= 11, PeerText.isCryptText(fields[0]) else {
            return .failure(Failure("scrypt crypt hash is not N, r, p, salt $ hash"))
        }
        let setting = Array(fields[0].prefix(11))
        func value(_ chars: ArraySlice<UInt8>) -> UInt64 {
            chars.enumerated().reduce(0) { $0 | UInt64(PeerText.cryptValue($1.element) ?? 0) << UInt64(6 * $1.offset) }
        }
        let nLog2 = Int(value(setting[0..<1]))
        let r = value(setting[1..<6])
        let p = value(setting[6..<11])
        guard (2...32).contains(nLog2), r >= 1, p >= 1, r * p < 1 << 30,
            UInt64(1) << UInt64(nLog2) <= UInt64(Int.max) / 128 / r
        else { return .failure(Failure("scrypt crypt parameters are not ones libxcrypt computes")) }
        guard isCanonical(fields[1], count: 43, lastBelow: 16) else {
            return .failure(Failure("scrypt crypt hash is not 43 characters of ./0-9A-Za-z as libxcrypt writes them"))
        }
        return .success(.scrypt(nLog2: nLog2, r: Int(r), p: Int(p)))
    }
}
