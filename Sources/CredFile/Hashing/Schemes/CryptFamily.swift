/// crypt(3) hashes, verified by libxcrypt's `crypt_rn` (SPEC §3.2): bare, the methods
/// shadow, htpasswd and HAProxy write (bcrypt `$2a$`/`$2b$`/`$2y$`, sha256-crypt `$5$`,
/// sha512-crypt `$6$`, yescrypt `$y$`, libxcrypt's scrypt `$7$`, md5crypt `$1$`); inside
/// OpenLDAP's `{CRYPT}`, any method libxcrypt computes (those, and DES, bigcrypt, BSDi
/// `_`, `$2x$`, gost-yescrypt `$gy$`, sha1-crypt `$sha1$`, SunMD5 `$md5$`, NT `$3$`); and
/// Dovecot's `{SHA512-CRYPT}`, `{SHA256-CRYPT}`, `{MD5-CRYPT}`, `{BLF-CRYPT}`.
///
/// libxcrypt decides what it computes: a method it does not offer (`crypt_checksalt`)
/// is malformed. Each string is read as strictly as libxcrypt writes it
/// (``CryptSetting``), so that a string that parses is one `crypt_rn` gives back byte for
/// byte when the password is right (the whole output is compared with the stored string
/// in constant time), and its cost parameters are known before any work.
struct CryptHash: KnownHash {
    /// The crypt(3) method and its cost parameters.
    enum Method: Equatable, Sendable {
        /// `$2a$`, `$2b$`, `$2y$`, `$2x$` (`variant` is the letter).
        case bcrypt(variant: UInt8, cost: Int)
        case sha256Crypt(rounds: Int)
        case sha512Crypt(rounds: Int)
        /// `$y$` (`gost`: `$gy$`, the same with GOST R 34.11-2012 around it).
        case yescrypt(YescryptParameters, gost: Bool)
        case scrypt(nLog2: Int, r: Int, p: Int)
        case md5Crypt
        case desCrypt
        /// bigcrypt: DES on each 8-byte block of the password (`blocks` of them, 2 to 16).
        case bigCrypt(blocks: Int)
        /// BSDi extended DES: `_`, a count of DES iterations, a 24-bit salt.
        case bsdiCrypt(count: Int)
        /// SunMD5: `rounds` MD5 rounds in all (4,096 plus the string's `rounds=`).
        case sunMD5(rounds: Int)
        /// NetBSD's sha1-crypt: `iterations` of HMAC-SHA1.
        case sha1Crypt(iterations: Int)
        /// FreeBSD's NT hash `$3$`: MD4 of the UTF-16LE password, unsalted.
        case ntHash
    }

    /// The method, read from the string.
    let method: Method
    /// The crypt(3) string itself (without a `{CRYPT}` or Dovecot prefix): crypt's setting
    /// and the value it must give back.
    let text: [UInt8]

    var scheme: String {
        switch method {
        case .bcrypt(let variant, _): variant == UInt8(ascii: "x") ? "bcrypt-2x" : "bcrypt"
        case .sha256Crypt: "sha256-crypt"
        case .sha512Crypt: "sha512-crypt"
        case .yescrypt(_, let gost): gost ? "gost-yescrypt" : "yescrypt"
        case .scrypt: "scrypt-crypt"
        case .md5Crypt: "md5-crypt"
        case .desCrypt: "des-crypt"
        case .bigCrypt: "bigcrypt"
        case .bsdiCrypt: "bsdi-crypt"
        case .sunMD5: "sun-md5-crypt"
        case .sha1Crypt: "sha1-crypt"
        case .ntHash: "nt-hash"
        }
    }

    var cost: Int? {
        switch method {
        case .bcrypt(_, let cost): cost
        case .sha256Crypt(let rounds), .sha512Crypt(let rounds), .sunMD5(let rounds): rounds
        case .bsdiCrypt(let count): count
        case .sha1Crypt(let iterations): iterations
        case .yescrypt, .scrypt, .md5Crypt, .desCrypt, .bigCrypt, .ntHash: nil
        }
    }

    /// The methods that no longer resist offline attack: SPEC §3.2's DES crypt and
    /// md5crypt, and the other methods libxcrypt keeps for old files only (its
    /// `crypt_checksalt` calls them legacy): bigcrypt, BSDi, SunMD5, sha1-crypt, NT and
    /// bcrypt's sign-extension-bug `$2x$`. (libxcrypt counts sha256-crypt as legacy too;
    /// SPEC §3.2 does not, and neither does credfile.)
    var isWeak: Bool {
        switch method {
        case .md5Crypt, .desCrypt, .bigCrypt, .bsdiCrypt, .sunMD5, .sha1Crypt, .ntHash: true
        case .bcrypt(let variant, _): variant == UInt8(ascii: "x")
        case .sha256Crypt, .sha512Crypt, .yescrypt, .scrypt: false
        }
    }

    var estimatedWork: Double {
        switch method {
        case .bcrypt(_, let cost): PeerWork.bcryptPerCostUnit * pow2(cost)
        case .sha256Crypt(let rounds): PeerWork.sha256CryptPerRound * Double(rounds)
        case .sha512Crypt(let rounds): PeerWork.sha512CryptPerRound * Double(rounds)
        case .yescrypt(let parameters, _): PeerWork.yescryptPerNr * parameters.blocksMixed
        case .scrypt(let nLog2, let r, let p): PeerWork.scryptCryptPerNrp * pow2(nLog2) * Double(r) * Double(p)
        case .md5Crypt: PeerWork.md5Crypt
        case .desCrypt: PeerWork.desCrypt
        case .bigCrypt(let blocks): PeerWork.desCrypt * Double(blocks)
        case .bsdiCrypt(let count): PeerWork.desCrypt * Double(max(count, 1)) / 25
        case .sunMD5(let rounds): PeerWork.sunMD5PerRound * Double(rounds)
        case .sha1Crypt(let iterations): PeerWork.sha1CryptPerIteration * Double(max(iterations, 1))
        case .ntHash: PeerWork.oneDigest
        }
    }

    var estimatedMemory: Int {
        switch method {
        case .yescrypt(let parameters, _): parameters.memory
        case .scrypt(let nLog2, let r, let p):
            // yescrypt's body in classic mode: V (128·r·N), B (128·r·p), XY (256·r).
            Int(min(Double(Int.max), 128 * Double(r) * (pow2(nLog2) + Double(p) + 2)))
        case .bcrypt: 4168  // Blowfish's P-array and S-boxes
        default: 0  // the 32 KiB struct crypt_data is everyone's
        }
    }

    func verify(_ password: SecretBytes) throws -> Bool {
        Libxcrypt.matches(password, stored: text[...])
    }

    private func pow2(_ exponent: Int) -> Double { Double(sign: .plus, exponent: exponent, significand: 1) }
}

/// A yescrypt setting's parameters (`$y$` and `$gy$`), as libxcrypt's `yescrypt_r` reads them.
struct YescryptParameters: Equatable, Sendable {
    /// 0 classic scrypt, 1 YESCRYPT_WORM, 47 (`j`) the default YESCRYPT_RW flavor.
    let flavor: UInt32
    let nLog2: Int
    let r: Int
    let p: Int
    let t: Int

    /// Whether the flavor is YESCRYPT_RW (the default; p lanes share N).
    var readWrite: Bool { flavor == 47 }

    /// The blocks mixed in all, in units of one default (`j`, t = 0) block: yescrypt's
    /// smix runs N blocks, then a second loop of N/3 (RW, t = 0), 2N/3 (t = 1) or
    /// (t − 1)·N (t ≥ 2); classic scrypt and WORM run each of the p lanes over all of N,
    /// twice as dear per block (salsa20 instead of pwxform, measured 1.9–2.9×).
    var blocksMixed: Double {
        let n = Double(sign: .plus, exponent: nLog2, significand: 1) * Double(r)
        if readWrite {
            let loop = t <= 1 ? Double(t + 1) / 3 : Double(t - 1)
            return n * (1 + loop) / (4.0 / 3)
        }
        let loop = t == 0 ? 1 : t == 1 ? 1.5 : Double(t)
        return 2 * n * Double(p) * (1 + loop) / (4.0 / 3)
    }

    /// V (128·r·N), B (128·r·p), XY (256·r) and, for RW, p S-boxes of 12 KiB and a bit.
    var memory: Int {
        let v = 128 * Double(r) * Double(sign: .plus, exponent: nLog2, significand: 1)
        let rest = 128 * Double(r) * Double(p) + 256 * Double(r) + (readWrite ? 12_352 * Double(p) : 0)
        return Int(min(Double(Int.max), v + rest))
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

    /// A crypt(3) string of a method libxcrypt computes, exactly as libxcrypt writes it.
    static func parseCrypt(_ text: ArraySlice<UInt8>) -> HashParse {
        switch CryptSetting.method(of: text) {
        case .success(let method):
            guard Libxcrypt.computes(text) else {
                return .malformed(reason: "libxcrypt on this system does not compute this crypt method")
            }
            return .hash(CryptHash(method: method, text: Array(text)))
        case .failure(let error): return .malformed(reason: error.reason)
        }
    }
}

/// `{CRYPT}` followed by any hash libxcrypt computes (SPEC §3.2): DES, bigcrypt, BSDi
/// `_…` and every `$id$` method. The scheme is case-insensitive, as in OpenLDAP. Inside
/// `{CRYPT}` there is no mosquitto, so a `$6$` or `$7$` that is not libxcrypt's is malformed.
enum LDAPCryptFamily: HashFamily {
    static let name = "ldap crypt"
    static let prefixes: [HashPrefix] = [.scheme("{CRYPT}")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        CryptFamily.parseCrypt(secret.dropFirst("{CRYPT}".utf8.count))
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
