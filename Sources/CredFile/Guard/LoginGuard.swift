import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Guards the logins of one credential file (SPEC §9): throttles and locks out names
/// that fail again and again, and logs every decision (``GuardLog``). One guard
/// database per credential file is shared by every process that checks its logins —
/// `verify`, `pam`, `checkpassword`, Squid's helper children, `serve`, and apps — so the
/// limits hold however the guesses arrive.
///
/// ```swift
/// var store = CredentialStore(path: "/etc/app.cred")
/// store.loginGuard = try LoginGuard(credentialFile: store.path, service: "myapp")
/// let granted = try store.authenticate(username: "bob", password: typed)  // guarded
/// ```
///
/// What it promises:
/// * **No name is revealed.** Unknown names are counted, throttled and locked out as
///   known ones are; a throttled or locked-out attempt is answered from the guard
///   database alone, before the credential file is read or anything is hashed, so it
///   takes the same time for every name.
/// * **Never silently unguarded.** When the database cannot be opened or written, the
///   login is not checked: ``attempt(username:client:_:)`` throws
///   ``CredFileError/Code/io`` (a temporary failure: exit 5, checkpassword 111, Squid
///   `BH`, HTTP 503) and logs why, naming the `state` setting.
/// * **Bounded and concurrent.** At most 100,000 names (made-up names never push out a
///   throttled or locked-out one); an attempt is counted in one SQLite transaction before
///   its password is looked at, so concurrent processes see each other's attempts and
///   lose no count.
///
/// The clock is the system's real time; a test configures short delays.
public final class LoginGuard: Sendable {
    /// The credential file whose logins this guards, as given (logged as `file=`).
    public let credentialFile: String
    /// The guard database (`state`): by default `FILE.guard.db` beside the credential
    /// file, symlinks resolved; a PostgreSQL database's connection string (SPEC §15).
    public let databasePath: String
    /// Where the state database is (``StateLocation``).
    public let stateLocation: StateLocation
    /// The limits.
    public let policy: GuardPolicy
    /// Where decisions are logged.
    public let log: GuardLog
    /// The caller, logged as `service=` (`pam`, `checkpassword`, `helper`, `serve`,
    /// `verify`, `login`, or an app's own name).
    public let service: String
    /// Whether this guard counts, throttles and locks out (true), or only logs each
    /// decision because guarding is off (`guard = no`; ``loggingOnly(credentialFile:log:service:)``).
    public let countsFailures: Bool

    let database: GuardDatabase
    /// When this guard last logged an unusable database (milliseconds since the epoch).
    private let lastUnusableLog = Atomic<Int64>(0)

    /// A guard for the logins of `credentialFile`.
    /// - Parameters:
    ///   - credentialFile: the credential file (its symlinks are resolved to find the
    ///     default database beside it).
    ///   - state: the guard database's path, or a `postgresql://…` connection string (SPEC
    ///     §15); nil for `FILE.guard.db` beside the file. When root creates the database, it
    ///     gets the credential file's owner and group when it is the default one, and its
    ///     directory's owner and group when `state` puts it elsewhere (give each caller's
    ///     user a directory of its own). ``StateLocation`` decides this.
    ///   - policy: the limits (default: 5 free failures, 1 s doubling up to 900 s, lockout at 100).
    ///   - log: where decisions go (default syslog, facility authpriv, ident credfile).
    ///   - service: the caller's name for the log's `service=`.
    /// - Throws: ``CredFileError/Code/io`` when the credential file's directory cannot be
    ///   resolved; ``CredFileError/Code/usage`` for a PostgreSQL `state` holding a password.
    ///   The database itself is opened (created when missing) at the first use.
    public init(
        credentialFile: String, state: String? = nil, policy: GuardPolicy = .standard, log: GuardLog = .syslog,
        service: String
    ) throws {
        self.credentialFile = credentialFile
        self.policy = policy
        self.log = log
        self.service = service
        countsFailures = true
        let location = try StateLocation(state: state, credentialFile: credentialFile)
        stateLocation = location
        databasePath = location.description
        database = GuardDatabase(store: location.store())
    }

    /// A guard that only logs (``loggingOnly(credentialFile:log:service:)``): no database.
    init(loggingOnlyFor credentialFile: String, log: GuardLog, service: String) {
        self.credentialFile = credentialFile
        self.policy = .standard
        self.log = log
        self.service = service
        countsFailures = false
        databasePath = ""
        stateLocation = StateLocation(sqlitePath: "")
        database = GuardDatabase(path: "", owner: nil)
    }

    /// The default guard database of a credential file: `FILE.guard.db` beside the
    /// file its path resolves to.
    /// - Throws: ``CredFileError/Code/io`` when the path cannot be resolved.
    public static func defaultDatabasePath(forCredentialFile path: String) throws -> String {
        StateLocation.defaultPath(forResolved: try FileReader.resolvedPath(path))
    }

    // MARK: Logins

    /// Guards one login: the entry point of every login check (SPEC §9).
    ///
    /// 1. Judges the attempt from the guard database alone: a locked-out name, or one
    ///    whose delay is not over, is denied at once (``LoginDenial/lockedOut``,
    ///    ``LoginDenial/throttled``), without calling `check` and without counting it.
    /// 2. Otherwise counts the attempt as a failure (so concurrent attempts see it) and
    ///    calls `check`, which reads the credential file and hashes.
    /// 3. A granted login clears the name's failures; a denied one stays counted (and the
    ///    one that reaches `max-failures` logs `locked out`). A `check` that throws (the
    ///    credential file could not be read) is taken back: it was not a guess.
    ///
    /// Every decision is logged as one line.
    /// - Parameters:
    ///   - username: the name as the caller sent it (raw bytes; compared after NFC).
    ///   - client: the client's address for the log's `rhost=` (nil when unknown).
    ///   - check: the login against the credential file.
    /// - Returns: `check`'s answer, or a denial with ``CredentialStore/Verification/denial``
    ///   `throttled` or `lockedOut`.
    /// - Throws: ``CredFileError/Code/io`` when the guard database cannot be opened or
    ///   written (logged; the login was not checked), or what `check` throws.
    @available(*, noasync, message: "it blocks its thread while `check` hashes; call it from the hashing threads")
    public func attempt(
        username: some Collection<UInt8>, client: String?, _ check: () throws -> CredentialStore.Verification
    ) throws -> CredentialStore.Verification {
        try attempt(username: username, client: client, afterCacheMiss: false, check)
    }

    /// ``attempt(username:client:_:)``; `afterCacheMiss`: the password was already looked
    /// up in a cache of good logins and not found there, so an attempt that has become
    /// throttled since is counted all the same (SPEC §10: every comparison, hashed or
    /// cached, counts; see ``cachedLogin(username:client:cache:)``).
    @available(*, noasync, message: "it blocks its thread while `check` hashes; call it from the hashing threads")
    ///
    /// `device`: a known device of the name (SPEC §11): the attempt is judged and counted on
    /// the device's own count instead of the name's, and a good login clears that count only
    /// (the name's stays, so the attempts of everyone else stay under the limits). A device
    /// of another name is ignored.
    func attempt(
        username: some Collection<UInt8>, client: String?, afterCacheMiss: Bool, device: KnownDevice? = nil,
        _ check: () throws -> CredentialStore.Verification
    ) throws -> CredentialStore.Verification {
        guard countsFailures else { return try loggedOnly(username: username, client: client, check) }
        let name = Array(username)
        let nameKey = FileSyntax.nameKey(name)
        let key = device?.guardKey(forName: nameKey) ?? nameKey
        // No credential file, no login to guard: `check` fails as it would unguarded, and
        // no database is created beside a file that is not there.
        guard (try? Syscall.status(of: credentialFile)) != nil else { return try check() }
        let reservation: GuardDatabase.Reservation
        do {
            reservation = try database.reserve(key, now: Self.now(), policy: policy)
        } catch {
            throw unusable(error, user: name, client: client)
        }
        let count: Int
        switch reservation {
        case .throttled:
            if afterCacheMiss { return try countCachedMiss(name, key: key, client: client) }
            return denied(.throttled, user: name, client: client)
        case .lockedOut:
            return denied(.lockedOut, user: name, client: client)
        case .admitted(let admitted):
            count = admitted
        }
        let result: CredentialStore.Verification
        do {
            result = try check()
        } catch {
            try? database.release(key, policy: policy)
            throw error
        }
        if result.awaitsCode {
            // A right password whose code comes next (SPEC §14): the code's attempt counts.
            try? database.release(key, policy: policy)
        } else if result.granted {
            do {
                try database.clear(key)
            } catch {
                // The login stands (the password was right); the count stays, which errs on the safe side.
                _ = unusable(error, user: name, client: client)
            }
            log.write(
                GuardLog.successLine(service: service, user: name, client: client, file: credentialFile),
                priority: .info)
        } else {
            _ = denied(result.denial ?? .wrongPassword, user: name, client: client)
            if count == policy.maximumFailures {
                log.write(GuardLog.lockedOutLine(user: name, failures: count), priority: .warning)
            }
        }
        return result
    }

    /// Whether a login that a server answers from its cache of good logins may stand:
    /// false when the name is locked out or throttled (then logged as `locked-out` or
    /// `throttled`: SPEC §10's cache is no oracle for such a name). Nothing is counted and
    /// a granted one is not logged.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the guard database cannot be read (logged).
    @available(
        *, deprecated,
        message: "use CredentialStore.cachedAnswer(usernameBytes:password:client:cache:), which decides with the guard"
    )
    public func admitsCachedLogin(username: some Collection<UInt8>, client: String?) throws -> Bool {
        try cachedLogin(
            username: Array(username), client: client, cache: CacheLookUp(holds: { true }, isOwner: { false }))?
            .granted ?? true
    }

    /// Logs a denial; the answer for it.
    func denied(_ reason: LoginDenial, user: [UInt8], client: String?) -> CredentialStore.Verification {
        log.write(
            GuardLog.failureLine(service: service, user: user, client: client, file: credentialFile, reason: reason),
            priority: .notice)
        return CredentialStore.Verification(granted: false, upgraded: false, upgradeError: nil, denial: reason)
    }

    /// Logs that the database is unusable (at most once a second per guard: a database
    /// that is down would otherwise log every request of a busy `serve`); the error to
    /// throw, naming `state`.
    func unusable(_ error: CredFileError, user: [UInt8], client: String?) -> CredFileError {
        let cause = error.cause.map { String(cString: strerror($0.errno)) } ?? error.message
        let now = Self.now()
        let last = lastUnusableLog.load(ordering: .relaxed)
        if now - last >= 1000,
            lastUnusableLog.compareExchange(
                expected: last, desired: now, ordering: .relaxed
            ).exchanged
        {
            log.write(
                "guard database unusable, login refused; service=\(GuardLog.value(service)) user=\(GuardLog.value(user)) "
                    + "rhost=\(GuardLog.value(client ?? "")) file=\(GuardLog.value(credentialFile)) "
                    + "state=\(GuardLog.value(databasePath)) error=\(GuardLog.value(cause)) uid=\(geteuid()) "
                    + "(set state to a database this user may write)",
                priority: .error)
        }
        var refused = error
        refused.message =
            "\(error.message); the login was not checked (set `state` to a guard database uid \(geteuid()) may write)"
        return refused
    }

    // MARK: Failures, for admins

    /// The names with recorded failures, the most recent first.
    /// - Throws: ``CredFileError/Code/io`` when the database cannot be used.
    public func failureRecords() throws -> [FailureRecord] {
        let now = Self.now()
        return try database.rows().map { FailureRecord($0, policy: policy, now: now) }
    }

    /// The failures of one name (NFC-compared), nil when it has none.
    public func failureRecord(username: String) throws -> FailureRecord? {
        try database.row(FileSyntax.nameKey(of: username)).map { FailureRecord($0, policy: policy, now: Self.now()) }
    }

    /// Clears one name's failures, ending its lockout (`failures --reset USER`, `unlock`),
    /// and those of its known devices (SPEC §11).
    /// - Returns: whether it had any.
    @discardableResult
    public func resetFailures(username: String) throws -> Bool {
        let key = FileSyntax.nameKey(of: username)
        let devices = try database.clearDevices(ofName: key)
        return try database.clear(key) || devices > 0
    }

    /// Clears every name's failures (`failures --reset`). - Returns: how many names had some.
    @discardableResult
    public func resetAllFailures() throws -> Int {
        try database.clearAll()
    }

    /// Logs that guarding is turned off (`--no-guard`, `guard = no`) for a login check
    /// of `service` on `credentialFile`, as SPEC §9 asks: once per process or decision.
    public static func logGuardDisabled(service: String, credentialFile: String, log: GuardLog) {
        log.write(
            "guard disabled; service=\(GuardLog.value(service)) file=\(GuardLog.value(credentialFile))",
            priority: .warning)
    }

    /// The real time in milliseconds since the Unix epoch.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

/// One name's failures, as `credfile failures` shows them.
public struct FailureRecord: Sendable, Equatable {
    /// The name's NFC bytes.
    public let username: [UInt8]
    /// Consecutive failures (an attempt being checked right now counts).
    public let failures: Int
    /// When the last one happened, in seconds since 1970-01-01 UTC.
    public let lastFailure: Double
    /// Until when the next attempt is denied unchecked (seconds since the epoch); nil
    /// when it would be checked now, or the name is locked out.
    public let throttledUntil: Double?
    /// Whether every attempt is denied until the failures are reset.
    public let isLockedOut: Bool

    init(_ row: GuardDatabase.Row, policy: GuardPolicy, now: Int64) {
        username = row.name
        failures = row.count
        lastFailure = Double(row.lastFailure) / 1000
        isLockedOut = row.lockedOut || policy.locksOut(afterFailures: row.count)
        let until = row.lastFailure + Int64((policy.delay(afterFailures: row.count) * 1000).rounded(.up))
        throttledUntil = !isLockedOut && until > now ? Double(until) / 1000 : nil
    }
}
