/// The one home of secret syntax (SPEC §2, §3.2) and the registry of every hash family:
/// what the bytes after the first comma are (a ``StoredSecret``: plaintext, a hash of a
/// known scheme, an unsupported hash, or malformed). Every other place (the line
/// classifier, password rules, the CLI) asks here; new hash schemes plug in here (one
/// line in ``families``), not into the line classifier.
enum SecretSyntax {
    /// Every family credfile verifies, credfile's own format first, asked in this order
    /// about the secrets that start with one of their ``HashFamily/prefixes``; the first
    /// answer other than `.notThisFamily` decides. To add a family, add its type here:
    /// one line. Order matters only where families share a prefix (SPEC §3.2): the one
    /// that claims only its exact syntax (``HashFamily/yieldsSharedPrefix``: mosquitto's
    /// `$7$` and `$6$`, LDAP's `{PBKDF2}`) comes first and leaves the rest to the later
    /// one, which calls malformed whatever it does not parse (a test holds the list to it).
    static let families: [any HashFamily.Type] = [
        PBKDF2Family.self,  // $pbkdf2-sha256$ $pbkdf2-sha512$ (credfile's own)
        PasslibPBKDF2Family.self,  // $pbkdf2$
        LDAPPBKDF2Family.self,  // {PBKDF2} {PBKDF2-SHA1} {PBKDF2-SHA256} {PBKDF2-SHA512} (before Dovecot's {PBKDF2}$)
        DovecotPBKDF2Family.self,  // {PBKDF2}$1$
        DjangoPBKDF2Family.self,  // pbkdf2_sha256$ pbkdf2_sha1$
        WerkzeugPBKDF2Family.self,  // pbkdf2:
        MosquittoPBKDF2Family.self,  // $7$<decimal>$ (before crypt(3)'s scrypt $7$)
        MosquittoSHA512Family.self,  // $6$<base64>$ (before crypt(3)'s sha512-crypt $6$)
        Apr1Family.self,  // $apr1$
        Argon2Family.self,  // $argon2id$ $argon2i$ $argon2d$
        CryptFamily.self,  // $2a$ $2b$ $2y$ $5$ $6$ $y$ $7$ $1$
        LDAPCryptFamily.self,  // {CRYPT}
        DovecotCryptFamily.self,  // {SHA512-CRYPT} {SHA256-CRYPT} {MD5-CRYPT} {BLF-CRYPT}
        LDAPArgon2Family.self,  // {ARGON2} (OpenLDAP) {ARGON2ID} {ARGON2I} (Dovecot)
        LDAPDigestFamily.self,  // {SHA} {SSHA} {SSHA256} {SSHA512}
        DjangoArgon2Family.self,  // argon2$argon2id$…
        DjangoBcryptFamily.self,  // bcrypt$ bcrypt_sha256$
        DjangoScryptFamily.self,  // scrypt$
        DjangoDigestFamily.self,  // md5$ sha1$
        WerkzeugScryptFamily.self,  // scrypt:N:r:p$
    ]

    /// The family that decides `secret` and its answer: the first of ``families`` that
    /// owns a prefix of it and answers other than `.notThisFamily`; nil when none does.
    static func familyAnswer(_ secret: ArraySlice<UInt8>) -> (family: any HashFamily.Type, answer: HashParse)? {
        for family in families where family.owns(secret) {
            let answer = family.parse(secret)
            if case .notThisFamily = answer { continue }
            return (family, answer)
        }
        return nil
    }

    /// Plaintext unless it has hash syntax (SPEC §2: `$…`, `{SCHEME}…`, Django's
    /// `<hasher>$…`, Werkzeug's `pbkdf2:…$`/`scrypt:…$`).
    static func classify(_ secret: ArraySlice<UInt8>) -> StoredSecret {
        // A locked entry: `!` before a hash credfile verifies. A `!` before anything else
        // is what it always was (a legacy plaintext password that starts with `!`).
        if secret.first == lockMarker, secret.count > 1 {
            let hash = classify(secret.dropFirst())
            switch hash {
            case .pbkdf2, .peer: return .locked(hash)
            default: break
            }
        }
        let dollar = UInt8(ascii: "$")
        guard secret.first == dollar || secret.first == UInt8(ascii: "{") || secret.contains(dollar) else {
            return .plaintext  // the common plaintext: no family's syntax can match
        }
        switch familyAnswer(secret) {
        case (_, .hash(let own as PasswordHash))?: return .pbkdf2(own)
        case (_, .hash(let hash))?: return .peer(PeerHash(hash, spelling: secret))
        case (let family, .malformed(let reason))?: return .malformed(reason: "\(family.malformedLabel): \(reason)")
        case (_, .notThisFamily)?, nil: break
        }
        if secret.first == dollar {
            if secret.starts(with: "$pbkdf2".utf8) {
                let variant = secret.dropFirst().prefix { $0 != dollar }
                return .malformed(
                    reason: variant.count > "pbkdf2".utf8.count && variant.endIndex < secret.endIndex
                        ? "malformed pbkdf2 hash: unsupported pbkdf2 variant (expected pbkdf2-sha256 or pbkdf2-sha512)"
                        : "malformed pbkdf2 hash: a pbkdf2 hash has the form $pbkdf2-sha256$rounds$salt$checksum")
            }
            let id = secret.dropFirst().prefix(while: isSchemeByte)
            guard !id.isEmpty, id.endIndex < secret.endIndex, secret[id.endIndex] == dollar else {
                return .malformed(reason: "secret starts with '$' but is not a $id$ hash")
            }
            let name = String(decoding: id, as: UTF8.self)
            return .unsupportedHash(scheme: knownCryptIDs.contains(name) ? "$" + name + "$" : "$?$")
        }
        if secret.first == UInt8(ascii: "{") {
            let scheme = secret.dropFirst().prefix(while: isSchemeByte)
            if !scheme.isEmpty, scheme.endIndex < secret.endIndex,
                secret[scheme.endIndex] == UInt8(ascii: "}")
            {
                let name = String(decoding: scheme, as: UTF8.self)
                return .unsupportedHash(scheme: knownLDAPSchemes.contains(name.uppercased()) ? "{" + name + "}" : "{?}")
            }
            return .plaintext
        }
        if let name = peerIdentifier(secret) { return .unsupportedHash(scheme: name) }
        return .plaintext
    }

    /// What `check` and `list` need of a secret, found cheaply: plaintext, or the header
    /// of a well-formed hash in credfile's own format (validated fully, decoded not at all).
    /// Anything else is ``classify(_:)``'s to say.
    enum Summary {
        case plaintext
        case own(PasswordHash.Header)

        /// How the secret is stored, judged under `policy` (what `list` shows).
        func storage(under policy: HashPolicy) -> StorageSummary {
            switch self {
            case .plaintext: StoredSecret.plaintext.storage(under: policy)
            case .own(let header): header.storage(under: policy)
            }
        }
    }

    /// The ``Summary`` of a secret when it is plaintext or a well-formed hash in
    /// credfile's own format; nil when ``classify(_:)`` must say (a peer's hash, or
    /// malformed). Reads raw bytes only: the per-line loops call it on several threads.
    static func quickSummary(_ raw: UnsafeRawBufferPointer) -> Summary? {
        guard mayHaveHashSyntax(raw) else { return .plaintext }
        return PBKDF2Family.wellFormedHeader(raw).map(Summary.own)
    }

    /// Django's `<hasher>$` and Werkzeug's `scrypt:…$` (Werkzeug's `pbkdf2:` is a family
    /// of its own): the name of the peer's hash when `secret` starts with one, else nil.
    static func peerIdentifier(_ secret: ArraySlice<UInt8>) -> String? {
        if secret.starts(with: "scrypt:".utf8) || secret.starts(with: "pbkdf2:".utf8) {
            return "werkzeug " + String(decoding: secret.prefix { $0 != UInt8(ascii: ":") }, as: UTF8.self)
        }
        let name = secret.prefix { $0 != UInt8(ascii: "$") }
        guard name.endIndex < secret.endIndex else { return nil }
        let text = String(decoding: name, as: UTF8.self)
        return djangoHashers.contains(text) ? "django " + text : nil
    }

    /// The algorithm names of Django's password hashers (`<algorithm>$…`).
    static let djangoHashers: Set<String> = [
        "pbkdf2_sha256", "pbkdf2_sha1", "argon2", "bcrypt_sha256", "bcrypt", "scrypt", "md5", "sha1",
        "unsalted_sha1", "unsalted_md5", "crypt",
    ]

    /// Whether a secret could have hash syntax: a cheap test the fast paths ask before
    /// treating a clean line as plaintext (false means surely plaintext).
    static func mayHaveHashSyntax(_ secret: UnsafeRawBufferPointer) -> Bool {
        guard let first = secret.first else { return false }
        if first == lockMarker, secret.count > 1 {
            return mayHaveHashSyntax(UnsafeRawBufferPointer(rebasing: secret[1...]))
        }
        return first == UInt8(ascii: "$") || first == UInt8(ascii: "{") || secret.contains(UInt8(ascii: "$"))
    }

    /// The byte before the hash of a locked entry (SPEC §2, as `usermod -L` writes it).
    static let lockMarker = UInt8(ascii: "!")

    /// Whether a non-empty secret is plaintext with no finding of its own: printable
    /// ASCII and not ``mayHaveHashSyntax(_:)``, both in one pass (what `check` asks of a
    /// legacy file's million lines).
    static func isCleanPlaintext(_ secret: UnsafeRawBufferPointer) -> Bool {
        guard let first = secret.first, first != UInt8(ascii: "$"), first != UInt8(ascii: "{") else { return false }
        // `!{SCHEME}…` may be a locked entry.
        if first == lockMarker, secret.count > 1, secret[1] == UInt8(ascii: "{") { return false }
        return Bytes.isPrintableASCII(secret, without: UInt8(ascii: "$"))
    }

    /// The crypt ids of real hash formats (passlib, libxcrypt, phpass). Only these are
    /// named in a finding or a listing: the text between the `$`s of any other secret
    /// may be the start of a legacy password, and a secret is never shown.
    static let knownCryptIDs: Set<String> = [
        "1", "2", "2a", "2b", "2x", "2y", "3", "5", "6", "7", "y", "gy", "sm3", "md5", "sha1", "apr1", "P", "H",
        "argon2i", "argon2d", "argon2id", "scrypt", "bcrypt-sha256", "pbkdf2", "pbkdf2-sha256", "pbkdf2-sha512",
    ]

    /// The LDAP and Dovecot `{SCHEME}`s of real hash formats, uppercased (the schemes
    /// are case-insensitive). Any other `{…}` is not named, for the same reason.
    static let knownLDAPSchemes: Set<String> = [
        "SSHA", "SHA", "MD5", "SMD5", "CRYPT", "SHA256", "SSHA256", "SHA384", "SSHA384", "SHA512", "SSHA512",
        "PBKDF2", "PBKDF2-SHA1", "PBKDF2-SHA256", "PBKDF2-SHA512", "ARGON2", "ARGON2I", "ARGON2ID", "BCRYPT",
        "BLF-CRYPT", "MD5-CRYPT", "SHA256-CRYPT", "SHA512-CRYPT", "CLEAR", "CLEARTEXT", "PLAIN", "PLAIN-MD5",
        "LDAP-MD5", "CRAM-MD5", "DIGEST-MD5", "SCRAM-SHA-1", "SCRAM-SHA-256", "NTLM", "LANMAN",
    ]

    /// Whether a secret has hash syntax, or is `!` before hash syntax (a locked entry's
    /// form, whatever follows the `!`), and so can never be stored as plaintext.
    static func hasHashSyntax(_ secret: some Collection<UInt8>) -> Bool {
        let secret = ArraySlice(secret)
        if case .plaintext = classify(secret) {
            return secret.first == lockMarker && secret.count > 1 && hasHashSyntax(secret.dropFirst())
        }
        return true
    }

    /// Letters, digits, `.`, `_`, `-`: the bytes of a crypt id or an LDAP scheme.
    static func isSchemeByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

}
