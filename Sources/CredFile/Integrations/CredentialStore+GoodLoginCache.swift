/// The guarded login with a cache of good logins (SPEC §10's `cache-seconds`): the
/// cache's admission decided beside the front door's one login
/// (``CredentialStore/verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3``), so a
/// server built on the library answers repeated logins without a new hash under the same
/// rules as `credfile serve`.
///
/// In one call, ``CredentialStore/verify(usernameBytes:password:upgradeOnSuccess:client:cache:)-n3ip``.
/// A server that answers on one thread and hashes on others (as `serve` does) splits it:
/// ``CredentialStore/cachedAnswer(usernameBytes:password:client:cache:)`` at once, then,
/// for an ``CredentialStore/CachedAnswer/uncached(_:)`` login,
/// ``CredentialStore/verify(_:upgradeOnSuccess:)-9kv6l`` on a hashing thread.
///
/// With a guard, the cache is never an oracle for a throttled or locked-out name: no more
/// than `max-failures` password comparisons, hashed or cached, against a name between good
/// logins, and a throttled or locked-out answer takes the same time whether or not the
/// password is in the cache (the rules: ``LoginGuard``'s cached logins, and
/// `Documentation/Decisions.md` §10).
extension CredentialStore {
    /// A login that a cache of good logins did not answer, to be checked (hashed) with
    /// ``verify(_:upgradeOnSuccess:)-9kv6l``. Its password was looked up in the cache: the
    /// check counts it even if the name has become throttled since.
    public struct UncachedLogin: Sendable {
        /// The name as the caller sent it.
        public let usernameBytes: [UInt8]
        let password: Password
        /// The client's address, for the log's `rhost=` and the cache's owners.
        public let client: String?
        let cache: GoodLoginCache
        /// The known device it comes from (SPEC §11), counted on its own.
        var device: KnownDevice? = nil
    }

    /// What a cache of good logins answers at once.
    public enum CachedAnswer: Sendable {
        /// Answered without a hash: a cached good login, or a denial of a throttled or
        /// locked-out name.
        case answered(Verification)
        /// Not in the cache: check it with ``CredentialStore/verify(_:upgradeOnSuccess:)-9kv6l``.
        case uncached(UncachedLogin)
    }

    /// The answer a cache of good logins gives at once, without a hash, or the login to
    /// check.
    ///
    /// With a guard: a locked-out name is denied without looking at the cache; while a
    /// name is throttled, only a client address that owns a cached login of it (it logged
    /// in from there, or was answered from the cache before the throttle) is answered from
    /// the cache, and each of its misses is counted as a failure; anyone else is denied as
    /// throttled, not counted, after the same work whatever the password. A name that is
    /// neither is answered from the cache when it holds the login (not counted, not
    /// delayed, not logged), and the client then owns it too.
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - password: the password as sent.
    ///   - client: the client's address (an IP), for the log's `rhost=` and the cache's
    ///     owners; nil when unknown (then no throttled login is answered from the cache).
    ///   - cache: the cache of good logins.
    /// - Returns: the answer, or the login to check.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the guard database cannot be
    ///   read or written (logged).
    public func cachedAnswer(
        usernameBytes: some Collection<UInt8>, password: Password, client: String?, cache: GoodLoginCache
    ) throws -> CachedAnswer {
        try cachedAnswer(usernameBytes: usernameBytes, password: password, client: client, cache: cache, device: nil)
    }

    /// ``cachedAnswer(usernameBytes:password:client:cache:)`` for a login from a known
    /// device (SPEC §11): the device's own count is read instead of the name's, and the
    /// uncached login it gives is counted on it.
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - password: the password as sent.
    ///   - client: the client's address (an IP), for the log's `rhost=` and the cache's owners.
    ///   - cache: the cache of good logins.
    ///   - device: the known device the login comes from, if any (one of another name is ignored).
    /// - Returns: the answer, or the login to check.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the guard database cannot be
    ///   read or written (logged).
    public func cachedAnswer(
        usernameBytes: some Collection<UInt8>, password: Password, client: String?, cache: GoodLoginCache,
        device: KnownDevice?
    ) throws -> CachedAnswer {
        let name = Array(usernameBytes)
        let sent = password.asSent
        // SPEC §13: a cached good login of a user no longer in the required group is
        // checked again, so that the one login path denies it and logs why.
        if let requiredGroup, !requiredGroup.admits(String(decoding: name, as: UTF8.self)) {
            return .uncached(UncachedLogin(usernameBytes: name, password: password, client: client, cache: cache))
        }
        let lookUp = LoginGuard.CacheLookUp(
            holds: {
                guard let expiry = cache.expiry(username: name, password: sent) else { return false }
                cache.recordOwner(username: name, client: client, until: expiry)
                return true
            },
            isOwner: { cache.isOwner(username: name, client: client) })
        let answer: Verification? =
            if let loginGuard {
                try loginGuard.cachedLogin(username: name, client: client, cache: lookUp, device: device)
            } else {
                lookUp.holds() ? Verification(granted: true, upgraded: false, upgradeError: nil) : nil
            }
        if let answer { return .answered(answer) }
        return .uncached(
            UncachedLogin(usernameBytes: name, password: password, client: client, cache: cache, device: device))
    }

    /// Checks a login that the cache did not answer, through the guard (counted even if
    /// the name has become throttled since the cache was asked), and remembers it in the
    /// cache as owned by its client when granted (unless the file changed during the check).
    /// - Parameters:
    ///   - login: what ``cachedAnswer(usernameBytes:password:client:cache:)`` gave.
    ///   - upgradeOnSuccess: rehash a plaintext or weaker entry after a good login.
    /// - Returns: the answer, as ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` gives it.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read;
    ///   ``CredFileError/Code/guardDatabase`` when the guard database cannot be used.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(_ login: UncachedLogin, upgradeOnSuccess: Bool) throws -> Verification {
        let version = login.cache.currentVersion()
        let result = try self.login(
            name: login.usernameBytes, password: login.password, upgradeOnSuccess: upgradeOnSuccess,
            client: login.client, afterCacheMiss: true, device: login.device)
        if result.granted, let version {
            login.cache.remember(
                username: login.usernameBytes, password: login.password.asSent, client: login.client,
                checkedAgainst: version)
        }
        return result
    }

    /// Counts a login that the cache did not answer and that will not be checked (a server
    /// with no room to hash it, or one that waited too long for its turn): its password
    /// was looked up in the cache, and every comparison counts (SPEC §10), so it is counted
    /// as a failure (no delay holds it back, the lockout does) and denied, logged as
    /// `throttled`. Without a guard, nothing is counted.
    /// - Parameter login: what ``cachedAnswer(usernameBytes:password:client:cache:)`` gave.
    /// - Returns: the denial.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the guard database cannot be used (logged).
    @discardableResult
    public func countUnchecked(_ login: UncachedLogin) throws -> Verification {
        guard let loginGuard else {
            return Verification(granted: false, upgraded: false, upgradeError: nil, denial: .throttled)
        }
        let nameKey = FileSyntax.nameKey(login.usernameBytes)
        return try loginGuard.countCachedMiss(
            login.usernameBytes, key: login.device?.guardKey(forName: nameKey) ?? nameKey, client: login.client)
    }

    /// The login of ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` with a
    /// cache of good logins: ``cachedAnswer(usernameBytes:password:client:cache:)``, then
    /// ``verify(_:upgradeOnSuccess:)-9kv6l`` for a login it did not answer.
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - password: the password as sent.
    ///   - upgradeOnSuccess: rehash a plaintext or weaker entry after a good login that was checked.
    ///   - client: the client's address (an IP), for the log's `rhost=` and the cache's owners; nil when unknown.
    ///   - cache: the cache of good logins.
    /// - Returns: the answer, as ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` gives it.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read;
    ///   ``CredFileError/Code/guardDatabase`` when the guard database cannot be used.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(
        usernameBytes: some Collection<UInt8>, password: Password, upgradeOnSuccess: Bool, client: String?,
        cache: GoodLoginCache
    ) throws -> Verification {
        switch try cachedAnswer(usernameBytes: usernameBytes, password: password, client: client, cache: cache) {
        case .answered(let answer): return answer
        case .uncached(let login): return try verify(login, upgradeOnSuccess: upgradeOnSuccess)
        }
    }
}

extension Password {
    /// The bytes as the caller sent them: what a cache of good logins keys on.
    var asSent: SecretBytes { typedBytes ?? bytes }
}
