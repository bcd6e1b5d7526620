/// The guarded login of the front door (SPEC §9): the one path every login takes, the
/// library's apps (``verify(username:password:upgradeOnSuccess:client:)-86r45``) and the
/// CLI's `verify`, `pam`, `checkpassword`, `helper` and `serve` alike
/// (``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3``). With a
/// ``CredentialStore/loginGuard``, it goes through ``LoginGuard/attempt(username:client:_:)``;
/// nothing outside `Guard/` calls the guard's attempt itself (a test holds that).
extension CredentialStore {
    /// A name no entry can have (a line holding NUL is malformed, SPEC §2), checked instead
    /// of a login that cannot be in the file, so that it costs the same as any other.
    static let unmatchableName = "\u{0}"

    /// Checks a login through the store's guard, when it has one: a throttled or
    /// locked-out name is denied at once (``Verification/denial`` says which), every
    /// decision is logged with `client` as `rhost=`. Without a guard, the same as
    /// ``verify(username:password:upgradeOnSuccess:)-22xbo``. The same login as
    /// ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` with the name's UTF-8.
    /// - Parameters:
    ///   - username: the name typed (NFC-compared; counted by the guard as typed).
    ///   - password: the password typed.
    ///   - upgradeOnSuccess: rehash a plaintext or weaker entry after a good login.
    ///   - client: the client's address (an IP), for the log; nil when unknown.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read;
    ///   ``CredFileError/Code/guardDatabase`` when the guard database cannot be used (then
    ///   the login was not checked: a temporary failure).
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(username: String, password: Password, upgradeOnSuccess: Bool, client: String?) throws
        -> Verification
    {
        try verify(usernameBytes: username.utf8, password: password, upgradeOnSuccess: upgradeOnSuccess, client: client)
    }

    /// Checks a login whose name arrives as raw bytes (a PAM user, a checkpassword or
    /// Squid request, an HTTP Basic header): the one login of the front door, which the
    /// `String` form calls. In order:
    ///
    /// 1. **Validation.** A name that is not UTF-8, or a password holding a NUL byte (no
    ///    stored password can; and HMAC pads its key with zeros, so PBKDF2 alone would
    ///    take `pw\0` for `pw`), cannot be in the file: it is checked as a name no entry
    ///    has, so it is denied after the same work as a wrong password, and never upgraded.
    /// 2. **The guard** (SPEC §9), when the store has one: the name is counted as sent (its
    ///    bytes NFC-compared), a throttled or locked-out name is denied before the file is
    ///    read, and every decision is logged with `client` as `rhost=` and the guard's
    ///    ``LoginGuard/service`` as `service=`.
    /// 3. **The timing plan** (SPEC §3.1): the file's login plan runs whatever the
    ///    answer, so no entry's kind or cost shows in the time.
    /// 4. **Upgrade on success**, when asked: a plaintext or weaker entry is rehashed
    ///    under ``policy`` (it never waits for the lock; see ``Verification/upgradeError``).
    ///
    /// ```swift
    /// let result = try store.verify(
    ///     usernameBytes: basic.username, password: Password(utf8: basic.password),
    ///     upgradeOnSuccess: false, client: "203.0.113.9")
    /// ```
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - password: the password as sent (``Password/init(utf8:)`` keeps bytes that are not UTF-8 as they are).
    ///   - upgradeOnSuccess: rehash a plaintext or weaker entry after a good login.
    ///   - client: the client's address (an IP), for the log's `rhost=`; nil when unknown.
    /// - Returns: the answer; ``Verification/denial`` says why a login was denied (for
    ///   logs, never for the caller's answer).
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read;
    ///   ``CredFileError/Code/guardDatabase`` when the guard database cannot be used (then
    ///   the login was not checked: a temporary failure).
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(
        usernameBytes: some Collection<UInt8>, password: Password, upgradeOnSuccess: Bool, client: String?
    ) throws -> Verification {
        try login(
            name: Array(usernameBytes), password: password, upgradeOnSuccess: upgradeOnSuccess, client: client,
            afterCacheMiss: false)
    }

    /// ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` from a known device
    /// (SPEC §11): a sign-in that carries a valid device cookie of that name
    /// (``DeviceCookies/device(cookieValue:username:now:)``) is counted, throttled and locked
    /// out on the device's own count, apart from the name's, so that an attacker who
    /// throttles or locks out the name from elsewhere does not shut its owner out; a good
    /// login clears the device's count only. A nil `device`, or one of another name, is the
    /// login without it.
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - password: the password as sent.
    ///   - upgradeOnSuccess: rehash a plaintext or weaker entry after a good login.
    ///   - client: the client's address (an IP), for the log's `rhost=`; nil when unknown.
    ///   - device: the known device the login comes from, if any.
    /// - Returns: the answer, as ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3`` gives it.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read;
    ///   ``CredFileError/Code/guardDatabase`` when the guard database cannot be used.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(
        usernameBytes: some Collection<UInt8>, password: Password, upgradeOnSuccess: Bool, client: String?,
        device: KnownDevice?
    ) throws -> Verification {
        try login(
            name: Array(usernameBytes), password: password, upgradeOnSuccess: upgradeOnSuccess, client: client,
            afterCacheMiss: false, device: device)
    }

    /// ``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3``; `afterCacheMiss`:
    /// the password was looked up in a cache of good logins and not found, so the guard
    /// counts the attempt even if the name has become throttled since.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    /// `device`: a known device of the name, counted on its own (SPEC §11).
    func login(
        name: [UInt8], password: Password, upgradeOnSuccess: Bool, client: String?, afterCacheMiss: Bool,
        device: KnownDevice? = nil
    ) throws -> Verification {
        let text = String(validating: name, as: UTF8.self)
        let holdsNUL = password.bytes.withUnsafeBytes { $0.contains(0) }
        let checked = holdsNUL ? nil : text
        func check() throws -> Verification {
            let result: Verification
            if let secondFactor, let checked {
                result = try withCode(secondFactor, checked)
            } else {
                result = try verifyUnguarded(
                    username: checked ?? Self.unmatchableName, password: password,
                    upgradeOnSuccess: upgradeOnSuccess && checked != nil)
            }
            // SPEC §13: with a required group, a good password of a non-member is a denial.
            if result.granted, let requiredGroup, let checked, !requiredGroup.admits(checked) {
                return Verification(granted: false, upgraded: result.upgraded, upgradeError: nil, denial: .notInGroup)
            }
            return result
        }
        // SPEC §14: a user with a line in the secrets file needs a code. With `otp-append`
        // the code is the password's last 6 bytes; without, the login is denied (after the
        // same work as any other). A wrong, missing or used code is a wrong password to the
        // caller; the log says `wrong-code`.
        func withCode(_ secondFactor: SecondFactor, _ username: String) throws -> Verification {
            guard let entry = try secondFactor.secrets()?.entry(for: name) else {
                // A passkey is a second factor too, in the separate step only (the page's).
                guard secondFactor.separateStep, !secondFactor.appended,
                    try secondFactor.hasPasskey(usernameBytes: name)
                else {
                    return try verifyUnguarded(
                        username: username, password: password, upgradeOnSuccess: upgradeOnSuccess)
                }
                let result = try verifyUnguarded(username: username, password: password, upgradeOnSuccess: false)
                guard result.granted else { return result }
                return Verification(granted: false, upgraded: false, upgradeError: nil, awaitsCode: true)
            }
            guard secondFactor.appended else {
                let result = try verifyUnguarded(username: username, password: password, upgradeOnSuccess: false)
                guard result.granted else { return result }
                if secondFactor.separateStep {
                    return Verification(granted: false, upgraded: false, upgradeError: nil, awaitsCode: true)
                }
                return Verification(granted: false, upgraded: false, upgradeError: nil, denial: .secondFactorRequired)
            }
            let (typed, code) = Self.splitCode(password)
            let result = try verifyUnguarded(username: username, password: typed, upgradeOnSuccess: upgradeOnSuccess)
            guard result.granted else { return result }
            guard let code, try secondFactor.accept(name, secret: entry.secret, code: code, time: SecondFactor.now())
            else {
                return Verification(granted: false, upgraded: result.upgraded, upgradeError: nil, denial: .wrongCode)
            }
            return result
        }
        guard let loginGuard else { return try check() }
        return try loginGuard.attempt(
            username: name, client: client, afterCacheMiss: afterCacheMiss, device: device, check)
    }

    /// `password` without its last ``SecondFactor/digits`` bytes, and those bytes when they
    /// are ASCII digits (`otp-append`, SPEC §14); else the whole password and nil.
    static func splitCode(_ password: Password) -> (password: Password, code: [UInt8]?) {
        password.bytes.withUnsafeBytes { bytes in
            let (count, code) = SecondFactor.appendedCode(bytes)
            guard let code else { return (password, nil) }
            return (Password(utf8: bytes.prefix(count)), code)
        }
    }
}

// The second step of a sign-in that asks for the one-time code apart from the password
// (SPEC §14: the sign-in page), guarded as every login is (§9): here, beside the password
// step, so that this file stays the one caller of the guard's attempt (LoginPathTests).
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

    /// Checks a second factor of `usernameBytes` other than a code (a passkey's answer,
    /// from the passkeys' folder) through the store's guard as `verifyCode` does: `answer`
    /// returns the name it proves, and the name must be `usernameBytes`; anything else is a
    /// failure of §9 (`reason=wrong-code`).
    @available(*, noasync, message: "it blocks its thread; in async code run it on a thread of its own")
    func verifySecondFactor(usernameBytes name: [UInt8], client: String?, answer: () throws -> [UInt8]?) throws
        -> Verification
    {
        func check() throws -> Verification {
            guard let user = try answer(), user == name else {
                return Verification(granted: false, upgraded: false, upgradeError: nil, denial: .wrongCode)
            }
            return Verification(granted: true, upgraded: false, upgradeError: nil)
        }
        guard let loginGuard else { return try check() }
        return try loginGuard.attempt(username: name, client: client, afterCacheMiss: false, check)
    }
}
