/// The guard's side of a cache of good logins (SPEC §9 and §10): when a server may answer
/// a login from its cache instead of checking it. The cache itself
/// (``GoodLoginCache``) and the store's cached login
/// (``CredentialStore/cachedAnswer(usernameBytes:password:client:cache:)``) ask here.
///
/// The cache must never be an oracle for a throttled or locked-out name: no more than
/// `max-failures` password comparisons, hashed or cached, against a name between good
/// logins, and a throttled or locked-out answer that takes the same time whether or not
/// the password is in the cache. So the name's standing is read first, and:
///
/// * **not throttled**: the cache answers a login it holds (not counted, not delayed); a
///   miss is checked (hashed and counted) by the guard's attempt;
/// * **locked out**: denied (`locked-out`) without looking at the cache;
/// * **throttled**: only a client address that owns a cached login of the name (it logged
///   in with it, or was answered from the cache before the throttle) has the password
///   looked at: a hit is granted; a miss is counted as a failure as a hashed one would be
///   (so the lockout comes at `max-failures`) and denied as `throttled`. A miss looked up
///   while the name was free whose check finds it throttled (concurrent requests) is
///   counted the same way (``attempt(username:client:afterCacheMiss:_:)``). Anyone else is denied
///   (`throttled`) without looking at the password and without being counted, as SPEC §9
///   says of an attempt that comes too early; that answer does the same work whatever
///   the password.
extension LoginGuard {
    /// What the cache of good logins may tell the guard of a login (closures into the
    /// cache, so that the guard decides which of them is asked).
    struct CacheLookUp {
        /// Whether the name and password are a cached good login.
        let holds: () -> Bool
        /// Whether the client owns a cached login of the name.
        let isOwner: () -> Bool
    }

    /// The answer for a login that a server may give from its cache of good logins, or
    /// nil when the login must be checked (by ``attempt(username:client:_:)``).
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the guard database cannot be
    ///   read or written (logged).
    /// `device`: a known device of the name (SPEC §11), whose own count is read instead of the name's.
    func cachedLogin(username name: [UInt8], client: String?, cache: CacheLookUp, device: KnownDevice? = nil) throws
        -> CredentialStore.Verification?
    {
        // A guard that only logs (`guard = no`) keeps no standing to read: the cache answers
        // what it holds, as it would for a name that is not throttled.
        guard countsFailures else {
            return cache.holds() ? CredentialStore.Verification(granted: true, upgraded: false, upgradeError: nil) : nil
        }
        let nameKey = FileSyntax.nameKey(name)
        let key = device?.guardKey(forName: nameKey) ?? nameKey
        let refusal: GuardDatabase.Reservation?
        do {
            refusal = GuardDatabase.refusal(of: try database.row(key), now: Self.now(), policy: policy)
        } catch {
            throw unusable(error, user: name, client: client)
        }
        switch refusal {
        case nil:
            guard cache.holds() else { return nil }
            return CredentialStore.Verification(granted: true, upgraded: false, upgradeError: nil)
        case .lockedOut:
            return denied(.lockedOut, user: name, client: client)
        case .throttled:
            guard cache.isOwner() else { return denied(.throttled, user: name, client: client) }
            if cache.holds() { return CredentialStore.Verification(granted: true, upgraded: false, upgradeError: nil) }
            return try countCachedMiss(name, key: key, client: client)
        case .admitted:
            return nil  // refusal(of:) never admits
        }
    }

    /// Counts a cache miss on a throttled name as a failure (a comparison was made, though
    /// too early for a hash: the password may be right, only not cached): no delay holds
    /// it back, the lockout does. Denied and logged as `throttled` (and `locked out` when
    /// it reaches `max-failures`).
    func countCachedMiss(_ name: [UInt8], key: [UInt8], client: String?) throws
        -> CredentialStore.Verification
    {
        // A guard that only logs counts nothing: the miss is denied as the 503 it was.
        guard countsFailures else {
            return CredentialStore.Verification(granted: false, upgraded: false, upgradeError: nil, denial: .throttled)
        }
        let reservation: GuardDatabase.Reservation
        do {
            // The same limits without the delay: the delay is what the owner was let past.
            let undelayed = try GuardPolicy(
                freeFailures: policy.freeFailures, maximumFailures: policy.maximumFailures, maximumDelay: 0)
            reservation = try database.reserve(key, now: Self.now(), policy: undelayed)
        } catch {
            throw unusable(error, user: name, client: client)
        }
        switch reservation {
        case .admitted(let count):
            let answer = denied(.throttled, user: name, client: client)
            if count == policy.maximumFailures {
                log.write(GuardLog.lockedOutLine(user: name, failures: count), priority: .warning)
            }
            return answer
        case .lockedOut:
            return denied(.lockedOut, user: name, client: client)
        case .throttled:
            return denied(.throttled, user: name, client: client)
        }
    }
}
