/// The guard's side of a cache of good logins (SPEC §9 and §10): when a server may answer
/// a login from its cache instead of checking it. The cache itself
/// (``GoodLoginCache``) and the store's cached login
/// (``CredentialStore/cachedVerification(usernameBytes:password:client:cache:)``) ask here.
extension LoginGuard {
    /// The answer for a login that a server may give from its cache of good logins, or
    /// nil when the login must be checked. `isCached` looks the login up in the cache.
    ///
    /// A cached login is no guess (SPEC §9: not counted, not delayed), but a locked-out
    /// name is denied all the same (logged as `locked-out`). Nothing is counted, and a
    /// granted login is not logged.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when the guard database cannot be read (logged).
    func cachedLogin(username name: [UInt8], client: String?, isCached: () -> Bool) throws
        -> CredentialStore.Verification?
    {
        guard isCached() else { return nil }
        let row: GuardDatabase.Row?
        do {
            row = try database.row(FileSyntax.nameKey(name))
        } catch {
            throw unusable(error, user: name, client: client)
        }
        guard let row, row.lockedOut || policy.locksOut(afterFailures: row.count) else {
            return CredentialStore.Verification(granted: true, upgraded: false, upgradeError: nil)
        }
        return denied(.lockedOut, user: name, client: client)
    }
}
