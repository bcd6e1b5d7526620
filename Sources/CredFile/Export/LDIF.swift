/// Export of a credential file to LDIF (RFC 2849) for OpenLDAP (SPEC §5 `export`): one
/// `inetOrgPerson` entry per user, whose `userPassword` the directory verifies itself.
///
///     dn: uid=alice,ou=people,dc=example,dc=org
///     objectClass: inetOrgPerson
///     uid: alice
///     cn: alice
///     sn: alice
///     userPassword: {PBKDF2-SHA256}1200000$<salt>$<checksum>
///
/// Each hash goes in the scheme slapd verifies it by (`LDAPUserPasswordConvertible`):
/// credfile's own and the peers' PBKDF2 as `{PBKDF2-SHA256}` / `{PBKDF2-SHA512}` /
/// `{PBKDF2-SHA1}` (passlib's `ldap_pbkdf2_*`, `pw-pbkdf2`, which verifies only salts of
/// exactly 16 bytes: credfile's own are), `{SHA}` and `{SSHA}` (slapd itself),
/// `{SSHA256}`/`{SSHA512}` (`pw-sha2`), argon2 as `{ARGON2}` + its PHC string (slapd's
/// `argon2` module), and crypt(3) hashes as `{CRYPT}` (slapd's crypt(3) is libxcrypt). An
/// entry no directory can verify (plaintext, malformed, too costly, an unsupported hash,
/// a salt of another size) is an ``UnexportableEntry`` with its line; so are two users whose DNs the
/// directory would take for one (RFC 4518, `LDAPStringPrep`: `ADMIN` and `admin`, `john  smith`
/// and `john smith`, a fullwidth `ｂｏｂ` and `bob`), each naming the other's line.
/// Shadowed duplicates (SPEC §2) are not users and are left out. The DN's `uid` value is
/// escaped per RFC 4514; every value that is not an LDIF SAFE-STRING is written base64
/// (`attr:: …`).
public struct LDIFExport: Sendable {
    /// The base DN used when none is given: `ou=people,dc=example,dc=org` (the layout of
    /// OpenLDAP's and Debian's examples; the `ou=people` entry itself is not exported).
    public static let defaultBaseDN = "ou=people,dc=example,dc=org"

    /// The DN under which every user's entry is placed (`uid=<name>,<baseDN>`).
    public let baseDN: String

    /// An exporter for `baseDN`.
    /// - Throws: ``CredFileError/Code/usage`` when the DN is empty, holds a control
    ///   character, or has no `attribute=value` part.
    public init(baseDN: String = LDIFExport.defaultBaseDN) throws(CredFileError) {
        guard !baseDN.isEmpty, baseDN.contains("="),
            !baseDN.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw CredFileError(.usage, "--base-dn must be a DN such as \(Self.defaultBaseDN)")
        }
        self.baseDN = baseDN
    }

    /// One exported user.
    public struct Record: Sendable {
        /// The line of the user's entry (1-based).
        public let line: Int
        /// The username.
        public let username: String
        /// The entry's DN, `uid=<escaped name>,<base>`.
        public let dn: String
        /// The `userPassword` value (`{PBKDF2-SHA256}…`): a hash, never a password.
        public let userPassword: String
        /// The LDIF text of the entry, ending with an empty line.
        public let ldif: String
    }

    /// An entry that cannot be exported, and why (the reason never quotes the secret).
    /// (Not a ``CredFileError/Refusal``, which is a rule's answer to a request.)
    public struct UnexportableEntry: Sendable {
        /// The line of the entry (1-based).
        public let line: Int
        /// The username, when the entry has one that is valid UTF-8.
        public let username: String?
        /// Why no directory could verify it.
        public let reason: String
    }

    /// ``UnexportableEntry``, its name in version 2.
    @available(*, deprecated, renamed: "UnexportableEntry")
    public typealias Refusal = UnexportableEntry

    /// The records of every exportable user and the entries that cannot be exported,
    /// both in file order.
    /// - Parameters:
    ///   - file: the credential file, parsed.
    ///   - policy: whose cost limits judge the hashes (SPEC §3.1): one too costly to
    ///     verify here is not handed to a directory either.
    public func export(_ file: CredentialFile, policy: HashPolicy = .standard) -> (
        records: [Record], unexportable: [UnexportableEntry]
    ) {
        var records: [Record] = []
        var unexportable: [UnexportableEntry] = []
        var seen = Set<[UInt8]>()
        for line in file.lines {
            guard let found = line.entry else { continue }
            if found.hasName, !seen.insert(found.usernameKey).inserted { continue }  // shadowed duplicate
            let entry = found.judged(by: policy)
            guard entry.hasName, let name = entry.usernameText else {
                unexportable.append(
                    UnexportableEntry(line: line.number, username: nil, reason: Self.reason(entry.secret)))
                continue
            }
            switch Self.userPassword(for: entry) {
            case .failure(let refusal):
                unexportable.append(UnexportableEntry(line: line.number, username: name, reason: refusal.reason))
            case .success(let userPassword):
                let dn = "uid=" + Self.escapedRDNValue(name) + "," + baseDN
                var ldif = Self.attribute("dn", dn)
                ldif += Self.attribute("objectClass", "inetOrgPerson")
                ldif += Self.attribute("uid", name)
                ldif += Self.attribute("cn", name)
                ldif += Self.attribute("sn", name)
                ldif += Self.attribute("userPassword", userPassword)
                records.append(
                    Record(line: line.number, username: name, dn: dn, userPassword: userPassword, ldif: ldif + "\n"))
            }
        }
        let (kept, lookalikes) = Self.separatingLookalikes(records)
        return (kept, (unexportable + lookalikes).sorted { $0.line < $1.line })
    }

    /// The records whose DNs the directory keeps apart, and a refusal for each of two or
    /// more whose `uid`s caseIgnoreMatch takes for one (RFC 4518): slapadd would add the
    /// first and refuse the rest, and whoever registered a look-alike earlier would own
    /// the other's DN. All of them are refused, each naming the others' lines; a name
    /// RFC 4518 prohibits is refused too (no directory can compare it).
    static func separatingLookalikes(_ records: [Record]) -> (kept: [Record], refused: [UnexportableEntry]) {
        var lines: [[UInt8]: [Int]] = [:]
        var refused: [UnexportableEntry] = []
        var forms: [[UInt8]?] = []
        for record in records {
            let form = LDAPStringPrep.caseIgnoreForm(of: record.username)
            forms.append(form)
            if let form { lines[form, default: []].append(record.line) }
        }
        var kept: [Record] = []
        for (record, form) in zip(records, forms) {
            guard let form else {
                refused.append(
                    UnexportableEntry(
                        line: record.line, username: record.username,
                        reason: "the name holds a character LDAP's string preparation (RFC 4518) prohibits"))
                continue
            }
            let others = (lines[form] ?? []).filter { $0 != record.line }
            guard !others.isEmpty else {
                kept.append(record)
                continue
            }
            let list = others.map(String.init).joined(separator: ", ")
            refused.append(
                UnexportableEntry(
                    line: record.line, username: record.username,
                    reason:
                        "its DN is the same to LDAP as line \(list)'s (uid ignores case, width and repeated spaces, RFC 4518)"
                ))
        }
        return (kept, refused)
    }

    // MARK: userPassword

    /// Why a secret cannot go to a directory.
    struct Unexportable: Error {
        let reason: String
    }

    /// The `userPassword` value of an entry. This is the extension point for hash
    /// families: a stored hash that a directory can verify conforms to
    /// ``LDAPUserPasswordConvertible`` (credfile's own PBKDF2 and crypt(3) hashes today).
    static func userPassword(for entry: Entry) -> Result<String, Unexportable> {
        (entry.secret.knownHash as? any LDAPUserPasswordConvertible)?.ldapUserPassword(secret: entry.secretBytes)
            ?? .failure(Unexportable(reason: reason(entry.secret)))
    }

    /// The reason an entry of this kind is refused.
    static func reason(_ secret: StoredSecret) -> String {
        switch secret {
        case .plaintext: "plaintext password: hash it first (credfile upgrade)"
        case .malformed(let reason): "malformed entry (\(reason))"
        case .unsupportedHash(let scheme): "hash scheme \(scheme) cannot be exported"
        case .pbkdf2, .peer: "\(secret.knownHash?.scheme ?? "") hashes cannot be exported to OpenLDAP"
        case .locked: "locked entry: a directory would not keep it locked"
        }
    }

    // MARK: RFC 4514 and RFC 2849

    /// An attribute value for a DN, escaped per RFC 4514 §2.4: `"+,;<>\` escaped with a
    /// backslash, a leading `#` or space and a trailing space escaped, NUL as `\00`.
    static func escapedRDNValue(_ value: String) -> String {
        let scalars = Array(value.unicodeScalars)
        var out = ""
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "\"", "+", ",", ";", "<", ">", "\\": out += "\\" + String(scalar)
            case "\0": out += "\\00"
            case "#" where index == 0: out += "\\#"
            case " " where index == 0 || index == scalars.count - 1: out += "\\ "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `name: value` when the value is an RFC 2849 SAFE-STRING that does not end with a
    /// space, else `name:: <base64>`; with its LF.
    static func attribute(_ name: String, _ value: String) -> String {
        isSafeString(Array(value.utf8)) ? "\(name): \(value)\n" : "\(name):: \(base64(Array(value.utf8)))\n"
    }

    /// RFC 2849: SAFE-INIT-CHAR (not NUL, LF, CR, space, `:`, `<`, nor above 0x7F) then
    /// SAFE-CHARs (not NUL, LF, CR, nor above 0x7F); and no trailing space (note 8).
    static func isSafeString(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first else { return true }
        if first == 0x20 || first == UInt8(ascii: ":") || first == UInt8(ascii: "<") { return false }
        if bytes.last == 0x20 { return false }
        return bytes.allSatisfy { $0 != 0 && $0 != 0x0A && $0 != 0x0D && $0 < 0x80 }
    }

    /// Standard base64 with padding (RFC 4648 §4).
    static func base64(_ bytes: [UInt8]) -> String { Base64Core.standard(bytes, padded: true) }
}

/// A stored hash that a directory server verifies, and its `userPassword` form. The
/// extension point of ``LDIFExport`` for new hash families.
protocol LDAPUserPasswordConvertible {
    /// The `userPassword` value, given the secret's bytes as stored in the file; or why
    /// no directory can verify this hash.
    func ldapUserPassword(secret: ArraySlice<UInt8>) -> Result<String, LDIFExport.Unexportable>
}

extension PasswordHash: LDAPUserPasswordConvertible {
    /// OpenLDAP's `pw-pbkdf2` salt size (`PBKDF2_SALT_SIZE`): other sizes are refused by slapd.
    static let ldapSaltCount = 16

    /// `{PBKDF2-SHA256}<rounds>$<salt>$<checksum>` (or `-SHA512`): passlib's string with
    /// the prefix swapped; refused unless the salt is 16 bytes.
    func ldapUserPassword(secret: ArraySlice<UInt8>) -> Result<String, LDIFExport.Unexportable> {
        guard salt.count == Self.ldapSaltCount else {
            return .failure(
                LDIFExport.Unexportable(
                    reason: "\(algorithm.identifier) salt is \(salt.count) bytes; OpenLDAP's pw-pbkdf2 needs exactly "
                        + "\(Self.ldapSaltCount) (set a new password with credfile passwd)"))
        }
        let passlib = string
        let prefix = "$\(algorithm.identifier)$"
        return .success("{PBKDF2-\(algorithm.rawValue.uppercased())}" + passlib.dropFirst(prefix.count))
    }
}

extension CryptHash: LDAPUserPasswordConvertible {
    /// `{CRYPT}<crypt string>`: slapd hands it to the system's crypt(3), which on Debian
    /// is libxcrypt (every method credfile verifies inside `{CRYPT}`).
    func ldapUserPassword(secret: ArraySlice<UInt8>) -> Result<String, LDIFExport.Unexportable> {
        .success("{CRYPT}" + String(decoding: text, as: UTF8.self))
    }
}

extension DjangoBcryptHash: LDAPUserPasswordConvertible {
    /// Django's `bcrypt$` holds a plain bcrypt string: `{CRYPT}` + it. Its `bcrypt_sha256$`
    /// hashes a hex SHA-256 of the password first, which no directory does.
    func ldapUserPassword(secret: ArraySlice<UInt8>) -> Result<String, LDIFExport.Unexportable> {
        guard !prehashed else {
            return .failure(
                LDIFExport.Unexportable(reason: "django bcrypt_sha256 hashes cannot be exported to OpenLDAP"))
        }
        return inner.ldapUserPassword(secret: secret)
    }
}

extension PeerPBKDF2Hash: LDAPUserPasswordConvertible {
    /// `{PBKDF2-SHA1|SHA256|SHA512}<rounds>$<ab64 salt>$<ab64 key>` whatever the peer's
    /// spelling (passlib, LDAP, Django, Werkzeug, Dovecot, mosquitto): the same PBKDF2,
    /// refused unless the salt is the 16 bytes slapd's `pw-pbkdf2` reads and the key the
    /// whole digest.
    func ldapUserPassword(secret: ArraySlice<UInt8>) -> Result<String, LDIFExport.Unexportable> {
        guard salt.count == PasswordHash.ldapSaltCount, checksum.count == prf.digestCount else {
            return .failure(
                LDIFExport.Unexportable(
                    reason: "\(scheme) salt is \(salt.count) bytes; OpenLDAP's pw-pbkdf2 needs exactly "
                        + "\(PasswordHash.ldapSaltCount) (set a new password with credfile passwd)"))
        }
        let name =
            switch prf {
            case .sha1: "SHA1"
            case .sha256: "SHA256"
            case .sha512: "SHA512"
            }
        return .success("{PBKDF2-\(name)}\(rounds)$\(AdaptedBase64.encode(salt))$\(AdaptedBase64.encode(checksum))")
    }
}

extension DigestHash: LDAPUserPasswordConvertible {
    /// `{SHA}` and `{SSHA}` (slapd's own), `{SSHA256}` and `{SSHA512}` (its `pw-sha2`
    /// module), written as OpenLDAP spells them: base64 of the digest, then the salt.
    /// apr1 and Django's digests are no scheme of OpenLDAP.
    func ldapUserPassword(secret: ArraySlice<UInt8>) -> Result<String, LDIFExport.Unexportable> {
        switch method {
        case .ldapSHA: .success("{SHA}" + LDIFExport.base64(stored))
        case .ldapSalted(_, let name): .success("{\(name)}" + LDIFExport.base64(stored + salt))
        case .apr1, .django:
            .failure(LDIFExport.Unexportable(reason: "\(scheme) hashes cannot be exported to OpenLDAP"))
        }
    }
}

extension Argon2Hash: LDAPUserPasswordConvertible {
    /// `{ARGON2}` + the PHC string, as slapd's `argon2` module (slappw-argon2(5)) verifies it.
    func ldapUserPassword(secret: ArraySlice<UInt8>) -> Result<String, LDIFExport.Unexportable> {
        .success("{ARGON2}" + String(decoding: phc, as: UTF8.self))
    }
}
