/// The guard of a credential file's logins as the configuration file sets it (SPEC §5, §9).
extension CredFileConfiguration {
    /// The limits for `file`: `free-failures`, `max-failures`, `max-delay`, else the defaults.
    /// - Throws: ``CredFileError/Code/usage`` when they are outside their ranges.
    public func guardPolicy(for file: String?) throws -> GuardPolicy {
        let values = values(for: file)
        func number(_ setting: Setting, _ otherwise: Int) -> Int {
            if case .number(let n)? = values[setting]?.last { n } else { otherwise }
        }
        var delay = GuardPolicy.defaultMaximumDelay
        if case .seconds(let seconds)? = values[.maxDelay]?.last { delay = seconds }
        return try GuardPolicy(
            freeFailures: number(.freeFailures, GuardPolicy.defaultFreeFailures),
            maximumFailures: number(.maxFailures, GuardPolicy.defaultMaximumFailures), maximumDelay: delay)
    }
}

extension LoginGuard {
    /// The guard the configuration sets for `credentialFile`'s logins (`state`,
    /// `free-failures`, `max-failures`, `max-delay`, `log`); when it says `guard = no`
    /// (then that is logged, as SPEC §9 asks), a guard that counts nothing and only logs
    /// each decision (``loggingOnly(credentialFile:log:service:)``). Never nil today.
    ///
    /// ```swift
    /// let configuration = try CredFileConfiguration.load()
    /// var store = try CredentialStore(path: "/etc/app.cred", configuration: configuration)
    /// store.loginGuard = try LoginGuard.configured(for: store.path, by: configuration, service: "myapp")
    /// ```
    /// - Throws: ``CredFileError/Code/usage`` for limits outside their ranges;
    ///   ``CredFileError/Code/io`` when the credential file's directory cannot be resolved.
    public static func configured(for credentialFile: String, by configuration: CredFileConfiguration, service: String)
        throws
        -> LoginGuard?
    {
        let values = configuration.values(for: credentialFile)
        var log = GuardLog.syslog
        if case .text(let name)? = values[.log]?.last, let chosen = GuardLog(rawValue: name) { log = chosen }
        if values[.guard]?.last == .flag(false) {
            logGuardDisabled(service: service, credentialFile: credentialFile, log: log)
            return loggingOnly(credentialFile: credentialFile, log: log, service: service)
        }
        var state: String?
        if case .text(let path)? = values[.state]?.last { state = path }
        return try LoginGuard(
            credentialFile: credentialFile, state: state, policy: configuration.guardPolicy(for: credentialFile),
            log: log,
            service: service)
    }
}
