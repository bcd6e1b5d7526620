import CredFile

/// What every command needs: the parsed options, the terminal, the message catalog.
struct CommandContext {
    let invocation: Invocation
    let terminal: Terminal
    let messages: Messages

    var file: String { invocation.positionals[0] }
    var user: String { invocation.positionals[1] }
    var storage: CredentialStore.SecretForm { invocation.plaintext ? .plaintext : .hashed }

    /// The store with the policy, backup setting and lock timeout the options ask for.
    func store() throws -> CredentialStore {
        var store = CredentialStore(path: file, policy: try invocation.policy(), keepsBackup: invocation.backup)
        if let lockTimeout = invocation.lockTimeout { store.lockTimeout = lockTimeout }
        return store
    }

    /// The guard of FILE's logins for the login check `service` (SPEC §9), from the
    /// options and the configuration file; when guarding is off (`--no-guard`,
    /// `guard = no`), which is then logged, a guard that only logs each decision.
    func loginGuard(service: String) throws -> LoginGuard? {
        guard invocation.guardsLogins else {
            LoginGuard.logGuardDisabled(service: service, credentialFile: file, log: invocation.log)
            return LoginGuard.loggingOnly(credentialFile: file, log: invocation.log, service: service)
        }
        return try LoginGuard(
            credentialFile: file, state: invocation.state, policy: try invocation.guardPolicy(), log: invocation.log,
            service: service)
    }

    /// The store of a login check: ``store()`` carrying the guard of `service`.
    func loginStore(service: String) throws -> CredentialStore {
        var store = try store()
        store.loginGuard = try loginGuard(service: service)
        store.secondFactor = try secondFactor()
        store.requiredGroup = try requiredGroup()
        return store
    }

    /// `--group NAME` with `groups = GROUPFILE` (SPEC §13), nil without `--group`.
    /// - Throws: ``CredFileError/Code/usage`` for `--group` without a group file, or a bad
    ///   group file (GROUPFILE:LINE); ``CredFileError/Code/io`` when it cannot be read.
    func requiredGroup() throws -> GroupRequirement? {
        guard let group = invocation.text(.group) else { return nil }
        guard let path = invocation.groups else {
            throw CredFileError.usage("--group needs the group file: --groups GROUPFILE (or groups = GROUPFILE)")
        }
        return GroupRequirement(groups: try WatchedFile(groupFile: path), group: group)
    }

    /// FILE's second factor (SPEC §14) from `otp-file`, `otp-append` and `state`.
    func secondFactor() throws -> SecondFactor {
        try SecondFactor(
            credentialFile: file, otpFile: invocation.otpFile, state: invocation.state, appended: invocation.otpAppend)
    }

    /// The store for a command that sets passwords: its password policy from the options.
    func passwordStore() throws -> CredentialStore {
        var store = try store()
        store.policy = try writingPolicy()
        store.passwordPolicy = try invocation.passwordPolicy()
        let minimum = store.passwordPolicy.minimumLength
        if minimum < PasswordPolicy.secondFactorMinimumLength {
            terminal.writeError(
                "credfile: \(messages.shortMinimumLength(minimum, floor: PasswordPolicy.secondFactorMinimumLength))\n")
        }
        return store
    }

    /// The policy, warning on stderr when its rounds are below the minimum (for
    /// commands that write hashes).
    func writingPolicy() throws -> HashPolicy {
        let policy = try invocation.policy()
        if policy.isBelowMinimum && !invocation.plaintext {
            terminal.writeError("credfile: \(messages.weakIterations(policy.rounds, minimum: policy.minimumRounds))\n")
        }
        if policy.algorithm == .argon2id, policy.argon2.isBelowOWASPFloor, !invocation.plaintext {
            let floor = Argon2Parameters.owaspFloorKiBPasses
            terminal.writeError("credfile: \(messages.weakArgon2(policy.argon2.description, floor: floor))\n")
        }
        return policy
    }

    /// A password from a no-echo prompt on a terminal (asked twice when `new`), or
    /// one line of standard input; at most `PasswordRules.maximumCount` bytes either way.
    func readPassword(new: Bool, prompt: String? = nil) throws -> Password {
        let tooLong = CredFileError.usage(messages.passwordTooLong(PasswordRules.maximumCount))
        guard terminal.inputIsTerminal else {
            guard let line = try terminal.readLine(limit: PasswordRules.maximumCount, tooLong: tooLong) else {
                throw CredFileError.usage(messages.noPassword)
            }
            return Password(utf8: line)
        }
        let first = try terminal.readSecret(
            prompt ?? (new ? messages.newPasswordPrompt : messages.passwordPrompt), tooLong)
        let password = Password(utf8: first)
        if new {
            let again = Password(utf8: try terminal.readSecret(messages.repeatPasswordPrompt, tooLong))
            guard again.bytes == password.bytes else { throw CredFileError.usage(messages.passwordsDiffer) }
        }
        return password
    }

    func say(_ line: String) { terminal.write(line + "\n") }
}
