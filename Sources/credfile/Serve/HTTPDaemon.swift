// The only file that imports libmicrohttpd: `credfile serve`'s HTTP/1.1 (SPEC §10).
// libmicrohttpd parses the requests and writes the answers on its own pool of threads;
// a login that needs a PBKDF2 suspends its connection (MHD_suspend_connection), is
// checked on the library's hashing threads, and resumes it (MHD_resume_connection),
// so no thread of libmicrohttpd ever hashes. Slow clients are bounded here: connections
// per client address at accept, and the time to send a request by a watchdog thread
// that shuts down the sockets of requests past their deadline.
import CMicroHTTPD
import CServe
import CredFile
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One libmicrohttpd daemon answering on one listening socket.
final class HTTPDaemon {
    private let daemon: OpaquePointer
    private let context: Context
    private let contextPointer: UnsafeMutableRawPointer
    private var watchdog: pthread_t?

    /// What the callbacks share, passed to libmicrohttpd as their `cls`.
    final class Context: @unchecked Sendable {  // its mutable state is behind mutexes and atomics
        let service: LoginService
        let isUnixSocket: Bool
        /// Whether this listener answers only `GET /metrics` (SPEC §16).
        let isMetrics: Bool
        /// Requests between their first call and their completion (SIGTERM waits for them).
        let active = Atomic<Int>(0)
        /// The open connections and how many each client holds.
        let connections = Mutex(Connections())
        /// Set when the daemon stops: the watchdog thread ends.
        let stopping = Atomic<Bool>(false)

        init(service: LoginService, isUnixSocket: Bool, isMetrics: Bool) {
            self.service = service
            self.isUnixSocket = isUnixSocket
            self.isMetrics = isMetrics
        }

        /// Shuts down the socket of every connection past its deadline (a request sent too
        /// slowly, or a request line that never came); libmicrohttpd then sees the end of
        /// the stream and closes it. Under the lock that the close notification takes, so
        /// the descriptor is still the connection's (libmicrohttpd closes it after).
        func closeLateConnections(now: ContinuousClock.Instant = .now) {
            let closed = connections.withLock { connections in
                var closed = 0
                for (key, open) in connections.open {
                    guard let deadline = open.deadline, deadline < now, open.fd >= 0 else { continue }
                    shutdown(open.fd, Int32(SHUT_RDWR))
                    connections.open[key]?.deadline = nil
                    closed += 1
                }
                return closed
            }
            if closed > 0 {
                ServeLog.limited("closed \(closed) connection(s) that did not send a whole request in time")
            }
        }

        /// Sets the deadline of an open connection (nil: none watched), if it is open.
        func setDeadline(_ connection: OpaquePointer, _ deadline: ContinuousClock.Instant?) {
            let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
            connections.withLock { connections in
                if connections.open[key] != nil { connections.open[key]?.deadline = deadline }
            }
        }
    }

    /// One open connection as the watchdog and the handler see it.
    struct OpenConnection {
        /// Its socket (shut down, never closed, by the watchdog).
        let fd: Int32
        /// The TCP peer's address; nil for a unix socket.
        let peer: IPAddress?
        /// When it is closed unless its request is whole by then; nil while a request is
        /// being answered.
        var deadline: ContinuousClock.Instant?
    }

    /// The open connections, by libmicrohttpd's connection pointer, and the count per client.
    struct Connections {
        var open: [UInt: OpenConnection] = [:]
        var perClient: [ClientKey: Int] = [:]
    }

    /// One request's state between libmicrohttpd's calls: the answer, once known.
    private final class RequestState: Sendable {
        let answer = Mutex<ServeAnswer?>(nil)
        /// A check decided on the first call and started on the next, once the request is
        /// whole; still here when the request ends, it was never started.
        let job = Mutex<LoginService.Job?>(nil)
        /// A request under the sign-in page's prefix, decided once it is whole (with its
        /// body, at most ``ServeLimits/body`` bytes).
        let portal = Mutex<(request: ServeRequest, body: [UInt8], overflow: Bool)?>(nil)
    }

    /// Starts answering on `listener` (a listening socket this daemon now owns).
    /// - Throws: ``CredFileError/Code/io`` when libmicrohttpd cannot start.
    init(listener: Listener, service: LoginService, metrics: Bool = false) throws {
        let limits = service.limits
        let context = Context(service: service, isUnixSocket: listener.isUnixSocket, isMetrics: metrics)
        let contextPointer = Unmanaged.passRetained(context).toOpaque()
        let completed:
            @convention(c) (
                UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                MHD_RequestTerminationCode
            ) -> Void = { cls, connection, requestContext, _ in
                guard let cls, let requestContext, let state = requestContext.pointee else { return }
                let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
                // A kept-alive connection has the idle time again to start its next request.
                if let connection {
                    context.setDeadline(connection, .now + .seconds(context.service.limits.idleSeconds))
                }
                let request = Unmanaged<RequestState>.fromOpaque(state)
                // A check never started (the client went away before its request was whole)
                // held no place in the queue: it is dropped.
                _ = request.takeUnretainedValue().job.withLock { $0.take() }
                request.release()
                requestContext.pointee = nil
                context.active.subtract(1, ordering: .releasing)
            }
        // One client address (not a trusted proxy) holds at most connectionsPerAddress
        // connections of this listener: more are refused at accept (slowloris).
        let acceptPolicy: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<sockaddr>?, socklen_t) -> MHD_Result =
            {
                cls, address, length in
                guard let cls else { return .NO }
                let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
                guard let peer = address.flatMap({ Listener.ipAddress(of: $0, length: length) }) else { return .NO }
                let limit = context.service.limits.connectionsPerAddress
                if context.service.generation.settings.trustedProxies.contains(where: { $0.contains(peer) }) {
                    return .YES
                }
                let held = context.connections.withLock { $0.perClient[ClientKey(peer)] ?? 0 }
                guard held < limit else {
                    ServeLog.limited("refused a connection: \(ClientKey(peer)) already holds \(limit)")
                    return .NO
                }
                return .YES
            }
        let notifyConnection:
            @convention(c) (
                UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                MHD_ConnectionNotificationCode
            ) -> Void = { cls, connection, _, code in
                guard let cls, let connection else { return }
                let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
                let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
                if code == .CONNECTION_NOTIFY_STARTED {
                    var bytes = [UInt8](repeating: 0, count: 16)
                    let count = Int(credfile_serve_client_address(connection, &bytes))
                    let peer = context.isUnixSocket ? nil : IPAddress(bytes: Array(bytes.prefix(count)))
                    let open = OpenConnection(
                        fd: credfile_serve_connection_fd(connection), peer: peer,
                        deadline: .now + .seconds(context.service.limits.idleSeconds))
                    context.connections.withLock { connections in
                        connections.open[key] = open
                        if let peer { connections.perClient[ClientKey(peer), default: 0] += 1 }
                    }
                } else {
                    context.connections.withLock { connections in
                        guard let open = connections.open.removeValue(forKey: key), let peer = open.peer else { return }
                        let client = ClientKey(peer)
                        let left = (connections.perClient[client] ?? 1) - 1
                        connections.perClient[client] = left > 0 ? left : nil
                    }
                }
            }
        // The request line has come: the whole request must follow within requestSeconds,
        // however slowly it trickles (libmicrohttpd's own timeout only sees idleness).
        let requestStarted:
            @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? =
                { cls, _, connection in
                    guard let cls, let connection else { return nil }
                    let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
                    context.setDeadline(connection, .now + .seconds(context.service.limits.requestSeconds))
                    return nil  // the request's context starts empty: the handler's first call sees nil
                }
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(listener.fd), ptr_value: nil),
            MHD_OptionItem(option: .THREAD_POOL_SIZE, value: limits.connectionThreads, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: limits.connections, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: limits.connectionMemory, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: limits.idleSeconds, ptr_value: nil),
            MHD_OptionItem(
                option: .NOTIFY_COMPLETED, value: unsafeBitCast(completed, to: Int.self), ptr_value: contextPointer),
            MHD_OptionItem(
                option: .NOTIFY_CONNECTION, value: unsafeBitCast(notifyConnection, to: Int.self),
                ptr_value: contextPointer),
            MHD_OptionItem(
                option: .URI_LOG_CALLBACK, value: unsafeBitCast(requestStarted, to: Int.self), ptr_value: contextPointer
            ),
        ]
        options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
        // MHD_USE_ERROR_LOG: libmicrohttpd's own messages go to standard error, as ours do
        // (its logger callback takes a va_list, which Swift cannot receive).
        let flags =
            MHD_USE_AUTO_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        let started = options.withUnsafeMutableBufferPointer { items in
            withVaList([
                Int32(bitPattern: MHD_OPTION.ARRAY.rawValue), items.baseAddress!,
                Int32(bitPattern: MHD_OPTION.END.rawValue),
            ]) {
                MHD_start_daemon_va(
                    flags, 0, listener.isUnixSocket ? nil : acceptPolicy, contextPointer, Self.handle, contextPointer,
                    $0)
            }
        }
        guard let started else {
            Unmanaged<Context>.fromOpaque(contextPointer).release()
            throw CredFileError(.io, "libmicrohttpd could not start on \(listener.name)")
        }
        daemon = started
        self.context = context
        self.contextPointer = contextPointer
        watchdog = Self.startWatchdog(context)
    }

    /// A thread that closes the connections past their deadline, four times a second.
    private static func startWatchdog(_ context: Context) -> pthread_t? {
        let retained = Unmanaged.passRetained(context).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
                while !context.stopping.load(ordering: .acquiring) {
                    usleep(250_000)
                    context.closeLateConnections()
                }
                return nil
            }, retained)
        guard started == 0 else {
            Unmanaged<Context>.fromOpaque(retained).release()
            ServeLog.notice("could not start the thread that closes slow connections (errno \(started))")
            return nil
        }
        return thread
    }

    /// Stops accepting connections (SIGTERM's first step); those open are still answered.
    func quiesce() {
        let fd = MHD_quiesce_daemon(daemon)
        if fd >= 0 { close(fd) }
    }

    /// Requests between their first call and their answer.
    var activeRequests: Int { context.active.load(ordering: .acquiring) }

    /// Closes every connection and stops the threads. Call it only when no request is
    /// suspended (``activeRequests`` is 0, or the drain timed out and the process exits).
    func stop() {
        context.stopping.store(true, ordering: .releasing)
        if let watchdog { pthread_join(watchdog, nil) }
        MHD_stop_daemon(daemon)
        Unmanaged<Context>.fromOpaque(contextPointer).release()
    }

    // MARK: The request handler

    /// libmicrohttpd's access handler: called when a request's head is read, again for
    /// each piece of its body, once more when the request is whole, and again after a
    /// resume. The first call decides; the call once the request is whole queues the
    /// answer or suspends the connection and starts the check; the call after the resume
    /// queues the check's answer. (An answer queued before the request is whole makes
    /// libmicrohttpd close the connection.)
    private static let handle: MHD_AccessHandlerCallback = {
        cls, connection, url, method, _, uploadData, uploadCount, requestContext in
        guard let cls, let connection, let requestContext, let uploadCount else { return .NO }
        let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
        if let existing = requestContext.pointee {
            let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
            if uploadCount.pointee > 0 {
                // A body is read: kept for the sign-in page's forms (bounded), else dropped
                // (its declared size was checked).
                let limit = context.service.limits.body
                if let uploadData {
                    let piece = UnsafeRawBufferPointer(start: uploadData, count: uploadCount.pointee)
                    state.portal.withLock { pending in
                        guard pending != nil else { return }
                        if pending!.body.count + piece.count <= limit {
                            pending!.body += piece
                        } else {
                            pending!.overflow = true  // never read: Content-Length was checked
                        }
                    }
                }
                uploadCount.pointee = 0
                return .YES
            }
            // The request is whole: no deadline while it is answered.
            context.setDeadline(connection, nil)
            if let (request, whole, overflow) = state.portal.withLock({ $0.take() }) {
                let body = overflow ? [] : whole  // no form: a POST is then refused
                let generation = context.service.generation
                let decision: LoginService.Decision =
                    if let portal = generation.portal {
                        PortalRoutes.decide(
                            request, body: body, service: context.service, generation: generation, portal: portal)
                    } else {
                        context.service.decide(request)  // the portal was turned off by a reload
                    }
                switch decision {
                case .answer(let answer): state.answer.withLock { $0 = answer }
                case .check(let job): state.job.withLock { $0 = job }
                }
            }
            if let job = state.job.withLock({ $0.take() }) {
                // Suspended before the job is queued, so its resume always comes after.
                MHD_suspend_connection(connection)
                let handle = UnsafeSendable(connection)
                context.service.start(job) { answer in
                    state.answer.withLock { $0 = answer }
                    logUnavailable(answer)
                    MHD_resume_connection(handle.value)
                }
                return .YES
            }
            guard let answer = state.answer.withLock({ $0 }) else { return .YES }
            return respond(connection, answer, realm: context.service.generation.challenge)
        }
        let state = RequestState()
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        context.active.add(1, ordering: .relaxed)
        var request = readRequest(connection, context)
        request.method = method.map { String(cString: $0) } ?? "GET"
        request.path = url.map { String(cString: $0) } ?? "/"
        if context.isMetrics {
            let answer = ServeAnswer.response(ServeMetrics.answer(request, service: context.service))
            state.answer.withLock { $0 = answer }
            return .YES  // answered once the request is whole
        }
        if let portal = context.service.generation.portal, PortalRoutes.isPortalPath(request.path, portal) {
            if let count = request.bodyCount, count > UInt64(context.service.limits.body) {
                state.answer.withLock { $0 = .tooLarge }
                return respond(connection, .tooLarge, realm: context.service.generation.challenge)
            }
            request.query = readQuery(connection)
            state.portal.withLock { $0 = (request, [], false) }
            return .YES  // decided once the request (and its body) is whole
        }
        let generation = context.service.generation
        let decision =
            ServeAccess.isActive(generation)
            ? ServeAccess.basic(request, context.service, generation) : context.service.decide(request)
        switch decision {
        case .answer(let answer):
            state.answer.withLock { $0 = answer }
            logUnavailable(answer)
            // A body too large is never read: answered now, and the connection closed.
            guard case .tooLarge = answer else {
                // Answered by the next call, once the request is whole: an answer queued
                // before that makes libmicrohttpd close the connection (it cannot read the
                // next request past an unread body), so nginx's and Caddy's kept-alive
                // connections to serve would each carry one login.
                return .YES
            }
            return respond(connection, answer, realm: context.service.generation.challenge)
        case .check(let job):
            // Started by the next call, once the request is whole (as an answer is queued
            // then, below): the connection stays open for the proxy's next request.
            state.job.withLock { $0 = job }
            return .YES
        }
    }

    private static func logUnavailable(_ answer: ServeAnswer) {
        if case .unavailable(let reason) = answer { ServeLog.limited("answered 503: \(reason)") }
    }

    /// The headers `serve` reads, in one pass over them.
    private static func readRequest(_ connection: OpaquePointer, _ context: Context) -> ServeRequest {
        let peer: ForwardedClient.Peer
        if context.isUnixSocket {
            peer = .unixSocket
        } else {
            let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
            // An address libmicrohttpd did not show us is nobody's: never trusted.
            peer = .address(context.connections.withLock { $0.open[key]?.peer } ?? IPAddress(bytes: [0, 0, 0, 0])!)
        }
        var request = ServeRequest(peer: peer)
        // Only a portal reads the other headers (a Basic check pays for none of them).
        let generation = context.service.generation
        request.collectsHeaders = generation.portal != nil || ServeAccess.isActive(generation)
        withUnsafeMutablePointer(to: &request) { pointer in
            _ = MHD_get_connection_values_n(
                connection, .HEADER_KIND,
                { cls, _, key, keyCount, value, valueCount in
                    guard let cls, let key else { return .YES }
                    let request = cls.assumingMemoryBound(to: ServeRequest.self)
                    let name = UnsafeRawBufferPointer(start: key, count: keyCount)
                    let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: valueCount)) } ?? []
                    if headerName(name, is: "authorization") {
                        if request.pointee.authorization != nil { request.pointee.repeatedAuthorization = true }
                        request.pointee.authorization = bytes
                    } else if headerName(name, is: "x-real-ip") {
                        request.pointee.realIP = bytes
                    } else if headerName(name, is: "x-forwarded-for") {
                        request.pointee.forwardedFor =
                            request.pointee.forwardedFor.map { $0 + Array(",".utf8) + bytes } ?? bytes
                    } else if headerName(name, is: "content-length") {
                        let digits = String(decoding: bytes, as: UTF8.self)
                        request.pointee.bodyCount = UInt64(digits) ?? UInt64.max
                    } else if headerName(name, is: "transfer-encoding") {
                        request.pointee.bodyCount = UInt64.max  // chunked: no size known; refused
                    } else if request.pointee.collectsHeaders {
                        let lowercase = String(
                            decoding: name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
                        if PortalRoutes.headerNames.contains(lowercase) || ServeAccess.headerNames.contains(lowercase) {
                            let joined = request.pointee.headers[lowercase].map {
                                $0 + Array((lowercase == "cookie" ? "; " : ", ").utf8) + bytes
                            }
                            request.pointee.headers[lowercase] = joined ?? bytes
                        }
                    }
                    return .YES
                }, pointer)
        }
        return request
    }

    /// The query's arguments, as libmicrohttpd decoded them.
    private static func readQuery(_ connection: OpaquePointer) -> [String: String] {
        var query: [String: String] = [:]
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values_n(
                connection, .GET_ARGUMENT_KIND,
                { cls, _, key, keyCount, value, valueCount in
                    guard let cls, let key else { return .YES }
                    let query = cls.assumingMemoryBound(to: [String: String].self)
                    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keyCount), as: UTF8.self)
                    let text = value.map {
                        String(decoding: UnsafeRawBufferPointer(start: $0, count: valueCount), as: UTF8.self)
                    }
                    if query.pointee.count < 16, query.pointee[name] == nil { query.pointee[name] = text ?? "" }
                    return .YES
                }, pointer)
        }
        return query
    }

    /// Queues the answer: an empty body, `Cache-Control: no-store` (a login's answer must
    /// not be kept by a proxy), and the answer's own header.
    private static func respond(_ connection: OpaquePointer, _ answer: ServeAnswer, realm challenge: String)
        -> MHD_Result
    {
        if case .response(let full) = answer { return respond(connection, full) }
        guard let response = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT) else { return .NO }
        defer { MHD_destroy_response(response) }
        _ = MHD_add_response_header(response, "Cache-Control", "no-store")
        let status: UInt32
        switch answer {
        case .granted(let user):
            status = UInt32(MHD_HTTP_OK)
            guard MHD_add_response_header(response, "X-Credfile-User", user) == .YES else { return .NO }
        case .denied:
            status = UInt32(MHD_HTTP_UNAUTHORIZED)
            _ = MHD_add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge)
        case .unavailable:
            status = UInt32(MHD_HTTP_SERVICE_UNAVAILABLE)
            _ = MHD_add_response_header(response, "Retry-After", "1")
        case .tooLarge:
            status = UInt32(MHD_HTTP_CONTENT_TOO_LARGE)
        case .response: return .NO  // answered above
        }
        return MHD_queue_response(connection, status, response)
    }

    /// Queues an answer with its own headers and body (the sign-in page's).
    private static func respond(_ connection: OpaquePointer, _ answer: HTTPResponse) -> MHD_Result {
        let response = answer.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        for header in answer.headers {
            guard MHD_add_response_header(response, header.name, header.value) == .YES else { return .NO }
        }
        return MHD_queue_response(connection, UInt32(answer.status), response)
    }
}

/// Whether an HTTP header name is `lowercase` (names are case-insensitive).
private func headerName(_ name: UnsafeRawBufferPointer, is lowercase: StaticString) -> Bool {
    let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
    guard name.count == expected.count else { return false }
    for (byte, wanted) in zip(name, expected) {
        let folded: UInt8 = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
        if folded != wanted { return false }
    }
    return true
}

/// A value handed to another thread that Swift cannot see is safe to send: a
/// libmicrohttpd connection, which MHD_resume_connection may be given from any thread.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
