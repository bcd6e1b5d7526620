/// The second step of a sign-in that asks for the one-time code apart from the password
/// (SPEC §14: the sign-in page), guarded as every login is (§9).
extension CredentialStore {
    /// Checks the one-time `code` of `usernameBytes`, whose password was right a moment
    /// ago (``Verification/awaitsCode``), through the store's guard: a right code, never
    /// used before, is granted (it resets the name's failures and is logged as a success); a
    /// wrong, used or malformed one, or a name without a second factor, is a failure of §9
    /// (`reason=wrong-code`), throttled and locked out like a wrong password.
    ///
    /// ```swift
    /// let first = try store.verify(usernameBytes: name, password: password, upgradeOnSuccess: false, client: ip)
    /// if first.awaitsCode {  // show the code page, then:
    ///     let second = try store.verifyCode(usernameBytes: name, code: typed, client: ip)
    /// }
    /// ```
    /// - Parameters:
    ///   - usernameBytes: the name whose password was right.
    ///   - code: the digits typed.
    ///   - client: the client's address (an IP), for the log's `rhost=`; nil when unknown.
    /// - Returns: the answer; ``Verification/denial`` is `wrongCode` for every denial but
    ///   the guard's own (`throttled`, `locked-out`).
    /// - Throws: ``CredFileError/Code/malformedFile`` or ``CredFileError/Code/io`` when the
    ///   secrets file cannot be used; ``CredFileError/Code/guardDatabase`` when the state
    ///   database cannot be used (then the code was not checked: a temporary failure).
    @available(*, noasync, message: "it blocks its thread; in async code run it on a thread of its own")
    public func verifyCode(usernameBytes: some Collection<UInt8>, code: some Collection<UInt8>, client: String?)
        throws -> Verification
    {
        let name = Array(usernameBytes)
        let typed = Array(code)
        func check() throws -> Verification {
            let denied = Verification(granted: false, upgraded: false, upgradeError: nil, denial: .wrongCode)
            guard let secondFactor, let entry = try secondFactor.secrets()?.entry(for: name) else { return denied }
            let right = try secondFactor.accept(entry.user, secret: entry.secret, code: typed, time: SecondFactor.now())
            return right ? Verification(granted: true, upgraded: false, upgradeError: nil) : denied
        }
        guard let loginGuard else { return try check() }
        return try loginGuard.attempt(username: name, client: client, afterCacheMiss: false, check)
    }
}
