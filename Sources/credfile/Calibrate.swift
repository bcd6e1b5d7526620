import CredFile

extension CommandContext {
    /// Prints the rounds that fit `--target-ms` per login on this machine, next to the
    /// OWASP floor, the default, and what OpenSSL's own PBKDF2 affords in the same time.
    func calibrate() throws -> ExitStatus {
        guard let algorithm = invocation.algorithm.pbkdf2Digest else { return try calibrateArgon2() }
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
            say(
                JSON.object([
                    ("algorithm", JSON.string(algorithm.rawValue)), ("targetMilliseconds", String(target)),
                    ("roundsPerSecond", String(Int(fast))), ("openSSLRoundsPerSecond", String(Int(openSSL))),
                    ("rounds", String(rounds)), ("openSSLRounds", String(affordable(openSSL))),
                    ("owaspMinimum", String(HashPolicy.defaultMinimumRounds)),
                    ("defaultRounds", String(HashPolicy.defaultRounds)),
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

    /// The argon2id passes that fit `--target-ms` per login at the policy's memory and
    /// lanes (`--memory`, `--lanes`, else OWASP's 19,456 KiB and 1), next to OWASP's floor.
    func calibrateArgon2() throws -> ExitStatus {
        let target = invocation.targetMilliseconds ?? 250
        let policy = try invocation.policy()
        let (fitted, one, two) = try Calibration.argon2idParameters(
            forSeconds: Double(target) / 1000, memoryKiB: policy.argon2.memoryKiB, lanes: policy.argon2.lanes)
        // The advice as lines of the configuration file (SPEC §5), so it reaches every command.
        var advice = [
            "\(Setting.algorithm.name) = \(HashPolicy.Algorithm.argon2id)",
            "\(Setting.memory.name) = \(fitted.memoryKiB)",
            "\(Setting.time.name) = \(fitted.time)",
        ]
        if fitted.lanes != Argon2Parameters.owasp.lanes { advice.append("\(Setting.lanes.name) = \(fitted.lanes)") }
        let floor = Argon2Parameters.owaspFloorKiBPasses
        func milliseconds(_ seconds: Double) -> String { String(Int((seconds * 1000).rounded())) }
        if invocation.json {
            say(
                JSON.object([
                    ("algorithm", JSON.string(HashPolicy.Algorithm.argon2id.rawValue)),
                    ("targetMilliseconds", String(target)),
                    ("memoryKiB", String(fitted.memoryKiB)), ("time", String(fitted.time)),
                    ("lanes", String(fitted.lanes)),
                    ("onePassMilliseconds", milliseconds(one)), ("twoPassesMilliseconds", milliseconds(two)),
                    ("owaspFloorKiBPasses", String(floor)),
                    ("configuration", JSON.string(advice.joined(separator: "\n"))),
                ]))
            return .success
        }
        say("Argon2id on this machine, one thread, \(policy.argon2.memoryKiB) KiB, \(policy.argon2.lanes) lane(s):")
        say("  one pass: \(milliseconds(one)) ms   two passes: \(milliseconds(two)) ms")
        say("Parameters for \(target) ms per login: \(fitted)")
        if fitted.time == Argon2Parameters.timeRange.upperBound {
            let at = one + (two - one) * Double(fitted.time - 1)
            say(
                "  (\(fitted.time) passes, the most, take about \(milliseconds(at)) ms: give more --memory to use the rest)"
            )
        }
        say("OWASP floor: memory × passes ≥ \(floor) KiB (19456 KiB × 2)   credfile default: \(Argon2Parameters.owasp)")
        if fitted.isBelowOWASPFloor { say(messages.weakArgon2(fitted.description, floor: floor)) }
        let file = CredFileConfiguration.location(path: invocation.configPath, environment: terminal.environment).path
        say(messages.calibrationAdvice(file: Escaped.path(file)))
        for line in advice { say(line) }
        return .success
    }
}
