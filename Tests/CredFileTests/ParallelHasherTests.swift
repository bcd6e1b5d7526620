import CredFileTestSupport
import Synchronization
import Testing

@testable import CredFile

/// ``ParallelHasher``'s cut of a batch into pairs and single passwords, and that what it
/// hashes in pairs is what the one-password path gives. Nothing here is timed: the rates
/// are `Benchmarks/pbkdf2-limits.sh`'s.
@Suite("Parallel hasher")
struct ParallelHasherTests {
    /// (passwords, threads, pairs allowed) → (units, of which pairs): every thread gets a
    /// unit when there are enough passwords, the rest are pairs.
    @Test(
        "cuts a batch into pairs and singles",
        arguments: [
            (0, 2, true, 0, 0), (1, 2, true, 1, 0), (2, 2, true, 2, 0), (3, 2, true, 2, 1), (4, 2, true, 2, 2),
            (5, 2, true, 3, 2), (20, 2, true, 10, 10), (1, 1, true, 1, 0), (2, 1, true, 1, 1), (7, 1, true, 4, 3),
            (5, 8, true, 5, 0), (9, 8, true, 8, 1), (20, 2, false, 20, 0), (1, 1, false, 1, 0),
        ])
    func units(
        _ passwords: Int, _ threads: Int, _ allowed: Bool, _ expectedUnits: Int, _ expectedPairs: Int
    ) {
        let units = ParallelHasher.Units(count: passwords, threads: threads, pairs: allowed)
        #expect(units.count == expectedUnits)
        #expect(units.pairs == expectedPairs)
        // The units cover 0 ..< passwords once each, in order, pairs first.
        let covered = (0..<units.count).flatMap { Array(units.indices(of: $0)) }
        #expect(covered == Array(0..<passwords))
        for unit in 0...units.count {
            let start = unit < units.count ? units.indices(of: unit).lowerBound : passwords
            #expect(units.passwordsBefore(unit: unit) == start)
        }
    }

    /// Every hash of a batch (pairs where this CPU interleaves them: SHA-256 with SHA-NI)
    /// is the one-password path's: it verifies, and `PKCS5_PBKDF2_HMAC` of its password
    /// and salt gives its checksum; the salts are fresh; progress counts every hash once.
    @Test(
        "hashes of a batch equal the one-password path's",
        arguments: [HashAlgorithm.sha256, .sha512], [1, 2])
    func batchMatchesSinglePath(_ algorithm: HashAlgorithm, _ jobs: Int) throws {
        let policy = try HashPolicy(algorithm: algorithm, rounds: 1_000)
        let passwords = (0..<9).map { Password("pässwörd-\($0)-" + String(repeating: "x", count: 7 * $0)) }
        let reported = Mutex<[Int]>([])
        let hashes = try ParallelHasher(policy: policy, jobs: jobs).hash(passwords) { done, total in
            #expect(total == passwords.count)
            reported.withLock { $0.append(done) }
        }
        try #require(hashes.count == passwords.count)
        for (hash, password) in zip(hashes, passwords) {
            #expect(hash.algorithm == algorithm && hash.rounds == 1_000)
            #expect(try hash.verify(password))
            let expected = try PBKDF2.deriveKey(
                algorithm, password: password.bytes, salt: hash.salt, rounds: hash.rounds, count: hash.checksum.count,
                using: .openSSL)
            #expect(bytes(expected) == hash.checksum)
        }
        #expect(Set(hashes.map(\.salt)).count == hashes.count)
        #expect(reported.withLock { $0.sorted() } == Array(1...passwords.count))
    }

    /// Two passwords at once give what two one-password hashes give, with the pair's own
    /// salts, whichever way the PRF runs them.
    @Test("a pair of hashes equals two single ones", arguments: [HashAlgorithm.sha256, .sha512])
    func pairMatchesSingles(_ algorithm: HashAlgorithm) throws {
        let policy = try HashPolicy(algorithm: algorithm, rounds: 3_000)
        let (first, second) = try PasswordHash.hashing(Password("one password"), Password(""), policy: policy)
        for (hash, password) in [(first, Password("one password")), (second, Password(""))] {
            let single = try PBKDF2.deriveKey(
                algorithm, password: password.bytes, salt: hash.salt, rounds: hash.rounds, count: hash.checksum.count)
            #expect(bytes(single) == hash.checksum)
        }
        #expect(first.salt != second.salt)
    }
}
