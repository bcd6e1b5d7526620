import CredFile
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The numbers that bound `credfile serve` (SPEC §10: header and body sizes,
/// connections, queued logins, time per request), in one place.
struct ServeLimits: Sendable {
    /// Threads of libmicrohttpd per listener, answering requests (never hashing).
    var connectionThreads = 2
    /// Open connections per listener; more are refused at accept.
    var connections = 1024
    /// Memory per connection for the request head, and so the largest header block that
    /// is read (libmicrohttpd answers 431 past it). 32 KiB: nginx's own default header
    /// space, since `auth_request` passes the client's headers on unless told not to.
    var connectionMemory = 32 * 1024
    /// The largest request body accepted (forward-auth requests have none); 413 past it.
    var body = 64 * 1024
    /// Seconds a connection may be idle (a slow or stalled client) before it is closed.
    var idleSeconds = 30
    /// Logins queued or being hashed at once, over all listeners; one more is answered 503
    /// at once. 16 per hashing thread (one per core): with the default policy (one PBKDF2,
    /// 168–225 ms measured, `Benchmarks/README.md`) about 16 × 0.2 s of waiting at most.
    var pendingLogins = 16 * ParallelHasher.defaultJobs
    /// The nice value of the hashing threads (the connection threads keep the process's):
    /// a flood of logins then yields the CPU to the web server's own work and to the
    /// answers that need no hash.
    var hashingNice: Int32 = 10
    /// A queued login that could not start within this is answered 503 without hashing.
    var queueWait: Duration = .seconds(10)
    /// How long SIGTERM waits for the requests in flight before it stops anyway.
    var drain: Duration = .seconds(30)
}

/// What `serve` answers (SPEC §10).
enum ServeAnswer: Sendable, Equatable {
    /// 200 with `X-Credfile-User: <name>`.
    case granted(user: String)
    /// 401 with `WWW-Authenticate: Basic realm="…", charset="UTF-8"`: every kind of denial.
    case denied
    /// 503: FILE or the guard database unusable, or too many logins waiting; the reason
    /// goes to the service's own log, never to the client.
    case unavailable(reason: String)
    /// 413: a request body over ``ServeLimits/body``.
    case tooLarge
}

/// What a request brings that `serve` reads: the headers it needs, and who sent it.
struct ServeRequest: Sendable {
    /// The `Authorization` header's value; nil when there is none.
    var authorization: [UInt8]?
    /// More than one `Authorization` header (never a login: which would count?).
    var repeatedAuthorization = false
    /// `X-Real-IP`, and every `X-Forwarded-For` joined by commas (as HTTP combines them).
    var realIP: [UInt8]?
    var forwardedFor: [UInt8]?
    /// The declared body length (`Content-Length`), or nil.
    var bodyCount: UInt64?
    /// The connection's other end.
    var peer: ForwardedClient.Peer
}

/// The login logic of `credfile serve`, apart from HTTP: decides each request at once
/// when it can (no or malformed credentials, a cached good login, overload) and
/// otherwise hands the check to the library's hashing threads, bounded by
/// ``ServeLimits/pendingLogins``. Its settings are replaced as a whole on SIGHUP.
final class LoginService: Sendable {
    /// The settings that SIGHUP re-reads.
    struct Settings: Sendable {
        var file: String
        var policy: HashPolicy
        var realm = "credfile"
        /// How long a good login is cached; zero turns the cache off.
        var cacheLifetime: Duration = .seconds(300)
        var trustedProxies: [AddressRange] = []
        /// §9's guard of FILE's logins (nil: `--no-guard`), made anew by each reload.
        var loginGuard: LoginGuard?
    }

    /// One generation of settings with the store and cache made from them.
    final class Generation: Sendable {
        let settings: Settings
        let store: CredentialStore
        let cache: GoodLoginCache?
        /// `Basic realm="…", charset="UTF-8"`, with `"` and `\` escaped (RFC 9110 quoted-string).
        let challenge: String

        init(_ settings: Settings) throws {
            self.settings = settings
            var store = CredentialStore(path: settings.file, policy: settings.policy, caching: true)  // read-only
            store.loginGuard = settings.loginGuard
            self.store = store
            cache =
                settings.cacheLifetime > .zero
                ? try GoodLoginCache(path: settings.file, lifetime: settings.cacheLifetime) : nil
            let quoted = settings.realm.unicodeScalars.map { $0 == "\"" || $0 == "\\" ? "\\\($0)" : String($0) }
                .joined()
            challenge = "Basic realm=\"\(quoted)\", charset=\"UTF-8\""
        }
    }

    /// A login to check on a hashing thread.
    struct Job: Sendable {
        let login: BasicCredentials.Login
        /// The login's password as a ``Password`` (made once, in ``LoginService/decide(_:)``).
        let password: Password
        let name: String
        let rhost: IPAddress?
        let generation: Generation
        let queued: ContinuousClock.Instant
    }

    /// What to do with a request.
    enum Decision: Sendable {
        case answer(ServeAnswer)
        case check(Job)
    }

    let limits: ServeLimits
    private let current: Mutex<Generation>
    /// Logins queued or being hashed now.
    private let pending = Atomic<Int>(0)

    init(settings: Settings, limits: ServeLimits = ServeLimits()) throws {
        self.limits = limits
        current = Mutex(try Generation(settings))
    }

    /// The settings and store in force.
    var generation: Generation { current.withLock { $0 } }

    /// Replaces the settings (SIGHUP): the old cache is emptied, requests already
    /// queued finish under the settings they started with.
    func reload(_ settings: Settings) throws {
        let fresh = try Generation(settings)
        let old = current.withLock { generation in
            defer { generation = fresh }
            return generation
        }
        old.cache?.removeAll()
    }

    /// Zeroes the cache's key and entries (the end of the process).
    func forget() { generation.cache?.erase() }

    /// Decides `request` at once, or says which login to check.
    func decide(_ request: ServeRequest) -> Decision {
        if let count = request.bodyCount, count > UInt64(limits.body) { return .answer(.tooLarge) }
        guard !request.repeatedAuthorization else { return .answer(.denied) }
        guard case .login(let login) = BasicCredentials.parse(request.authorization),
            let name = String(validating: login.username, as: UTF8.self)
        else { return .answer(.denied) }  // no name that could be in FILE: nothing to hash or count
        let generation = self.generation
        let rhost = ForwardedClient.address(
            peer: request.peer, realIP: request.realIP, forwardedFor: request.forwardedFor,
            trustedProxies: generation.settings.trustedProxies)
        let password = login.password.withUnsafeBytes { Password(utf8: $0) }
        if let cache = generation.cache {
            do {
                // The library's cache admission (SPEC §10): an answer without a hash, or nil.
                if let answer = try generation.store.cachedVerification(
                    usernameBytes: login.username, password: password, client: rhost?.description, cache: cache)
                {
                    return .answer(answer.granted ? .granted(user: name) : .denied)
                }
            } catch {
                return .answer(.unavailable(reason: "the guard database cannot be read: \(error)"))
            }
        }
        if pending.add(1, ordering: .relaxed).newValue > limits.pendingLogins {
            pending.subtract(1, ordering: .relaxed)
            return .answer(.unavailable(reason: "more than \(limits.pendingLogins) logins are waiting"))
        }
        return .check(
            Job(login: login, password: password, name: name, rhost: rhost, generation: generation, queued: .now))
    }

    /// Frees the slot of a job ``decide(_:)`` reserved and nobody started (the client
    /// left before its request was whole).
    func abandon(_ job: Job) { pending.subtract(1, ordering: .relaxed) }

    /// Checks `job` on a hashing thread and calls `completion` there with the answer.
    func start(_ job: Job, completion: @escaping @Sendable (ServeAnswer) -> Void) {
        let limits = self.limits
        CredentialStore.runOnHashingThreads { [self] in
            defer { pending.subtract(1, ordering: .relaxed) }
            guard ContinuousClock.now - job.queued <= limits.queueWait else {
                return completion(.unavailable(reason: "a login waited more than \(limits.queueWait) to start"))
            }
            completion(check(job))
        }
    }

    /// The check itself: the store's guarded login (a throttled or locked-out name is
    /// denied before any hash, every decision is logged with the client's address as
    /// rhost), remembered in the cache when granted.
    private func check(_ job: Job) -> ServeAnswer {
        let store = job.generation.store
        let user = job.login.username
        let client = job.rhost?.description
        let granted: Bool
        do {
            granted =
                if let cache = job.generation.cache {
                    try store.verify(
                        usernameBytes: user, password: job.password, upgradeOnSuccess: false, client: client,
                        cache: cache
                    ).granted
                } else {
                    try store.verify(
                        usernameBytes: user, password: job.password, upgradeOnSuccess: false, client: client
                    )
                    .granted
                }
        } catch {
            return .unavailable(reason: "\(error)")
        }
        return granted ? .granted(user: job.name) : .denied
    }
}
