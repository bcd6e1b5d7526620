/// Measures PBKDF2 on this machine: how many rounds fit a time per login
/// (`credfile calibrate`), and the rates the benchmarks compare.
package enum Calibration {
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
                _ = try PBKDF2.deriveKey(
                    algorithm, password: password, salt: salt, rounds: rounds, count: algorithm.digestCount,
                    using: using)
            } else {
                Threads.concurrentPerform(iterations: threads) { _ in
                    _ = try? PBKDF2.deriveKey(
                        algorithm, password: password, salt: salt, rounds: rounds, count: algorithm.digestCount,
                        using: using)
                }
            }
            return (ContinuousClock.now - start).inSeconds
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

    /// Seconds of one argon2id hash with `parameters` on this machine, one thread: the
    /// calling thread's CPU time (the work a login costs, not what other processes take
    /// meanwhile), the least of `runs` runs.
    /// - Throws: ``CredFileError/Code/crypto`` when libargon2 fails.
    public static func argon2idSeconds(_ parameters: Argon2Parameters, runs: Int = 3) throws -> Double {
        let password = Password("calibration password")
        var best = Double.infinity
        for _ in 0..<max(1, runs) {
            let start = Syscall.threadCPUSeconds()
            _ = try Argon2Hash(hashing: password, parameters: parameters)
            best = min(best, Syscall.threadCPUSeconds() - start)
        }
        return best
    }

    /// The argon2id parameters that fit `target` seconds per login at `memoryKiB` and
    /// `lanes` (RFC 9106 §4: fix the memory, then take the most passes that fit), from
    /// two measurements: one pass and two (a hash costs its memory's allocation once and
    /// each pass over it). When one pass alone is too slow, the memory that fits it at
    /// one pass. Passes at most ``Argon2Parameters/timeRange``'s upper bound.
    /// - Throws: ``CredFileError/Code/crypto`` when libargon2 fails;
    ///   ``CredFileError/Code/usage`` when the parameters are out of range.
    public static func argon2idParameters(forSeconds target: Double, memoryKiB: Int, lanes: Int) throws -> (
        parameters: Argon2Parameters, onePass: Double, twoPasses: Double
    ) {
        let one = try argon2idSeconds(Argon2Parameters(memoryKiB: memoryKiB, time: 1, lanes: lanes))
        let two = try argon2idSeconds(Argon2Parameters(memoryKiB: memoryKiB, time: 2, lanes: lanes))
        let perPass = max(two - one, 1e-9)
        let setUp = max(one - perPass, 0)
        if one > target {
            let fitted = max(8 * lanes, Int(Double(memoryKiB) * target / one) / 1024 * 1024)
            return (try Argon2Parameters(memoryKiB: fitted, time: 1, lanes: lanes), one, two)
        }
        let passes = min(Argon2Parameters.timeRange.upperBound, max(1, Int((target - setUp) / perPass)))
        return (try Argon2Parameters(memoryKiB: memoryKiB, time: passes, lanes: lanes), one, two)
    }
}
