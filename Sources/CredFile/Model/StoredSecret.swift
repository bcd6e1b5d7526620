/// What an entry's secret is (SPEC §2).
public enum StoredSecret: Sendable, Equatable {
    /// A legacy plaintext password.
    case plaintext
    /// A well-formed hash in credfile's own format (passlib's `$pbkdf2-sha256$`/`$pbkdf2-sha512$`).
    case pbkdf2(PasswordHash)
    /// A well-formed hash another program wrote, in a scheme credfile verifies (SPEC §3.2).
    case peer(PeerHash)
    /// A hash credfile does not verify (`$2y$`, `{SSHA}`, …): never authenticates.
    /// `scheme` names a known format as written; any other reads `$?$` or `{?}`, since
    /// it could be the start of a legacy password.
    case unsupportedHash(scheme: String)
    /// A broken entry: never authenticates, kept byte for byte.
    case malformed(reason: String)
    /// A locked entry, as `usermod -L` marks `/etc/shadow` (SPEC §2): `!` before a hash of
    /// a scheme credfile verifies (the associated ``pbkdf2(_:)`` or ``peer(_:)``). It never
    /// authenticates; `unlock` removes the `!` and nothing else.
    indirect case locked(StoredSecret)

    /// How the secret is stored, without the secret: `plaintext`, `pbkdf2-sha256 1200000`,
    /// `django pbkdf2_sha256 1000000`, `unsupported $2y$`, `malformed`, `locked pbkdf2-sha256 1200000`.
    public var storageDescription: String {
        switch self {
        case .locked(let hash): "locked " + hash.storageDescription
        case .plaintext: "plaintext"
        case .pbkdf2, .peer: knownHash?.description ?? ""
        case .unsupportedHash(let scheme): "unsupported \(scheme)"
        case .malformed: "malformed"
        }
    }

    /// The parsed hash of a secret that verifies, credfile's own format or a peer's
    /// (one protocol for both, so a consumer need not tell them apart); nil for
    /// plaintext, unsupported, malformed and locked secrets (a locked one never verifies).
    public var knownHash: (any KnownHash)? {
        switch self {
        case .pbkdf2(let hash): hash
        case .peer(let peer): peer.hash
        case .plaintext, .unsupportedHash, .malformed, .locked: nil
        }
    }
}

/// A hash written by another program in a scheme credfile verifies (SPEC §3.2): what its
/// family's parser made of the secret. Two are equal when they are spelled the same.
public struct PeerHash: Sendable, Equatable, CustomStringConvertible {
    /// The parsed hash: scheme, cost, weakness, and how to verify it.
    public let hash: any KnownHash
    /// The secret's bytes, for equality only (never shown).
    private let spelling: [UInt8]

    init(_ hash: any KnownHash, spelling: ArraySlice<UInt8>) {
        self.hash = hash
        self.spelling = Array(spelling)
    }

    /// Whether the hash string starts with `prefix` (`$argon2id$`: a bare PHC string,
    /// not Django's or Dovecot's wrapping of one).
    func isSpelled(startingWith prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { spelling.starts(with: $0) }
    }

    /// Equal when the hash strings are the same bytes.
    public static func == (a: PeerHash, b: PeerHash) -> Bool { a.spelling == b.spelling }

    /// `scheme cost`: `django pbkdf2_sha256 1000000`, `mosquitto sha512`.
    public var description: String { hash.description }
}
