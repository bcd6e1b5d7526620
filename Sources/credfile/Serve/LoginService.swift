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
    /// Open connections per client address (an IPv6 /64 counts as one, see ``ClientKey``)
    /// per listener; more are refused at accept, so that one client cannot hold all of
    /// ``connections`` (slowloris). Peers named by `--trusted-proxy` and unix sockets are
    /// bounded only by ``connections``: a proxy carries everybody's requests.
    var connectionsPerAddress = 32
    /// Memory per connection for the request head, and so the largest header block that
    /// is read (libmicrohttpd answers 431 past it). 32 KiB: nginx's own default header
    /// space, since `auth_request` passes the client's headers on unless told not to.
    var connectionMemory = 32 * 1024
    /// The largest request body accepted (forward-auth requests have none); 413 past it.
    var body = 64 * 1024
    /// Seconds a connection may be idle (a slow or stalled client) before it is closed;
    /// also the most a connection may take, from its start or its previous answer, to send
    /// a request line, however slowly it trickles.
    var idleSeconds = 30
    /// Seconds from a request's first line until the request is whole (head and body): a
    /// client that sends a byte now and then never makes libmicrohttpd's idle timer fire,
    /// so this bounds the total, and a connection past it is closed.
    var requestSeconds = 10
    /// Logins waiting for a hashing thread, over all listeners, in a queue fair between
    /// client addresses (``FairQueue``): when it is full, a login from a client with fewer
    /// waiting than the longest queue takes the place of that queue's newest (answered
    /// 503), and one more from the longest is answered 503 at once. 16 per hashing thread
    /// (one per core): with the default policy about 16 × 0.2 s (one PBKDF2, 168–225 ms measured,
    /// `Benchmarks/README.md`) of waiting at most.
    var pendingLogins = 16 * ParallelHasher.defaultJobs
    /// Logins hashed at once (the queue feeds the library's hashing threads no more than
    /// this, so that the queue, not the pool's, decides whose turn it is): one per core.
    var hashingLogins = ParallelHasher.defaultJobs
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
    /// An answer of the sign-in page's paths (SPEC §11): a page, a redirect, a check's
    /// answer with its headers upstream.
    case response(HTTPResponse)
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
    /// The method (`GET`, `POST`), and the path without its query.
    var method = "GET"
    var path = "/"
    /// The query's arguments as libmicrohttpd decoded them (a name without `=` maps to "").
    var query: [String: String] = [:]
    /// The other headers the sign-in page reads (``PortalRoutes/headerNames``), by
    /// lowercase name; several `Cookie` headers joined by `; `.
    var headers: [String: [UInt8]] = [:]
    /// Whether ``headers`` is filled (with `--portal`).
    var collectsHeaders = false

    /// The header `name` (lowercase), if the request has it.
    func header(_ name: String) -> [UInt8]? { headers[name] }

    /// Whether the peer may name the client and the original URL (a unix socket, or a
    /// `--trusted-proxy` address; SPEC §10).
    func peerIsTrusted(_ proxies: [AddressRange]) -> Bool {
        switch peer {
        case .unixSocket: true
        case .address(let address): proxies.contains { $0.contains(address) }
        }
    }
}

/// The login logic of `credfile serve`, apart from HTTP: decides each request at once
/// when it can (no or malformed credentials, a cached good login, overload) and
/// otherwise, once the request is whole, queues the check fairly between client
/// addresses (``FairQueue``, at most ``ServeLimits/pendingLogins`` waiting) for the
/// library's hashing threads. Its settings are replaced as a whole on SIGHUP.
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
        /// The sign-in page (SPEC §11), nil without `--portal`.
        var portal: PortalSettings?
        /// §14's one-time codes of FILE's users (`otp-file`, `otp-append`).
        var secondFactor: SecondFactor?
        /// §13's `rules` and `groups`, read again when they change (``ServeAccess``).
        var rules: WatchedFile<AccessRules>?
        var groups: WatchedFile<GroupFile>?
    }

    /// One generation of settings with the store and cache made from them.
    final class Generation: Sendable {
        let settings: Settings
        let store: CredentialStore
        let cache: GoodLoginCache?
        /// `Basic realm="…", charset="UTF-8"`, with `"` and `\` escaped (RFC 9110 quoted-string).
        let challenge: String
        /// The sign-in page's sessions and keys, with `--portal`.
        let portal: Portal?

        init(_ settings: Settings) throws {
            self.settings = settings
            var store = CredentialStore(path: settings.file, policy: settings.policy, caching: true)  // read-only
            store.loginGuard = settings.loginGuard
            store.secondFactor = settings.secondFactor
            self.store = store
            cache =
                settings.cacheLifetime > .zero
                ? try GoodLoginCache(path: settings.file, lifetime: settings.cacheLifetime) : nil
            let quoted = settings.realm.unicodeScalars.map { $0 == "\"" || $0 == "\\" ? "\\\($0)" : String($0) }
                .joined()
            challenge = "Basic realm=\"\(quoted)\", charset=\"UTF-8\""
            portal = try settings.portal.map { try Portal($0) }
        }
    }

    /// A login to check on a hashing thread.
    struct Job: Sendable {
        /// The name as sent.
        let username: [UInt8]
        /// The login's password as a ``Password`` (made once, in ``LoginService/decide(_:)``).
        let password: Password
        /// The login the cache did not answer (nil without a cache).
        let uncached: CredentialStore.UncachedLogin?
        let name: String
        let rhost: IPAddress?
        let generation: Generation
        /// When it was decided, then when it was queued (``ServeLimits/queueWait`` counts from there).
        var queued: ContinuousClock.Instant
        /// What turns the login's answer into the request's (the sign-in form's session and
        /// page, SPEC §11); nil: the answer as it is.
        var finish: (@Sendable (ServeAnswer) -> ServeAnswer)? = nil
        /// The sign-in form's second step (SPEC §14): the answer to a right password of a
        /// user with a second factor, given the name (the code page); nil: such a login is
        /// denied (`second-factor-required`) unless `otp-append` carries the code.
        var codeStep: (@Sendable (String) -> ServeAnswer)? = nil
        /// Work that takes a hash and is not a login (SPEC §12's registration and password
        /// change), run on a hashing thread in the login's place, in the same fair queue.
        var work: (@Sendable () -> ServeAnswer)? = nil
        /// The known device the sign-in comes from (SPEC §11), counted on its own.
        var device: KnownDevice? = nil
        /// How the login came, for §16's metrics.
        var method = ServeMetrics.Method.basic
    }

    /// What to do with a request.
    enum Decision: Sendable {
        case answer(ServeAnswer)
        case check(Job)
    }

    /// A login waiting for its turn, and whom to tell the answer.
    private struct Waiting: Sendable {
        let job: Job
        let completion: @Sendable (ServeAnswer) -> Void

        /// Counts a login answered 503 whose password was already compared with the cache
        /// of good logins: counted, or a full queue would make the cache an oracle (a hit
        /// 200, a miss 503; SPEC §10).
        func countUncached() {
            if let uncached = job.uncached { _ = try? job.generation.store.countUnchecked(uncached) }
        }
    }

    /// The logins waiting, fair between clients, and how many are being hashed.
    private struct Queue: Sendable {
        var waiting: FairQueue<ClientKey, Waiting>
        var hashing = 0
    }

    let limits: ServeLimits
    private let current: Mutex<Generation>
    private let queue: Mutex<Queue>

    init(settings: Settings, limits: ServeLimits = ServeLimits()) throws {
        self.limits = limits
        current = Mutex(try Generation(settings))
        queue = Mutex(Queue(waiting: FairQueue(capacity: max(limits.pendingLogins, 1))))
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
        guard case .login(let login) = BasicCredentials.parse(request.authorization) else { return .answer(.denied) }
        return decideLogin(
            usernameBytes: login.username, password: login.password.withUnsafeBytes { Password(utf8: $0) },
            request: request)
    }

    /// The client's address for §9's log (trusted peers may name it).
    func clientAddress(_ request: ServeRequest, _ generation: Generation) -> IPAddress? {
        ForwardedClient.address(
            peer: request.peer, realIP: request.realIP, forwardedFor: request.forwardedFor,
            trustedProxies: generation.settings.trustedProxies)
    }

    /// Logins waiting for a hashing thread or being hashed (§16's `credfile_hash_queue`).
    var hashQueue: Int { queue.withLock { $0.waiting.count + $0.hashing } }

    /// Decides one login, Basic's or the sign-in form's (the one login path): answered at
    /// once by the cache of good logins when it can, else a job for a hashing thread.
    /// `codeStep`: see ``Job/codeStep``; `device`: the known device of a sign-in (SPEC §11),
    /// counted by the guard on its own.
    func decideLogin(
        usernameBytes: [UInt8], password: Password, request: ServeRequest, device: KnownDevice? = nil,
        codeStep: (@Sendable (String) -> ServeAnswer)? = nil
    ) -> Decision {
        let started = ContinuousClock.now
        let method: ServeMetrics.Method = request.authorization == nil ? .form : .basic
        // No name that could be in FILE: nothing to hash or count.
        guard let name = String(validating: usernameBytes, as: UTF8.self) else { return .answer(.denied) }
        let generation = self.generation
        let rhost = clientAddress(request, generation)
        var uncached: CredentialStore.UncachedLogin? = nil
        // A login with a step for the code is checked by the store itself, whose answer
        // says when the code comes next (the cache knows only granted and denied).
        let separateStep = codeStep != nil && generation.store.secondFactor != nil
        if let cache = generation.cache, !separateStep {
            do {
                // The library's cache admission (SPEC §10): an answer without a hash (a cached
                // login, or a throttled or locked-out name's denial), or the login to check.
                switch try generation.store.cachedAnswer(
                    usernameBytes: usernameBytes, password: password, client: rhost?.description, cache: cache,
                    device: device)
                {
                case .answered(let answer):
                    if answer.granted { ServeMetrics.shared.cacheHit() }
                    ServeMetrics.shared.login(
                        method, ServeMetrics.result(of: answer), seconds: (ContinuousClock.now - started).inSeconds)
                    return .answer(answer.granted ? .granted(user: name) : .denied)
                case .uncached(let login): uncached = login
                }
            } catch {
                ServeMetrics.shared.login(method, .unavailable, seconds: (ContinuousClock.now - started).inSeconds)
                return .answer(.unavailable(reason: "the guard database cannot be used: \(error)"))
            }
        }
        // No place in the queue is taken yet: only ``start(_:completion:)``, once the
        // request is whole, queues it (a client that never sends its body holds none).
        return .check(
            Job(
                username: usernameBytes, password: password, uncached: uncached, name: name, rhost: rhost,
                generation: generation, queued: started, codeStep: separateStep ? codeStep : nil, device: device,
                method: method))
    }

    /// Queues `job` fairly between client addresses and checks it on a hashing thread when
    /// its turn comes, calling `completion` with the answer: on a hashing thread, or at
    /// once with 503 when the queue is full and this client already has the most waiting.
    /// A login that loses its place to another client's is answered 503 then.
    func start(_ job: Job, completion given: @escaping @Sendable (ServeAnswer) -> Void) {
        let completion: @Sendable (ServeAnswer) -> Void =
            if let finish = job.finish { { given(finish($0)) } } else { given }
        let client = ClientKey(job.rhost)
        var job = job
        job.queued = .now
        let (admission, first) = queue.withLock { queue in
            let admission = queue.waiting.enqueue(
                Waiting(job: job, completion: completion), from: client)
            guard queue.hashing < limits.hashingLogins, let first = queue.waiting.dequeue() else {
                return (admission, nil as Waiting?)
            }
            queue.hashing += 1
            return (admission, first)
        }
        switch admission {
        case .queued: break
        case .queuedEvicting(let evicted):
            evicted.countUncached()
            ServeMetrics.shared.login(
                evicted.job.method, .unavailable, seconds: (ContinuousClock.now - evicted.job.queued).inSeconds)
            evicted.completion(.unavailable(reason: "a login gave its place to another client's (\(client) had fewer)"))
        case .refused:
            Waiting(job: job, completion: completion).countUncached()
            ServeMetrics.shared.login(job.method, .unavailable, seconds: 0)
            completion(.unavailable(reason: "the queue of logins is full and \(client) has the most waiting"))
        }
        if let first { hash(first) }
    }

    /// Checks `waiting` on a hashing thread, then the next login whose turn it is, until
    /// none waits.
    private func hash(_ waiting: Waiting) {
        CredentialStore.runOnHashingThreads { [self] in
            var next: Waiting? = waiting
            while let current = next {
                if ContinuousClock.now - current.job.queued > limits.queueWait {
                    current.countUncached()
                    ServeMetrics.shared.login(
                        current.job.method, .unavailable, seconds: (ContinuousClock.now - current.job.queued).inSeconds)
                    current.completion(
                        .unavailable(reason: "a login waited more than \(limits.queueWait) to start"))
                } else {
                    current.completion(check(current.job))
                }
                next = queue.withLock { queue in
                    if let following = queue.waiting.dequeue() { return following }
                    queue.hashing -= 1
                    return nil
                }
            }
        }
    }

    /// The check itself: the store's guarded login (a throttled or locked-out name is
    /// denied before any hash, every decision is logged with the client's address as
    /// rhost), remembered in the cache when granted.
    private func check(_ job: Job) -> ServeAnswer {
        if let work = job.work { return work() }
        var store = job.generation.store
        if job.codeStep != nil { store.secondFactor?.separateStep = true }
        let result: CredentialStore.Verification
        do {
            result =
                if let uncached = job.uncached {
                    try store.verify(uncached, upgradeOnSuccess: false)
                } else {
                    try store.verify(
                        usernameBytes: job.username, password: job.password, upgradeOnSuccess: false,
                        client: job.rhost?.description, device: job.device)
                }
        } catch {
            ServeMetrics.shared.login(job.method, .unavailable, seconds: (ContinuousClock.now - job.queued).inSeconds)
            return .unavailable(reason: "\(error)")
        }
        ServeMetrics.shared.login(
            job.method, ServeMetrics.result(of: result), seconds: (ContinuousClock.now - job.queued).inSeconds)
        if result.awaitsCode, let codeStep = job.codeStep { return codeStep(job.name) }
        return result.granted ? .granted(user: job.name) : .denied
    }
}
