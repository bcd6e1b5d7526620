import CredFile

/// A second, deliberately naive reading of SPEC §2–§3, written without looking at how
/// the library does it: the oracle the fuzz checks compare the library against.
///
/// It favours obviousness over speed: whole-array copies, `String(validating:)` for
/// UTF-8, `String ==` (canonical equivalence, the same relation as "equal after NFC")
/// for names, and base64 decoded four characters at a time.
enum Reference {
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    static let longestEntryLine = 65_536

    // MARK: Lines

    struct Line: Equatable {
        var content: [UInt8]
        var ending: LineEnding
    }

    /// SPEC §2: skip one leading BOM, split after each LF, a CR right before the LF is
    /// part of the ending, a last line without LF has no ending.
    static func split(_ bytes: [UInt8]) -> (bom: Bool, lines: [Line]) {
        let bom = bytes.count >= 3 && Array(bytes[0..<3]) == Self.bom
        var lines: [Line] = []
        var current: [UInt8] = []
        for byte in bom ? Array(bytes.dropFirst(3)) : bytes {
            if byte == 0x0A {
                if current.last == 0x0D {
                    current.removeLast()
                    lines.append(Line(content: current, ending: .crlf))
                } else {
                    lines.append(Line(content: current, ending: .lf))
                }
                current = []
            } else {
                current.append(byte)
            }
        }
        if !current.isEmpty { lines.append(Line(content: current, ending: .none)) }
        return (bom, lines)
    }

    // MARK: What a line means

    enum Secret: Equatable {
        case plaintext
        case pbkdf2(Hash)
        case unsupported(scheme: String)
        case malformed
        /// SPEC §3.2: a prefix that a verified peer family owns; the implementation must
        /// say a peer hash or malformed (its exact syntax is each family's business).
        case peer
        /// SPEC §2: `!` before ``pbkdf2(_:)`` or ``peer``, a locked entry. Behind a
        /// ``peer`` prefix the implementation may find the hash malformed: then the `!`
        /// makes the whole secret a legacy plaintext password, as it always was.
        indirect case locked(Secret)
    }

    enum Kind: Equatable {
        case blank
        case comment
        /// `username` is nil when the line has no comma.
        case entry(username: [UInt8]?, secret: [UInt8], Secret)
    }

    static func classify(_ content: [UInt8]) -> Kind {
        if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .blank }
        if content.first == UInt8(ascii: "#") { return .comment }
        guard let comma = content.firstIndex(of: UInt8(ascii: ",")) else {
            return .entry(username: nil, secret: [], .malformed)
        }
        let username = Array(content[..<comma])
        let secret = Array(content[(comma + 1)...])
        let broken =
            username.isEmpty || secret.isEmpty || content.count > longestEntryLine
            || content.contains(where: isControl) || String(validating: content, as: UTF8.self) == nil
        if broken { return .entry(username: username, secret: secret, .malformed) }
        return .entry(username: username, secret: secret, classifySecret(secret))
    }

    /// TAB is allowed; every other C0 byte and DEL is not.
    static func isControl(_ byte: UInt8) -> Bool {
        (byte <= 0x1F && byte != 0x09) || byte == 0x7F
    }

    /// Works on Unicode scalars, not Characters: `"$\u{301}"` is one Character but
    /// still starts with `$`.
    static func classifySecret(_ secret: [UInt8]) -> Secret {
        if secret.first == UInt8(ascii: "!"), secret.count > 1 {
            let hash = classifySecret(Array(secret.dropFirst()))
            switch hash {
            case .pbkdf2, .peer: return .locked(hash)
            default: break
            }
        }
        let scalars = Array(String(decoding: secret, as: UTF8.self).unicodeScalars)
        func scheme(after open: Unicode.Scalar, closedBy close: Unicode.Scalar) -> String? {
            guard scalars.first == open else { return nil }
            let id = scalars.dropFirst().prefix(while: isSchemeScalar)
            guard !id.isEmpty, id.endIndex < scalars.endIndex, scalars[id.endIndex] == close else { return nil }
            return String(String.UnicodeScalarView(id))
        }
        if ownPrefixes.contains(where: { secret.starts(with: Array($0.utf8)) }) {
            return parseHash(secret).map { .pbkdf2($0) } ?? .malformed
        }
        if peerPrefixes.contains(where: { secret.starts(with: Array($0.utf8)) })
            || peerSchemes.contains(where: { startsIgnoringASCIICase(secret, $0) })
            || (werkzeugPrefixes.contains(where: { secret.starts(with: Array($0.utf8)) })
                && secret.contains(UInt8(ascii: "$")))
        {
            return .peer
        }
        if secret.starts(with: Array("$pbkdf2".utf8)) { return .malformed }
        if let dollar = secret.firstIndex(of: UInt8(ascii: "$")), dollar > 0,
            djangoHashers.contains(String(decoding: secret[..<dollar], as: UTF8.self))
        {
            return .unsupported(scheme: "django " + String(decoding: secret[..<dollar], as: UTF8.self))
        }
        if scalars.first == "$" {
            return scheme(after: "$", closedBy: "$").map { .unsupported(scheme: "$\($0)$") } ?? .malformed
        }
        return scheme(after: "{", closedBy: "}").map { .unsupported(scheme: "{\($0)}") } ?? .plaintext
    }

    /// SPEC §3's own format: a secret with one of these is a hash of it or malformed.
    static let ownPrefixes = ["$pbkdf2-sha256$", "$pbkdf2-sha512$"]
    /// SPEC §3.2's table, as prefixes: each is owned by a family credfile verifies, so a
    /// secret that starts with one is that family's hash or malformed, never unsupported.
    /// Shared prefixes (`$6$`, `$7$`: mosquitto and crypt(3)) are owned by both: the
    /// syntax decides, and what matches neither is malformed.
    static let peerPrefixes = [
        "$pbkdf2$",  // passlib PBKDF2-SHA1
        "pbkdf2_sha256$", "pbkdf2_sha1$", "argon2$", "bcrypt_sha256$", "bcrypt$", "scrypt$", "md5$", "sha1$",  // Django
        "$7$", "$6$",  // mosquitto, and crypt(3)'s scrypt and sha512-crypt
        "$2a$", "$2b$", "$2y$", "$5$", "$y$", "$1$",  // crypt(3): bcrypt, sha256-crypt, yescrypt, md5crypt
        "$apr1$",  // Apache htpasswd
        "$argon2",  // argon2 PHC: the family owns every `$argon2…` id ($argon2id$, $argon2i$, $argon2d$)
    ]
    /// SPEC §3.2's `{SCHEME}`s (LDAP, Dovecot, htpasswd), case-insensitive in ASCII.
    static let peerSchemes = [
        "{PBKDF2}", "{PBKDF2-SHA1}", "{PBKDF2-SHA256}", "{PBKDF2-SHA512}",  // LDAP and Dovecot PBKDF2
        "{CRYPT}", "{SHA512-CRYPT}", "{SHA256-CRYPT}", "{MD5-CRYPT}", "{BLF-CRYPT}",  // crypt(3) inside
        "{ARGON2}", "{ARGON2ID}", "{ARGON2I}",  // OpenLDAP and Dovecot argon2
        "{SHA}", "{SSHA}", "{SSHA256}", "{SSHA512}",  // LDAP and htpasswd digests
    ]
    /// Werkzeug's methods: `pbkdf2:…$…` and `scrypt:N:r:p$…` (hash syntax only with a `$`).
    static let werkzeugPrefixes = ["pbkdf2:", "scrypt:"]
    /// Django's hasher algorithms (`<algorithm>$…` is hash syntax, SPEC §2); those not in
    /// ``peerPrefixes`` are unsupported.
    static let djangoHashers: Set<String> = [
        "pbkdf2_sha256", "pbkdf2_sha1", "argon2", "bcrypt_sha256", "bcrypt", "scrypt", "md5", "sha1",
        "unsalted_sha1", "unsalted_md5", "crypt",
    ]

    /// Whether `bytes` starts with `prefix`, ASCII letters compared without case (LDAP
    /// schemes are case-insensitive; no other byte folds, so `{ßHA}` is not `{SSHA}`).
    static func startsIgnoringASCIICase(_ bytes: [UInt8], _ prefix: String) -> Bool {
        func lower(_ b: UInt8) -> UInt8 { (0x41...0x5A).contains(b) ? b + 0x20 : b }
        let p = Array(prefix.utf8)
        return bytes.count >= p.count && zip(bytes, p).allSatisfy { lower($0) == lower($1) }
    }

    static func isSchemeScalar(_ s: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || s == "." || s == "_"
            || s == "-"
    }

    // MARK: Names

    /// How the SPEC compares a name read from the file: as text after NFC when it is
    /// UTF-8 (String's `==` is canonical equivalence), as raw bytes otherwise.
    enum Key: Hashable {
        case text(String)
        case raw([UInt8])
        init(_ bytes: [UInt8]) {
            self = String(validating: bytes, as: UTF8.self).map(Key.text) ?? .raw(bytes)
        }
    }

    /// Whether a username field from the file names `name`.
    static func names(_ field: [UInt8]?, _ name: String) -> Bool {
        guard let field, !field.isEmpty else { return false }
        return Key(field) == .text(name)
    }

    // MARK: Hashes (SPEC §3)

    struct Hash: Equatable {
        var algorithm: HashAlgorithm
        var rounds: Int
        var salt: [UInt8]
        var checksum: [UInt8]
    }

    /// `$pbkdf2-sha256$<rounds>$<salt>$<checksum>` (or sha512), one spelling only.
    static func parseHash(_ bytes: [UInt8]) -> Hash? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let fields = bytes.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 5, fields[0] == "" else { return nil }
        let algorithm: HashAlgorithm
        switch fields[1] {
        case "pbkdf2-sha256": algorithm = .sha256
        case "pbkdf2-sha512": algorithm = .sha512
        default: return nil
        }
        let digits = fields[2].unicodeScalars
        guard !digits.isEmpty, digits.count <= 10, digits.first != "0",
            digits.allSatisfy({ ("0"..."9").contains($0) }), let rounds = Int(fields[2]),
            (1...2_147_483_647).contains(rounds)
        else { return nil }
        guard let salt = decodeBase64(fields[3]), salt.count <= 1024,
            let checksum = decodeBase64(fields[4]), checksum.count == (algorithm == .sha256 ? 32 : 64)
        else { return nil }
        return Hash(algorithm: algorithm, rounds: rounds, salt: salt, checksum: checksum)
    }

    /// SPEC §3.1's cost limit as the oracle reads it for credfile's own format under a
    /// SHA-256 policy of `policyRounds` and the default `max-work`: too costly when the
    /// hash's rounds, counted in SHA-256 rounds (a SHA-512 round is 3.6 of them on the
    /// machines credfile was measured on), exceed both 16 × the policy's rounds and 2 s at
    /// this machine's measured rate. (`max-memory` never applies: PBKDF2 needs none.)
    static func isTooCostly(_ hash: Hash, policyRounds: Int) -> Bool {
        let work = Double(hash.rounds) * (hash.algorithm == .sha512 ? 3.6 : 1)
        return work > max(16 * Double(policyRounds), 2 * MachineRate.sha256RoundsPerSecond)
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./".utf8)

    /// passlib's adapted base64, strictly: `.` for `+`, no padding, zero unused bits.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var values: [Int] = []
        for c in text.utf8 {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            values.append(v)
        }
        var out: [UInt8] = []
        var i = 0
        while i + 4 <= values.count {
            let n = values[i] << 18 | values[i + 1] << 12 | values[i + 2] << 6 | values[i + 3]
            out += [UInt8(n >> 16), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            i += 4
        }
        switch values.count - i {
        case 0: break
        case 2:
            guard values[i + 1] & 0x0F == 0 else { return nil }
            out.append(UInt8(values[i] << 2 | values[i + 1] >> 4))
        case 3:
            guard values[i + 2] & 0x03 == 0 else { return nil }
            let n = values[i] << 10 | values[i + 1] << 4 | values[i + 2] >> 2
            out += [UInt8(n >> 8), UInt8(n & 0xFF)]
        default: return nil
        }
        return out
    }

    static func encodeBase64(_ bytes: [UInt8]) -> String {
        var out = ""
        var i = 0
        while i < bytes.count {
            let chunk = Array(bytes[i..<min(i + 3, bytes.count)]) + [0, 0]
            let n = Int(chunk[0]) << 16 | Int(chunk[1]) << 8 | Int(chunk[2])
            let count = min(3, bytes.count - i) + 1
            for k in 0..<count { out.unicodeScalars.append(Unicode.Scalar(alphabet[n >> (18 - 6 * k) & 63])) }
            i += 3
        }
        return out
    }

    // MARK: New names and passwords (SPEC §2)

    static func usernameIsValid(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, let last = scalars.last, name.utf8.count <= 255 else { return false }
        return !scalars.contains(",") && !scalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
            && !first.properties.isWhitespace && !last.properties.isWhitespace && first != "#"
    }

    /// Lengths are checked on the raw UTF-8; the harness only builds passwords far below
    /// 4,096 bytes, where NFC cannot make a difference.
    static func passwordIsValid(_ password: String) -> Bool {
        !password.isEmpty && password.utf8.count <= 4096
            && !password.utf8.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
    }
}
