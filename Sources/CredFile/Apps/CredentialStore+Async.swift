/// The `async` forms of the front door (SPEC §6): each runs its work — PBKDF2 and file
/// I/O — on the library's own threads (``HashingThreads``), never on Swift's
/// cooperative pool, so a server's other tasks keep running while logins hash on every
/// core. Cancellation is honoured before the work starts (the call then throws
/// ``CredFileError/Code/cancelled``); once started, the work finishes. The synchronous
/// forms stay for scripts and command-line tools.
extension CredentialStore {
    /// Checks a login off the cooperative pool; see ``authenticate(username:password:)``.
    ///
    /// ```swift
    /// let granted = try await store.authenticate(username: "valencia", password: typed)
    /// ```
    public func authenticate(username: String, password: String) async throws -> Bool {
        try await authenticate(username: username, password: password, upgradeOnSuccess: false)
    }

    /// Checks a login and upgrades the entry after a good one, off the cooperative pool;
    /// see ``authenticate(username:password:upgradeOnSuccess:)``.
    public func authenticate(username: String, password: String, upgradeOnSuccess: Bool) async throws -> Bool {
        try await verify(username: username, password: Password(password), upgradeOnSuccess: upgradeOnSuccess).granted
    }

    /// The full answer of a login attempt, off the cooperative pool; see
    /// ``verify(username:password:upgradeOnSuccess:)``.
    public func verify(username: String, password: Password, upgradeOnSuccess: Bool) async throws -> Verification {
        try await verify(username: username, password: password, upgradeOnSuccess: upgradeOnSuccess, client: nil)
    }

    /// The guarded login off Swift's cooperative pool (the guard database's small
    /// transactions run there too); see ``verify(username:password:upgradeOnSuccess:client:)``.
    public func verify(username: String, password: Password, upgradeOnSuccess: Bool, client: String?) async throws
        -> Verification
    {
        let store = self
        return try await HashingThreads.shared.run {
            try store.verify(username: username, password: password, upgradeOnSuccess: upgradeOnSuccess, client: client)
        }
    }

    /// The one-time code of a sign-in's second step off Swift's cooperative pool; see
    /// `verifyCode(usernameBytes:code:client:)`.
    public func verifyCode(usernameBytes: some Collection<UInt8>, code: some Collection<UInt8>, client: String?)
        async throws -> Verification
    {
        let store = self
        let (name, typed) = (Array(usernameBytes), Array(code))
        return try await HashingThreads.shared.run {
            try store.verifyCode(usernameBytes: name, code: typed, client: client)
        }
    }

    /// The login of raw bytes off Swift's cooperative pool; see
    /// ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3``.
    public func verify(
        usernameBytes: some Collection<UInt8>, password: Password, upgradeOnSuccess: Bool, client: String?
    ) async throws -> Verification {
        let store = self
        let name = Array(usernameBytes)
        return try await HashingThreads.shared.run {
            try store.verify(
                usernameBytes: name, password: password, upgradeOnSuccess: upgradeOnSuccess, client: client)
        }
    }

    /// The login of raw bytes with a cache of good logins, off Swift's cooperative pool;
    /// see ``verify(usernameBytes:password:upgradeOnSuccess:client:cache:)-n3ip``.
    public func verify(
        usernameBytes: some Collection<UInt8>, password: Password, upgradeOnSuccess: Bool, client: String?,
        cache: GoodLoginCache
    ) async throws -> Verification {
        let store = self
        let name = Array(usernameBytes)
        return try await HashingThreads.shared.run {
            try store.verify(
                usernameBytes: name, password: password, upgradeOnSuccess: upgradeOnSuccess, client: client,
                cache: cache)
        }
    }

    /// Checks a login that a cache of good logins did not answer, off Swift's cooperative
    /// pool; see ``verify(_:upgradeOnSuccess:)-9kv6l``.
    public func verify(_ login: UncachedLogin, upgradeOnSuccess: Bool) async throws -> Verification {
        let store = self
        return try await HashingThreads.shared.run { try store.verify(login, upgradeOnSuccess: upgradeOnSuccess) }
    }

    /// Locks a user's entry off the cooperative pool (a plaintext one is hashed first);
    /// see ``lock(username:)``.
    @discardableResult
    public func lock(username: String) async throws -> Bool {
        let store = self
        return try await HashingThreads.shared.run { try store.lock(username: username) }
    }

    /// Unlocks a user's entry and clears its failures off the cooperative pool; see
    /// ``unlock(username:)``.
    @discardableResult
    public func unlock(username: String) async throws -> Bool {
        let store = self
        return try await HashingThreads.shared.run { try store.unlock(username: username) }
    }

    /// Adds a user, hashed, off the cooperative pool; see ``register(username:password:)``.
    public func register(username: String, password: String) async throws {
        try await register(username: username, password: Password(password), storage: .hashed)
    }

    /// Adds a user, hashed or plaintext, off the cooperative pool; see ``register(username:password:storage:)``.
    public func register(username: String, password: Password, storage: SecretForm) async throws {
        let store = self
        try await HashingThreads.shared.run {
            try store.register(username: username, password: password, storage: storage)
        }
    }

    /// Changes a password off the cooperative pool; see ``changePassword(username:to:)``.
    public func changePassword(username: String, to newPassword: String) async throws {
        try await changePassword(username: username, to: Password(newPassword), storage: .hashed)
    }

    /// Changes a password, hashed or plaintext, off the cooperative pool; see ``changePassword(username:to:storage:)``.
    public func changePassword(username: String, to newPassword: Password, storage: SecretForm) async throws {
        let store = self
        try await HashingThreads.shared.run {
            try store.changePassword(username: username, to: newPassword, storage: storage)
        }
    }

    /// Removes every entry of a user off the cooperative pool; see ``remove(username:)``.
    @discardableResult
    public func remove(username: String) async throws -> Int {
        let store = self
        return try await HashingThreads.shared.run { try store.remove(username: username) }
    }

    /// Adds or updates many users in one rewrite, off the cooperative pool; see
    /// ``importUsers(_:storage:jobs:existing:)``.
    @discardableResult
    public func importUsers(
        _ users: [(username: String, password: Password)], storage: SecretForm = .hashed,
        jobs: Int = ParallelHasher.defaultJobs, existing: Bool = false
    ) async throws -> (added: Int, updated: Int) {
        let store = self
        let list = users.map { UserToImport(username: $0.username, password: $0.password) }
        return try await HashingThreads.shared.run {
            try store.importUsers(
                list.map { ($0.username, $0.password) }, storage: storage, jobs: jobs, existing: existing)
        }
    }

    /// Hashes every plaintext entry off the cooperative pool; see
    /// ``upgrade(policy:jobs:dryRun:batchInterval:maximumBatch:stop:progress:)``. The hashing itself runs on `jobs`
    /// threads of its own, as the synchronous form does.
    public func upgrade(
        policy: HashPolicy? = nil, jobs: Int = ParallelHasher.defaultJobs, dryRun: Bool = false,
        stop: CancellationFlag = CancellationFlag(), progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> UpgradeSummary {
        let store = self
        return try await HashingThreads.shared.run {
            try store.upgrade(
                policy: policy, jobs: jobs, dryRun: dryRun, batchInterval: .seconds(10), stop: stop, progress: progress)
        }
    }
}

extension CredentialStore {
    /// Runs `work` on the library's hashing threads (one per core, the ones the `async`
    /// forms use) and returns at once: for a server with an event loop of its own (such as
    /// `credfile serve` on libmicrohttpd) that must not hash on its loop's threads and
    /// does not run Swift concurrency. `work` calls the blocking forms (``verify(username:password:upgradeOnSuccess:)-22xbo``)
    /// and hands its answer back to the loop itself. Jobs start in submission order.
    public static func runOnHashingThreads(_ work: @escaping @Sendable () -> Void) {
        HashingThreads.shared.submit(work)
    }

    /// How many hashing threads ``runOnHashingThreads(_:)`` runs on.
    public static var hashingThreadCount: Int { HashingThreads.shared.threadCount }
}

/// One user of an import, as a Sendable value (tuples of a `String` and a `Password` are
/// not `Sendable` as a closure capture).
private struct UserToImport: Sendable {
    let username: String
    let password: Password
}
