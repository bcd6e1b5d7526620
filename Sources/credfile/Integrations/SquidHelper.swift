import CredFile
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension CommandContext {
    /// `credfile helper FILE --protocol squid`: a long-running Squid basic-auth helper
    /// (SPEC §7). Each request line is answered `OK`, `ERR` (unknown user and wrong
    /// password alike) or `BH message="…"`; with Squid's `concurrency=N` the channel ID is
    /// repeated and requests are checked on every core, answers written as they finish.
    /// FILE is kept parsed in memory and read again (without a lock) when a `stat` before
    /// a request shows it changed (device, inode, size, mtime, ctime), as basic_ncsa_auth
    /// does: a changed FILE is seen at the next request. Runs until end of input; exit 0.
    ///
    /// It runs for weeks, so it uses no libdispatch queue (whose worker monitor ends the
    /// process when it cannot open `/proc/TID/stat`, as under a low `RLIMIT_NOFILE`):
    /// requests are checked on credfile's own hashing threads (``BoundedJobs``).
    func helper() throws -> ExitStatus {
        guard let name = invocation.protocolName else {
            throw CredFileError.usage("helper needs --protocol squid")
        }
        guard name == "squid" else { throw CredFileError.usage("helper: --protocol takes squid") }
        var caching = CredentialStore(path: file, policy: try invocation.policy(), caching: true)  // read-only
        caching.loginGuard = try loginGuard(service: "helper")
        caching.secondFactor = try secondFactor()
        caching.requiredGroup = try requiredGroup()
        let store = caching
        let jobs = BoundedJobs(limit: invocation.jobs ?? ParallelHasher.defaultJobs)
        let output = Mutex(())  // one answer line at a time
        let reader = ChunkedLineReader(fd: 0, maximum: SquidHelperProtocol.maximumLineLength)
        @Sendable func answer(_ line: some Collection<UInt8>) {
            switch SquidHelperProtocol.parse(line) {
            case .unreadable(let channel, let reason):
                output.withLock { _ in Self.writeAnswer(.bh(message: reason), channel: channel) }
            case .request(let request):
                let reply = Self.check(request, in: store)
                output.withLock { _ in Self.writeAnswer(reply, channel: request.channel) }
            }
        }
        while var line = try reader.next() {
            if case .request(let request) = SquidHelperProtocol.parse(line), request.channel != nil {
                // The thread gets the line in zeroed-on-release storage: a copy of the
                // array would share its storage with `line`, so zeroing `line` below would
                // zero a fresh copy and leave this one in memory.
                let request = SecretBytes(line)
                jobs.submit { request.withUnsafeBytes { answer($0) } }
            } else {
                jobs.waitForAll()  // without channel IDs answers go out in order
                answer(line)
            }
            BoundedInput.zero(&line)
        }
        jobs.waitForAll()
        return .success
    }

    /// Answers every request on standard input `BH message` until end of input, in order:
    /// the helper could not start (its configuration unreadable, an option refused), and
    /// Squid takes `BH` as a temporary failure of the helper, where a helper that exits
    /// at once is restarted in a loop and then stops Squid.
    static func answerUnavailable(message: String) {
        let reader = ChunkedLineReader(fd: 0, maximum: SquidHelperProtocol.maximumLineLength)
        while var line = (try? reader.next()) ?? nil {
            let channel: String?
            switch SquidHelperProtocol.parse(line) {
            case .unreadable(let id, _): channel = id
            case .request(let request): channel = request.channel
            }
            writeAnswer(.bh(message: message), channel: channel)
            BoundedInput.zero(&line)
        }
    }

    /// The answer to one request (the store's byte-level login denies what cannot be in
    /// the file at the cost of any other login).
    private static func check(_ request: SquidHelperProtocol.Request, in store: CredentialStore)
        -> SquidHelperProtocol.Answer
    {
        do {
            let password = request.password.withUnsafeBytes { Password(utf8: $0) }
            let result = try store.verify(
                usernameBytes: request.username, password: password, upgradeOnSuccess: false, client: nil)
            return result.granted ? .ok : .err
        } catch let error as CredFileError where error.code == .guardDatabase {
            return .bh(message: "cannot use the guard database (see the log; set state)")
        } catch {
            return .bh(message: "cannot read the credential file")
        }
    }

    /// Writes one answer line to standard output at once (Squid waits for it).
    private static func writeAnswer(_ answer: SquidHelperProtocol.Answer, channel: String?) {
        do {
            try Syscall.writeAll(1, answer.line(channel: channel), name: "write-output")
        } catch {
            exit(ExitStatus.io.rawValue)  // Squid has gone: nobody to answer
        }
    }
}
