/// Logins with guarding turned off (`--no-guard`, `guard = no`; SPEC §9): nothing is
/// counted, throttled or locked out, but every decision is still logged in §9's format,
/// so fail2ban's per-address jail keeps working and an audit still sees each login.
extension LoginGuard {
    /// A guard that counts nothing and keeps no database, and logs every decision of the
    /// logins it is given, as a counting guard does (`reason=wrong-password`,
    /// `authentication success`, …; never `throttled` or `locked-out`).
    ///
    /// ```swift
    /// store.loginGuard = LoginGuard.loggingOnly(credentialFile: store.path, service: "myapp")
    /// ```
    /// - Parameters:
    ///   - credentialFile: the credential file (logged as `file=`).
    ///   - log: where decisions go (default syslog, facility authpriv, ident credfile).
    ///   - service: the caller's name for the log's `service=`.
    public static func loggingOnly(credentialFile: String, log: GuardLog = .syslog, service: String) -> LoginGuard {
        LoginGuard(loggingOnlyFor: credentialFile, log: log, service: service)
    }

    /// ``attempt(username:client:_:)`` of a guard that only logs: `check`'s answer, logged.
    func loggedOnly(
        username: some Collection<UInt8>, client: String?, _ check: () throws -> CredentialStore.Verification
    ) throws -> CredentialStore.Verification {
        let result = try check()
        let name = Array(username)
        if result.awaitsCode {
            // A right password whose code comes next (SPEC §14): the code's attempt is logged.
        } else if result.granted {
            log.write(
                GuardLog.successLine(service: service, user: name, client: client, file: credentialFile),
                priority: .info)
        } else {
            log.write(
                GuardLog.failureLine(
                    service: service, user: name, client: client, file: credentialFile,
                    reason: result.denial ?? .wrongPassword),
                priority: .notice)
        }
        return result
    }
}
