/// The schemes made of one fast digest over OpenSSL (SPEC §3.2), all weak: Apache's
/// `{SHA}` and `$apr1$`, LDAP's and Dovecot's `{SSHA}`, `{SSHA256}`, `{SSHA512}`, and
/// Django's `md5$` and `sha1$`.
struct DigestHash: KnownHash {
    /// How the digest is laid out and computed.
    enum Method: Equatable, Sendable {
        /// `{SHA}` + base64(SHA-1(password)) (htpasswd -s, slappasswd -h {SHA}).
        case ldapSHA
        /// `{SSHA…}` + base64(digest(password ‖ salt) ‖ salt).
        case ldapSalted(PeerDigest, name: String)
        /// `$apr1$salt$hash`: md5crypt's construction with the magic `$apr1$` over MD5.
        case apr1
        /// Django `md5$salt$hex` / `sha1$salt$hex`: hex(digest(salt ‖ password)).
        case django(PeerDigest)
    }

    let method: Method
    /// The salt's bytes as the scheme uses them (the text for apr1 and Django).
    let salt: [UInt8]
    /// The stored digest (for apr1: the 22 characters of crypt's alphabet).
    let stored: [UInt8]

    var scheme: String {
        switch method {
        case .ldapSHA: "{SHA}"
        case .ldapSalted(_, let name): "{\(name)}"
        case .apr1: "apr1"
        case .django(.md5) where salt.isEmpty: "django unsalted_md5"
        case .django(.md5): "django md5"
        case .django where salt.isEmpty: "django unsalted_sha1"
        case .django: "django sha1"
        }
    }

    var cost: Int? { nil }
    var isWeak: Bool { true }

    var estimatedWork: Double {
        method == .apr1 ? PeerWork.apr1 : PeerWork.oneDigest
    }
    var estimatedMemory: Int { 0 }

    func verify(_ password: SecretBytes) throws -> Bool {
        let computed: SecretBytes
        switch method {
        case .ldapSHA:
            computed = try password.withUnsafeBytes { try PeerDigest.sha1.digest($0) }
        case .ldapSalted(let digest, _):
            computed = try concatenated(password.withUnsafeBytes { Array($0) }, salt) {
                try digest.digest($0)
            }
        case .django(let digest):
            computed = try concatenated(salt, password.withUnsafeBytes { Array($0) }) { try digest.digest($0) }
        case .apr1:
            computed = try Apr1.checksum(password, salt: salt)
        }
        return computed.withUnsafeBytes { c in stored.withUnsafeBytes { OpenSSL.constantTimeEqual(c, $0) } }
    }

    /// Runs `body` on `a ‖ b` in storage that is zeroed afterwards (it holds the password).
    private func concatenated(
        _ a: [UInt8], _ b: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> SecretBytes
    ) throws -> SecretBytes {
        var a = a
        var b = b
        defer {
            a.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
            b.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
        }
        let joined = SecretBytes(a + b)
        return try joined.withUnsafeBytes(body)
    }
}

/// `{SHA}` (28 characters of padded base64: a SHA-1), `{SSHA}`, `{SSHA256}`, `{SSHA512}`
/// (padded base64 of the digest followed by a salt of 1–1,024 bytes). The scheme is
/// case-insensitive, as in OpenLDAP and Dovecot.
enum LDAPDigestFamily: HashFamily {
    static let name = "ldap digest"
    static let prefixes: [HashPrefix] = ["{SHA}", "{SSHA}", "{SSHA256}", "{SSHA512}"].map { .scheme($0) }

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        guard let (name, rest) = PeerText.ldapScheme(secret) else { return .notThisFamily }
        let digest: PeerDigest
        switch name {
        case "SHA":
            guard let bytes = PeerText.base64(rest, padded: true), bytes.count == 20 else {
                return .malformed(reason: "{SHA} is not the base64 of a 20-byte SHA-1")
            }
            return .hash(DigestHash(method: .ldapSHA, salt: [], stored: bytes))
        case "SSHA": digest = .sha1
        case "SSHA256": digest = .sha256
        case "SSHA512": digest = .sha512
        default: return .notThisFamily
        }
        guard let bytes = PeerText.base64(rest, padded: true) else {
            return .malformed(reason: "{\(name)} is not padded base64")
        }
        let saltCount = bytes.count - digest.count
        guard saltCount >= 1, saltCount <= PeerLimits.maximumSaltCount else {
            return .malformed(reason: "{\(name)} salt is not 1 to 1024 bytes")
        }
        return .hash(
            DigestHash(
                method: .ldapSalted(digest, name: name), salt: Array(bytes[digest.count...]),
                stored: Array(bytes[..<digest.count])))
    }

}

/// `$apr1$` + a salt of at most 8 characters of `./0-9A-Za-z` + `$` + 22 characters
/// (htpasswd -m).
enum Apr1Family: HashFamily {
    static let name = "apache apr1"
    static let prefixes: [HashPrefix] = [.exact("$apr1$")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let fields = PeerText.dollarFields(secret)
        guard fields.count == 4 else { return .malformed(reason: "apr1 hash does not have a salt and a hash field") }
        guard fields[2].count <= 8, PeerText.isCryptText(fields[2]) else {
            return .malformed(reason: "apr1 salt is not up to 8 characters of ./0-9A-Za-z")
        }
        guard fields[3].count == 22, PeerText.isCryptText(fields[3]) else {
            return .malformed(reason: "apr1 hash is not 22 characters of ./0-9A-Za-z")
        }
        return .hash(DigestHash(method: .apr1, salt: Array(fields[2]), stored: Array(fields[3])))
    }

}

/// Django's `md5$salt$hex32` and `sha1$salt$hex40` (MD5PasswordHasher,
/// SHA1PasswordHasher): a salt of 1–1,024 printable ASCII characters other than `$`; and
/// their unsalted kin `md5$$hex32` and `sha1$$hex40` (UnsaltedMD5PasswordHasher and
/// UnsaltedSHA1PasswordHasher; Werkzeug's legacy `md5$$` is the same string), the digest
/// of the password alone, which is the salted formula with an empty salt.
enum DjangoDigestFamily: HashFamily {
    static let name = "django digest"
    static let prefixes: [HashPrefix] = [.exact("md5$"), .exact("sha1$")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let digest: PeerDigest
        if secret.starts(with: "md5$".utf8) {
            digest = .md5
        } else if secret.starts(with: "sha1$".utf8) {
            digest = .sha1
        } else {
            return .notThisFamily
        }
        let name = digest == .md5 ? "md5" : "sha1"
        let fields = PeerText.dollarFields(secret)
        guard fields.count == 3 else { return .malformed(reason: "django \(name) hash does not have 3 fields") }
        guard fields[1].isEmpty || DjangoText.isSalt(fields[1]) else {
            return .malformed(reason: "django \(name) salt is not empty or 1 to 1024 printable characters")
        }
        guard let stored = PeerText.lowercaseHex(fields[2]), stored.count == digest.count else {
            return .malformed(reason: "django \(name) hash is not \(digest.count * 2) lower-case hex digits")
        }
        return .hash(DigestHash(method: .django(digest), salt: Array(fields[1]), stored: stored))
    }
}

/// Apache's `$apr1$`: md5crypt's construction (Poul-Henning Kamp's) with the magic
/// `$apr1$`, over OpenSSL's MD5. libxcrypt does not offer it; this is the scheme's
/// composition of MD5 calls, not a new primitive.
enum Apr1 {
    /// The 22-character checksum (crypt's alphabet) of `password` with `salt`.
    static func checksum(_ password: SecretBytes, salt: [UInt8]) throws -> SecretBytes {
        let pw = password.withUnsafeBytes { Array($0) }
        let magic = Array("$apr1$".utf8)
        // Every buffer below holds the password or a digest of it: zeroed at the end.
        var scratch: [UInt8] = []
        var pwCopy = pw
        defer {
            scratch.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
            pwCopy.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
        }
        func md5(_ bytes: [UInt8]) throws -> [UInt8] {
            try bytes.withUnsafeBytes { try PeerDigest.md5.digest($0) }.withUnsafeBytes { Array($0) }
        }
        scratch = pw + salt + pw
        var alternate = try md5(scratch)
        scratch = pw + magic + salt
        var length = pw.count
        while length > 0 {
            scratch += alternate.prefix(min(16, length))
            length -= 16
        }
        var i = pw.count
        while i > 0 {
            scratch.append(i & 1 == 1 ? 0 : (pw.first ?? 0))
            i >>= 1
        }
        var final = try md5(scratch)
        for round in 0..<1000 {
            scratch.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
            scratch = round & 1 == 1 ? pw : final
            if round % 3 != 0 { scratch += salt }
            if round % 7 != 0 { scratch += pw }
            scratch += round & 1 == 1 ? final : pw
            final = try md5(scratch)
        }
        defer {
            alternate.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
            final.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
        }
        // md5crypt's output order: 5 groups of 3 bytes, then byte 11, 6 bits at a time.
        let alphabet = Array("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var out: [UInt8] = []
        func emit(_ value: Int, _ count: Int) {
            var v = value
            for _ in 0..<count {
                out.append(alphabet[v & 63])
                v >>= 6
            }
        }
        for (a, b, c) in [(0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5)] {
            emit(Int(final[a]) << 16 | Int(final[b]) << 8 | Int(final[c]), 4)
        }
        emit(Int(final[11]), 2)
        defer { out.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        return SecretBytes(out)
    }
}
