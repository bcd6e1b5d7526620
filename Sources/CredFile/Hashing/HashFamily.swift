/// One hash family credfile verifies (SPEC §3.1, §3.2): the prefixes it owns and the
/// parser of its exact syntax. Every family, credfile's own `$pbkdf2-sha256$` format
/// included, is one type conforming to this protocol and one line of
/// ``SecretSyntax/families``; nothing else needs to learn of it (the tests hold the fuzz
/// oracle, the fuzz dictionary and the known-ID lists to ``prefixes``).
///
/// passlib's handlers declare their `ident` the same way; the parse answers three ways
/// (``HashParse``), so a secret that carries a family's prefix but does not parse is
/// malformed, never guessed at.
protocol HashFamily: Sendable {
    /// The family's name, for tests and messages: `crypt(3)`, `django pbkdf2`.
    static var name: String { get }
    /// The prefixes of the secrets the family may claim; it is asked only about secrets
    /// that start with one of them, so this list is the whole of what it owns.
    static var prefixes: [HashPrefix] { get }
    /// True when the family shares a prefix with a later one and claims only its exact
    /// syntax: it answers ``HashParse/notThisFamily`` for the rest, which the later family
    /// (which calls malformed whatever it does not parse) then decides (SPEC §3.2: "the
    /// syntax decides"). The registry's order test checks that of every two families
    /// whose prefixes overlap, the yielding one comes first.
    static var yieldsSharedPrefix: Bool { get }
    /// What the family makes of a secret that starts with one of ``prefixes``. Limits
    /// that cost nothing to check (field lengths, salts up to 1,024 bytes) are the
    /// parser's; the cost limits of SPEC §3.1 are judged from the parsed hash's estimates
    /// (``KnownHash/estimatedWork``, ``KnownHash/estimatedMemory``) by the policy.
    static func parse(_ secret: ArraySlice<UInt8>) -> HashParse
    /// How a malformed secret of this family is named before the parser's reason:
    /// `malformed hash` (credfile's own format: `malformed pbkdf2 hash`).
    static var malformedLabel: String { get }
}

extension HashFamily {
    static var yieldsSharedPrefix: Bool { false }
    static var malformedLabel: String { "malformed hash" }

    /// Whether `secret` starts with one of this family's prefixes.
    static func owns(_ secret: ArraySlice<UInt8>) -> Bool { prefixes.contains { $0.isPrefix(of: secret) } }
}

/// A prefix a hash family owns: bytes compared exactly (crypt's `$2b$`, Django's
/// `pbkdf2_sha256$`), or an LDAP/Dovecot `{SCHEME}` whose ASCII letters compare without
/// case, as OpenLDAP and Dovecot compare them.
struct HashPrefix: Hashable, Sendable, CustomStringConvertible {
    /// The prefix as the peer writes it.
    let text: String
    /// True for a `{SCHEME}` (ASCII letters compared without case).
    let ignoresCase: Bool

    /// A prefix compared byte for byte.
    static func exact(_ text: String) -> HashPrefix { HashPrefix(text: text, ignoresCase: false) }
    /// An LDAP or Dovecot `{SCHEME}` prefix, compared without ASCII case.
    static func scheme(_ text: String) -> HashPrefix { HashPrefix(text: text, ignoresCase: true) }

    var description: String { text }

    /// Whether `secret` starts with this prefix.
    func isPrefix(of secret: ArraySlice<UInt8>) -> Bool {
        ignoresCase ? PeerText.hasPrefixIgnoringCase(secret, text) : secret.starts(with: text.utf8)
    }

    /// Whether some secret could start with both prefixes (one is a prefix of the other).
    func overlaps(_ other: HashPrefix) -> Bool {
        let either = ignoresCase || other.ignoresCase
        func starts(_ a: HashPrefix, _ b: HashPrefix) -> Bool {
            either
                ? PeerText.hasPrefixIgnoringCase(ArraySlice(a.text.utf8), b.text)
                : a.text.utf8.starts(with: b.text.utf8)
        }
        return starts(self, other) || starts(other, self)
    }
}
