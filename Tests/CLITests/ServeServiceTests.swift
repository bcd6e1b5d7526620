import CredFileTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import CredFile
@testable import credfile

/// `serve`'s login logic without HTTP (SPEC §10): what is answered at once, what goes to
/// the hashing threads, the cache, reload, and the bounds on waiting logins.
@Suite struct ServeServiceTests {
    static func withService(
        cacheSeconds: Int = 300, limits: ServeLimits = ServeLimits(), guardPolicy: GuardPolicy? = nil,
        _ body: (LoginService, CLISession) throws -> Void
    ) throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [IntegrationServeTests.alice])
            let loginGuard = try guardPolicy.map {
                try LoginGuard(credentialFile: file, policy: $0, log: .none, service: "serve")
            }
            let settings = LoginService.Settings(
                file: file, policy: try HashPolicy(rounds: Integration.rounds), cacheLifetime: .seconds(cacheSeconds),
                loginGuard: loginGuard)
            try body(try LoginService(settings: settings, limits: limits), session)
        }
    }

    static func request(_ user: String, _ password: String, from client: String? = nil) -> ServeRequest {
        ServeRequest(
            authorization: Array(("Basic " + Data("\(user):\(password)".utf8).base64EncodedString()).utf8),
            realIP: client.map { Array($0.utf8) }, peer: .unixSocket)
    }

    /// Runs a decision to its answer: at once, or on the hashing threads.
    static func answer(_ service: LoginService, _ request: ServeRequest) -> (ServeAnswer, immediate: Bool) {
        switch service.decide(request) {
        case .answer(let answer): return (answer, true)
        case .check(let job):
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<ServeAnswer?>(nil)
            service.start(job) { answer in
                result.withLock { $0 = answer }
                done.signal()
            }
            done.wait()
            return (result.withLock { $0 }!, false)
        }
    }

    @Test("a good login is hashed once, then answered at once from the cache; denials are never cached")
    func cache() throws {
        try Self.withService { service, _ in
            let (alice, password) = IntegrationServeTests.alice
            #expect(Self.answer(service, Self.request(alice, password)) == (.granted(user: alice), false))
            #expect(Self.answer(service, Self.request(alice, password)) == (.granted(user: alice), true))
            #expect(Self.answer(service, Self.request(alice, "wrong")) == (.denied, false))
            #expect(Self.answer(service, Self.request(alice, "wrong")) == (.denied, false), "a denial was cached")
            #expect(Self.answer(service, ServeRequest(peer: .unixSocket)) == (.denied, true), "no header needs no hash")
        }
    }

    @Test("--cache-seconds 0 turns the cache off; a reload empties it")
    func cacheOffAndReload() throws {
        try Self.withService(cacheSeconds: 0) { service, _ in
            let (alice, password) = IntegrationServeTests.alice
            #expect(Self.answer(service, Self.request(alice, password)) == (.granted(user: alice), false))
            #expect(Self.answer(service, Self.request(alice, password)) == (.granted(user: alice), false))
        }
        try Self.withService { service, _ in
            let (alice, password) = IntegrationServeTests.alice
            _ = Self.answer(service, Self.request(alice, password))
            #expect(Self.answer(service, Self.request(alice, password)).immediate)
            try service.reload(service.generation.settings)
            #expect(!Self.answer(service, Self.request(alice, password)).immediate, "the reload kept the cache")
        }
    }

    @Test(
        "past the bound of waiting logins the answer is 503 at once; a login that waited too long is 503 without hashing"
    )
    func bounds() throws {
        var limits = ServeLimits()
        limits.pendingLogins = 2
        limits.hashingLogins = 0  // nothing leaves the queue: its admissions alone are seen
        try Self.withService(limits: limits) { service, _ in
            let (alice, password) = IntegrationServeTests.alice
            let answers = Mutex<[String: ServeAnswer]>([:])
            func start(_ label: String, from client: String) {
                var request = Self.request(alice, password)
                request.peer = .address(IPAddress(parsing: Array(client.utf8))!)
                guard case .check(let job) = service.decide(request) else {
                    Issue.record("\(label) was not checked"); return
                }
                service.start(job) { answer in answers.withLock { $0[label] = answer } }
            }
            // Deciding takes no place (a request whose body never comes holds none).
            for _ in 0..<5 { _ = service.decide(Self.request(alice, password)) }
            start("a1", from: "198.51.100.1")
            start("a2", from: "198.51.100.1")
            #expect(answers.withLock { $0.isEmpty }, "a login was answered while the queue had room")
            start("a3", from: "198.51.100.1")
            guard case .unavailable = answers.withLock({ $0["a3"] }) else {
                Issue.record("a login was queued past the bound"); return
            }
            // Another client takes the newest place of the longest queue.
            start("b1", from: "203.0.113.9")
            guard case .unavailable = answers.withLock({ $0["a2"] }) else {
                Issue.record("another client found no place in a full queue"); return
            }
            #expect(answers.withLock { $0["b1"] == nil && $0["a1"] == nil })
        }
        limits = ServeLimits()
        try Self.withService(limits: limits) { service, _ in
            let (alice, password) = IntegrationServeTests.alice
            #expect(Self.answer(service, Self.request(alice, password)).0 == .granted(user: alice))
        }
        limits = ServeLimits()
        limits.queueWait = .zero
        try Self.withService(limits: limits) { service, _ in
            let (alice, password) = IntegrationServeTests.alice
            guard case .unavailable = Self.answer(service, Self.request(alice, password)).0 else {
                Issue.record("a login past its wait was checked"); return
            }
        }
    }

    @Test(
        "§9's guard: a throttled name is denied before any hash, even with its password; a lockout denies a cached login"
    )
    func guarded() throws {
        try Self.withService(guardPolicy: try GuardPolicy(freeFailures: 1, maximumFailures: 3, maximumDelay: 60)) {
            service, _ in
            let (alice, password) = IntegrationServeTests.alice
            let owner = "192.0.2.10"
            // now cached, owned by the address that logged in
            #expect(Self.answer(service, Self.request(alice, password, from: owner)) == (.granted(user: alice), false))
            #expect(Self.answer(service, Self.request(alice, "wrong-1")) == (.denied, false))  // 1: free
            // 2: delays the next by 1 s
            #expect(Self.answer(service, Self.request(alice, "wrong-2")) == (.denied, false))
            #expect(
                Self.answer(service, Self.request(alice, password, from: owner)) == (.granted(user: alice), true),
                "a cached login of its owner was delayed")
            // Anyone else, and a client of unknown address, is denied at once: no oracle.
            for stranger in ["198.51.100.7", nil] {
                #expect(
                    Self.answer(service, Self.request(alice, password, from: stranger)) == (.denied, true),
                    "the cache answered \(stranger ?? "an unknown client") for a throttled name")
            }
            #expect(Self.answer(service, Self.request("mallory", password)).0 == .denied)
            // The right password, not cached (the cache is emptied by a reload), during the delay: throttled.
            try service.reload(service.generation.settings)
            #expect(
                Self.answer(service, Self.request(alice, password, from: owner)) == (.denied, true),
                "a throttled name was checked")
        }
        try Self.withService(guardPolicy: try GuardPolicy(freeFailures: 5, maximumFailures: 1, maximumDelay: 0)) {
            service, _ in
            let (alice, password) = IntegrationServeTests.alice
            #expect(Self.answer(service, Self.request(alice, password)) == (.granted(user: alice), false))
            #expect(Self.answer(service, Self.request(alice, "wrong")) == (.denied, false))  // locked out at 1
            #expect(
                Self.answer(service, Self.request(alice, password)) == (.denied, true),
                "a lockout let a cached login in")
        }
    }

    @Test("a body over the limit is 413, and two Authorization headers are a denial")
    func oddRequests() throws {
        try Self.withService { service, _ in
            var request = Self.request(IntegrationServeTests.alice.0, IntegrationServeTests.alice.1)
            request.bodyCount = UInt64(service.limits.body) + 1
            #expect(Self.answer(service, request) == (.tooLarge, true))
            request.bodyCount = 0
            request.repeatedAuthorization = true
            #expect(Self.answer(service, request) == (.denied, true))
        }
    }
}
