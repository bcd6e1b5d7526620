extension CredentialStore {
    /// What an upgrade did (or, with `dryRun`, would do).
    public struct UpgradeSummary: Sendable {
        /// Plaintext entries hashed (or to hash, on a dry run).
        public var upgraded = 0
        /// Plaintext entries that changed while hashing ran, and were left for a rerun.
        public var skipped = 0
        /// Entries that already hold a supported hash.
        public var alreadyHashed = 0
        /// Hashed entries below the policy's minimum rounds (they upgrade on login).
        public var weak = 0
        /// Line numbers of malformed entries, left byte for byte (they may hold a
        /// plaintext secret: fix or delete them).
        public var malformedLines: [Int] = []
        /// Entries with an unsupported hash, left as they are.
        public var unsupported = 0
        /// Whether nothing was written.
        public var dryRun = false
        /// Wall-clock seconds.
        public var seconds = 0.0
    }

    /// Hashes every plaintext secret of the file (shadowed duplicates too, so no
    /// plaintext is left on disk) and changes nothing else. Idempotent: a second run
    /// finds nothing to do and writes nothing.
    ///
    /// The hashes are computed on `jobs` threads from a snapshot read without the lock;
    /// then, under the lock, the file is read again and a hash replaces a line only
    /// where the line is still byte for byte what was hashed, in one atomic rewrite.
    /// A user added or a password changed meanwhile is kept.
    /// - Parameters:
    ///   - policy: the policy of the new hashes (default: the store's).
    ///   - progress: called with (done, total) as hashes complete, one call at a time.
    public func upgrade(
        policy: HashPolicy? = nil, jobs: Int = ParallelHasher.defaultJobs, dryRun: Bool = false,
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws -> UpgradeSummary {
        let started = ContinuousClock.now
        let policy = policy ?? self.policy
        let snapshot = try read()
        var summary = UpgradeSummary(dryRun: dryRun)
        var plaintext: [CredentialLine] = []
        for line in snapshot.lines {
            guard let entry = line.entry else { continue }
            switch entry.secret {
            case .plaintext: plaintext.append(line)
            case .pbkdf2:
                summary.alreadyHashed += 1
                if policy.isWeak(entry.secret) { summary.weak += 1 }
            case .unsupportedHash: summary.unsupported += 1
            case .malformed: summary.malformedLines.append(line.number)
            }
        }
        guard !dryRun, !plaintext.isEmpty else {
            summary.upgraded = plaintext.count
            summary.seconds = Self.seconds(since: started)
            return summary
        }

        let passwords = plaintext.map { Password(utf8: $0.entry!.secretBytes) }  // all are entries
        let hashes = try ParallelHasher(policy: policy, jobs: jobs).hash(passwords, progress: progress)
        var pending: [[UInt8]: [PasswordHash]] = [:]
        for (line, hash) in zip(plaintext, hashes) { pending[Array(line.content), default: []].append(hash) }

        let applied = try rewrite { file in
            var changes = CredentialFile.Changes()
            var applied = 0
            for line in file.lines {
                guard case .plaintext = line.entry?.secret,
                    let hash = pending[Array(line.content)]?.popLast()
                else { continue }
                try changes.replaceSecret(of: line, with: hash.string)
                applied += 1
            }
            return (changes, applied)
        }
        summary.upgraded = applied
        summary.skipped = plaintext.count - applied
        summary.seconds = Self.seconds(since: started)
        return summary
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
