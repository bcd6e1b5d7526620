/// Argon2 in the PHC string format (`$argon2id$v=19$m=65536,t=3,p=4$salt$hash`, as the
/// `argon2` CLI, argon2-cffi, passlib and libsodium write it), verified by libargon2;
/// also inside Django's `argon2$…` and Dovecot's `{ARGON2ID}`/`{ARGON2I}`.
struct Argon2Hash: KnownHash {
    let variant: Argon2Library.Variant
    /// 0x13 for `v=19`, 0x10 when the string has no `v=` (Argon2 1.0).
    let version: UInt32
    let memoryKiB: Int
    let iterations: Int
    let lanes: Int
    let salt: [UInt8]
    let tag: [UInt8]
    /// The PHC string as written (without Django's or an LDAP scheme's prefix).
    let phc: [UInt8]
    /// `django ` for Django's strings, empty otherwise: part of the scheme's name.
    let origin: String

    var scheme: String { origin + variant.rawValue }
    var cost: Int? { nil }
    var isWeak: Bool { false }
    var estimatedWork: Double { PeerWork.argon2PerKiBPass * Double(memoryKiB) * Double(iterations) }
    /// `m` KiB: the memory Argon2 fills.
    var estimatedMemory: Int { memoryKiB * 1024 }

    func verify(_ password: SecretBytes) throws -> Bool {
        let computed = try Argon2Library.hash(
            variant, version: version, password: password, salt: salt, memoryKiB: UInt32(memoryKiB),
            iterations: UInt32(iterations), lanes: UInt32(lanes), count: tag.count)
        return computed.withUnsafeBytes { c in tag.withUnsafeBytes { OpenSSL.constantTimeEqual(c, $0) } }
    }
}

/// A bare PHC string `$argon2id$`, `$argon2i$` or `$argon2d$`: the family owns every
/// `$argon2…` id, so `$argon2x$` is malformed, not unsupported.
enum Argon2Family: HashFamily {
    static let name = "argon2"
    static let prefixes: [HashPrefix] = [.exact("$argon2")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse { parsePHC(secret, origin: "") }

    /// `$<variant>$[v=19$]m=M,t=T,p=P$<salt>$<tag>`, salt and tag in unpadded standard
    /// base64. Argon2's own limits: memory from 8·p KiB to 2^32 − 1, t from 1, p 1–255
    /// (the PHC format's), salt 8–1,024 bytes (Argon2's floor and SPEC's cap), tag
    /// 4–1,024 bytes; the cost limits judge m·t (SPEC §3.1). Other parameters (`keyid`,
    /// `data`) are not verified: malformed.
    static func parsePHC(_ text: ArraySlice<UInt8>, origin: String) -> HashParse {
        var fields = PeerText.dollarFields(text)
        guard fields.count == 5 || fields.count == 6, fields[0].isEmpty else {
            return .malformed(reason: "argon2 hash does not have the PHC fields")
        }
        guard let variant = Argon2Library.Variant(rawValue: String(decoding: fields[1], as: UTF8.self)) else {
            return .malformed(reason: "argon2 variant is not argon2id, argon2i or argon2d")
        }
        var version: UInt32 = 0x10
        if fields.count == 6 {
            guard fields[2].starts(with: "v=".utf8), let v = PeerText.decimal(fields[2].dropFirst(2), maximum: 255),
                v == 16 || v == 19
            else { return .malformed(reason: "argon2 version is not v=16 or v=19") }
            version = UInt32(v)
            fields.remove(at: 2)
        }
        let parameters = fields[2].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard parameters.count == 3, parameters[0].starts(with: "m=".utf8), parameters[1].starts(with: "t=".utf8),
            parameters[2].starts(with: "p=".utf8)
        else { return .malformed(reason: "argon2 parameters are not m=…,t=…,p=…") }
        guard let memory = PeerText.decimal(parameters[0].dropFirst(2), maximum: Int(UInt32.max)),
            let time = PeerText.decimal(parameters[1].dropFirst(2), maximum: Int(UInt32.max)),
            let lanes = PeerText.decimal(parameters[2].dropFirst(2), maximum: Int(UInt32.max))
        else { return .malformed(reason: "argon2 parameters are not decimal numbers") }
        guard time >= 1, lanes >= 1, lanes <= 255, memory >= 8 * lanes else {
            return .malformed(reason: "argon2 parameters out of Argon2's range")
        }
        guard let salt = PeerText.base64(fields[3], padded: false), salt.count >= 8,
            salt.count <= PeerLimits.maximumSaltCount
        else { return .malformed(reason: "argon2 salt is not 8 to 1024 bytes of unpadded base64") }
        guard let tag = PeerText.base64(fields[4], padded: false), tag.count >= 4, tag.count <= 1024 else {
            return .malformed(reason: "argon2 hash is not 4 to 1024 bytes of unpadded base64")
        }
        return .hash(
            Argon2Hash(
                variant: variant, version: version, memoryKiB: memory, iterations: time, lanes: lanes, salt: salt,
                tag: tag, phc: Array(text), origin: origin))
    }
}

/// Django's `argon2` + PHC string (Django writes `argon2$argon2id$v=19$…`: its
/// algorithm name, then the PHC string with its leading `$`).
enum DjangoArgon2Family: HashFamily {
    static let name = "django argon2"
    static let prefixes: [HashPrefix] = [.exact("argon2$")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        let phc = secret.dropFirst("argon2".utf8.count)
        guard
            phc.starts(with: "$argon2id$".utf8) || phc.starts(with: "$argon2i$".utf8)
                || phc.starts(with: "$argon2d$".utf8)
        else { return .malformed(reason: "django argon2 hash does not hold a PHC argon2 string") }
        return Argon2Family.parsePHC(phc, origin: "django ")
    }
}

/// Dovecot's `{ARGON2ID}` and `{ARGON2I}` followed by a PHC string of that variant, and
/// OpenLDAP's `{ARGON2}` (its `pw-argon2` module) followed by a PHC string of any variant.
enum LDAPArgon2Family: HashFamily {
    static let name = "ldap argon2"
    static let prefixes: [HashPrefix] = [.scheme("{ARGON2}"), .scheme("{ARGON2ID}"), .scheme("{ARGON2I}")]

    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse {
        guard let (name, inner) = PeerText.ldapScheme(secret) else { return .notThisFamily }
        let expected: Argon2Library.Variant?
        switch name {
        case "ARGON2": expected = nil
        case "ARGON2ID": expected = .argon2id
        case "ARGON2I": expected = .argon2i
        default: return .notThisFamily
        }
        guard inner.starts(with: "$argon2".utf8) else {
            return .malformed(reason: "{\(name)} does not hold a PHC argon2 string")
        }
        let parsed = Argon2Family.parsePHC(inner, origin: name == "ARGON2" ? "ldap " : "")
        if let expected, case .hash(let hash) = parsed, (hash as? Argon2Hash)?.variant != expected {
            return .malformed(reason: "{\(name)} holds another argon2 variant")
        }
        return parsed
    }
}
