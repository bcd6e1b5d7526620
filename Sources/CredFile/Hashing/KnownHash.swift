/// A hash string of a scheme credfile verifies (SPEC §3.1, §3.2), parsed strictly.
///
/// Each family (passlib PBKDF2, LDAP PBKDF2, Django, Werkzeug, mosquitto, Dovecot,
/// crypt(3) through libxcrypt, argon2 through libargon2, scrypt and the digest schemes
/// through OpenSSL) is one type conforming to this protocol, registered once in
/// `SecretSyntax`, which picks the family by the string's syntax. Parsing never guesses:
/// a string with a family's prefix that does not parse exactly is malformed; what a
/// well-formed hash would cost (``estimatedWork``, ``estimatedMemory``) is the policy's to
/// judge against the cost limits before any work (SPEC §3.1, ``HashPolicy/costVerdict(of:)``).
public protocol KnownHash: Sendable, CustomStringConvertible {
    /// The scheme's name, as `list` and `check` show it: `pbkdf2-sha256`, `bcrypt`,
    /// `django pbkdf2_sha256`, `apr1`, `argon2id`.
    var scheme: String { get }
    /// The scheme's cost parameter when it has one (rounds, bcrypt's log cost, …).
    var cost: Int? { get }
    /// Whether the scheme no longer resists offline attack (DES crypt, md5crypt, apr1,
    /// `{SHA}`, `{SSHA*}`, Django `md5$`/`sha1$`, mosquitto `$6$`): it still verifies,
    /// `check` warns, upgrade-on-login replaces it.
    var isWeak: Bool { get }
    /// The work of one verification, estimated in PBKDF2-HMAC-SHA256 rounds on the
    /// machine the constants were measured on; for `check`'s warning about entries
    /// costlier than the policy. (The login's timing padding measures, it does not
    /// estimate.)
    var estimatedWork: Double { get }
    /// The bytes one verification allocates (argon2's `m`, scrypt's and yescrypt's
    /// 128·N·r, bcrypt's 4 KiB state), estimated from the parameters alone; with
    /// ``estimatedWork``, what the cost limits (SPEC §3.1, ``CostLimits``) judge before any work.
    var estimatedMemory: Int { get }
    /// Whether `password` matches, its bytes used exactly as given (the caller tries
    /// the NFC form and, for peer hashes, the bytes as typed). Compares in constant time.
    /// - Throws: ``CredFileError/Code/crypto`` when the library behind it fails.
    func verify(_ password: SecretBytes) throws -> Bool
}

extension KnownHash {
    /// `scheme cost`, or the scheme alone: what `list` prints (`bcrypt 12`, `apr1`).
    public var description: String { cost.map { "\(scheme) \($0)" } ?? scheme }
}

/// What one family's parser says of a secret: not its syntax at all, its syntax but
/// broken or hostile (malformed, with a reason that never quotes the secret), or a hash.
enum HashParse: Sendable {
    /// The secret does not have this family's syntax; ask the next family.
    case notThisFamily
    /// The family's syntax, but not exactly a valid hash of it (or hostile parameters).
    case malformed(reason: String)
    /// A well-formed hash of the family.
    case hash(any KnownHash)
}
