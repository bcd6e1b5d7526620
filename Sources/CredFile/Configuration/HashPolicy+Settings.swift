extension HashPolicy {
    /// The policy that the settings `iterations`, `algorithm`, `memory`, `time` and
    /// `lanes` describe (SPEC §5), each read through `value` (nil: not set, the default):
    /// the one reading of them, for the configuration file and the command line alike.
    /// - Throws: ``CredFileError/Code/usage`` when a value is outside its range, or the
    ///   memory is below 8 KiB per lane.
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
    }
}
