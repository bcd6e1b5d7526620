/// The guarded login with a cache of good logins (SPEC §10's `cache-seconds`): the
/// cache's admission decided beside the front door's one login
/// (``CredentialStore/verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3``), so a
/// server built on the library answers repeated logins without a new hash under the same
/// rules as `credfile serve`.
extension CredentialStore {
    /// The answer a cache of good logins gives at once, without a hash, or nil when the
    /// login must be checked (``verify(usernameBytes:password:upgradeOnSuccess:client:cache:)-n3ip``).
    ///
    /// A login found in `cache` is no guess (SPEC §9: not counted, not delayed), but a
    /// locked-out name is denied all the same (logged as `locked-out`). Nothing is
    /// counted, and a granted login is not logged.
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - password: the password as sent.
    ///   - client: the client's address (an IP), for the log's `rhost=`; nil when unknown.
    ///   - cache: the cache of good logins.
    /// - Returns: a granted or denied ``Verification``, or nil when the cache cannot answer.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the guard database cannot be read (logged).
    public func cachedVerification(
        usernameBytes: some Collection<UInt8>, password: Password, client: String?, cache: GoodLoginCache
    ) throws -> Verification? {
        let name = Array(usernameBytes)
        let sent = password.asSent
        guard let loginGuard else {
            let cached = cache.contains(username: name, password: sent)
            return cached ? Verification(granted: true, upgraded: false, upgradeError: nil) : nil
        }
        return try loginGuard.cachedLogin(username: name, client: client) {
            cache.contains(username: name, password: sent)
        }
    }

    /// The login of ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` with a
    /// cache of good logins: answered from `cache` when it can
    /// (``cachedVerification(usernameBytes:password:client:cache:)``), otherwise checked
    /// through the guard and, when granted, remembered in `cache` (unless the file
    /// changed during the check).
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - password: the password as sent.
    ///   - upgradeOnSuccess: rehash a plaintext or weaker entry after a good login that was checked.
    ///   - client: the client's address (an IP), for the log's `rhost=`; nil when unknown.
    ///   - cache: the cache of good logins.
    /// - Returns: the answer, as ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` gives it.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read;
    ///   ``CredFileError/Code/guardDatabase`` when the guard database cannot be used.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(
        usernameBytes: some Collection<UInt8>, password: Password, upgradeOnSuccess: Bool, client: String?,
        cache: GoodLoginCache
    ) throws -> Verification {
        let name = Array(usernameBytes)
        if let answer = try cachedVerification(usernameBytes: name, password: password, client: client, cache: cache) {
            return answer
        }
        let version = cache.currentVersion()
        let result = try verify(
            usernameBytes: name, password: password, upgradeOnSuccess: upgradeOnSuccess, client: client)
        if result.granted, let version {
            cache.remember(username: name, password: password.asSent, checkedAgainst: version)
        }
        return result
    }
}

extension Password {
    /// The bytes as the caller sent them: what a cache of good logins keys on.
    var asSent: SecretBytes { typedBytes ?? bytes }
}
