import CredFile

extension CommandContext {
    /// Prints the rounds that fit `--target-ms` per login on this machine, next to the
    /// OWASP floor, the default, and what OpenSSL's own PBKDF2 affords in the same time.
    func calibrate() throws -> ExitStatus {
        let algorithm = invocation.algorithm
        let target = invocation.targetMilliseconds ?? 250
        let fast = try Calibration.roundsPerSecond(algorithm, implementation: .credfile)
        let openSSL = try Calibration.roundsPerSecond(algorithm, implementation: .openSSL)
        func affordable(_ rate: Double) -> Int {
            min(max(1, Int(rate * Double(target) / 1000) / 1000 * 1000), HashPolicy.roundsRange.upperBound)
        }
        let rounds = affordable(fast)
        // The advice as lines of the configuration file (SPEC §5), so it reaches every command.
        var advice = ["\(Setting.iterations.name) = \(rounds)"]
        if algorithm != .sha256 { advice.append("\(Setting.algorithm.name) = \(algorithm.rawValue)") }
        if invocation.json {
            say(JSON.object([
                ("algorithm", JSON.string(algorithm.rawValue)), ("targetMilliseconds", String(target)),
                ("roundsPerSecond", String(Int(fast))), ("openSSLRoundsPerSecond", String(Int(openSSL))),
                ("rounds", String(rounds)), ("openSSLRounds", String(affordable(openSSL))),
                ("owaspMinimum", String(HashPolicy.defaultMinimumRounds)), ("defaultRounds", String(HashPolicy.defaultRounds)),
                ("configuration", JSON.string(advice.joined(separator: "\n"))),
            ]))
            return .success
        }
        func millions(_ rate: Double) -> String {
            let tenths = Int((rate / 100_000).rounded())
            return "\(tenths / 10).\(tenths % 10) M rounds/s"
        }
        say("PBKDF2-HMAC-\(algorithm.rawValue.uppercased()) on this machine, one thread:")
        say("  credfile:                    \(millions(fast))")
        say("  OpenSSL PKCS5_PBKDF2_HMAC:   \(millions(openSSL))")
        say("Rounds for \(target) ms per login: \(rounds)  (OpenSSL's own PBKDF2 would afford \(affordable(openSSL)))")
        say("OWASP floor: \(HashPolicy.defaultMinimumRounds)   credfile default: \(HashPolicy.defaultRounds)")
        if rounds < HashPolicy.defaultMinimumRounds {
            say(messages.weakIterations(rounds, minimum: HashPolicy.defaultMinimumRounds))
        }
        let file = CredFileConfiguration.location(path: invocation.configPath, environment: terminal.environment).path
        say(messages.calibrationAdvice(file: Escaped.path(file)))
        for line in advice { say(line) }
        return .success
    }
}
