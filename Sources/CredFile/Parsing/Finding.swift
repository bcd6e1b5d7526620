/// One problem `check` found in a file: a value (swift-format's `Finding` shape), which
/// the CLI prints compiler-style as `FILE:LINE: error: …` in the user's language. Its
/// ``kind`` and ``detail`` hold everything the message is made of, so nobody parses
/// ``message`` back. A finding never quotes a secret, and never tells an app what to
/// run (the CLI adds its own advice when it renders one).
///
/// A finding about the file as a whole (its permissions) has line 0 and is printed
/// `FILE: warning: …`, without a line.
public struct Finding: Equatable, Sendable, CustomStringConvertible {
    /// How bad it is.
    public enum Severity: String, Sendable {
        /// The entry never authenticates, or the file is not what it should be.
        case error
        /// Works, but should be fixed (plaintext, weak hash, odd name).
        case warning
    }

    /// What the finding is about; its raw value is the `"kind"` of `check --json`.
    public enum Kind: String, Sendable, CaseIterable {
        /// An entry that never authenticates because it is broken (error).
        case malformedEntry
        /// A later entry of a name that already has one (error).
        case duplicate
        /// A hash in a scheme credfile does not verify (error).
        case unsupportedHash
        /// A hash that verifies but no longer resists offline attack (warning).
        case weakHash
        /// A hash whose verification costs more than the policy's (warning).
        case costlyHash
        /// Entries holding a plaintext password: one finding for the file (warning).
        case plaintext
        /// A name that breaks the rules for new names (warning).
        case username
        /// The file or its directory is open to other users (warning, line 0).
        case permissions
        /// A plaintext password that is on the blocklist (warning).
        case blocklisted
        /// Some who may read the file could not write its guard database (warning, line 0):
        /// their logins fail as temporary failures (SPEC §9).
        case guardDatabase
    }

    /// Who may read the credential file but could not write its guard database (SPEC §9).
    public enum GuardDatabaseProblem: Equatable, Sendable {
        /// The file's owner `uid` (not root) could not write the database at `path`.
        case ownerCannotWrite(uid: UInt32, path: String)
        /// The file's group `gid` may read it (mode g+r) but could not write the database at `path`.
        case groupCannotWrite(gid: UInt32, path: String)
        /// Others may read the file (mode o+r) but could not write the database at `path`.
        case othersCannotWrite(path: String)
    }

    /// Who may touch the file or its directory when they should not (SPEC §5).
    public enum PermissionProblem: Equatable, Sendable {
        /// The file can be read or written by its group or by others; `mode` holds the permission bits.
        case fileAccessibleToOthers(mode: UInt32)
        /// The directory can be written by others and has no sticky bit.
        case directoryWritableByOthers(mode: UInt32)
    }

    /// The values a finding's message is made of, one case per ``Kind``.
    public enum Detail: Equatable, Sendable {
        /// The entry (of `user`, when it has a name) is malformed for `reason`.
        case malformedEntry(user: [UInt8]?, reason: MalformedReason)
        /// A later entry of `user`; its first entry is on `firstLine`.
        case duplicate(user: [UInt8], firstLine: Int)
        /// The entry holds a hash of `scheme` (as ``StoredSecret/unsupportedHash(scheme:)`` names it).
        case unsupportedHash(user: [UInt8]?, scheme: String)
        /// A weak hash of `scheme`: `rounds` below `minimumRounds` when the weakness is
        /// its rounds; `rounds` nil and `minimumRounds` set when a peer's scheme costs less
        /// to verify than that many policy rounds (bcrypt 9, say: not broken, cheaper);
        /// both nil when the scheme itself no longer resists offline attack (md5crypt).
        case weakHash(user: [UInt8]?, scheme: String, rounds: Int?, minimumRounds: Int?)
        /// A hash of `scheme` whose verification costs about `times` the policy's.
        case costlyHash(user: [UInt8]?, scheme: String, times: Double)
        /// `count` entries hold a plaintext password; the finding sits at the first.
        case plaintext(count: Int)
        /// The name breaks a rule for new names.
        case username(Username.Problem)
        /// The file or its directory is open to others.
        case permissions(PermissionProblem)
        /// The plaintext password of `user` is on the blocklist.
        case blocklisted(user: [UInt8]?)
        /// Some readers of the file could not write its guard database.
        case guardDatabase(GuardDatabaseProblem)
    }

    /// The 1-based line number; 0 for a finding about the whole file.
    public let line: Int
    /// Error or warning.
    public let severity: Severity
    /// The values of the message.
    public let detail: Detail

    /// Creates a finding.
    public init(line: Int, severity: Severity, detail: Detail) {
        self.line = line
        self.severity = severity
        self.detail = detail
    }

    /// What the finding is about.
    public var kind: Kind {
        switch detail {
        case .malformedEntry: .malformedEntry
        case .duplicate: .duplicate
        case .unsupportedHash: .unsupportedHash
        case .weakHash: .weakHash
        case .costlyHash: .costlyHash
        case .plaintext: .plaintext
        case .username: .username
        case .permissions: .permissions
        case .blocklisted: .blocklisted
        case .guardDatabase: .guardDatabase
        }
    }

    /// The name the finding is about, raw, when it is about a named entry.
    public var user: [UInt8]? {
        switch detail {
        case .malformedEntry(let user, _), .unsupportedHash(let user, _), .weakHash(let user, _, _, _),
            .costlyHash(let user, _, _), .blocklisted(let user):
            user
        case .duplicate(let user, _): user
        case .plaintext, .username, .permissions, .guardDatabase: nil
        }
    }

    /// A sentence in English for people, built from ``detail``, without any secret.
    public var message: String {
        func who(_ user: [UInt8]?) -> String { user.map { " for user \(Escaped.quotedName($0))" } ?? "" }
        switch detail {
        case .malformedEntry(let user, let reason):
            return "malformed entry\(who(user)): \(reason)"
        case .duplicate(let user, let firstLine):
            return "duplicate entry\(who(user)) (first at line \(firstLine)); it never authenticates"
        case .unsupportedHash(let user, let scheme):
            return "unsupported hash scheme \(scheme)\(who(user)); it never authenticates"
        case .weakHash(let user, _, let rounds?, let minimum?):
            return "weak hash\(who(user)): \(rounds) rounds, below the minimum of \(minimum)"
        case .weakHash(let user, let scheme, nil, let minimum?):
            return "weak hash\(who(user)): \(scheme) costs less to verify than the minimum of \(minimum) rounds"
        case .weakHash(let user, let scheme, _, _):
            return "weak hash\(who(user)): \(scheme) no longer resists offline attack"
        case .costlyHash(let user, let scheme, let times):
            return "costly hash\(who(user)): \(scheme) takes about \(Int(times.rounded()))× the policy's work per login"
        case .plaintext(let count):
            return count == 1 ? "plaintext password" : "\(count) entries hold a plaintext password (this is the first)"
        case .username(let problem):
            return "username \(problem)"
        case .permissions(.fileAccessibleToOthers(let mode)):
            return
                "the file can be read or written by group or others (mode \(Self.octal(mode))); hashes that leak can be attacked offline"
        case .permissions(.directoryWritableByOthers(let mode)):
            return
                "the file's directory can be written by others without the sticky bit (mode \(Self.octal(mode))); they can replace the file"
        case .blocklisted(let user):
            return "plaintext password\(who(user)) is on a blocklist (commonly used or breached)"
        case .guardDatabase(let problem):
            let (who, path): (String, String) =
                switch problem {
                case .ownerCannotWrite(let uid, let path): ("its owner (uid \(uid))", path)
                case .groupCannotWrite(let gid, let path): ("its group (gid \(gid))", path)
                case .othersCannotWrite(let path): ("others", path)
                }
            return "the file can be read by \(who), who cannot write the guard database \(Escaped.path(path)): "
                + "logins checked as them fail (set state to a database they may write)"
        }
    }

    /// `LINE: error: message`.
    public var description: String { "\(line): \(severity.rawValue): \(message)" }

    /// `0644`.
    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
