import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile
@testable import credfile

#if canImport(Glibc)
import Glibc
#endif

/// `credfile serve` under hostile clients (SPEC §10 "Bounded", issue #33 item 3): each
/// test sends the attack itself, bounded in count and time, on loopback (127.0.0.1 is
/// the attacker, 127.0.0.2 another client: Linux routes all of 127/8 to lo), against the
/// service's own HTTP daemon run in this process with small limits, and checks that good
/// logins are granted during the attack. Each also checks that the attack reached the
/// bound it attacks (a full queue, a full set of connections), so it would have starved
/// the good logins without the fix.
@Suite(.serialized) struct ServeHostileClientTests {
    static let alice = IntegrationServeTests.alice

    /// A running daemon on 127.0.0.1:`port` with `limits`, no cache and no guard.
    static func withDaemon(
        limits: ServeLimits, rounds: Int = Integration.rounds, _ body: (UInt16, LoginService) throws -> Void
    ) throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [alice])
            let settings = LoginService.Settings(
                file: file, policy: try HashPolicy(rounds: rounds), cacheLifetime: .zero, loginGuard: nil)
            let service = try LoginService(settings: settings, limits: limits)
            let port = UInt16(try Integration.freePort())
            let listener = try Listener.open(
                .tcp(IPAddress(parsing: Array("127.0.0.1".utf8))!, port: port), file: .init(), allowPublic: false)
            let daemon = try HTTPDaemon(listener: listener, service: service)
            defer {
                // Stopping with a suspended connection is undefined: let the checks in flight end.
                let deadline = ContinuousClock.now + .seconds(60)
                while daemon.activeRequests > 0 && ContinuousClock.now < deadline { usleep(20_000) }
                daemon.stop()
            }
            try body(port, service)
        }
    }

    /// A raw TCP client from a chosen loopback address; reads time out after 15 s.
    final class Client: @unchecked Sendable {  // an immutable descriptor
        let fd: Int32

        init(from source: String, to port: UInt16) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw HarnessError.system("socket") }
            var local = Self.address(source, port: 0)
            var remote = Self.address("127.0.0.1", port: port)
            let size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, size) }
            }
            let connected = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) }
            }
            guard bound == 0, connected == 0 else {
                close(fd)
                throw HarnessError.system(bound == 0 ? "connect" : "bind")
            }
            var timeout = timeval(tv_sec: 15, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        static func address(_ text: String, port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, text, &address.sin_addr)
            return address
        }

        /// Sends all of `text`; false when the connection is gone.
        @discardableResult func send(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                == bytes.count
        }

        /// The status code of the next answer's head, or nil when the server closed the
        /// connection (or nothing came in 15 s).
        func status() -> Int? {
            var head: [UInt8] = []
            var byte: UInt8 = 0
            while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
                guard recv(fd, &byte, 1, 0) == 1 else { return nil }
                head.append(byte)
            }
            let line = String(decoding: head.prefix { $0 != 0x0D }, as: UTF8.self)
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }

        /// Whether the server has closed the connection (without waiting).
        var closedByServer: Bool {
            var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&probe, 1, 0) == 1 else { return false }
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) <= 0
        }

        deinit { close(fd) }
    }

    static func request(_ user: String, _ password: String, extra: String = "") -> String {
        "GET /auth HTTP/1.1\r\nHost: serve\r\nAuthorization: Basic "
            + Data("\(user):\(password)".utf8).base64EncodedString() + "\r\n" + extra + "\r\n"
    }

    /// One good login on a new connection from `source`: its status, or nil.
    static func goodLogin(from source: String, port: UInt16) -> Int? {
        guard let client = try? Client(from: source, to: port), client.send(request(alice.0, alice.1)) else {
            return nil
        }
        return client.status()
    }

    static func randomName() -> String { "flood-\(UInt64.random(in: 0...UInt64.max))" }

    @Test(
        "a flood of bad logins on fresh names from one address fills the queue; uncached good logins from another address are still granted"
    )
    func floodFromOneAddress() throws {
        var limits = ServeLimits()
        limits.pendingLogins = 3
        limits.hashingLogins = 1
        // Each bad login costs a PBKDF2 that takes long enough for eight clients to keep the queue full.
        try Self.withDaemon(limits: limits, rounds: 50_000) { port, _ in
            let flood = Flood()
            let flooders = (0..<8).map { _ in
                Thread { [flood] in
                    var client: Client?
                    while !flood.stop.load(ordering: .relaxed) {
                        if client == nil { client = try? Client(from: "127.0.0.1", to: port) }
                        guard let connection = client, connection.send(Self.request(Self.randomName(), "guess")),
                            let status = connection.status()
                        else {
                            client = nil
                            continue
                        }
                        flood.statuses.withLock { $0[status, default: 0] += 1 }
                    }
                }
            }
            for flooder in flooders { flooder.start() }
            defer { flood.stop.store(true, ordering: .relaxed) }
            // The flood is under way once the queue has refused one of its logins.
            let start = ContinuousClock.now
            while flood.statuses.withLock({ $0[503] ?? 0 }) == 0 && ContinuousClock.now - start < .seconds(20) {
                usleep(20_000)
            }
            var good: [Int?] = []
            for _ in 0..<5 { good.append(Self.goodLogin(from: "127.0.0.2", port: port)) }
            flood.stop.store(true, ordering: .relaxed)
            let seen = flood.statuses.withLock { $0 }
            #expect((seen[503] ?? 0) > 0, "the flood never filled the queue, so it proves nothing: \(seen)")
            #expect(good == [200, 200, 200, 200, 200], "good logins during the flood: \(good); flood: \(seen)")
            #expect(Set(seen.keys).isSubset(of: [401, 503]), "\(seen)")
            usleep(300_000)  // the flooders see the flag and end
        }
    }

    @Test(
        "requests that declare a body and never send it (or trickle it) take no place in the queue, and are closed past the time to send a request"
    )
    func bodiesNeverSent() throws {
        var limits = ServeLimits()
        limits.pendingLogins = 2
        limits.hashingLogins = 1
        limits.requestSeconds = 2
        try Self.withDaemon(limits: limits) { port, _ in
            // Eight logins, more than the queue and the hashing thread hold, each with a
            // body promised and never sent; two of them trickle it a byte at a time.
            var stalled: [Client] = []
            for _ in 0..<8 {
                let client = try Client(from: "127.0.0.1", to: port)
                #expect(client.send(Self.request(Self.randomName(), "guess", extra: "Content-Length: 100\r\n")))
                stalled.append(client)
            }
            usleep(200_000)
            // The same address's good login is answered: the stalled ones hold no place.
            #expect(Self.goodLogin(from: "127.0.0.1", port: port) == 200)
            #expect(Self.goodLogin(from: "127.0.0.2", port: port) == 200)
            // Past requestSeconds the stalled connections are closed, trickling or not.
            let deadline = ContinuousClock.now + .seconds(8)
            while ContinuousClock.now < deadline && !stalled.allSatisfy(\.closedByServer) {
                for client in stalled.prefix(2) { client.send("x") }
                usleep(250_000)
            }
            #expect(stalled.allSatisfy { $0.closedByServer }, "a request whose body never came held its connection")
        }
    }

    @Test(
        "slowloris: more connections than the daemon holds, each trickling its head; another address's good login is granted, and every slow head is closed"
    )
    func slowloris() throws {
        var limits = ServeLimits()
        limits.connections = 12
        limits.connectionsPerAddress = 4
        limits.requestSeconds = 2
        limits.idleSeconds = 4
        try Self.withDaemon(limits: limits) { port, _ in
            // 16 connections from one address (more than the 12 the daemon holds), each
            // sending a request line and then a header byte every quarter second, from a
            // thread of their own while the good logins are asked: never idle, never whole.
            var opened: [Client] = []
            for _ in 0..<16 {
                let client = try Client(from: "127.0.0.1", to: port)
                client.send("GET / HTTP/1.1\r\nHost: serve\r\nX-Slow: ")
                opened.append(client)
            }
            let attackers = opened
            let flood = Flood()
            let trickler = Thread { [flood] in
                while !flood.stop.load(ordering: .relaxed) {
                    for client in attackers { client.send("a") }
                    usleep(250_000)
                }
            }
            trickler.start()
            defer { flood.stop.store(true, ordering: .relaxed) }
            usleep(500_000)
            let refusedAtOnce = attackers.filter(\.closedByServer).count
            // (libmicrohttpd's two threads may each let one more in before the count is up.)
            #expect(refusedAtOnce >= 10, "one address held \(16 - refusedAtOnce) connections")
            #expect(Self.goodLogin(from: "127.0.0.2", port: port) == 200, "slowloris starved another address")
            // The ones let in are closed once their head has taken requestSeconds, though never idle.
            let deadline = ContinuousClock.now + .seconds(8)
            while ContinuousClock.now < deadline && !attackers.allSatisfy(\.closedByServer) { usleep(250_000) }
            #expect(attackers.allSatisfy { $0.closedByServer }, "a head trickled a byte at a time was held open")
            flood.stop.store(true, ordering: .relaxed)
            // The address may connect again once its connections are gone.
            #expect(Self.goodLogin(from: "127.0.0.1", port: port) == 200)
        }
    }

    @Test(
        "the built binary at its default limits: one address holds at most 32 connections, another address's good login is granted",
        .enabled(if: ExternalTool.runnable("curl"), Comment(rawValue: ExternalTool.skipNote("curl"))))
    func connectionsPerAddressOfTheBinary() throws {
        try withSession { session in
            let file = try IntegrationServeTests.users(session)
            let port = try Integration.freePort()
            let service = try IntegrationServeTests.Service(session, file: file, listen: "127.0.0.1:\(port)")
            // 48 connections from one address that never send a byte (a slowloris at rest).
            var held: [Client] = []
            for _ in 0..<48 { held.append(try Client(from: "127.0.0.1", to: UInt16(port))) }
            usleep(500_000)
            let refused = held.filter(\.closedByServer).count
            #expect(refused >= 48 - 32 - 2, "one address held \(48 - refused) connections: \(service.log)")
            #expect(Self.goodLogin(from: "127.0.0.2", port: UInt16(port)) == 200, "\(service.log)")
            #expect(service.log.contains("refused a connection: 127.0.0.1 already holds 32"), "\(service.log)")
        }
    }
}

/// What the flooding threads share.
final class Flood: Sendable {
    let stop = Atomic<Bool>(false)
    let statuses = Mutex<[Int: Int]>([:])
}
