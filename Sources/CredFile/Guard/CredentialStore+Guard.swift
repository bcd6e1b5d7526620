/// The guarded login of the front door (SPEC §9): with a ``CredentialStore/loginGuard``,
/// every login goes through ``LoginGuard/attempt(username:client:_:)``.
extension CredentialStore {
    /// Checks a login through the store's guard, when it has one: a throttled or
    /// locked-out name is denied at once (``Verification/denial`` says which), every
    /// decision is logged with `client` as `rhost=`. Without a guard, the same as
    /// ``verify(username:password:upgradeOnSuccess:)-22xbo``.
    /// - Parameters:
    ///   - username: the name typed (NFC-compared; counted by the guard as typed).
    ///   - password: the password typed.
    ///   - upgradeOnSuccess: rehash a plaintext or weaker entry after a good login.
    ///   - client: the client's address (an IP), for the log; nil when unknown.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read, or the guard
    ///   database cannot be used (then the login was not checked: a temporary failure).
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(username: String, password: Password, upgradeOnSuccess: Bool, client: String?) throws
        -> Verification
    {
        guard let loginGuard else {
            return try verifyUnguarded(username: username, password: password, upgradeOnSuccess: upgradeOnSuccess)
        }
        return try loginGuard.attempt(username: Array(username.utf8), client: client) {
            try verifyUnguarded(username: username, password: password, upgradeOnSuccess: upgradeOnSuccess)
        }
    }

}
