extension HashPolicy {
    /// The policy that the settings `iterations`, `algorithm`, `memory`, `time`, `lanes`,
    /// `max-work` and `max-memory` describe (SPEC §3.1, §5), each read through `value`
    /// (nil: not set, the default):
    /// the one reading of them, for the configuration file and the command line alike.
    /// - Throws: ``CredFileError/Code/usage`` when a value is outside its range, the
    ///   memory is below 8 KiB per lane, or argon2id's memory is above `max-memory`.
    public init(reading value: (Setting) -> SettingValue?) throws {
        func number(_ setting: Setting) -> Int? { if case .number(let n)? = value(setting) { n } else { nil } }
        var algorithm = Algorithm.sha256
        if case .text(let name)? = value(.algorithm), let named = Algorithm(rawValue: name) { algorithm = named }
        let owasp = Argon2Parameters.owasp
        try self.init(
            algorithm: algorithm, rounds: number(.iterations) ?? Self.defaultRounds,
            argon2: Argon2Parameters(
                memoryKiB: number(.memory) ?? owasp.memoryKiB, time: number(.time) ?? owasp.time,
                lanes: number(.lanes) ?? owasp.lanes))
        if case .seconds(let seconds)? = value(.maximumWork) { try costLimits.setMaximumWork(seconds: seconds) }
        if let bytes = number(.maximumMemory) { try costLimits.setMaximumMemory(bytes) }
        // Every new hash of the policy must be one its own limits let a login verify.
        if algorithm == .argon2id, argon2.memoryKiB * 1024 > costLimits.maximumMemory {
            throw CredFileError.usage(
                "memory \(argon2.memoryKiB) KiB is above max-memory \(CostLimits.formatSize(costLimits.maximumMemory)): "
                    + "new hashes would be too costly to verify")
        }
    }
}
