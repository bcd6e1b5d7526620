import CredFileTestSupport
import Testing

@testable import CredFile

/// The fast PBKDF2 path against OpenSSL's `PKCS5_PBKDF2_HMAC` and RFC 7914's vectors.
@Suite("Fast PBKDF2")
struct FastPBKDF2Tests {
    /// Password and salt lengths at the SHA-256 and SHA-512 block boundaries: the last
    /// length whose padding fits one block (55, 111), the first that does not (56, 112),
    /// the block sizes (64, 128) where HMAC starts hashing the key, and their neighbours.
    static let edgeLengths = [0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 300]

    /// One derivation with both implementations; `nil` when they agree.
    static func mismatch(
        _ algorithm: HashAlgorithm, password: [UInt8], salt: [UInt8], rounds: Int, count: Int
    ) throws -> String? {
        let secret = SecretBytes(password)
        let fast = try PBKDF2.deriveKey(
            algorithm, password: secret, salt: salt, rounds: rounds, count: count, using: .fast)
        let openSSL = try PBKDF2.deriveKey(
            algorithm, password: secret, salt: salt, rounds: rounds, count: count, using: .openSSL)
        if fast.count == count, openSSL.count == count, fast == openSSL { return nil }
        return "\(algorithm): password \(password.count) B, salt \(salt.count) B, "
            + "rounds \(rounds), output \(count) B"
    }

    /// 1,000 seeded random inputs per algorithm: the edge lengths crossed with each
    /// other first, then random password and salt lengths 0 ... 300; rounds 1 ... 2,000
    /// (half of them at most 100); output lengths 1 ... 3 digests (the digest length ± 1
    /// and its multiples included).
    @Test("fast path equals PKCS5_PBKDF2_HMAC on random inputs", arguments: HashAlgorithm.allCases)
    func matchesOpenSSL(_ algorithm: HashAlgorithm) throws {
        var rng = SeededRandom(seed: algorithm == .sha256 ? 0x5EED_0256 : 0x5EED_0512)
        let digest = algorithm.digestCount
        let edgeOutputs = [1, digest - 1, digest, digest + 1, 2 * digest, 2 * digest + 1, 3 * digest]
        let edges = Self.edgeLengths
        var failures: [String] = []
        for n in 0..<1_000 {
            let passwordCount: Int
            let saltCount: Int
            if n < edges.count * edges.count {
                passwordCount = edges[n % edges.count]
                saltCount = edges[n / edges.count]
            } else {
                passwordCount = Int.random(in: 0...300, using: &rng)
                saltCount = Int.random(in: 0...300, using: &rng)
            }
            let count =
                n % 4 == 0
                ? edgeOutputs[(n / 4) % edgeOutputs.count] : Int.random(in: 1...(3 * digest), using: &rng)
            // Every tenth input takes 1, 2 or 3 rounds; the odd ones at most 100 (the loop
            // bugs show within a few rounds, and this keeps the debug run short); the rest
            // range over all of 1 ... 2,000.
            let rounds =
                n % 10 == 0
                ? 1 + n % 3 : Int.random(in: 1...(n % 2 == 1 ? 100 : 2_000), using: &rng)
            if let failure = try Self.mismatch(
                algorithm, password: rng.bytes(passwordCount), salt: rng.bytes(saltCount),
                rounds: rounds, count: count)
            {
                failures.append(failure)
            }
        }
        let mismatches = failures.count
        #expect(mismatches == 0, "first mismatches: \(failures.prefix(3).joined(separator: "; "))")
    }

    /// Both implementations reproduce RFC 7914 §11 (dkLen = 64: two SHA-256 blocks), read
    /// from `Vectors/rfc7914-pbkdf2-sha256.txt` by the loader ``PBKDF2Tests`` uses.
    @Test(
        "RFC 7914 §11 PBKDF2-HMAC-SHA256 vectors",
        arguments: try PBKDF2Vector.load("rfc7914-pbkdf2-sha256.txt", .sha256, source: "RFC 7914 §11"),
        PBKDF2.Implementation.allCases)
    func rfc7914Vector(_ vector: PBKDF2Vector, _ implementation: PBKDF2.Implementation) throws {
        let key = try PBKDF2.deriveKey(
            vector.algorithm, password: SecretBytes(vector.password), salt: vector.salt,
            rounds: vector.rounds, count: vector.derivedKey.count, using: implementation)
        #expect(VectorFile.hex(bytes(key)) == VectorFile.hex(vector.derivedKey))
    }

    /// The fast loop is built in with this OpenSSL, and the default path uses it. Fails
    /// if the headers ever hide the low-level SHA API, which would silently cost speed.
    @Test("fast path is built in and preferred")
    func fastPathIsPreferred() {
        #expect(FastPBKDF2.isAvailable)
        #expect(PBKDF2.Implementation.preferred == .fast)
    }

    /// Arguments outside what `PKCS5_PBKDF2_HMAC` accepts throw instead of trapping.
    @Test("fast path refuses zero rounds, too many rounds and an empty output")
    func refusesBadArguments() {
        for algorithm in HashAlgorithm.allCases {
            for (rounds, count) in [(0, 32), (Int(Int32.max) + 1, 32), (1, 0)] {
                #expect(throws: CredFileError(.crypto, "")) {
                    try PBKDF2.deriveKey(
                        algorithm, password: SecretBytes([1, 2, 3]), salt: [4, 5], rounds: rounds,
                        count: count, using: .fast)
                }
            }
        }
    }
}
