/// Measures PBKDF2 on this machine: how many rounds fit a time per login
/// (`credfile calibrate`), and the rates the benchmarks compare.
public enum Calibration {
    /// Which PBKDF2 code to time.
    public enum Implementation: Sendable {
        /// credfile's own (the fast path when built in): what logins use.
        case credfile
        /// OpenSSL's `PKCS5_PBKDF2_HMAC`.
        case openSSL
    }

    /// PBKDF2 rounds per second, summed over `threads` threads each deriving one block.
    /// - Parameters:
    ///   - algorithm: the PRF to time.
    ///   - implementation: which PBKDF2 code to time.
    ///   - threads: how many threads derive at once.
    ///   - seconds: about how long to measure.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL fails.
    public static func roundsPerSecond(
        _ algorithm: HashAlgorithm, implementation: Implementation, threads: Int = 1, seconds: Double = 0.5
    ) throws -> Double {
        let using: PBKDF2.Implementation = implementation == .openSSL ? .openSSL : .preferred
        let password = SecretBytes(Array("calibration password".utf8))
        let salt = [UInt8](repeating: 0x5A, count: HashPolicy.saltCount)
        func run(_ rounds: Int) throws -> Double {
            let start = ContinuousClock.now
            if threads == 1 {
                _ = try PBKDF2.deriveKey(algorithm, password: password, salt: salt, rounds: rounds, count: algorithm.digestCount, using: using)
            } else {
                Threads.concurrentPerform(iterations: threads) { _ in
                    _ = try? PBKDF2.deriveKey(algorithm, password: password, salt: salt, rounds: rounds, count: algorithm.digestCount, using: using)
                }
            }
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        // Grow the round count until one run takes a quarter of the budget, then time
        // a run of the whole budget.
        var rounds = 10_000
        var elapsed = try run(rounds)
        while elapsed < seconds / 4 && rounds < HashPolicy.roundsRange.upperBound {
            rounds = min(rounds * 2, HashPolicy.roundsRange.upperBound)
            elapsed = try run(rounds)
        }
        rounds = min(Int(Double(rounds) * seconds / max(elapsed, 1e-6)), HashPolicy.roundsRange.upperBound)
        return Double(rounds * threads) / (try run(rounds))
    }
}
