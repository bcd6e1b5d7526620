/// crypt(3) hashes, verified by libxcrypt's `crypt_rn` (SPEC §3.2): bcrypt
/// (`$2a$`/`$2b$`/`$2y$`), sha256-crypt (`$5$`), sha512-crypt (`$6$`), yescrypt (`$y$`),
/// libxcrypt's scrypt (`$7$`), md5crypt (`$1$`), and DES inside `{CRYPT}`; the LDAP
/// `{CRYPT}` wrapper and Dovecot's `{SHA512-CRYPT}`, `{SHA256-CRYPT}`, `{MD5-CRYPT}`,
/// `{BLF-CRYPT}` wrappers.
///
/// Each string is parsed as strictly as libxcrypt would write it, so that a string that
/// parses is one libxcrypt gives back byte for byte when the password is right: the
/// whole output of `crypt_rn` is compared with the stored string in constant time.
struct CryptHash: KnownHash {
    /// The crypt(3) method and its cost parameters.
    enum Method: Equatable, Sendable {
        case bcrypt(cost: Int)
        case sha256Crypt(rounds: Int)
        case sha512Crypt(rounds: Int)
        case yescrypt(nLog2: Int, r: Int)
        case scrypt(nLog2: Int, r: Int, p: Int)
        case md5Crypt
        case desCrypt
    }

    /// The method, read from the string.
    let method: Method
    /// The crypt(3) string itself (without a `{CRYPT}` or Dovecot prefix): crypt's setting
    /// and the value it must give back.
    let text: [UInt8]

    var scheme: String {
        switch method {
        case .bcrypt: "bcrypt"
        case .sha256Crypt: "sha256-crypt"
        case .sha512Crypt: "sha512-crypt"
        case .yescrypt: "yescrypt"
        case .scrypt: "scrypt-crypt"
        case .md5Crypt: "md5-crypt"
        case .desCrypt: "des-crypt"
        }
    }

    var cost: Int? {
        switch method {
        case .bcrypt(let cost): cost
        case .sha256Crypt(let rounds), .sha512Crypt(let rounds): rounds
        case .yescrypt, .scrypt, .md5Crypt, .desCrypt: nil
        }
    }

    /// DES crypt and md5crypt (SPEC §3.2's weak list).
    var isWeak: Bool { method == .md5Crypt || method == .desCrypt }

    var estimatedWork: Double {
        switch method {
        case .bcrypt(let cost): PeerWork.bcryptPerCostUnit * Double(1 << cost)
        case .sha256Crypt(let rounds): PeerWork.sha256CryptPerRound * Double(rounds)
        case .sha512Crypt(let rounds): PeerWork.sha512CryptPerRound * Double(rounds)
        case .yescrypt(let nLog2, let r): PeerWork.yescryptPerNr * Double(1 << nLog2) * Double(r)
        case .scrypt(let nLog2, let r, let p): PeerWork.scryptCryptPerNrp * Double(1 << nLog2) * Double(r * p)
        case .md5Crypt: PeerWork.md5Crypt
        case .desCrypt: PeerWork.desCrypt
        }
    }

    func verify(_ password: SecretBytes) throws -> Bool {
        try Libxcrypt.matches(password, stored: text[...])
    }
}

/// A bare crypt(3) string: `$2a$`, `$2b$`, `$2y$`, `$5$`, `$6$`, `$y$`, `$7$`, `$1$`.
///
/// `$6$` and `$7$` are shared with mosquitto (SPEC §3.2: the syntax decides). The
/// registry asks mosquitto's exact parsers first, so whatever reaches here is crypt's
/// or malformed, never unsupported ("matches neither exactly is malformed").
enum CryptFamily: HashFamily {
    static let name = "crypt(3)"
    static let prefixes: [HashPrefix] = ["$2a$", "$2b$", "$2y$", "$5$", "$6$", "$y$", "$7$", "$1$"].map { .exact($0) }

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse { parseCrypt(secret) }

    /// A crypt(3) string of a method libxcrypt verifies, exactly as libxcrypt writes it.
    static func parseCrypt(_ text: ArraySlice<UInt8>) -> HashParse {
        let fields = PeerText.dollarFields(text)
        guard fields.count >= 3, fields[0].isEmpty else {
            return .malformed(reason: "not a $id$ crypt hash")
        }
        let id = String(decoding: fields[1], as: UTF8.self)
        let result: Result<CryptHash.Method, CryptParseError>
        switch id {
        case "2a", "2b", "2y": result = bcrypt(fields)
        case "5": result = shaCrypt(fields, hashCount: 43).map { .sha256Crypt(rounds: $0) }
        case "6": result = shaCrypt(fields, hashCount: 86).map { .sha512Crypt(rounds: $0) }
        case "y": result = yescrypt(fields)
        case "7": result = scrypt(fields)
        case "1": result = md5Crypt(fields)
        default: return .malformed(reason: "crypt method $\(SecretSyntax.knownCryptIDs.contains(id) ? id : "?")$ is not verified")
        }
        switch result {
        case .success(let method): return .hash(CryptHash(method: method, text: Array(text)))
        case .failure(let error): return .malformed(reason: error.reason)
        }
    }

    struct CryptParseError: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// `$2b$CC$` + 22 salt characters + 31 hash characters; cost 04–31 (bcrypt's range,
    /// which is also SPEC §3.2's limit). The salt's last character carries 2 bits only,
    /// so it is one of `.Oeu`, as bcrypt writes it.
    private static func bcrypt(_ fields: [ArraySlice<UInt8>]) -> Result<CryptHash.Method, CryptParseError> {
        guard fields.count == 4 else { return .failure(.init("bcrypt hash does not have 3 fields")) }
        let costText = fields[2]
        guard costText.count == 2, costText.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return .failure(.init("bcrypt cost is not two digits"))
        }
        let cost = Int(costText.first! - UInt8(ascii: "0")) * 10 + Int(costText.last! - UInt8(ascii: "0"))  // count == 2
        guard cost <= PeerLimits.maximumBcryptCost else { return .failure(.init("bcrypt cost above 31")) }
        guard cost >= 4 else { return .failure(.init("bcrypt cost below 4")) }
        let body = Array(fields[3])
        guard body.count == 53, PeerText.isCryptText(body) else {
            return .failure(.init("bcrypt salt and hash are not 53 characters of ./0-9A-Za-z"))
        }
        guard ".Oeu".utf8.contains(body[21]) else { return .failure(.init("bcrypt salt is not canonical")) }
        return .success(.bcrypt(cost: cost))
    }

    /// `$5$`/`$6$`, an optional `rounds=N$` (1,000–999,999,999 as libxcrypt writes it;
    /// above 50,000,000 hostile), a salt of at most 16 characters of `./0-9A-Za-z`, and
    /// the hash (43 or 86 characters). Without `rounds=` the rounds are 5,000.
    private static func shaCrypt(_ fields: [ArraySlice<UInt8>], hashCount: Int) -> Result<Int, CryptParseError> {
        var rest = fields.dropFirst(2)
        var rounds = 5000
        if let first = rest.first, first.starts(with: "rounds=".utf8) {
            guard let n = PeerText.decimal(first.dropFirst(7), maximum: 999_999_999) else {
                return .failure(.init("sha-crypt rounds are not a decimal number up to 999999999"))
            }
            guard n <= PeerLimits.maximumRounds else { return .failure(.init("sha-crypt rounds above 50000000")) }
            guard n >= 1000 else { return .failure(.init("sha-crypt rounds below 1000")) }
            rounds = n
            rest = rest.dropFirst()
        }
        guard rest.count == 2, let salt = rest.first, let hash = rest.last else {
            return .failure(.init("sha-crypt hash does not have a salt and a hash field"))
        }
        guard salt.count <= 16, PeerText.isCryptText(salt) else {
            return .failure(.init("sha-crypt salt is not up to 16 characters of ./0-9A-Za-z"))
        }
        guard hash.count == hashCount, PeerText.isCryptText(hash) else {
            return .failure(.init("sha-crypt hash is not \(hashCount) characters of ./0-9A-Za-z"))
        }
        return .success(rounds)
    }

    /// `$y$` + parameters + `$` + salt + `$` + 43 hash characters. The parameters are the
    /// three characters libxcrypt writes: flavor `j`, log2(N) − 1 and r − 1 (one
    /// character each, in crypt's alphabet); N·r above 2^30 is hostile.
    private static func yescrypt(_ fields: [ArraySlice<UInt8>]) -> Result<CryptHash.Method, CryptParseError> {
        guard fields.count == 5 else { return .failure(.init("yescrypt hash does not have 3 fields")) }
        let params = Array(fields[2])
        guard params.count == 3, params[0] == UInt8(ascii: "j"), let nValue = PeerText.cryptValue(params[1]),
            let rValue = PeerText.cryptValue(params[2])
        else {
            return .failure(.init("yescrypt parameters are not libxcrypt's j<N><r>"))
        }
        let nLog2 = nValue + 1
        let r = rValue + 1
        guard nLog2 + r.bitWidthNeeded <= 31, UInt64(1) << UInt64(nLog2) * UInt64(r) <= PeerLimits.maximumScryptNr else {
            return .failure(.init("yescrypt N·r above 2^30"))
        }
        let salt = fields[3]
        guard !salt.isEmpty, salt.count <= PeerLimits.maximumSaltCount, PeerText.isCryptText(salt) else {
            return .failure(.init("yescrypt salt is not 1 to 1024 characters of ./0-9A-Za-z"))
        }
        guard fields[4].count == 43, PeerText.isCryptText(fields[4]) else {
            return .failure(.init("yescrypt hash is not 43 characters of ./0-9A-Za-z"))
        }
        return .success(.yescrypt(nLog2: nLog2, r: r))
    }

    /// `$7$` + log2(N) (1 character) + r (5) + p (5, little-endian in crypt's alphabet) +
    /// salt, then `$` and 43 hash characters (libxcrypt's scrypt). N·r above 2^30 is
    /// hostile (memory), and so is N·r·p above 2^30 (time), as for OpenSSL's scrypt.
    private static func scrypt(_ fields: [ArraySlice<UInt8>]) -> Result<CryptHash.Method, CryptParseError> {
        guard fields.count == 4 else { return .failure(.init("scrypt crypt hash does not have 2 fields")) }
        let setting = Array(fields[2])
        guard setting.count >= 11, setting.count - 11 <= PeerLimits.maximumSaltCount, PeerText.isCryptText(setting)
        else {
            return .failure(.init("scrypt crypt setting is not N, r, p and a salt in ./0-9A-Za-z"))
        }
        func value(_ chars: ArraySlice<UInt8>) -> UInt64 {
            var v: UInt64 = 0
            for (i, c) in chars.enumerated() { v |= UInt64(PeerText.cryptValue(c) ?? 0) << UInt64(6 * i) }
            return v
        }
        let nLog2 = Int(value(setting[0..<1]))
        let r = value(setting[1..<6])
        let p = value(setting[6..<11])
        guard nLog2 >= 1, nLog2 <= 30, r >= 1, p >= 1 else {
            return .failure(.init("scrypt crypt parameters out of range"))
        }
        // r and p are below 2^30 (5 characters of 6 bits), N at most 2^30: no overflow.
        let nr = (UInt64(1) << UInt64(nLog2)) * r
        guard nr <= PeerLimits.maximumScryptNr, p <= PeerLimits.maximumScryptNr / nr else {
            return .failure(.init("scrypt N·r or N·r·p above 2^30"))
        }
        guard fields[3].count == 43, PeerText.isCryptText(fields[3]) else {
            return .failure(.init("scrypt crypt hash is not 43 characters of ./0-9A-Za-z"))
        }
        return .success(.scrypt(nLog2: nLog2, r: Int(r), p: Int(p)))
    }

    /// `$1$` + a salt of at most 8 characters + `$` + 22 hash characters.
    private static func md5Crypt(_ fields: [ArraySlice<UInt8>]) -> Result<CryptHash.Method, CryptParseError> {
        guard fields.count == 4 else { return .failure(.init("md5-crypt hash does not have 2 fields")) }
        guard fields[2].count <= 8, PeerText.isCryptText(fields[2]) else {
            return .failure(.init("md5-crypt salt is not up to 8 characters of ./0-9A-Za-z"))
        }
        guard fields[3].count == 22, PeerText.isCryptText(fields[3]) else {
            return .failure(.init("md5-crypt hash is not 22 characters of ./0-9A-Za-z"))
        }
        return .success(.md5Crypt)
    }
}

/// `{CRYPT}` followed by any crypt(3) hash, DES's 13 characters too. The scheme is
/// case-insensitive, as in OpenLDAP. Inside `{CRYPT}` there is no mosquitto, so a `$6$`
/// or `$7$` that is not libxcrypt's is malformed.
enum LDAPCryptFamily: HashFamily {
    static let name = "ldap crypt"
    static let prefixes: [HashPrefix] = [.scheme("{CRYPT}")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let inner = secret.dropFirst("{CRYPT}".utf8.count)
        if inner.first == UInt8(ascii: "$") { return CryptFamily.parseCrypt(inner) }
        guard inner.count == 13, PeerText.isCryptText(inner) else {
            return .malformed(reason: "{CRYPT} holds neither a $id$ crypt hash nor a 13-character DES hash")
        }
        return .hash(CryptHash(method: .desCrypt, text: Array(inner)))
    }
}

/// Dovecot's `{SHA512-CRYPT}`, `{SHA256-CRYPT}`, `{MD5-CRYPT}` and `{BLF-CRYPT}`: the
/// crypt(3) hash of that method after the prefix (`doveadm pw` writes them).
enum DovecotCryptFamily: HashFamily {
    static let name = "dovecot crypt"
    static let prefixes: [HashPrefix] = ["{SHA512-CRYPT}", "{SHA256-CRYPT}", "{MD5-CRYPT}", "{BLF-CRYPT}"].map {
        .scheme($0)
    }

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        guard let (name, inner) = PeerText.ldapScheme(secret) else { return .notThisFamily }
        let expected: (CryptHash.Method) -> Bool
        switch name {
        case "SHA512-CRYPT": expected = { if case .sha512Crypt = $0 { true } else { false } }
        case "SHA256-CRYPT": expected = { if case .sha256Crypt = $0 { true } else { false } }
        case "MD5-CRYPT": expected = { $0 == .md5Crypt }
        case "BLF-CRYPT": expected = { if case .bcrypt = $0 { true } else { false } }
        default: return .notThisFamily
        }
        let parsed = CryptFamily.parseCrypt(inner)
        guard case .hash(let hash) = parsed else { return parsed }
        guard let crypt = hash as? CryptHash, expected(crypt.method) else {
            return .malformed(reason: "{\(name)} holds a hash of another method")
        }
        return parsed
    }
}

extension Int {
    /// The number of bits needed to write this non-negative value.
    fileprivate var bitWidthNeeded: Int { Int.bitWidth - leadingZeroBitCount }
}
