import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// `credfile serve FILE`: a forward-authentication service for nginx `auth_request`,
/// Caddy `forward_auth` and Traefik `ForwardAuth` (SPEC §10).
///
/// Threads: the main thread only waits for signals; each listener has libmicrohttpd's
/// own pool (``ServeLimits/connectionThreads``) that reads requests and writes answers;
/// PBKDF2 runs on the library's hashing threads (one per core). No Swift concurrency and
/// no Dispatch queue is used, so nothing depends on libdispatch's worker pool, which
/// aborts when it cannot read `/proc/self/task/TID/stat` (a sandbox without /proc).
enum ServeCommand {
    /// What the command line (and the configuration file) asked for.
    struct Configuration {
        /// `--listen` (repeatable); with none, the sockets systemd passes.
        var listen: [Listener.Address] = []
        /// `--socket-mode` and `--socket-group`, for the unix sockets `serve` makes.
        var socketFile = Listener.SocketFile()
        /// `--listen-public`: allows a TCP address that is not loopback.
        var listenPublic = false
        /// `--metrics-listen`: where `GET /metrics` is answered (SPEC §16); nil: nowhere.
        var metricsListen: Listener.Address?
        /// The limits (fixed numbers; see ``ServeLimits``).
        var limits = ServeLimits()
        /// Reads the settings again, as at start-up (SIGHUP calls it).
        var settings: () throws -> LoginService.Settings
    }

    /// Runs until SIGTERM or SIGINT, then drains and returns `.success`.
    /// - Throws: ``CredFileError/Code/usage`` when there is nowhere to listen or an address
    ///   is refused; ``CredFileError/Code/io`` when a socket cannot be made.
    static func run(_ configuration: Configuration) throws -> ExitStatus {
        // Before any thread starts (the hashing threads, libmicrohttpd's), so that every
        // thread inherits the mask and only the main thread's sigwait sees these signals.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        Glibc.signal(SIGPIPE, SIG_IGN)  // a proxy that hangs up mid-answer is not a reason to die

        let passed = Systemd.passedSockets()
        guard !configuration.listen.isEmpty || !passed.isEmpty else {
            throw CredFileError.usage("serve needs --listen ADDRESS (unix:PATH or HOST:PORT), or sockets from systemd")
        }
        let service = try LoginService(settings: try configuration.settings(), limits: configuration.limits)
        var listeners: [Listener] = []
        var daemons: [HTTPDaemon] = []
        defer {
            for listener in listeners { if let path = listener.createdPath { unlink(path) } }
        }
        do {
            for fd in passed { listeners.append(try Listener.passed(fd, allowPublic: configuration.listenPublic)) }
            for address in configuration.listen {
                listeners.append(
                    try Listener.open(address, file: configuration.socketFile, allowPublic: configuration.listenPublic))
            }
            for listener in listeners { daemons.append(try HTTPDaemon(listener: listener, service: service)) }
            if let address = configuration.metricsListen {
                let listener = try Listener.open(
                    address, file: configuration.socketFile, allowPublic: configuration.listenPublic)
                listeners.append(listener)
                daemons.append(try HTTPDaemon(listener: listener, service: service, metrics: true))
            }
        } catch {
            for daemon in daemons { daemon.stop() }
            throw error
        }
        // The hashing threads start now, from this thread at a lower priority, which they
        // inherit (on Linux the nice value is a thread's); libmicrohttpd's threads,
        // started above, keep the process's. This thread only waits for signals from here on.
        // (Who 0 is the calling thread on Linux.)
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, configuration.limits.hashingNice)
        _ = CredentialStore.hashingThreadCount
        let names = listeners.map(\.name).joined(separator: ", ")
        ServeLog.notice("answering on \(names) for \(Escaped.path(service.generation.settings.file))")
        Systemd.notify("READY=1\nSTATUS=answering on \(names)")

        while true {
            var info = siginfo_t()
            let signal = sigwaitinfo(&signals, &info)
            if signal < 0 { continue }  // EINTR
            if signal == SIGHUP {
                Systemd.notify("RELOADING=1")
                do {
                    try service.reload(try configuration.settings())
                    ServeLog.notice("reloaded the configuration; the cache of good logins is empty")
                } catch {
                    ServeLog.notice("reload failed, the previous configuration stays: \(error)")
                }
                Systemd.notify("READY=1")
                continue
            }
            break  // SIGTERM or SIGINT
        }

        Systemd.notify("STOPPING=1")
        for daemon in daemons { daemon.quiesce() }
        let deadline = ContinuousClock.now + configuration.limits.drain
        while daemons.contains(where: { $0.activeRequests > 0 }) && ContinuousClock.now < deadline {
            usleep(10_000)
        }
        service.forget()
        if daemons.contains(where: { $0.activeRequests > 0 }) {
            // Stopping libmicrohttpd with a suspended connection is undefined: leave it to exit.
            ServeLog.notice("stopped with requests still in flight after \(configuration.limits.drain)")
            return .success
        }
        for daemon in daemons { daemon.stop() }
        return .success
    }

    /// A `--socket-group` value: a group name, or a number.
    /// - Throws: ``CredFileError/Code/usage`` for a group this system does not have.
    static func group(named name: String) throws -> gid_t {
        if !name.isEmpty, name.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = gid_t(name) {
            return number
        }
        var entry = Glibc.group()
        var buffer = [CChar](repeating: 0, count: 16_384)
        var result: UnsafeMutablePointer<Glibc.group>?
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, let found = result else {
            throw CredFileError.usage("--socket-group: no such group on this system")
        }
        return found.pointee.gr_gid
    }
}

extension CommandContext {
    /// `credfile serve FILE`: the options turned into ``ServeCommand/Configuration``; SIGHUP
    /// reads the configuration file again over the same command line.
    func serve() throws -> ExitStatus {
        var configuration = ServeCommand.Configuration(settings: { [self] in try reconfigured().serveSettings() })
        _ = try configuration.settings()  // a bad value is a usage error now, not at the first SIGHUP
        configuration.listen = try invocation.listen.map(Listener.Address.init(parsing:))
        configuration.listenPublic = invocation.listenPublic
        configuration.metricsListen = try invocation.metricsListen.map(Listener.Address.init(parsing:))
        if let mode = invocation.socketMode { configuration.socketFile.mode = mode_t(mode) }
        if let group = invocation.socketGroup { configuration.socketFile.group = try ServeCommand.group(named: group) }
        return try ServeCommand.run(configuration)
    }

    /// This context with the configuration file read again: the command line's own values
    /// kept, the file's filled in under them.
    private func reconfigured() throws -> CommandContext {
        var fresh = invocation
        fresh.values = invocation.values.filter { name, _ in invocation.given.contains { $0.name == name } }
        if let command = invocation.command {
            try CredFileCLI.configure(&fresh, for: command, environment: terminal.environment)
        }
        return CommandContext(invocation: fresh, terminal: terminal, messages: messages)
    }

    /// What SIGHUP replaces: the policy, realm, cache lifetime, trusted proxies and §9's guard.
    private func serveSettings() throws -> LoginService.Settings {
        let proxies = try invocation.trustedProxies.map { text in
            guard let range = AddressRange(parsing: Array(text.utf8)) else {
                throw CredFileError.usage(
                    "--trusted-proxy takes an address or a block such as 10.0.0.0/8 (host bits clear)")
            }
            return range
        }
        let realm = invocation.realm ?? "credfile"
        guard realm.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw CredFileError.usage("--realm may not hold control characters (it is sent in a header)")
        }
        let portal = try portalSettings()
        // SPEC §14: on the portal, a passkey is a second factor too.
        var secondFactor = try secondFactor()
        if let passkeys = portal?.passkeys { secondFactor.counting(passkeys) }
        return LoginService.Settings(
            file: file, policy: try invocation.policy(), realm: realm,
            cacheLifetime: .seconds(invocation.cacheSeconds ?? 300), trustedProxies: proxies,
            loginGuard: try loginGuard(service: "serve"), portal: portal,
            secondFactor: secondFactor, rules: try invocation.text(.rules).map { try WatchedFile(rulesFile: $0) },
            groups: try invocation.groups.map { try WatchedFile(groupFile: $0) })
    }

    /// The sign-in page's settings (SPEC §11), nil without `--portal`.
    private func portalSettings() throws -> PortalSettings? {
        guard invocation.portal else { return nil }
        var prefix = invocation.text(.portalPath) ?? "/.credfile"
        while prefix.count > 1, prefix.hasSuffix("/") { prefix.removeLast() }
        guard prefix.hasPrefix("/"), prefix.count > 1,
            prefix.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        else {
            throw CredFileError.usage("--portal-path takes a path such as /.credfile (printable, no ? or #)")
        }
        let domain = invocation.text(.cookieDomain)
        if let domain {
            guard PortalDomain.isValid(domain) else {
                throw CredFileError.usage("--cookie-domain takes a domain name such as example.com")
            }
        }
        var stylesheet = PortalPage.stylesheet
        if let path = invocation.text(.portalStylesheet) {
            guard let bytes = PortalDomain.smallFile(path, limit: 1 << 20) else {
                throw CredFileError.usage("--portal-stylesheet: cannot read \(Escaped.path(path)) (at most 1 MiB)")
            }
            stylesheet = String(decoding: bytes, as: UTF8.self)
        }
        let language = invocation.text(.lang).flatMap(PortalLanguage.init(rawValue:))
        let limits = try SessionLimits(
            idle: invocation.number(.sessionIdle) ?? 3600, maximum: invocation.number(.sessionMax) ?? 86_400,
            perUser: invocation.number(.sessionLimit) ?? 16)
        let state = try StateLocation(state: invocation.state, credentialFile: file)
        return PortalSettings(
            prefix: prefix, basic: invocation.basic, cookieDomain: domain?.lowercased(), limits: limits,
            title: invocation.text(.portalTitle), stylesheet: stylesheet, language: language, state: state,
            addressFreeFailures: invocation.number(.addressFreeFailures) ?? AddressThrottle.defaultFreeFailures,
            maximumDelay: try invocation.guardPolicy().maximumDelay,
            register: invocation.text(.register).flatMap(RegisterMode.init(rawValue:)) ?? .no,
            registerLimits: RegistrationLimits(
                perAddress: invocation.number(.registerPerHour) ?? RegistrationLimits.defaultPerAddress,
                total: invocation.number(.registerPerHourTotal) ?? RegistrationLimits.defaultTotal),
            passwordPolicy: try invocation.passwordPolicy(),
            passkeys: invocation.webauthnOrigin == nil ? nil : try passkeys())
    }
}

/// Checks of the sign-in page's settings.
enum PortalDomain {
    /// The bytes of the regular file at `path` when it holds at most `limit`; nil otherwise
    /// (read by the library's one ``FileReader``: not blocking on a FIFO, `EINTR` retried).
    static func smallFile(_ path: String, limit: Int) -> [UInt8]? {
        var admitted = false
        let bytes = try? FileReader.read(path) { info in
            admitted = info.st_mode & S_IFMT == S_IFREG && info.st_size <= limit
            return admitted
        }
        guard admitted, let bytes, bytes.count <= limit else { return nil }
        return bytes
    }

    /// A `cookie-domain` value: letters, digits, `-` and `.`, no leading dot needed.
    static func isValid(_ text: String) -> Bool {
        let bare = text.hasPrefix(".") ? text.dropFirst() : Substring(text)
        return !bare.isEmpty && bare.count <= 253 && bare.contains(".")
            && bare.utf8.allSatisfy { byte in
                (0x61...0x7A).contains(byte | 0x20) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: ".")
            }
    }
}
