#if canImport(Glibc)
import Glibc
#endif

/// How many registrations SPEC §12 allows in any hour: per client address and in all.
public struct RegistrationLimits: Sendable, Equatable {
    /// `register-per-hour`: registrations from one client address (default 5).
    public var perAddress: Int
    /// `register-per-hour-total`: registrations from everyone (default 100).
    public var total: Int

    /// The defaults of `register-per-hour` and `register-per-hour-total`.
    public static let defaultPerAddress = 5
    /// The default of `register-per-hour-total`.
    public static let defaultTotal = 100

    /// Limits of `perAddress` a client and `total` in all, each at least 0 (0: none allowed).
    public init(perAddress: Int = defaultPerAddress, total: Int = defaultTotal) {
        self.perAddress = max(0, perAddress)
        self.total = max(0, total)
    }
}

/// SPEC §12's state in the state database of FILE (the `state` setting, default
/// `FILE.guard.db`): the invitations — each code single use, expiring, maybe bound to a
/// name, kept only as its SHA-256 — and the registrations of the last hour that the
/// limits count. Every process and host sharing the state database sees the same.
///
/// ```swift
/// let registrations = Registrations(statePath: "usuarios.txt.guard.db")
/// let issued = try registrations.issue(count: 1, lifetime: 7 * 86_400, user: nil)
/// print(issued[0].code.text)             // give it to the person, once
/// try store.register(username: "valencia", password: Password("naranjo-en-flor-2026"),
///                    invitation: issued[0].code, registrations: registrations)
/// ```
public final class Registrations: Sendable {
    private let store: any StateStore

    /// The state database's file (or, in PostgreSQL, its connection string).
    public var path: String { store.location }

    /// The invitations and counts in the SQLite state database at `statePath`, opened (and
    /// created, mode 0600, when missing) at first use.
    public init(statePath: String) {
        store = SQLiteStateStore(path: statePath, owner: nil)
    }

    /// The invitations and counts in the state database at `location` (SQLite or
    /// PostgreSQL, SPEC §15), opened at first use.
    public init(location: StateLocation) {
        store = location.store()
    }

    /// The default lifetime of an invitation: 7 days.
    public static let defaultLifetime: Int64 = 7 * 86_400
    /// The most codes one call makes.
    public static let largestCount = 1000

    /// A new invitation: its id and, only now, its code.
    public struct Issued: Sendable {
        /// What `--list` shows and `--revoke` takes.
        public let id: Int64
        /// The code to hand to the person; not kept anywhere.
        public let code: InvitationCode
        /// When it stops working, seconds since 1970.
        public let expires: Int64
    }

    /// Makes `count` invitations that expire `lifetime` seconds from `now`, bound to
    /// `user` (nil: any name), in one transaction.
    /// - Parameters:
    ///   - count: 1 to ``largestCount``.
    ///   - lifetime: seconds, at least 1.
    ///   - user: the only name that may use them; nil for any (checked as SPEC §2's new names are).
    ///   - now: seconds since 1970 (default: the clock).
    /// - Returns: the new invitations with their codes.
    /// - Throws: ``CredFileError/Code/usage`` for a count, lifetime or name out of range;
    ///   ``CredFileError/Code/crypto`` when `RAND_bytes` fails; what the state database throws.
    public func issue(count: Int, lifetime: Int64, user: String?, now: Int64? = nil) throws -> [Issued] {
        guard (1...Self.largestCount).contains(count) else {
            throw CredFileError.usage("the count of invitations must be 1 to \(Self.largestCount)")
        }
        guard lifetime >= 1 else { throw CredFileError.usage("an invitation must last at least one second") }
        if let user { try Username.validate(user) }
        let now = now ?? Self.clock()
        let (expires, overflow) = now.addingReportingOverflow(lifetime)
        guard !overflow else { throw CredFileError.usage("an invitation cannot last that long") }
        let codes = try (0..<count).map { _ in try InvitationCode.generate() }
        let bound = user.map { FileSyntax.nameKey(of: $0) } ?? []
        let ids = try store.write { tables in
            try codes.map {
                try tables.invitations.insert(codeDigest: $0.digest, user: bound, created: now, expires: expires)
            }
        }
        return zip(ids, codes).map { Issued(id: $0, code: $1, expires: expires) }
    }

    /// Every invitation (used and expired ones too), by id; never a code.
    /// - Throws: what the state database throws.
    public func invitations() throws -> [InvitationRecord] {
        try store.read { try $0.invitations.all() } ?? []
    }

    /// Revokes invitation `id`: its code gets the answer of a wrong one from now on.
    /// - Returns: whether there was one.
    /// - Throws: what the state database throws.
    @discardableResult public func revoke(id: Int64) throws -> Bool {
        try store.write { try $0.invitations.delete(id: id) }
    }

    /// Revokes every invitation. - Returns: how many there were.
    /// - Throws: what the state database throws.
    @discardableResult public func revokeAll() throws -> Int {
        try store.write { try $0.invitations.deleteAll() }
    }

    /// Whether `code` would let `username` register at `now` (nothing changes): unused,
    /// unexpired, not revoked, bound to that name or to none.
    /// - Throws: what the state database throws.
    public func accepts(_ code: InvitationCode, username: String, now: Int64? = nil) throws -> Bool {
        let digest = code.digest
        let name = FileSyntax.nameKey(of: username)
        let now = now ?? Self.clock()
        return try store.read { try $0.invitations.isRedeemable(codeDigest: digest, user: name, now: now) } ?? false
    }

    /// Uses `code` for `username` at `now`, once: nil when it is wrong, used, expired,
    /// revoked or bound to another name (one statement, so two processes cannot both use it).
    func redeem(_ code: InvitationCode, username: String, now: Int64) throws -> Int64? {
        let digest = code.digest
        let name = FileSyntax.nameKey(of: username)
        return try store.write { try $0.invitations.redeem(codeDigest: digest, user: name, now: now) }
    }

    /// Makes invitation `id` unused again: its registration failed after all.
    func unredeem(id: Int64) throws {
        try store.write { try $0.invitations.unredeem(id: id) }
    }

    // MARK: The hourly limits

    /// A registration counted against the limits, until ``release(_:)`` forgets it.
    public struct Ticket: Sendable, Equatable {
        let row: Int64
    }

    /// Counts one registration from `client` at `now` when fewer than the limits happened
    /// in the hour before (from that address, and in all), in one transaction so that
    /// processes racing cannot pass the limits together; nil when a limit is reached
    /// (nothing counted: the caller refuses, logs `reason=register-limit` and writes nothing).
    /// - Parameters:
    ///   - client: the client's address (nil: unknown, counted only in the total).
    ///   - limits: `register-per-hour` and `register-per-hour-total`.
    ///   - now: seconds since 1970 (default: the clock).
    /// - Throws: what the state database throws.
    public func admit(client: String?, limits: RegistrationLimits, now: Int64? = nil) throws -> Ticket? {
        let now = now ?? Self.clock()
        let key = Array((client ?? "").utf8)
        return try store.write { tables in
            let recent = try tables.invitations.recentRegistrations(client: key, after: now - 3600)
            guard recent.total < limits.total, client == nil || recent.client < limits.perAddress else { return nil }
            return Ticket(row: try tables.invitations.insertRegistration(client: key, at: now))
        }
    }

    /// Forgets a counted registration that did not happen (a name taken, a password refused
    /// under the lock, a write that failed), so that it uses up no one's limit.
    /// - Throws: what the state database throws.
    public func release(_ ticket: Ticket) throws {
        try store.write { try $0.invitations.deleteRegistration(row: ticket.row) }
    }

    /// Seconds since 1970.
    static func clock() -> Int64 { Int64(time(nil)) }
}

extension GuardLog {
    /// Logs a registration refused by SPEC §12's hourly limits, in §9's format (so that
    /// fail2ban can match it):
    ///
    ///     authentication failure; service=serve user=bob rhost=203.0.113.9 file=/etc/app.cred reason=register-limit
    /// - Parameters:
    ///   - service: the caller (`serve`).
    ///   - user: the name asked for.
    ///   - client: the client's address, when known.
    ///   - file: the credential file.
    public func recordRegistrationRefused(service: String, user: String, client: String?, file: String) {
        write(
            "authentication failure; service=\(Self.value(service)) user=\(Self.value(user)) "
                + "rhost=\(Self.value(client ?? "")) file=\(Self.value(file)) reason=register-limit",
            priority: .notice)
    }
}
