#if canImport(Glibc)
import Glibc
#endif

extension CredentialStore {
    /// What an upgrade did (or, with `dryRun`, would do).
    public struct UpgradeSummary: Sendable {
        /// Plaintext entries hashed (or to hash, on a dry run).
        public var upgraded = 0
        /// Plaintext entries that changed while their hash was computed, and were left
        /// as the other writer made them.
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
        /// Entries with another program's hash (counted in `alreadyHashed` too), per
        /// scheme: left byte for byte, rehashed by upgrade-on-login.
        public var peerHashes: [String: Int] = [:]
        /// Whether nothing was written.
        public var dryRun = false
        /// Wall-clock seconds.
        public var seconds = 0.0
        /// Whether `stop` ended the run before every plaintext entry was hashed.
        public var stopped = false
        /// Plaintext entries in the file when the run ended: 0 after a finished run
        /// unless other writers added some meanwhile; what a rerun will hash.
        public var left = 0
        /// How many atomic rewrites committed the hashes (each one under the lock).
        public var batches = 0
        /// Entries hashed per second of the run.
        public var rate: Double { seconds > 0 ? Double(upgraded) / seconds : 0 }
    }

    /// Hashes every plaintext secret of the file (shadowed duplicates too, so no
    /// plaintext is left on disk) and changes nothing else. Idempotent: a second run
    /// finds nothing to do and writes nothing.
    ///
    /// The file is walked front to back in batches. Each batch reads the file without
    /// the lock, takes the next plaintext entries, hashes them on `jobs` threads until
    /// `batchInterval` has passed (or the batch is done), then commits them in one atomic
    /// rewrite under the lock, where a hash replaces a line only if the line is still
    /// byte for byte what was hashed: a user added or a password changed meanwhile is
    /// kept. So a concurrent writer waits for at most one rewrite, a crash loses at most
    /// the batch in flight, and memory holds one batch of hashes besides the file.
    ///
    /// When `stop` is cancelled, the threads finish the hash each one is computing,
    /// the finished hashes are committed, and the summary says `stopped` and how many
    /// entries are `left`; a later call continues where this one stopped.
    /// - Parameters:
    ///   - policy: the policy of the new hashes (default: the store's).
    ///   - jobs: how many threads hash at once.
    ///   - dryRun: count only; write nothing.
    ///   - batchInterval: hashing time after which a batch is committed (default 10 s).
    ///   - maximumBatch: the most entries one batch holds (bounds memory when hashing is cheap).
    ///   - stop: checked by the hashing threads before each hash (a signal handler may set it).
    ///   - progress: called with (done, total) as hashes complete, one call at a time;
    ///     `done` counts across batches.
    /// - Throws: ``CredFileError/Code/io`` when the file is missing or cannot be read or
    ///   written, a lock error, or ``CredFileError/Code/crypto``. Batches committed
    ///   before the error stay committed. Once every entry the run counted at its start
    ///   is committed, a failure to read the file again is no error: the summary says
    ///   what was committed.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func upgrade(
        policy: HashPolicy? = nil, jobs: Int = ParallelHasher.defaultJobs, dryRun: Bool = false,
        batchInterval: Duration = .seconds(10), maximumBatch: Int = 32_768,
        stop: CancellationFlag = CancellationFlag(),
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws -> UpgradeSummary {
        let started = ContinuousClock.now
        let policy = policy ?? self.policy
        var summary = UpgradeSummary(dryRun: dryRun)
        var total = 0
        do {
            // The census: one pass over a snapshot, kept no longer than this scope.
            let snapshot = try upgradeBytes()
            UpgradeScan.forEachLine(in: snapshot, from: UpgradeScan.firstLineStart(in: snapshot)) {
                number, content, _ in
                guard case .entry(let found) = LineClassifier.classify(snapshot[content]) else { return true }
                let entry = found.judged(by: policy)  // over a cost limit: malformed (SPEC §3.1)
                switch entry.secret {
                case .plaintext: total += 1
                case .unsupportedHash: summary.unsupported += 1
                case .malformed: summary.malformedLines.append(number)
                case .peer(let peer):  // kept byte for byte: only a login can rehash it
                    summary.alreadyHashed += 1
                    // (An argon2id PHC string as strong as an argon2id policy is credfile's own.)
                    if policy.needsUpdate(entry.secret) { summary.peerHashes[peer.hash.scheme, default: 0] += 1 }
                    if policy.isWeak(entry.secret) { summary.weak += 1 }
                case .pbkdf2:
                    summary.alreadyHashed += 1
                    if policy.isWeak(entry.secret) { summary.weak += 1 }
                case .locked:  // a hash, kept byte for byte: no login can rehash it
                    summary.alreadyHashed += 1
                }
                return true
            }
        }
        guard !dryRun, total > 0 else {
            summary.upgraded = total
            summary.left = total
            summary.seconds = Self.seconds(since: started)
            return summary
        }

        let hasher = ParallelHasher(policy: policy, jobs: jobs)
        var cursor = UpgradeScan.Cursor()
        var batchSize = min(maximumBatch, max(1, hasher.jobs * 4))
        let maximumBatch = max(1, maximumBatch)
        var stopped = false
        while true {
            if stop.isCancelled {
                stopped = true
                break
            }
            // The file read without the lock lives only while the batch is taken from it:
            // the commit reads the file again under the lock, and both at once were twice
            // the file in memory (#33: 229 MB for a 91 MB file).
            let batch: [UpgradeScan.Line]
            do {
                batch = try nextBatch(after: &cursor, count: batchSize)
            } catch  where summary.upgraded + summary.skipped >= total {
                // Every entry the census found is committed (or was changed by another
                // writer): a failed look for entries added meanwhile fails nothing this
                // run was asked to do.
                break
            }
            guard !batch.isEmpty else { break }

            // Hash until the interval is over (or a stop), then commit what is finished.
            let batchStart = ContinuousClock.now
            let deadline = batchStart + batchInterval
            let doneBefore = summary.upgraded + summary.skipped
            let expected = max(total, doneBefore + batch.count)
            var report: (@Sendable (Int, Int) -> Void)?
            if let progress { report = { done, _ in progress(doneBefore + done, expected) } }
            let hashes = try hasher.secrets(
                for: batch.map { Password(utf8: $0.secret) },
                // At least one hash per batch, however short the interval.
                until: { finished in stop.isCancelled || (finished > 0 && ContinuousClock.now >= deadline) },
                progress: report)
            guard !hashes.isEmpty else {  // stopped before any hash of this batch was done
                stopped = true
                break
            }
            let hashingTime = Self.seconds(since: batchStart)

            let outcome = try commit(Array(zip(batch, hashes)))
            summary.upgraded += outcome.applied
            summary.skipped += hashes.count - outcome.applied
            summary.batches += 1
            cursor = outcome.cursor

            // Size the next batch to fill the interval at the rate just seen.
            let perSecond = Double(hashes.count) / max(hashingTime, 1e-6)
            let wanted = perSecond * batchInterval.inSeconds * 1.25 + Double(hasher.jobs)
            batchSize = wanted >= Double(maximumBatch) ? maximumBatch : max(hasher.jobs, Int(wanted))
        }
        summary.stopped = stopped
        // Counted again from the file as it is now (other writers may have added some);
        // when it cannot be read any more, from what this run counted and did: the
        // hashes are committed either way, and the run reports them.
        summary.left =
            (try? UpgradeScan.plaintextCount(in: upgradeBytes())) ?? max(total - summary.upgraded, 0)
        summary.seconds = Self.seconds(since: started)
        return summary
    }

    /// What one commit did.
    private struct CommitOutcome {
        var applied = 0
        var cursor = UpgradeScan.Cursor()
    }

    /// Replaces, in one rewrite under the lock, each line of `work` that is still byte
    /// for byte what was hashed by `username,hash`, and says where the next batch starts.
    private func commit(_ work: [(line: UpgradeScan.Line, hash: String)]) throws -> CommitOutcome {
        try rewrite { file in
            var changes = CredentialFile.Changes()
            var outcome = CommitOutcome()
            var missed: [[UInt8]: [String]] = [:]
            var edited = Set<Int>()
            var shift = 0  // how far the replaced lines moved the bytes after them
            var allInPlace = true
            for (line, hash) in work {
                // Where the snapshot had it: unless another writer changed the file since
                // the batch was read, the line is still there.
                if let number = UpgradeScan.lineNumber(startingAt: line.offset, in: file),
                    file.line(number).content.elementsEqual(line.content)
                {
                    let current = file.line(number)
                    try changes.replaceSecret(of: current, with: hash)
                    edited.insert(number)
                    outcome.applied += 1
                    let newLength = line.usernameLength + 1 + hash.utf8.count
                    shift += newLength - line.content.count
                    outcome.cursor = UpgradeScan.Cursor(
                        offset: line.offset + shift + line.content.count + current.ending.bytes.count,
                        anchor: Array(current.content.prefix(line.usernameLength + 1)) + Array(hash.utf8)
                            + current.ending.bytes)
                } else {
                    missed[line.content, default: []].append(hash)
                    allInPlace = false
                }
            }
            if !missed.isEmpty {
                // Moved by another writer: any plaintext line with the same bytes takes the
                // hash (it is the same user and password, so the hash is right for it).
                for current in file.lines where !edited.contains(current.number) {
                    guard var hashes = missed[Array(current.content)], let hash = hashes.popLast(),
                        case .plaintext? = current.entry?.secret
                    else { continue }
                    missed[Array(current.content)] = hashes.isEmpty ? nil : hashes
                    try changes.replaceSecret(of: current, with: hash)
                    outcome.applied += 1
                    if missed.isEmpty { break }
                }
            }
            // After a move the offsets say nothing: the next batch looks from the start.
            if !allInPlace { outcome.cursor = UpgradeScan.Cursor() }
            return (changes, outcome)
        }
    }

    /// Up to `count` plaintext entries after `cursor`, from the file read without the lock
    /// (see ``UpgradeScan/nextBatch(in:after:count:)``); the bytes read are released on return.
    private func nextBatch(after cursor: inout UpgradeScan.Cursor, count: Int) throws -> [UpgradeScan.Line] {
        let bytes = try upgradeBytes()
        return UpgradeScan.nextBatch(in: bytes, after: &cursor, count: count)
    }

    /// The file's bytes, read without the lock; a missing file is an I/O error.
    private func upgradeBytes() throws -> [UInt8] {
        guard let bytes = try FileReader.read(path) else {
            throw CredFileError.missingFile(path)
        }
        return bytes
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).inSeconds
    }
}
